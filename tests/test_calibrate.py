"""eval/calibrate.py: the offline replay of the engine's fusion."""

from __future__ import annotations

from eval.calibrate import fuse


def test_fuse_replays_weighted_rrf():
    sides = {
        "rrf_k": 60,
        "sides": [
            {"name": "dense", "weight": 1.0, "ranking": ["a", "b"]},
            {"name": "bm25", "weight": 0.6, "ranking": ["b", "c"]},
        ],
    }
    assert fuse(sides, 1.0, 0.6, 60) == ["b", "a", "c"]
    assert fuse(sides, 1.0, 0.0, 60)[:2] == ["a", "b"]
    assert fuse(sides, 0.0, 1.0, 60)[:2] == ["b", "c"]
    # a named-term share lifts the paper naming the term by up to one rank-1 vote per unit of boost
    named = {**sides, "shares": {"c": 1.0}}
    assert fuse(named, 1.0, 0.6, 60, named_boost=0.0)[-1] == "c"
    assert fuse(named, 1.0, 0.6, 60, named_boost=2.0)[0] == "c"
