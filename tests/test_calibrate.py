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


def test_fusion_weights_are_chosen_leaving_one_file_out():
    """Each run is scored at the weights the other runs chose: a weight only its own file likes is not
    credited to it."""
    from eval.calibrate import fusion_lofo

    def row(dense, bm25, gold):
        sides = [
            {"name": "dense", "weight": 1.0, "ranking": dense},
            {"name": "bm25", "weight": 1.0, "ranking": bm25},
        ]
        return {"answerable": True, "gold_keys": [[f"id:{gold}"]], "sides": {"rrf_k": 10, "sides": sides}}

    bm25_right = [row(["a", "b"], ["b", "a"], "b")] * 2  # BM25 puts the gold first, dense second
    runs = {
        "one": bm25_right,
        "two": bm25_right,
        "four": bm25_right,
        "three": [row(["a", "b"], ["b", "a"], "a")],
    }
    grid = {"bm25_weight": (0.5, 2.0), "paper_weight": (0.0,), "rrf_k": (10,), "named_boost": (0.0,)}
    rep = fusion_lofo(runs, {"bm25_weight": 1.0, "paper_weight": 0.0, "rrf_k": 10, "named_boost": 0.0}, grid)
    by = {r["run"]: r for r in rep["runs"]}
    assert by["one"]["chosen"]["bm25_weight"] == 2.0 and by["one"]["held_out"]["hit_at_1"] == 1.0
    # "three" is scored at what the others chose (BM25 heavy), which ranks its gold second
    assert by["three"]["chosen"]["bm25_weight"] == 2.0 and by["three"]["held_out"]["hit_at_1"] == 0.0
    assert rep["runs_worse"] >= 1 and rep["current"]["bm25_weight"] == 1.0
