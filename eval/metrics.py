"""Pure metric functions over eval rows (plain dicts), no model or index imports.

Conventions
- A *gold item* is one expected paper, given as `{"file", "index"}` or `{"id"}`. It is resolved to a
  set of keys (`id:<openreview id>`, `fi:<file>#<index>`) through the seed metadata, so seed gold
  also matches the same paper in the full corpus (where only the id is shared).
- A *paper* (retrieved or cited) is a dict with `paper_id`, `source_file`, `index`.
- Ranks are 1-based; `None` means "not retrieved within the depth looked at".
"""

from __future__ import annotations

import json
import math
import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path

# NLTK's English list (the one llama-index bundles), inlined: importing llama-index costs ~5 s.
STOPWORDS = frozenset(
    """a about above after again against ain all am an and any are aren aren't as at be because been before
    being below between both but by can couldn couldn't d did didn didn't do does doesn doesn't doing don
    don't down during each few for from further had hadn hadn't has hasn hasn't have haven haven't having he
    he'd he'll he's her here hers herself him himself his how i i'd i'll i'm i've if in into is isn isn't it
    it'd it'll it's its itself just ll m ma me mightn mightn't more most mustn mustn't my myself needn
    needn't no nor not now o of off on once only or other our ours ourselves out over own re s same shan
    shan't she she'd she'll she's should should've shouldn shouldn't so some such t than that that'll the
    their theirs them themselves then there these they they'd they'll they're they've this those through to
    too under until up ve very was wasn wasn't we we'd we'll we're we've were weren weren't what when where
    which while who whom why will with won won't wouldn wouldn't y you you'd you'll you're you've your yours
    yourself yourselves""".split()
)
FACT_THRESHOLD = 0.7
SPECIFIC_TYPES = ("factoid", "multi", "followup", "paraphrase")
UNANSWERABLE = "unanswerable"

_TOKEN = re.compile(r"[^\W_]+", re.UNICODE)  # letters/digits runs: punctuation (incl. '_', '^', '{') splits
_MARKERS = re.compile(r"\[\d+(?:\s*[,;]\s*\d+)*\]")
_ABSTAIN = re.compile(
    r"\b(?:do(?:es)?n[o’']?t|do(?:es)? not|cannot|can't|unable to|no information|not (?:mentioned|provided|specified|stated|given|available|contain))"
    r"[^.]*\b(?:answer|contain|mention|provide|specify|say|state|include|information|abstracts?|sources?)\b",
    re.IGNORECASE,
)


# ------------------------------------------------------------------ gold resolution


def load_id_map(metadata_path: Path | str) -> dict[tuple[str, int], str]:
    """(seed file name, index) -> OpenReview id, from seeds/metadata.jsonl."""
    out: dict[tuple[str, int], str] = {}
    p = Path(metadata_path)
    if not p.exists():
        return out
    for line in p.read_text(encoding="utf-8").splitlines():
        if line.strip():
            r = json.loads(line)
            if r.get("id"):
                out[(r["file"], int(r["index"]))] = str(r["id"])
    return out


def gold_keys(item: dict, id_map: dict[tuple[str, int], str] | None = None) -> frozenset[str]:
    """All keys under which one gold paper may show up."""
    keys: set[str] = set()
    if item.get("id"):
        keys.add(f"id:{item['id']}")
    if item.get("file") is not None and item.get("index") is not None:
        f, i = str(item["file"]), int(item["index"])
        keys.add(f"fi:{f}#{i}")
        if id_map and (f, i) in id_map:
            keys.add(f"id:{id_map[(f, i)]}")
    if not keys:
        raise ValueError(f"gold item {item!r} has neither 'id' nor 'file'+'index'")
    return frozenset(keys)


def paper_keys(p: dict) -> frozenset[str]:
    keys = {f"id:{p['paper_id']}"} if p.get("paper_id") else set()
    if p.get("source_file") is not None and p.get("index") is not None:
        keys.add(f"fi:{p['source_file']}#{int(p['index'])}")
    return frozenset(keys)


def resolve_gold(gold: Iterable[dict], id_map: dict | None = None) -> list[frozenset[str]]:
    return [gold_keys(g, id_map) for g in gold]


def match_gold(p: dict, gold: Sequence[frozenset[str]]) -> int | None:
    """Index of the gold item `p` is, or None."""
    pk = paper_keys(p)
    for j, g in enumerate(gold):
        if pk & g:
            return j
    return None


# ------------------------------------------------------------------ retrieval


