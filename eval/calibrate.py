"""Offline calibration from rows.jsonl: re-fuse the dumped per-side rankings with other weights.

Every row dumps `sides`: the dense and BM25 paper rankings (best chunk per paper, `candidates` chunks
deep) for the same query the engine used. `fuse` replays the engine's weighted reciprocal-rank fusion
(rag/retrieve.py) on them, so fusion weights can be swept in milliseconds without re-running queries.
`replication_check` reports how often the replay reproduces the engine's own ranking (it must be ~1.0
for the grid to mean anything).
"""
from __future__ import annotations

from collections import defaultdict
from typing import Sequence

from eval.metrics import gold_ranks, hit_at_k, ndcg_at_k, reciprocal_rank


def fuse_scores(sides: dict, dense_weight: float, bm25_weight: float, rrf_k: int, mode: str = "hybrid",
                named_boost: float = 0.0, bm25_weight_plain: float | None = None) -> dict[str, float]:
    """Fused score per paper as Retriever.retrieve computes it. `named_boost` adds
    `named_boost * share / (rrf_k + 1)` for the share of the query's named terms a paper mentions
    (`sides["named_share"]`, dumped by the runner), as rag/retrieve.py does outside dense mode."""
    scores: dict[str, float] = defaultdict(float)
    parts = []
    if mode in ("dense", "hybrid"):
        parts.append((dense_weight, sides.get("dense", [])))
    if mode in ("bm25", "hybrid"):
        # the engine weighs BM25 less for questions without named terms (empty named_share)
        plain = bm25_weight_plain is not None and sides.get("named_share") == {}
        w = (bm25_weight_plain if plain else bm25_weight) if mode == "hybrid" else 1.0
        parts.append((w, sides.get("bm25", [])))
    for w, ranking in parts:
        for rank, (pid, _score) in enumerate(ranking, start=1):
            scores[pid] += w / (rrf_k + rank)
    if named_boost and mode != "dense":
        for pid, share in (sides.get("named_share") or {}).items():
            if pid in scores:
                scores[pid] += named_boost * share / (rrf_k + 1)
    return scores


def fuse(sides: dict, dense_weight: float, bm25_weight: float, rrf_k: int, mode: str = "hybrid",
         named_boost: float = 0.0, bm25_weight_plain: float | None = None) -> list[str]:
    """Paper ids best first (ties: first seen; the engine may order exact ties differently)."""
    scores = fuse_scores(sides, dense_weight, bm25_weight, rrf_k, mode, named_boost, bm25_weight_plain)
    return sorted(scores, key=lambda p: -scores[p])


def _papers(ids: Sequence[str]) -> list[dict]:
    return [{"paper_id": i} for i in ids]


def evaluate_fusion(rows: Sequence[dict], gold_of, dense_weight: float, bm25_weight: float, rrf_k: int,
                    mode: str = "hybrid", named_boost: float = 0.0) -> dict:
    """Mean hit@1/hit@5/MRR/nDCG@10 over answerable rows with dumped sides. `gold_of(row)` -> gold keys."""
    h1 = h5 = rr = nd = 0.0
    n = 0
    for r in rows:
        if not r.get("answerable") or not r.get("sides"):
            continue
        ranks = gold_ranks(_papers(fuse(r["sides"], dense_weight, bm25_weight, rrf_k, mode, named_boost)), gold_of(r))
        h1 += hit_at_k(ranks, 1)
        h5 += hit_at_k(ranks, 5)
        rr += reciprocal_rank(ranks)
        nd += ndcg_at_k(ranks, 10)
        n += 1
    if not n:
        return {"n": 0}
    return {"dense_weight": dense_weight, "bm25_weight": bm25_weight, "rrf_k": rrf_k, "named_boost": named_boost,
            "hit_at_1": h1 / n, "hit_at_5": h5 / n, "mrr": rr / n, "ndcg_at_10": nd / n, "n": n}


def fusion_grid(rows: Sequence[dict], gold_of, bm25_weights=(0.0, 0.3, 0.6, 1.0, 1.5, 2.5),
                rrf_ks=(5, 20, 60), dense_weight: float = 1.0, named_boosts=(0.0,)) -> list[dict]:
    out = [evaluate_fusion(rows, gold_of, dense_weight, w, k, named_boost=b)
           for w in bm25_weights for k in rrf_ks for b in named_boosts]
    return sorted([g for g in out if g.get("n")], key=lambda g: (-g["mrr"], -g["hit_at_5"]))


def replication_check(rows: Sequence[dict], settings, depth: int) -> float | None:
    """Share of hybrid rows whose engine ranking the replay reproduces: every ranked paper gets the same
    fused score (to 1e-5) and the order is non-increasing in it (exact ties may be ordered either way)."""
    same = n = 0
    for r in rows:
        if r.get("mode") != "hybrid" or not r.get("sides") or not r.get("ranked"):
            continue
        sc = fuse_scores(r["sides"], settings.dense_weight, settings.bm25_weight, settings.rrf_k,
                         named_boost=settings.named_boost, bm25_weight_plain=settings.bm25_weight_plain)
        ranked = r["ranked"][:depth]
        ok = all(abs(sc.get(p["paper_id"], -1.0) - p["score"]) < 1e-5 for p in ranked)
        top = sorted(sc.values(), reverse=True)[: len(ranked)]
        ok = ok and all(abs(a - p["score"]) < 1e-5 for a, p in zip(top, ranked))
        same += ok
        n += 1
    return same / n if n else None
