"""eval/inputs.py: question loading (stratified limit, halves, follow-up history) and --compare."""

from __future__ import annotations

from pathlib import Path

import pytest

from eval.inputs import load_questions, parse_compare
from rag.errors import UserError

ROOT = Path(__file__).resolve().parents[1]


def test_question_loading_limit_is_stratified_and_followups_keep_history(tmp_path):
    every = load_questions(ROOT / "eval" / "data" / "questions.jsonl")
    qs = load_questions(ROOT / "eval" / "data" / "questions.jsonl", limit=16)
    assert len(qs) == 16
    assert {q["type"] for q in qs} == {q["type"] for q in every}
    held = load_questions(ROOT / "eval" / "data" / "questions.jsonl", split="heldout", scale="seeds")
    assert held and all(q["split"] == "heldout" and q["scale"] == "seeds" for q in held)
    cal = load_questions(ROOT / "eval" / "data" / "questions.jsonl", split="calibration")
    assert len(cal) + len(load_questions(ROOT / "eval" / "data" / "questions.jsonl", split="heldout")) == len(
        every
    )
    fu = next(q for q in qs if q["type"] == "followup")
    assert fu["history"]
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
