"""eval/: metric functions on hand-made rows, report assembly, and one real smoke run (slow)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from eval import metrics as M
from eval.calibrate import fuse
from eval.run import load_questions, parse_compare, retrieval_query
from rag.errors import UserError

ROOT = Path(__file__).resolve().parents[1]
ID_MAP = {("a.txt", 0): "ID0", ("a.txt", 1): "ID1", ("b.txt", 3): "ID3"}


def P(pid, f="x.jsonl", i=None):
    return {"paper_id": pid, "source_file": f, "index": i}


# ------------------------------------------------------------------ gold resolution


def test_gold_by_file_index_resolves_to_id_and_matches_full_corpus_paper():
    g = M.gold_keys({"file": "a.txt", "index": 1}, ID_MAP)
    assert g == {"fi:a.txt#1", "id:ID1"}
    # the same paper in the full corpus: other file, other index, same OpenReview id
    assert M.match_gold(P("ID1", "iclr2025.jsonl", 4711), [g]) == 0
    # the seed paper itself, matched by (file, index) even without an id
    assert M.match_gold({"paper_id": "a#1", "source_file": "a.txt", "index": 1}, [g]) == 0
    assert M.match_gold(P("ID0", "a.txt", 0), [g]) is None


def test_gold_by_id_and_unresolvable_gold():
    assert M.gold_keys({"id": "XYZ"}) == {"id:XYZ"}
    assert M.gold_keys({"file": "zzz.txt", "index": 0}, ID_MAP) == {"fi:zzz.txt#0"}
    with pytest.raises(ValueError):
        M.gold_keys({"title": "no key"})


def test_load_id_map_reads_seed_metadata():
    m = M.load_id_map(ROOT / "seeds" / "metadata.jsonl")
    assert len(m) == 38 and all(isinstance(v, str) and v for v in m.values())


# ------------------------------------------------------------------ retrieval


def test_ranks_hit_mrr_ndcg_single_gold():
    gold = [M.gold_keys({"id": "G"})]
    ranked = [P("a"), P("b"), P("G"), P("c")]
    ranks = M.gold_ranks(ranked, gold)
    assert ranks == [3]
    assert M.hit_at_k(ranks, 1) == 0.0 and M.hit_at_k(ranks, 3) == 1.0 and M.hit_at_k(ranks, 5) == 1.0
    assert M.reciprocal_rank(ranks) == pytest.approx(1 / 3)
    assert M.ndcg_at_k(ranks, 10) == pytest.approx(1 / math.log2(4))
    assert M.ndcg_at_k(ranks, 2) == 0.0


def test_multi_gold_recall_ndcg_and_absent():
    gold = [M.gold_keys({"id": "G1"}), M.gold_keys({"id": "G2"}), M.gold_keys({"id": "G3"})]
    ranked = [P("G2"), P("x"), P("G1"), P("G2")]  # duplicate G2 counts once
    ranks = M.gold_ranks(ranked, gold)
    assert ranks == [3, 1, None]
    assert M.hit_at_k(ranks, 1) == 1.0
    assert M.recall_at_k(ranks, 1) == pytest.approx(1 / 3)
    assert M.recall_at_k(ranks, 5) == pytest.approx(2 / 3)
    assert M.reciprocal_rank(ranks) == 1.0
    idcg = 1 + 1 / math.log2(3) + 1 / math.log2(4)
    assert M.ndcg_at_k(ranks, 10) == pytest.approx((1 + 1 / math.log2(4)) / idcg)
    assert M.ndcg_at_k([1, 2], 10) == pytest.approx(1.0)
    assert M.reciprocal_rank([None]) == 0.0 and M.hit_at_k([None], 20) == 0.0


# ------------------------------------------------------------------ citations, facts, refusal


def test_citation_precision_recall():
    gold = [M.gold_keys({"id": "G1"}), M.gold_keys({"id": "G2"})]
    cited = [P("G1"), P("x"), P("G1")]  # the same paper cited twice counts once
    assert M.citation_precision(cited, gold) == pytest.approx(1 / 2)
    assert M.citation_recall(cited, gold) == pytest.approx(1 / 2)
    assert M.citation_precision([], gold) is None
    assert M.citation_recall([], gold) == 0.0
    assert M.citation_recall(cited, []) is None


def test_content_tokens_rules():
    assert M.content_tokens("The 135 distinct, chaotic systems!") == ["135", "distinct", "chaotic", "systems"]
    assert M.content_tokens("d^{1/3}ε^{-2/3}") == ["1", "3", "ε", "2", "3"]  # 'd' is an NLTK stopword
    assert M.content_tokens("of the and") == []


def test_fact_recall_70_percent_rule():
    # "ScanNet V2 (+5.3)" -> scannet v2 5 3 : 4 tokens
    fact = "ScanNet V2 (+5.3)"
    assert M.fact_found(fact, "DEST gains +5.3 AP50 on ScanNet V2 [1].")
    assert M.fact_found(fact, "On ScanNet V2 it gains 5 points.")  # 3/4 = 0.75 >= 0.7
    assert not M.fact_found(fact, "On ScanNet it gains 5.")  # 2/4 = 0.5
    # 10 tokens: 7 present counts, 6 does not
    fact10 = "alpha beta gamma delta epsilon zeta eta theta iota kappa"
    assert M.fact_found(fact10, "alpha beta gamma delta epsilon zeta eta")
    assert not M.fact_found(fact10, "alpha beta gamma delta epsilon zeta")
    # stopwords don't count, punctuation and case are ignored
    assert M.fact_found("The Law of the Weakest Link", "a law: weakest-link")
    # citation markers are not numbers of the answer
    assert not M.fact_found("135 systems", "It tests systems [135].")
    assert (
        M.fact_recall(
            ["135 distinct chaotic dynamical systems", "10^8 timepoints"],
            "They use 135 distinct chaotic dynamical systems [1].",
        )
        == 0.5
    )
    assert M.fact_recall([], "anything") is None


def test_supported_share_and_abstain_detection():
    sents = [{"supported": True}, {"supported": False}, {"supported": True}, {"supported": True}]
    assert M.supported_share(sents) == 0.75
    assert M.supported_share(sents, fallback=True) == 0.0
    assert M.supported_share([]) is None
    assert M.abstains("The indexed abstracts don't answer this question.")
    assert M.abstains("The abstracts do not mention the number of GPU hours.")
    assert M.abstains("This information is not provided in the abstracts [1].")
    assert not M.abstains("DEST improves AP50 by 5.3 on ScanNet V2 [1].")


def test_percentile():
    assert M.percentile([], 50) is None
    assert M.percentile([3.0], 95) == 3.0
    assert M.percentile([1, 2, 3, 4], 50) == 2.5
    assert M.percentile(list(range(1, 101)), 95) == pytest.approx(95.05)


# ------------------------------------------------------------------ rows -> report


def _row(
    qid,
    qtype,
    gold_ids,
    ranked,
    cited=(),
    answer="",
    facts=(),
    refused=False,
    total=1.0,
    sentences=None,
    fallback=False,
):
    gold = [M.gold_keys({"id": g}) for g in gold_ids]
    row = {
        "id": qid,
        "type": qtype,
        "config": "hybrid",
        "answerable": bool(gold),
        "generated": True,
        "ranked": [P(x) for x in ranked],
        "cited": [P(x) for x in cited],
        "answer": answer,
        "facts": list(facts),
        "refused": refused,
        "abstained": False,
        "fallback": fallback,
        "sentences": sentences if sentences is not None else [{"supported": True}],
        "timings": {"total_s": total, "retrieve_s": 0.1},
        "gold_keys": [sorted(g) for g in gold],
    }
    row["scores"] = M.score_row(row, gold, depth=5)
    return row


def test_report_aggregates_by_type_and_refusal_rates():
    rows = [
        _row(
            "q1",
            "factoid",
            ["A"],
            ["A", "B"],
            cited=["A"],
            answer="alpha beta",
            facts=["alpha beta", "gamma"],
            total=2.0,
        ),
        _row(
            "q2",
            "factoid",
            ["C"],
            ["B", "D", "E", "F", "G"],
            cited=["B"],
            answer="nothing",
            facts=["delta"],
            total=4.0,
            sentences=[{"supported": False}, {"supported": True}],
        ),
        _row("q3", "paraphrase", ["D"], ["X", "D"], refused=True, facts=["delta"], total=0.5, sentences=[]),
        _row("q4", "unanswerable", [], ["A"], refused=True, total=0.3, sentences=[]),
        _row("q5", "unanswerable", [], ["A"], cited=["A"], answer="made up", total=3.0),
    ]
    rep = M.build_report(rows, depth=5)
    r = rep["retrieval"]
    assert r["n"] == 3
    assert r["hit_at_1"] == pytest.approx(1 / 3)
    assert r["hit_at_5"] == pytest.approx(2 / 3)
    assert r["mrr"] == pytest.approx((1 + 0 + 0.5) / 3)
    c = rep["citations"]
    assert c["precision"] == pytest.approx(0.5)  # q1: 1, q2: 0, q3 refused: excluded
    assert c["recall"] == pytest.approx(1 / 3)  # q3 refused counts 0
    assert c["supported_rate"] == pytest.approx((1 + 0.5) / 2)  # answered answerable only
    assert rep["answers"]["fact_recall"] == pytest.approx((0.5 + 0 + 0) / 3)
    assert rep["unanswerable"]["refusal_rate"] == 0.5
    assert rep["answerable"]["false_refusal_rate"] == pytest.approx(1 / 3)
    assert rep["latency"]["p50_s"] == 2.0
    assert rep["latency"]["p95_s"] == pytest.approx(3.8)
    assert set(rep["by_type"]) == {"factoid", "paraphrase", "unanswerable"}
    assert rep["by_type"]["factoid"]["retrieval"]["hit_at_1"] == 0.5
    assert rep["by_type"]["unanswerable"]["retrieval"]["hit_at_1"] is None
    assert rep["specific"]["hit_at_5"] == pytest.approx(2 / 3)  # factoid + paraphrase
    json.dumps(rep)  # serialisable


def test_errors_are_reported_not_scored():
    good = _row("q1", "factoid", ["A"], ["A"])
    bad = {
        "id": "q2",
        "type": "factoid",
        "config": "hybrid",
        "answerable": True,
        "error": "Boom: x",
        "scores": {},
    }
    rep = M.build_report([good, bad], depth=5)
    assert rep["n"] == 1 and rep["errors"] == [{"id": "q2", "error": "Boom: x"}]


def test_refusal_sweep():
    rows = [
        {"answerable": False, "features": {"relevance": 0.3}},
        {"answerable": False, "features": {"relevance": 0.6}},
        {"answerable": True, "features": {"relevance": 0.4}},
    ]
    sw = {x["threshold"]: x for x in M.refusal_sweep(rows, [0.35, 0.5])}
    assert sw[0.35]["refusal_rate"] == 0.5 and sw[0.35]["false_refusal_rate"] == 0.0
    assert sw[0.5]["false_refusal_rate"] == 1.0


def test_draft_refusal_sweep_counts_only_unsupported_drafts_of_the_right_kind():
    from eval.calibrate import draft_refusal_sweep

    def row(answerable, which, draft, a):
        return {
            "answerable": answerable,
            "unsupported_draft": draft,
            "features": {"asks_which": which, "answerability": a},
        }

    rows = [
        row(False, True, True, 0.3),
        row(False, True, False, 0.1),  # second: its draft was supported
        row(True, True, True, 0.45),
        row(True, False, True, 0.2),
        row(False, False, True, 0.0),
    ]
    which = {x["threshold"]: x for x in draft_refusal_sweep(rows, True, [0.35, 0.5])}
    other = {x["threshold"]: x for x in draft_refusal_sweep(rows, False, [0.35])}
    assert which[0.35]["refusal_rate"] == pytest.approx(1 / 3) and which[0.35]["false_refusal_rate"] == 0.0
    assert which[0.5]["false_refusal_rate"] == 0.5
    assert other[0.35]["refusal_rate"] == pytest.approx(1 / 3) and other[0.35]["false_refusal_rate"] == 0.5


# ------------------------------------------------------------------ runner helpers


def test_fuse_replays_weighted_rrf():
    sides = {"dense": [["a", 0.9], ["b", 0.8]], "bm25": [["b", 7.0], ["c", 3.0]]}
    assert fuse(sides, 1.0, 0.6, 60) == ["b", "a", "c"]
    assert fuse(sides, 1.0, 0.0, 60)[:2] == ["a", "b"]
    assert fuse(sides, 1.0, 1.0, 60, mode="bm25") == ["b", "c"]


def test_question_loading_limit_is_stratified_and_followups_keep_history(tmp_path):
    every = load_questions(ROOT / "eval" / "questions.jsonl")
    qs = load_questions(ROOT / "eval" / "questions.jsonl", limit=16)
    assert len(qs) == 16
    assert {q["type"] for q in qs} == {q["type"] for q in every}
    held = load_questions(ROOT / "eval" / "questions.jsonl", split="heldout", scale="seeds")
    assert held and all(q["split"] == "heldout" and q["scale"] == "seeds" for q in held)
    cal = load_questions(ROOT / "eval" / "questions.jsonl", split="calibration")
    assert len(cal) + len(load_questions(ROOT / "eval" / "questions.jsonl", split="heldout")) == len(every)
    fu = next(q for q in qs if q["type"] == "followup")
    assert fu["history"] and retrieval_query(fu).endswith(f"({fu['history'][-1]})")
    bad = tmp_path / "q.jsonl"
    bad.write_text('{"id": "x", "question": "?"}\n')
    with pytest.raises(UserError, match="type"):
        load_questions(bad)
    with pytest.raises(UserError, match="not found"):
        load_questions(tmp_path / "missing.jsonl")


def test_parse_compare():
    assert parse_compare(None, "hybrid") == ["hybrid"]
    assert parse_compare("dense, bm25,hybrid,baseline,dense", "hybrid") == [
        "dense",
        "bm25",
        "hybrid",
        "baseline",
    ]
    with pytest.raises(UserError):
        parse_compare("dense,sparse", "hybrid")


# ------------------------------------------------------------------ whole pipeline, fake LLM (fast)


def test_pipeline_with_fake_llm_writes_every_artifact(tmp_path, seed_data_dir):
    """main() end to end on the seed index with a scripted LLM: rows, report keys, md, PNGs, compare."""
    import shutil

    from eval.run import main
    from rag.settings import Settings
    from tests.conftest import FakeLLM, source_text

    data = tmp_path / "data"
    shutil.copytree(seed_data_dir, data)  # the session index must not be written to

    def reply(msgs):
        user = msgs[-1]["content"]
        if '<abstract n="1"' in user:  # answer prompt: copy the first sentence of source 1
            return source_text(msgs, 1).split(". ")[0] + " [1]."
        if "<abstract" in user:  # summary prompt (one paper): copy its first sentence
            return user.split(">", 1)[1].strip().split(". ")[0] + "."
        return "What datasets did Celcomen use?"  # condense prompt

    llm = FakeLLM(reply)
    out = tmp_path / "out"
    pick = {"q001", "q038", "q068", "q078"}
    qfile = tmp_path / "q.jsonl"
    qfile.write_text(
        "".join(
            x + "\n"
            for x in (ROOT / "eval" / "questions.jsonl").read_text().splitlines()
            if x.strip() and json.loads(x)["id"] in pick
        )
    )
    rep = main(qfile, "seeds", out, "hybrid,bm25", None, Settings(), data_dir=data, progress=False, llm=llm)
    saved = json.loads((out / "report.json").read_text())
    assert saved["config"]["primary"] == "hybrid" and set(saved["compare"]) == {"hybrid", "bm25"}
    assert not saved["errors"], saved["errors"]
    assert saved["retrieval"]["hit_at_5"] == 1.0 and saved["retrieval"]["n"] == 3
    assert saved["citations"]["precision"] is not None and 0 <= saved["citations"]["recall"] <= 1
    assert saved["latency"]["p50_s"] is not None and saved["config"]["corpus"]["papers"] == 38
    assert saved["by_type"]["unanswerable"]["unanswerable"]["n"] == 1
    assert not saved["errors"], saved["errors"]
    assert saved["calibration"]["fusion_replication"] == 1.0  # the replay still matches the engine's fusion
    rows = [json.loads(x) for x in (out / "rows.jsonl").read_text().splitlines()]
    assert len(rows) == 8 and {r["config"] for r in rows} == {"hybrid", "bm25"}
    fu = next(r for r in rows if r["id"] == "q078" and r["config"] == "hybrid")
    assert any("Celcomen" in m["content"] for c in llm.calls for m in c)  # history reached the condenser
    assert fu["standalone"] != fu["question"]
    assert next(r for r in rows if r["id"] == "q038")["task"] == "summarize"
    assert all(len(r["ranked"]) >= 5 and r["features"]["refusal_signal"] for r in rows)
    md = (out / "report.md").read_text()
    assert "| metric | hybrid | bm25 |" in md and "## By type — bm25" in md
    for png in ("by_type.png", "recall_at_k.png", "latency.png"):
        assert (out / png).stat().st_size > 1000
    assert rep["n"] == 4


def test_retrieval_only_needs_no_llm(tmp_path, seed_data_dir):
    import shutil

    from eval.run import main
    from rag.settings import Settings

    data = tmp_path / "data"
    shutil.copytree(seed_data_dir, data)

    class NoLLM:
        name = "none"

        def __getattr__(self, k):
            raise AssertionError("retrieval-only touched the LLM")

    rep = main(
        ROOT / "eval" / "questions.jsonl",
        "seeds",
        tmp_path / "out",
        "dense",
        4,
        Settings(),
        data_dir=data,
        retrieval_only=True,
        progress=False,
        llm=NoLLM(),
        types=["factoid", "unanswerable"],
        plots=False,
    )
    assert rep["config"]["retrieval_only"] and rep["n"] == 4
    assert rep["retrieval"]["hit_at_5"] >= 0.8 and rep["citations"]["precision"] is None
    assert rep["unanswerable"]["refusal_rate"] is not None  # predicted by the engine's rule
    assert rep["calibration"]["refusal_sweeps"]


# ------------------------------------------------------------------ real smoke run


@pytest.mark.slow
def test_real_eval_smoke(tmp_path):
    """5 questions (factoid, which, paraphrase, unanswerable, follow-up) through the real models on the seeds."""
    from eval.run import main
    from rag.settings import Settings

    src = [json.loads(x) for x in (ROOT / "eval" / "questions.jsonl").read_text().splitlines() if x.strip()]
    pick = {"q001", "q026", "q052", "q068", "q078"}
    qfile = tmp_path / "q.jsonl"
    qfile.write_text("".join(json.dumps(q) + "\n" for q in src if q["id"] in pick))
    out = tmp_path / "out"
    rep = main(
        qfile,
        "seeds",
        out,
        None,
        None,
        Settings(data_dir=tmp_path / "unused", max_new_tokens=64),
        progress=False,
    )
    saved = json.loads((out / "report.json").read_text())
    for sec, key in [
        ("retrieval", "hit_at_1"),
        ("retrieval", "hit_at_5"),
        ("retrieval", "mrr"),
        ("retrieval", "ndcg_at_10"),
        ("citations", "precision"),
        ("citations", "recall"),
        ("citations", "supported_rate"),
        ("answers", "fact_recall"),
        ("unanswerable", "refusal_rate"),
        ("answerable", "false_refusal_rate"),
        ("latency", "p50_s"),
        ("latency", "p95_s"),
        ("specific", "hit_at_5"),
    ]:
        assert key in saved[sec], (sec, key)
        v = saved[sec][key]
        assert v is None or (0.0 <= v <= (1e4 if sec == "latency" else 1.0)), (sec, key, v)
    assert saved["retrieval"]["hit_at_5"] == 1.0  # the seeds are easy: every gold paper is in the top 5
    assert saved["latency"]["p50_s"] > 0 and saved["latency"]["p95_s"] >= saved["latency"]["p50_s"]
    assert set(saved["by_type"]) == {"factoid", "which", "paraphrase", "unanswerable", "followup"}
    assert saved["config"]["corpus"]["papers"] == 38 and saved["config"]["top_k"] == 5
    assert saved["config"]["models"]["llm"]
    assert not saved["errors"]
    rows = [json.loads(x) for x in (out / "rows.jsonl").read_text().splitlines()]
    assert len(rows) == 5 and all(r["generated"] for r in rows)
    fu = next(r for r in rows if r["type"] == "followup")
    assert fu["history"] and fu["standalone"]
    for png in ("by_type.png", "recall_at_k.png", "latency.png"):
        assert (out / png).stat().st_size > 1000
    assert "## Summary" in (out / "report.md").read_text()
    assert rep["n"] == 5


def test_shape_scores_count_switches_answered_about_the_new_paper_and_list_recall():
    from eval.metrics import shape_scores

    def row(subtype, cited, refused=False, shape="explain", recall=None):
        return {
            "generated": True,
            "subtype": subtype,
            "refused": refused,
            "shape": shape,
            "answerable": True,
            "gold_keys": [["id:NEW"]],
            "cited": [{"n": i + 1, "paper_id": p} for i, p in enumerate(cited)],
            "scores": {"cit_recall": recall},
        }

    rows = [
        row("switch", ["NEW", "OLD"]),
        row("switch", ["OLD", "NEW"]),  # the old paper comes first: not about the new one
        row("switch", ["NEW"], refused=True),
        row(None, ["X"], shape="list", recall=0.5),
        row(None, ["NEW"], shape="list", recall=1.0),
    ]
    sc = shape_scores(rows)
    assert sc["topic_switch_new_paper"] == pytest.approx(1 / 3) and sc["topic_switch_n"] == 3
    assert sc["list_gold_named"] == pytest.approx(0.75) and sc["list_n"] == 2


def test_list_eval_scores_judged_precision_and_chooses_bar():
    from eval.lists import choose_bar, score_topic, summarize

    topic = {"id": "t", "relevant": ["a", "b"], "judged_not_relevant": ["x"], "split": "calibration"}
    row = {"id": "t", "seconds": 0.5, "scored": [["a", 0.9], ["u", 0.8], ["x", 0.6], ["b", 0.4]]}
    s = score_topic(row, topic, 0.5)
    assert (s["found"], s["recall"], s["precision"], s["unjudged"]) == (
        1,
        0.5,
        0.5,
        1,
    )  # u: unjudged, not wrong
    assert score_topic(row, topic, 0.85)["precision"] == 1.0
    rep = summarize([row], {"t": topic}, 0.3)
    assert rep["recall"] == 1.0 and rep["candidate_recall"] == 1.0 and rep["seconds_p50"] == 0.5
    bar, table = choose_bar([row], {"t": topic}, sweep=[0.3, 0.5, 0.85])
    assert bar == 0.3 and len(table) == 3  # F1 0.8 at 0.3 beats 0.5 (0.5) and 0.67 (0.85)


def test_gate_replay_copies_the_first_evidence_sentence_and_keeps_the_engines_decisions(
    tmp_path, seed_data_dir
):
    """`rag eval --gate-only`: no model; each draft is the prompt's first evidence sentence, cited, so the
    engine's refusals and citations are its rules' alone, and the report names the stand-in."""
    import shutil

    from eval.gate import CopyingLLM
    from eval.run import main
    from rag.settings import Settings

    llm = CopyingLLM()
    prompt = [
        {"role": "user", "content": "Evidence:\n[2] Celcomen\n- It models tissues.\n- More.\n\nQuestion: q"}
    ]
    assert llm.generate(prompt) == "It models tissues [2]." and llm.generate([]) == "[1]."
    data = tmp_path / "data"
    shutil.copytree(seed_data_dir, data)
    qfile = tmp_path / "q.jsonl"
    picked = [
        json.loads(x)
        for x in (ROOT / "eval" / "questions.jsonl").read_text().splitlines()
        if x.strip() and json.loads(x)["type"] in ("factoid", "unanswerable")
    ]
    keep = [q for q in picked if q["type"] == "factoid"][:2] + [
        q for q in picked if q["type"] == "unanswerable"
    ][:2]
    qfile.write_text("".join(json.dumps(q) + "\n" for q in keep))
    out = tmp_path / "out"
    main(
        qfile,
        "seeds",
        out,
        "hybrid",
        None,
        Settings(),
        data_dir=data,
        progress=False,
        plots=False,
        llm=llm,
        split="all",
    )
    saved = json.loads((out / "report.json").read_text())
    assert saved["config"]["models"]["llm"] == CopyingLLM.name and not saved["config"]["models"]["int8"]
    rows = [json.loads(x) for x in (out / "rows.jsonl").read_text().splitlines()]
    answered = [r for r in rows if not r["refused"]]
    assert llm.calls >= len([r for r in answered if r["generated"]]) > 0
    for r in answered:  # every answer is a verified copy of a quoted evidence sentence
        assert r["cited"] and all(c["quote"] for c in r["cited"])
