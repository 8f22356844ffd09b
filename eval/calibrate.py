"""Calibration: per-row features the runner dumps (refusal signals, per-side rankings), and offline
replays of rows.jsonl that re-fuse the dumped per-side rankings with other weights.

Every row dumps `sides`: the dense and BM25 paper rankings (best chunk per paper, `candidates` chunks
deep) for the same query the engine used. `fuse` replays the engine's weighted reciprocal-rank fusion
(rag/retrieval/retrieve.py) on them, so fusion weights can be swept in milliseconds without re-running queries.
`replication_check` reports how often the replay reproduces the engine's own ranking (it must be ~1.0
for the grid to mean anything).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from eval.metrics import gold_ranks, hit_at_k, ndcg_at_k, reciprocal_rank
from eval.scores import refusal_auc, refusal_sweep
from rag.retrieval.names import mentions, named_terms
from rag.retrieval.retrieve import boosted

SWEEP = [
    0.0,
    0.05,
    0.1,
    0.125,
    0.15,
    0.175,
    0.2,
    0.225,
    0.25,
    0.275,
    0.3,
    0.35,
    0.4,
    0.45,
    0.5,
]  # refusal thresholds swept in the report
ENGINE_MODES = ("hybrid", "dense", "bm25")


def fuse_scores(
    sides: dict,
    dense_weight: float,
    bm25_weight: float,
    rrf_k: int,
    mode: str = "hybrid",
    named_boost: float = 0.0,
) -> dict[str, float]:
    """Fused score per paper as Retriever.retrieve computes it. `named_boost` adds
    `named_boost * share / (rrf_k + 1)` for the share of the query's named terms a paper mentions
    (`sides["named_share"]`, dumped by the runner), as rag/retrieval/retrieve.py does outside dense mode."""
    scores: dict[str, float] = defaultdict(float)
    parts = []
    if mode in ("dense", "hybrid"):
        parts.append((dense_weight, sides.get("dense", [])))
    if mode in ("bm25", "hybrid"):
        # the engine weighs BM25 less for questions without named terms (empty named_share)
        w = bm25_weight if mode == "hybrid" else 1.0
        parts.append((w, sides.get("bm25", [])))
    for w, ranking in parts:
        for rank, (pid, _score) in enumerate(ranking, start=1):
            scores[pid] += w / (rrf_k + rank)
    if named_boost and mode != "dense":
        for pid, share in (sides.get("named_share") or {}).items():
            if pid in scores:
                scores[pid] += named_boost * share / (rrf_k + 1)
    return scores


def fuse(
    sides: dict,
    dense_weight: float,
    bm25_weight: float,
    rrf_k: int,
    mode: str = "hybrid",
    named_boost: float = 0.0,
) -> list[str]:
    """Paper ids best first (ties: first seen; the engine may order exact ties differently)."""
    scores = fuse_scores(sides, dense_weight, bm25_weight, rrf_k, mode, named_boost)
    return sorted(scores, key=lambda p: -scores[p])


def _papers(ids: Sequence[str]) -> list[dict]:
    return [{"paper_id": i} for i in ids]


def evaluate_fusion(
    rows: Sequence[dict],
    gold_of,
    dense_weight: float,
    bm25_weight: float,
    rrf_k: int,
    mode: str = "hybrid",
    named_boost: float = 0.0,
) -> dict:
    """Mean hit@1/hit@5/MRR/nDCG@10 over answerable rows with dumped sides. `gold_of(row)` -> gold keys."""
    h1 = h5 = rr = nd = 0.0
    n = 0
    for r in rows:
        if not r.get("answerable") or not r.get("sides"):
            continue
        ranks = gold_ranks(
            _papers(fuse(r["sides"], dense_weight, bm25_weight, rrf_k, mode, named_boost)), gold_of(r)
        )
        h1 += hit_at_k(ranks, 1)
        h5 += hit_at_k(ranks, 5)
        rr += reciprocal_rank(ranks)
        nd += ndcg_at_k(ranks, 10)
        n += 1
    if not n:
        return {"n": 0}
    return {
        "dense_weight": dense_weight,
        "bm25_weight": bm25_weight,
        "rrf_k": rrf_k,
        "named_boost": named_boost,
        "hit_at_1": h1 / n,
        "hit_at_5": h5 / n,
        "mrr": rr / n,
        "ndcg_at_10": nd / n,
        "n": n,
    }


def fusion_grid(
    rows: Sequence[dict],
    gold_of,
    bm25_weights=(0.0, 0.3, 0.6, 1.0, 1.5, 2.5),
    rrf_ks=(5, 20, 60),
    dense_weight: float = 1.0,
    named_boosts=(0.0,),
) -> list[dict]:
    out = [
        evaluate_fusion(rows, gold_of, dense_weight, w, k, named_boost=b)
        for w in bm25_weights
        for k in rrf_ks
        for b in named_boosts
    ]
    return sorted([g for g in out if g.get("n")], key=lambda g: (-g["mrr"], -g["hit_at_5"]))


def replication_check(rows: Sequence[dict], settings, depth: int) -> float | None:
    """Share of hybrid rows whose engine ranking the replay reproduces: every ranked paper gets the same
    fused score (to 1e-5) and the order is non-increasing in it (exact ties may be ordered either way)."""
    same = n = 0
    for r in rows:
        if r.get("mode") != "hybrid" or not r.get("sides") or not r.get("ranked"):
            continue
        sc = fuse_scores(
            r["sides"],
            settings.retrieval.dense_weight,
            settings.retrieval.bm25_weight,
            settings.retrieval.rrf_k,
            named_boost=settings.retrieval.named_boost,
        )
        ranked = r["ranked"][:depth]
        ok = all(abs(sc.get(p["paper_id"], -1.0) - p["score"]) < 1e-5 for p in ranked)
        top = sorted(sc.values(), reverse=True)[: len(ranked)]
        ok = ok and all(abs(a - p["score"]) < 1e-5 for a, p in zip(top, ranked))
        same += ok
        n += 1

    return same / n if n else None


# ---------------------------------------------------------------- per-row features and the report section


def features(engine, query: str, hits: list, top_k: int, task: str) -> tuple[dict, dict]:
    """Calibration features for one query and the per-side paper rankings (for offline re-fusion).

    `refusal` is rag.grounding.cite.relevance over the top_k (for summaries among the `summary_candidates`); the
    engine's own decision signals are the row's `signals` (rag.grounding.outcome).
    """
    from rag.grounding import cite
    from rag.retrieval.retrieve import group_by_paper

    s = engine.settings
    shown = hits[: max(top_k, s.generation.summary_candidates) if task == "summarize" else top_k]
    per_hit = [cite.relevance(query, [h], engine.judge) for h in shown]
    vec = engine.retriever.encode_query([query])[0]  # the retriever's own query vector (rag.models.minilm)
    dense = group_by_paper(engine.index.dense(vec, s.retrieval.candidates))
    bm25 = group_by_paper(engine.retriever.bm25().search(query))
    sides = {
        "dense": [
            [pid, round(cs[0][1], 5)] for pid, (_, cs) in sorted(dense.items(), key=lambda kv: kv[1][0])
        ],
        "bm25": [[pid, round(cs[0][1], 4)] for pid, (_, cs) in sorted(bm25.items(), key=lambda kv: kv[1][0])],
    }
    feats = {
        "relevance": max(per_hit) if per_hit else 0.0,  # = rag.grounding.cite.relevance(query, shown, judge)
        "relevance_per_hit": [round(x, 4) for x in per_hit],
        "fused_top": [round(h.score, 6) for h in hits[:5]],
        "dense_top": [x[1] for x in sides["dense"][:5]],
        "bm25_top": [x[1] for x in sides["bm25"][:5]],
    }
    if task == "summarize":
        feats["refusal"], feats["refusal_signal"] = feats["relevance"], "relevance (summary candidates)"
    else:
        feats["refusal"], feats["refusal_signal"] = feats["relevance"], "relevance"
    # the named-term boost the fusion adds per paper (rag/retrieval/retrieve.py), so the replay can add it too
    sides["named_share"] = named_shares(
        engine, query, {pid for side in ("dense", "bm25") for pid, _ in sides[side]}
    )
    return feats, sides


def named_shares(engine, query: str, pids: set[str]) -> dict[str, float]:
    """Per paper, the share of the query's boosted names it mentions, read as the retriever reads them."""
    terms = boosted(named_terms(query))
    if not terms:
        return {}
    lexical = engine.retriever.bm25()
    out = {}
    for pid in sorted(pids):
        share = sum(mentions(lexical.named_text(pid), t) for t in terms) / len(terms)
        if share:
            out[pid] = round(share, 4)
    return out


