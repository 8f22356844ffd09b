"""eval/calibrate.py: the draft refusal sweep and the offline replay of the engine's fusion."""

from __future__ import annotations

import pytest

from eval.calibrate import fuse


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


def test_fuse_replays_weighted_rrf():
    sides = {"dense": [["a", 0.9], ["b", 0.8]], "bm25": [["b", 7.0], ["c", 3.0]]}
    assert fuse(sides, 1.0, 0.6, 60) == ["b", "a", "c"]
    assert fuse(sides, 1.0, 0.0, 60)[:2] == ["a", "b"]
    assert fuse(sides, 1.0, 1.0, 60, mode="bm25") == ["b", "c"]