def gold_ranks(ranked: Sequence[dict], gold: Sequence[frozenset[str]]) -> list[int | None]:
    """For each gold item, the 1-based rank of the first ranked paper that is it (None: absent)."""
    ranks: list[int | None] = [None] * len(gold)
    for r, p in enumerate(ranked, start=1):
        j = match_gold(p, gold)
        if j is not None and ranks[j] is None:
            ranks[j] = r
    return ranks


def hit_at_k(ranks: Sequence[int | None], k: int) -> float:
    """1 when any gold paper is within the top k."""
    return float(any(r is not None and r <= k for r in ranks))


def recall_at_k(ranks: Sequence[int | None], k: int) -> float:
    """Share of the gold papers within the top k."""
    if not ranks:
        return 0.0
    return sum(1 for r in ranks if r is not None and r <= k) / len(ranks)


def reciprocal_rank(ranks: Sequence[int | None]) -> float:
    found = [r for r in ranks if r is not None]
    return 1.0 / min(found) if found else 0.0


def ndcg_at_k(ranks: Sequence[int | None], k: int = 10) -> float:
    """Binary-relevance nDCG@k: every gold paper counts 1."""
    if not ranks:
        return 0.0
    dcg = sum(1.0 / math.log2(r + 1) for r in ranks if r is not None and r <= k)
    idcg = sum(1.0 / math.log2(i + 1) for i in range(1, min(len(ranks), k) + 1))
    return dcg / idcg


def retrieval_scores(ranked: Sequence[dict], gold: Sequence[frozenset[str]], depth: int = 20) -> dict:
    ranks = gold_ranks(ranked, gold)
    return {
        "gold_ranks": ranks,
        "hit_at_1": hit_at_k(ranks, 1),
        "hit_at_5": hit_at_k(ranks, 5),
        "hit_at_10": hit_at_k(ranks, 10),
        "rr": reciprocal_rank(ranks),
        "ndcg_at_10": ndcg_at_k(ranks, 10),
        "recall_at_k": [recall_at_k(ranks, k) for k in range(1, depth + 1)],
    }


# ------------------------------------------------------------------ citations and answers


def citation_precision(cited: Sequence[dict], gold: Sequence[frozenset[str]]) -> float | None:
    """Share of the distinct cited papers that are gold; None when nothing is cited."""
    papers = _distinct(cited)
    if not papers:
        return None
    return sum(1 for p in papers if match_gold(p, gold) is not None) / len(papers)


def citation_recall(cited: Sequence[dict], gold: Sequence[frozenset[str]]) -> float | None:
    """Share of the gold papers cited; None for questions without gold."""
    if not gold:
        return None
    found = {match_gold(p, gold) for p in cited} - {None}
    return len(found) / len(gold)


def _distinct(papers: Sequence[dict]) -> list[dict]:
    seen, out = set(), []
    for p in papers:
        k = paper_keys(p)
        if k and not (k & seen):
            seen |= k
            out.append(p)
    return out


def content_tokens(text: str) -> list[str]:
    """Lowercased letter/digit runs, punctuation and stopwords removed, numbers kept."""
    return [t for t in _TOKEN.findall(text.lower()) if t not in STOPWORDS]


def fact_found(fact: str, answer: str, threshold: float = FACT_THRESHOLD) -> bool:
    """A fact counts when >= threshold of its content tokens occur in the answer ([n] markers ignored)."""
    toks = content_tokens(fact)
    if not toks:
        return False
    have = set(content_tokens(_MARKERS.sub(" ", answer)))
    return sum(1 for t in toks if t in have) / len(toks) >= threshold - 1e-9


def fact_recall(facts: Sequence[str], answer: str, threshold: float = FACT_THRESHOLD) -> float | None:
    if not facts:
        return None
    return sum(fact_found(f, answer, threshold) for f in facts) / len(facts)


def supported_share(sentences: Sequence[dict], fallback: bool = False) -> float | None:
    """Share of an answer's sentences the judge accepts. An extractive fallback means the generated text
    had no supported sentence at all, so it scores 0 (the shown extract is supported by construction)."""
    if fallback:
        return 0.0
    if not sentences:
        return None
    return sum(1 for s in sentences if s.get("supported")) / len(sentences)


def abstains(answer: str) -> bool:
    """The generated text itself says the sources don't answer (a refusal the engine didn't flag)."""
    return bool(_ABSTAIN.search(answer or ""))


def percentile(values: Sequence[float], q: float) -> float | None:
    """Linear-interpolated percentile (q in [0, 100]); None for no values."""
    v = sorted(x for x in values if x is not None)
    if not v:
        return None
    pos = (len(v) - 1) * q / 100.0
    lo, hi = math.floor(pos), math.ceil(pos)
    return v[lo] + (v[hi] - v[lo]) * (pos - lo)


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
