"""eval/calibrate.py: the offline replay of the engine's fusion."""

from __future__ import annotations

from eval.calibrate import fuse


def test_fuse_replays_weighted_rrf():
    sides = {"dense": [["a", 0.9], ["b", 0.8]], "bm25": [["b", 7.0], ["c", 3.0]]}
    assert fuse(sides, 1.0, 0.6, 60) == ["b", "a", "c"]
    assert fuse(sides, 1.0, 0.0, 60)[:2] == ["a", "b"]
    assert fuse(sides, 1.0, 1.0, 60, mode="bm25") == ["b", "c"]
