"""Eval rows -> report sections: each row's scores (score_row, from the metric functions of
eval/metrics.py), their aggregation over rows (aggregate, build_report, shape_scores) and the refusal
trade-off along one feature (refusal_sweep, refusal_auc)."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence

from eval.defects import answer_defects
from eval.metrics import (
    citation_precision,
    citation_recall,
    fact_found,
    fact_recall,
    match_gold,
    percentile,
    retrieval_scores,
    supported_share,
)

SPECIFIC_TYPES = ("factoid", "multi", "followup", "paraphrase")
# caveats that say something asked is not in the evidence (rag.types.MISSING_CODES; eval imports no rag)
MISSING_CODES = frozenset({"term_absent", "no_number", "not_stated", "partial_match", "not_in_followed"})


# ------------------------------------------------------------------ rows -> report


def _mean(xs: Iterable[float | None]) -> float | None:
    v = [x for x in xs if x is not None]
    return sum(v) / len(v) if v else None


def score_row(row: dict, gold: Sequence[frozenset[str]], depth: int = 20) -> dict:
    """Per-question scores from a row holding `ranked`, `cited`, `answer`, `sentences`, `facts`, ..."""
    sc: dict = {}
    answerable = bool(gold)
    if answerable and row.get("ranked") is not None:
        sc.update(retrieval_scores(row["ranked"], gold, depth))
    if row.get("generated"):
        refused = bool(row.get("refused"))
        if answerable:
            sc["cit_precision"] = None if refused else citation_precision(row.get("cited", []), gold)
            sc["cit_recall"] = 0.0 if refused else citation_recall(row.get("cited", []), gold)
            fr = fact_recall(row.get("facts", []), "" if refused else row.get("answer", ""))
            sc["fact_recall"] = fr
            sc["facts_found"] = [
                fact_found(f, "" if refused else row.get("answer", "")) for f in row.get("facts", [])
            ]
        sc["supported"] = (
            None if refused else supported_share(row.get("sentences", []), row.get("fallback", False))
        )
        missing = any(c.get("code") in MISSING_CODES for c in row.get("caveats") or [])
        if answerable:
            sc["hard_refused"] = float(refused)
            sc["caveat_on_asked"] = float(missing and not refused)
            sc["gold_cited"] = 0.0 if refused else float(bool(sc["cit_recall"]))
        else:
            sc["handled"] = float(refused or missing)
        if not refused and row.get("sentences") and "sources" in row:
            bad = answer_defects(row)
            sc["defective"] = float(bool(bad))
            sc["defects"] = bad
        if row.get("sentences") is not None and not refused:
            sc["supported_shown"] = [bool(s.get("supported")) for s in row["sentences"]]
    return sc


def aggregate(rows: Sequence[dict], depth: int = 20) -> dict:
    """Report sections (retrieval, citations, answers, unanswerable, answerable, latency) over `rows`.

    Each row has `type`, `answerable`, `scores` (from score_row), `refused`, `abstained`, `timings`,
    `generated` (whether the LLM ran). Keys are always present; a metric with no data is None.
    """
    rows = [r for r in rows if not r.get("error")]
    ans = [r for r in rows if r.get("answerable")]
    una = [r for r in rows if not r.get("answerable")]
    gen = any(r.get("generated") for r in rows)
    ret_rows = [r for r in ans if "hit_at_1" in r["scores"]]

    def avg(key, rs=ret_rows):
        return _mean(r["scores"].get(key) for r in rs)

    curve = [
        _mean(r["scores"]["recall_at_k"][k] for r in ret_rows if len(r["scores"]["recall_at_k"]) > k)
        for k in range(depth)
    ]
    rep: dict = {
        "n": len(rows),
        "retrieval": {
            "hit_at_1": avg("hit_at_1"),
            "hit_at_5": avg("hit_at_5"),
            "hit_at_10": avg("hit_at_10"),
            "mrr": avg("rr"),
            "ndcg_at_10": avg("ndcg_at_10"),
            "recall_at_5": curve[4] if depth >= 5 else None,
            "recall_at_10": curve[9] if depth >= 10 else None,
            "recall_at_k": curve,
            "n": len(ret_rows),
        },
    }
    gen_ans = [r for r in ans if r.get("generated")]
    answered = [r for r in rows if r.get("generated") and not r.get("refused")]
    shown = [s for r in answered if not r.get("fallback") for s in r["scores"].get("supported_shown", [])]
    rep["citations"] = {
        "precision": avg("cit_precision", gen_ans),
        "recall": avg("cit_recall", gen_ans),
        "supported_rate": _mean(r["scores"].get("supported") for r in answered if r.get("answerable")),
        "supported_rate_all": _mean(r["scores"].get("supported") for r in answered),
        "supported_sentences_micro": (sum(shown) / len(shown)) if shown else None,
        "fallback_rate": _mean(float(bool(r.get("fallback"))) for r in answered) if answered else None,
        "n": len(gen_ans),
    }
    rep["answers"] = {
        "fact_recall": avg("fact_recall", gen_ans),
        "n": len([r for r in gen_ans if r.get("facts")]),
    }
    rep["outcome"] = {
        "answerable_hard_refused": avg("hard_refused", gen_ans),
        "answerable_caveat_on_asked": avg("caveat_on_asked", gen_ans),
        "unanswerable_handled": _mean(r["scores"].get("handled") for r in una if r.get("generated")),
        "gold_cited": avg("gold_cited", gen_ans),
        "defective_answers": _mean(r["scores"].get("defective") for r in answered),
        "n_answered": len(answered),
    }
    rep["unanswerable"] = {
        "refusal_rate": _mean(float(bool(r.get("refused"))) for r in una) if una else None,
        "refusal_or_abstain_rate": _mean(float(bool(r.get("refused") or r.get("abstained"))) for r in una)
        if una and gen
        else None,
        "n": len(una),
    }
    rep["answerable"] = {
        "false_refusal_rate": _mean(float(bool(r.get("refused"))) for r in ans) if ans else None,
        "n": len(ans),
    }
    tot = [r["timings"].get("total_s") for r in rows if r.get("generated") and r.get("timings")]
    ret = [r["timings"].get("retrieve_s") for r in rows if r.get("timings")]
    gen_t = [r["timings"].get("generate_s") for r in rows if r.get("generated") and not r.get("refused")]
    ftok = [r["timings"].get("first_token_s") for r in rows if r.get("timings", {}).get("first_token_s")]
    tps = [r["timings"].get("tokens_per_s") for r in rows if r.get("timings", {}).get("tokens_per_s")]
    ptok = [r["timings"].get("prompt_tokens") for r in rows if r.get("timings", {}).get("prompt_tokens")]
    # first visible text: the first streamed delta (a refusal shows at once, when it is done)
    first = [
        (r.get("stream") or {}).get("first_delta_s") or r["timings"].get("total_s")
        for r in rows
        if r.get("generated") and r.get("timings")
    ]
    rep["latency"] = {
        "p50_s": percentile(tot, 50),
        "p95_s": percentile(tot, 95),
        "mean_s": _mean(tot),
        "retrieve_p50_s": percentile(ret, 50),
        "retrieve_p95_s": percentile(ret, 95),
        "generate_p50_s": percentile(gen_t, 50),
        "first_token_p50_s": percentile(ftok, 50),
        "tokens_per_s_p50": percentile(tps, 50),
        "first_text_p50_s": percentile([x for x in first if x is not None], 50),
        "prompt_tokens_p50": percentile(ptok, 50),
    }
    return rep


def build_report(rows: Sequence[dict], depth: int = 20) -> dict:
    """Overall sections + `specific` (retrieval over factoid/multi/followup/paraphrase) + `by_type`."""
    rep = aggregate(rows, depth)
    spec = aggregate([r for r in rows if r.get("type") in SPECIFIC_TYPES], depth)["retrieval"]
    rep["specific"] = {k: v for k, v in spec.items() if k != "recall_at_k"}
    by: dict[str, list[dict]] = defaultdict(list)
    for r in rows:
        by[r.get("type", "?")].append(r)
    rep["by_type"] = {t: aggregate(rs, depth) for t, rs in sorted(by.items())}
    for t in rep["by_type"].values():
        t["retrieval"].pop("recall_at_k", None)
    rep["errors"] = [{"id": r.get("id"), "error": r["error"]} for r in rows if r.get("error")]
    rep["shapes"] = shape_scores(rows)
    return rep


def shape_scores(rows: Sequence[dict]) -> dict:
    """Topic switches answered about the new paper, and list answers naming their gold papers.

    A switch row (subtype "switch") counts when it is answered and its first citation is a gold
    paper; a list row (answer shape "list", answerable) contributes its citation recall."""
    rows = [r for r in rows if not r.get("error") and r.get("generated")]
    switches = [r for r in rows if r.get("subtype") == "switch"]

    def first_cited_is_gold(r: dict) -> bool:
        cited = sorted(r.get("cited") or [], key=lambda c: c.get("n", 0))
        gold = [frozenset(g) for g in r.get("gold_keys", [])]
        return bool(cited) and not r.get("refused") and match_gold(cited[0], gold) is not None

    lists = [r for r in rows if r.get("shape") == "list" and r.get("answerable")]
    return {
        "topic_switch_new_paper": _mean(float(first_cited_is_gold(r)) for r in switches)
        if switches
        else None,
        "topic_switch_n": len(switches),
        "list_gold_named": _mean(r["scores"].get("cit_recall") or 0.0 for r in lists) if lists else None,
        "list_n": len(lists),
    }


def refusal_sweep(
    rows: Sequence[dict], thresholds: Sequence[float] | None = None, key: str = "relevance", only=None
) -> list[dict]:
    """Refusal trade-off if the engine refused below each threshold of `features[key]`. `only(row)`:
    the rule applies to these rows; the others stay in the rates as not refused."""
    thresholds = thresholds or [round(0.20 + 0.025 * i, 3) for i in range(17)]
    scored = [r for r in rows if r.get("features", {}).get(key) is not None]
    value = lambda r: r["features"][key] if only is None or only(r) else math.inf  # noqa: E731
    una = [value(r) for r in scored if not r.get("answerable")]
    ans = [value(r) for r in scored if r.get("answerable")]
    out = []
    for t in thresholds:
        out.append(
            {
                "threshold": t,
                "refusal_rate": (sum(x < t for x in una) / len(una)) if una else None,
                "false_refusal_rate": (sum(x < t for x in ans) / len(ans)) if ans else None,
            }
        )
    return out


def refusal_auc(rows: Sequence[dict], key: str = "relevance") -> float | None:
    """Probability that a random unanswerable question scores below a random answerable one on
    `features[key]` (ties count half): 1.0 = a threshold separates them perfectly, 0.5 = chance."""
    una = [
        r["features"][key]
        for r in rows
        if not r.get("answerable") and r.get("features", {}).get(key) is not None
    ]
    ans = [
        r["features"][key] for r in rows if r.get("answerable") and r.get("features", {}).get(key) is not None
    ]
    if not una or not ans:
        return None
    wins = sum((u < a) + 0.5 * (u == a) for u in una for a in ans)
    return wins / (len(una) * len(ans))
