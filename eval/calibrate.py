"""Calibration: per-row features the runner dumps (refusal signals) and an offline sweep of the fusion
weights over the retriever's own trace.

Every row dumps `sides`: the `Trace` of the engine's deep retrieval (rag.retrieval.retrieve: each side's
paper ranks and weight, the named-term shares). `fuse` replays it with `Trace.scores`, the retriever's own
fusion, so weights can be swept in milliseconds without re-running queries.
"""

from __future__ import annotations

from collections.abc import Sequence

from eval.metrics import gold_ranks, hit_at_k, ndcg_at_k, reciprocal_rank
from eval.scores import refusal_auc, refusal_sweep
from rag.retrieval.retrieve import Trace

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


def fuse(
    sides: dict | Trace,
    dense_weight: float,
    bm25_weight: float,
    rrf_k: int,
    named_boost: float = 0.0,
    paper_weight: float | None = None,
) -> list[str]:
    """Paper ids best first, the traced retrieval re-fused with these weights (ties: first seen). The paper
    side is re-weighted only when it was traced (run with a tiny `paper_weight` to sweep it)."""
    weights = {"dense": dense_weight, "bm25": bm25_weight}
    if paper_weight is not None:
        weights["paper"] = paper_weight
    scores = (sides if isinstance(sides, Trace) else Trace.from_json(sides)).scores(
        weights, rrf_k, named_boost
    )
    return sorted(scores, key=lambda p: -scores[p])


FUSION_GRID = {
    "bm25_weight": (0.6, 1.0, 1.5, 2.0, 2.5, 3.5),
    "paper_weight": (0.0, 0.5, 1.0),
    "rrf_k": (5, 10, 20, 60),
    "named_boost": (0.0, 1.0, 2.0),
}


def fusion_lofo(runs: dict[str, Sequence[dict]], current: dict, grid: dict = FUSION_GRID) -> dict:
    """Fusion weights chosen leaving one question file out: for each run (one question file at one scale),
    the grid point with the best mean hit@1 (then MRR) over the other runs, scored on the run left out, beside
    the current weights. Replayed on the dumped traces; the term cover's moves are not replayed."""
    import itertools

    points = [dict(zip(grid, v)) for v in itertools.product(*grid.values())]
    cur = {k: current[k] for k in grid}
    if cur not in points:
        points.append(cur)
    # traces parsed once: every grid point re-fuses the same rows
    traced = {
        name: [
            {
                "answerable": True,
                "sides": Trace.from_json(r["sides"]),
                "gold": [frozenset(k) for k in r["gold_keys"]],
            }
            for r in rows
            if r.get("answerable") and r.get("sides") and r.get("gold_keys") and not r.get("error")
        ]
        for name, rows in runs.items()
    }
    traced = {k: v for k, v in traced.items() if v}

    def score(p: dict, rows) -> tuple[float, float]:
        m = evaluate_fusion(
            rows, lambda r: r["gold"], 1.0, p["bm25_weight"], p["rrf_k"], p["named_boost"], p["paper_weight"]
        )
        return m["hit_at_1"], m["mrr"]

    table = {name: [score(p, rows) for p in points] for name, rows in traced.items()}
    i_cur = points.index(cur)

    def mean(names, i: int, m: int = 0) -> float:
        return sum(table[n][i][m] for n in names) / len(names)

    per_run = []
    for name in sorted(traced):
        others = [o for o in traced if o != name]
        pick = max(range(len(points)), key=lambda i: (mean(others, i), mean(others, i, 1)))
        per_run.append(
            {
                "run": name,
                "n": len(traced[name]),
                "current": dict(zip(("hit_at_1", "mrr"), table[name][i_cur])),
                "chosen": points[pick],
                "held_out": dict(zip(("hit_at_1", "mrr"), table[name][pick])),
            }
        )
    gains = [r["held_out"]["hit_at_1"] - r["current"]["hit_at_1"] for r in per_run]
    best = sorted(range(len(points)), key=lambda i: -mean(traced, i))[:5]
    return {
        "current": cur,
        "runs": per_run,
        "mean_gain_hit_at_1": sum(gains) / len(gains) if gains else None,
        "runs_worse": sum(g < -1e-9 for g in gains),
        "runs_better": sum(g > 1e-9 for g in gains),
        "best_in_sample": [{**points[i], "macro_hit_at_1": mean(traced, i)} for i in best],
        "current_macro_hit_at_1": mean(traced, i_cur),
    }


def _papers(ids: Sequence[str]) -> list[dict]:
    return [{"paper_id": i} for i in ids]


def evaluate_fusion(
    rows: Sequence[dict],
    gold_of,
    dense_weight: float,
    bm25_weight: float,
    rrf_k: int,
    named_boost: float = 0.0,
    paper_weight: float | None = None,
) -> dict:
    """Mean hit@1/hit@5/MRR/nDCG@10 over answerable rows with dumped sides. `gold_of(row)` -> gold keys."""
    h1 = h5 = rr = nd = 0.0
    n = 0
    for r in rows:
        if not r.get("answerable") or not r.get("sides"):
            continue
        ranks = gold_ranks(
            _papers(fuse(r["sides"], dense_weight, bm25_weight, rrf_k, named_boost, paper_weight)), gold_of(r)
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


# ---------------------------------------------------------------- per-row features and the report section


def features(engine, query: str, hits: list, top_k: int) -> dict:
    """Calibration features for one query. `refusal` is rag.grounding.cite.relevance over the top_k; the
    engine's own decision signals are the row's `signals`."""
    from rag.grounding import cite

    shown = hits[:top_k]
    per_hit = [cite.relevance(query, [h], engine.judge) for h in shown]
    feats = {
        "relevance": max(per_hit) if per_hit else 0.0,  # = rag.grounding.cite.relevance(query, shown, judge)
        "relevance_per_hit": [round(x, 4) for x in per_hit],
        "fused_top": [round(h.score, 6) for h in hits[:5]],
    }
    feats["refusal"], feats["refusal_signal"] = feats["relevance"], "relevance"
    return feats


def calibration_section(rows: list[dict], s) -> dict:
    hybrid = [r for r in rows if r.get("config") == "hybrid" and not r.get("error")]
    if not any("sides" in r for r in rows):  # a gate replay: no retrieval sides were dumped
        return {}
    base = hybrid or [r for r in rows if r.get("config") in ENGINE_MODES and not r.get("error")]
    base = [r for r in base if r.get("sides")]
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
            named_boosts=(0.0, 1.0, 2.0) if boost or any(r["sides"].get("shares") for r in base) else (0.0,),
        )[:15]
        if base
        else [],
        "current": {
            "dense_weight": s.retrieval.dense_weight,
            "bm25_weight": s.retrieval.bm25_weight,
            "rrf_k": s.retrieval.rrf_k,
            "named_boost": boost,
            "refuse_bar": s.grounding.refuse_bar,
        },
    }
