"""Per-question metric functions over plain dicts, no model or index imports: gold resolution,
retrieval ranks, citations and answers, percentiles. eval/scores.py applies them to eval rows.

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
from collections.abc import Iterable, Sequence
from pathlib import Path

from rag.text import nltk_stopwords  # NLTK's list, as the product's; no model or index import

FACT_THRESHOLD = 0.7

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
    return [t for t in _TOKEN.findall(text.lower()) if t not in nltk_stopwords()]


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