def calibration_section(rows: list[dict], s, id_map, depth: int) -> dict:
    hybrid = [r for r in rows if r.get("config") == "hybrid" and not r.get("error")]
    if not any("sides" in r for r in rows):  # a gate replay: no retrieval sides were dumped
        return {}
    base = hybrid or [r for r in rows if r.get("config") in ENGINE_MODES and not r.get("error")]
    gold_of = lambda r: [frozenset(k) for k in r["gold_keys"]]  # noqa: E731
    answers = [r for r in base if r.get("task") == "answer"]  # summaries refuse on another signal
    feats = [
        k
        for k in ("refusal", "answerability", "relevance")
        if any(k in r.get("features", {}) for r in answers)
    ]
    boost = s.retrieval.named_boost
    return {
        "refusal_signal": next(
            (r["features"].get("refusal_signal") for r in answers if r.get("features")), None
        ),
        "refusal_sweeps": {k: refusal_sweep(answers, key=k, thresholds=SWEEP) for k in feats}
        if answers
        else {},
        "refusal_auc": {k: refusal_auc(answers, key=k) for k in feats} if answers else {},
        "fusion_grid": fusion_grid(
            base,
            gold_of,
            named_boosts=(0.0, 1.0, 2.0)
            if boost or any(r.get("sides", {}).get("named_share") for r in base)
            else (0.0,),
        )[:15]
        if base
        else [],
        "fusion_replication": replication_check(hybrid, s, depth),
        "current": {
            "dense_weight": s.retrieval.dense_weight,
            "bm25_weight": s.retrieval.bm25_weight,
            "rrf_k": s.retrieval.rrf_k,
            "named_boost": boost,
            "refuse_bar": s.grounding.refuse_bar,
        },
    }
