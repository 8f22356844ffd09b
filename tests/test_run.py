"""eval/run.py: main() end to end on the seed index with a fake LLM and retrieval only, and one
real smoke run (slow)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import make_settings

ROOT = Path(__file__).resolve().parents[1]


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
            for x in (ROOT / "eval" / "data" / "questions.jsonl").read_text().splitlines()
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
    assert saved["calibration"]["fusion_grid"]
    rows = [json.loads(x) for x in (out / "rows.jsonl").read_text().splitlines()]
    from rag.retrieval.retrieve import Trace

    for r in rows:  # the dumped trace re-fuses to the engine's own scores (papers the cover moved aside)
        replay = Trace.from_json(r["sides"]).scores()
        shown = [p for p in r["ranked"] if p["paper_id"] not in r["sides"]["covered"]]
        assert all(abs(replay[p["paper_id"]] - p["score"]) < 1e-5 for p in shown), r["id"]
    assert len(rows) == 8 and {r["config"] for r in rows} == {"hybrid", "bm25"}
    fu = next(r for r in rows if r["id"] == "q078" and r["config"] == "hybrid")
    assert "Celcomen" in fu["standalone"] and fu["leaned_on"]  # the history was read with the question
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
        ROOT / "eval" / "data" / "questions.jsonl",
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
    assert rep["calibration"]["refusal_sweeps"]  # the retrieval signals' sweep, no decision predicted


# ------------------------------------------------------------------ real smoke run


@pytest.mark.slow
def test_real_eval_smoke(tmp_path):
    """5 questions (factoid, which, paraphrase, unanswerable, follow-up) through the real models on the seeds."""
    from eval.run import main

    src = [
        json.loads(x)
        for x in (ROOT / "eval" / "data" / "questions.jsonl").read_text().splitlines()
        if x.strip()
    ]
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
        make_settings(data_dir=tmp_path / "unused", max_new_tokens=64),
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
