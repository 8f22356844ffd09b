"""Topic -> every indexed paper about it (recall first), each with the abstract sentence that shows it.

Candidates: dense and BM25, `lister_candidates` chunks deep each, filtered. Score (`lister_scoring`):
"paper" (default) blends the topic's cosine to the paper's stored vector with the share of the topic's
content words its title and abstract use (nothing embedded at list time; the quote is the sentence
sharing most words); "sentence" embeds every abstract sentence and takes the citation judge's best.
A paper is listed when it clears `lister_min_score` and `lister_relative` x the topic's best. Best first.
"""

from __future__ import annotations

import html
import time
from collections import Counter
from dataclasses import dataclass, field

from rag.cite import Judge
from rag.errors import UserError
from rag.filters import Filters
from rag.types import Hit, Paper


@dataclass
class Listed:
    paper: Paper
    quote: str  # the best-matching sentence, a substring of the abstract
    score: float

    def to_json(self) -> dict:
        p = self.paper
        return {
            "paper_id": p.paper_id,
            "title": p.title,
            "decision": p.decision,
            "primary_area": html.unescape(p.primary_area) if p.primary_area else None,
            "authors": list(p.authors or []),
            "url": p.url,
            "quote": self.quote,
            "score": round(self.score, 4),
        }


@dataclass
class PaperList:
    topic: str
    filters: Filters
    papers: list[Listed] = field(default_factory=list)
    candidates: int = 0
    seconds: float = 0.0

    def by(self, key) -> dict[str, int]:
        return dict(Counter(key(x.paper) or "unknown" for x in self.papers).most_common())

    def to_json(self) -> dict:
        return {
            "topic": self.topic,
            "filters": self.filters.to_json(),
            "count": len(self.papers),
            "by_decision": self.by(lambda p: p.decision),
            "by_area": self.by(lambda p: html.unescape(p.primary_area) if p.primary_area else None),
            "papers": [x.to_json() for x in self.papers],
        }


def list_papers(
    retriever,
    topic: str,
    filters: Filters | None = None,
    limit: int | None = None,
    judge: Judge | None = None,
) -> PaperList:
    """Every paper that clears the relevance bar, best first (at most `limit`)."""
    t0 = time.perf_counter()
    s = retriever.settings
    topic = " ".join((topic or "").split())
    if not topic:
        raise UserError('The topic is empty. Give a topic, e.g. `rag list "diffusion models"`.')
    if retriever.index.count() == 0:
        raise UserError("Nothing is indexed yet. Run `rag ingest` (or `rag ingest --conference`) first.")
    f = filters or Filters()
    n = s.lister_candidates
    # every retrieved paper is a candidate: top_k as deep as the pools go
    cands = retriever.retrieve(topic, top_k=2 * n, mode=s.mode, filters=f, candidates=n)
    hits = [Hit(h.paper, h.score, []) for h in cands]
    if s.lister_scoring == "paper":
        best = paper_scores(retriever, topic, hits, s.lister_cos_weight, s.lister_title_weight)
    else:
        judge = judge or Judge(retriever.embedder, s.lister_cos_weight)
        best = {}
        evidence = judge.evidence(hits)
        for e, score in zip(evidence, judge.scores(topic, evidence)):
            if e.paper_n not in best or score > best[e.paper_n][0]:
                best[e.paper_n] = (float(score), e.text)
    # an absolute bar, and one relative to the topic's best paper (topics differ in how well they score)
    bar = max(s.lister_min_score, s.lister_relative * max((b[0] for b in best.values()), default=0.0))
    listed = [
        Listed(h.paper, best[i][1], best[i][0])
        for i, h in enumerate(hits, start=1)
        if i in best and best[i][0] >= bar
    ]
    listed.sort(key=lambda x: (-x.score, x.paper.paper_id))
    if limit:
        listed = listed[:limit]
    return PaperList(topic, f, listed, candidates=len(cands), seconds=time.perf_counter() - t0)


def paper_scores(
    retriever, topic: str, hits: list[Hit], cos_weight: float, title_weight: float = 0.0
) -> dict[int, tuple[float, str]]:
    """Hit number -> (score, quote) with no sentence embedded: the topic's cosine to the paper's stored
    vector (mean of its chunk vectors) blended with the share of the topic's content words that the title
    and abstract use, plus `title_weight` x the share the title alone uses; the quote is the abstract sentence sharing most of them (the first on ties)."""
    import numpy as np

    from rag.cite import blend
    from rag.text import INJECTION, content_words, sentence_spans

    lexical = retriever.bm25()
    _, row, mat = lexical.paper_matrix
    qv = np.asarray(retriever.embedder.encode([topic])[0], dtype=np.float32)
    words = content_words(topic)
    out: dict[int, tuple[float, str]] = {}
    for n, h in enumerate(hits, start=1):
        p = h.paper
        cos = float(mat[row[p.paper_id]] @ qv) if p.paper_id in row else 0.0
        have = p.words
        lex = len(words & have) / len(words) if words else 0.0
        in_title = len(words & content_words(p.title or "")) / len(words) if words else 0.0
        quote, most = "", -1
        for a, b in sentence_spans(p.text):
            t = p.text[a:b]
            k = len(words & content_words(t))
            if k > most and not INJECTION.search(t):
                quote, most = t, k
        if quote:
            out[n] = (blend(cos, lex, cos_weight) + title_weight * in_title, quote)
    return out
