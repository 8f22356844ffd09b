"""eval/scores.py: per-question scores and report sections on hand-made rows, errors, the refusal
sweep, topic-switch and list scores."""

from __future__ import annotations

import json

import pytest

from eval import metrics as M
from eval import scores as S
from tests.conftest import P

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
    row["scores"] = S.score_row(row, gold, depth=5)
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
    rep = S.build_report(rows, depth=5)
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
    rep = S.build_report([good, bad], depth=5)
    assert rep["n"] == 1 and rep["errors"] == [{"id": "q2", "error": "Boom: x"}]


def test_refusal_sweep():
    rows = [
        {"answerable": False, "features": {"relevance": 0.3}},
        {"answerable": False, "features": {"relevance": 0.6}},
        {"answerable": True, "features": {"relevance": 0.4}},
    ]
    sw = {x["threshold"]: x for x in S.refusal_sweep(rows, [0.35, 0.5])}
    assert sw[0.35]["refusal_rate"] == 0.5 and sw[0.35]["false_refusal_rate"] == 0.0
    assert sw[0.5]["false_refusal_rate"] == 1.0


def test_shape_scores_count_switches_answered_about_the_new_paper_and_list_recall():
    from eval.scores import shape_scores

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


def test_the_eval_counts_the_caveats_the_product_calls_missing():
    """eval/scores.py keeps its own copy of the codes (eval reads rows, not rag): it must not drift from
    rag.types, or a caveat the user reads as "this is not stated" is counted as no caveat."""
    from eval.scores import MISSING_CODES
    from rag.types import MISSING_CODES as PRODUCT

    assert MISSING_CODES == PRODUCT
