"""Topic -> every indexed paper about it (recall first), each with the abstract sentence that shows it.

Candidates: dense and BM25, `lister_candidates` chunks deep each, deeper (doubling, up to
`lister_max_candidates`) while the pool's last quarter still clears the bar; scored unfiltered, then
filtered, so a filter only removes papers. Score (`lister_scoring`,
rag.shapes.list_score): "model" (default) is a logistic model over cheap signals of the paper's stored vector
and words, fitted on the calibration topics; "paper" blends the topic's cosine with the share of its
words the paper uses; "sentence" embeds every abstract sentence and takes the citation judge's best.
The quote is the sentence sharing most of the topic's words. A paper is listed when it clears
`lister_min_score` (blended scores: and `lister_relative` x the topic's best). Best first.
"""

from __future__ import annotations

import html
import re
import time
from collections import Counter
from dataclasses import dataclass, field

from rag.errors import UserError
from rag.grounding.cite import Judge
from rag.retrieval.filters import Filters, filters_from_question
from rag.text import claim_rank, content_words, without_venue
from rag.types import Hit, Paper

FIELDS = ("decision", "area", "author")


@dataclass
class Listed:
    paper: Paper
    quote: str  # the best-matching sentence, a substring of the abstract
    score: float

    def to_json(self) -> dict:
        return {**self.paper.card(), "quote": self.quote, "score": round(self.score, 4)}


@dataclass
class PaperList:
    topic: str
    filters: Filters
    papers: list[Listed] = field(default_factory=list)
    candidates: int = 0
    seconds: float = 0.0
    # parts of the topic that none of the best papers covers (then nothing is listed; not in to_json)
    lacking: list[str] = field(default_factory=list)
    # papers that cleared the bar, before `limit` (not in to_json: its counts add up to `papers`)
    found: int = 0
    # a lacking word no abstract uses -> the indexed word it is one typo from ("difusion" -> "diffusion")
    suggested: dict[str, str] = field(default_factory=dict)
    # False: papers still cleared the bar at the deepest pool looked at (lister_max_candidates), so
    # `found` is a lower bound ("at least")
    complete: bool = True
    # filter fields read from the topic's words ("orals on X", "papers by NAME"), not set by the caller
    detected: tuple[str, ...] = ()
    # an author and no topic: their papers (`papers`, every one) and co-authors (rag.retrieval.authors)
    author: object | None = None
    # why nothing is listed when no paper was scored ("*": no word to look for)
    reason: str = ""
    # a `like:ID` topic: the paper whose nearest papers these are (rag.retrieval.similar)
    like: Paper | None = None

    @property
    def query(self) -> tuple[str, str | None, str | None, str | None]:
        """The topic and filters that give this list again (Find papers' controls)."""
        return (self.topic, self.filters.decision, self.filters.area, self.filters.author)

    def why_empty(self, what: str = "") -> str:
        """Why nothing is listed although some papers are close: the CLI's and the Find page's words."""
        if self.reason:
            return self.reason
        if not self.lacking:
            return (
                f"No indexed paper on “{self.topic}”{what} clears the relevance bar: the closest ones are "
                "about only part of it. Try other words, or remove a filter."
            )
        words = ", ".join(
            f"{w} (did you mean “{self.suggested[w]}”?)" if w in self.suggested else w for w in self.lacking
        )
        return (
            f"No indexed paper is about “{self.topic}”{what}: the closest ones never cover {words}. "
            "Try other words, or remove a filter."
        )

    def heading(self) -> str:
        """The list's title in a Markdown export (`rag list --markdown`, Find papers)."""
        rest = Filters(self.filters.decision, self.filters.area)
        if self.author is not None:
            what = f" ({rest.describe()})" if rest else ""
            return f"ICLR 2025 papers by an author matching {self.author.name}{what}"
        what = f" ({self.filters.describe()})" if self.filters else ""
        if self.like is not None:
            return f"ICLR 2025 papers nearest to {self.like.label}{what}"
        return f"ICLR 2025 papers on {self.topic}{what}"

    def by(self, key) -> dict[str, int]:
        return dict(Counter(key(x.paper) or "unknown" for x in self.papers).most_common())

    def to_json(self) -> dict:
        out = {
            "topic": self.topic,
            "filters": self.filters.to_json(),
            "count": len(self.papers),
            "by_decision": self.by(lambda p: p.decision),
            "by_area": self.by(lambda p: html.unescape(p.primary_area) if p.primary_area else None),
            "papers": [x.to_json() for x in self.papers],
        }
        if self.author is not None:
            out["coauthors"] = self.author.to_json()["coauthors"]
            out["matched_authors"] = self.author.matched
        if self.like is not None:
            out["like"] = {"paper_id": self.like.paper_id, "title": self.like.title}
        return out


def read_topic(topic: str, filters: Filters | None = None) -> tuple[str, Filters, tuple[str, ...]]:
    """A decision or author named in the topic ("orals about diffusion", "papers by NAME") that no filter
    sets becomes one: (the topic without those words, the filters, the fields taken from the topic)."""
    topic = " ".join((topic or "").split())
    filters = filters or Filters()
    found, cleaned = filters_from_question(topic)
    taken = tuple(k for k in ("decision", "author") if getattr(found, k) and not getattr(filters, k))
    merged = _merged(found, filters, taken) if taken else filters
    if merged.author and not content_words(cleaned if taken else topic):  # "papers by NAME": no topic
        return "", merged, taken
    if not taken:
        return topic, filters, ()
    cleaned = re.sub(
        r"^(?:papers?|submissions?|works?)\s*(?:(?:about|on|in|for|using|with)\s+|$)", "", cleaned, flags=re.I
    )
    return cleaned.strip(), _merged(found, filters, taken), taken


def _merged(found: Filters, filters: Filters, taken) -> Filters:
    return Filters(*(getattr(found, k) if k in taken else getattr(filters, k) for k in FIELDS))


def find(
    retriever,
    settings,
    topic: str,
    filters: Filters | None = None,
    limit: int | None = None,
    check_coverage: bool = True,
) -> PaperList:
    """The one lister: `rag list`, Find papers and the chat call this with the topic and filters they read,
    and get the same list and count. A decision or author named in the topic becomes a filter
    (`read_topic`); an author and no topic lists every paper of that author (rag.retrieval.authors); `like:PAPER_ID`
    lists the papers nearest to that one (rag.retrieval.similar, at most `SIMILAR` unless `limit`)."""
    from rag.retrieval.similar import liked

    topic, f, detected = read_topic(topic, filters)
    if not topic and f.author:
        res = author_list(retriever, f, limit)
    elif liked(topic):
        res = similar_list(retriever, liked(topic), f, limit or SIMILAR)
    else:
        res = list_papers(retriever, settings, topic, f, limit=limit, check_coverage=check_coverage)
    res.detected = detected
    return res


SIMILAR = 20  # papers a `like:ID` topic lists


def _said(p: Paper) -> str:
    """The paper's first sentence stating its contribution, else its first where the authors speak, else its
    first: its line in a list that no topic chose a sentence for."""
    return max(p.sentence_texts, key=claim_rank)


def similar_list(retriever, paper_id: str, filters: Filters, k: int) -> PaperList:
    """The `k` papers nearest to one (rag.retrieval.similar), those matching `filters`; the score is the cosine."""
    from rag.retrieval.similar import similar

    t0 = time.perf_counter()
    if filters:
        filters.validate(retriever.bm25().papers)
    paper, near = similar(retriever, paper_id, k, filters)
    listed = [Listed(p, _said(p), score) for p, score in near]
    return PaperList(
        f"like:{paper_id}",
        filters,
        listed,
        len(listed),
        time.perf_counter() - t0,
        found=len(listed),
        like=paper,
    )


def author_list(retriever, filters: Filters, limit: int | None = None) -> PaperList:
    """Every indexed paper of the filter's author (and its decision and area, if set), best decision first,
    each quoted by its first sentence stating the contribution (else its first)."""
    from rag.retrieval.authors import author_view

    t0 = time.perf_counter()
    papers = retriever.bm25().papers
    filters.validate(papers)  # a name no paper has: the error says so
    view = author_view(papers, filters.author)
    rest = Filters(filters.decision, filters.area)
    view.papers = [p for p in view.papers if rest.matches(p)]
    listed = [Listed(p, _said(p), 1.0) for p in view.papers]
    shown = listed[:limit] if limit else listed
    return PaperList(
        "",
        filters,
        shown,
        candidates=len(papers),
        seconds=time.perf_counter() - t0,
        found=len(listed),
        author=view,
    )


def candidates(retriever, settings, topic: str, filters: Filters, depth: int | None = None) -> list[Hit]:
    """Every retrieved paper, fused order: `depth` (default `lister_candidates`) chunks deep on each side,
    filtered."""
    n = depth or settings.lists.lister_candidates
    cands = retriever.retrieve(
        topic, top_k=2 * n, mode=settings.retrieval.mode, filters=filters, candidates=n
    )
    return [Hit(h.paper, h.score, []) for h in cands]


def candidate_features(retriever, settings, topic: str, hits: list[Hit]) -> dict:
    """rag.shapes.list_score.features for these candidates, from the store's paper vectors and the index's idf."""
    from rag.shapes.list_score import features

    s = settings
    lexical = retriever.bm25()
    _, row, mat = lexical.paper_matrix
    return features(
        hits,
        topic,
        retriever.encode_query,
        lambda pid: mat[row[pid]] if pid in row else None,
        lexical.idf,
        s.lists.lister_cos_weight,
        s.lists.lister_title_weight,
    )


def list_papers(
    retriever,
    settings,
    topic: str,
    filters: Filters | None = None,
    limit: int | None = None,
    judge: Judge | None = None,
    check_coverage: bool = True,
    bar: float | None = None,
) -> PaperList:
    """Every paper that clears the relevance bar, best first (at most `limit`); none when the best of them
    all lack part of the topic (`uncovered`; `check_coverage=False`: the caller has checked). `bar`: list
    every candidate scoring at least this instead (eval: -inf, to sweep bars afterwards); how deep the pool
    goes is still decided at the settings' bar."""
    t0 = time.perf_counter()
    s = settings
    topic = " ".join((topic or "").split())
    topic = without_venue(topic) if topic else topic  # "ICLR 2025 papers on X": every paper is one
    if not topic:
        raise UserError('The topic is empty. Give a topic, e.g. `rag list "diffusion models"`.')
    if retriever.index.count() == 0:
        raise UserError("Nothing is indexed yet. Run `rag ingest` (or `rag ingest --conference`) first.")
    f = filters or Filters()
    if f:
        f.validate(retriever.bm25().papers)  # a value no paper has: the error lists the valid ones
    if not content_words(topic):  # "*", "the": nothing to look for, so no paper is about it
        why = f"“{topic}” has no word to look for: no paper is listed. Give a topic, e.g. “diffusion models”."
        return PaperList(topic, f, reason=why, seconds=time.perf_counter() - t0)
    # scored on the unfiltered pool, then filtered: a filter only removes papers, it never moves the bar
    # (a filtered pool made every signal relative to the best *matching* paper: off-topic orals listed)
    depth, seen, every = s.lists.lister_candidates, -1, len(retriever.bm25().papers)
    while True:
        hits = candidates(retriever, s, topic, Filters(), depth)
        best, at = _scores(retriever, s, topic, hits, judge)
        on = [i in best and best[i][0] >= at for i in range(1, len(hits) + 1)]
        # a broad topic still clearing the bar at the end of the pool: look deeper (the gold topics never do);
        # decided on the whole pool, so a filtered list is the unfiltered list's matching papers, exactly
        # (a broad topic with a narrow filter pays the broad topic's time: "large language models" by one
        # author, 4.6 s)
        tail = on[len(on) * 3 // 4 :]
        deeper = bool(tail) and sum(tail) / len(tail) >= s.lists.lister_deepen_share
        if len(hits) in (seen, every):  # the pool holds every paper it can: nothing lies deeper
            deeper = False
        if not deeper or depth >= s.lists.lister_max_candidates:
            break
        seen, depth = len(hits), min(2 * depth, s.lists.lister_max_candidates)
    at = at if bar is None else bar
    listed = [
        Listed(h.paper, best[i][1], best[i][0])
        for i, h in enumerate(hits, start=1)
        if i in best and best[i][0] >= at and (not f or f.matches(h.paper))
    ]
    listed.sort(key=lambda x: (-x.score, x.paper.paper_id))
    lacking = uncovered(retriever, s, topic, listed) if check_coverage else []
    suggested = {}
    if lacking:
        listed = []
        suggested = retriever.bm25().typos(lacking, topic)
    found = len(listed)
    if limit:
        listed = listed[:limit]
    return PaperList(
        topic, f, listed, len(hits), time.perf_counter() - t0, lacking, found, suggested, complete=not deeper
    )


def _scores(retriever, settings, topic: str, hits: list[Hit], judge: Judge | None) -> tuple[dict, float]:
    """Candidate position (from 1) -> (score, quote), and the bar a listed paper clears."""
    from rag.shapes.list_score import probability, quote
    from rag.text import content_words

    s = settings
    best: dict[int, tuple[float, str]] = {}
    if s.lists.lister_scoring == "sentence":
        judge = judge or Judge(retriever.embedder, s.lists.lister_cos_weight)
        evidence = judge.evidence(hits)
        for e, score in zip(evidence, judge.scores(topic, evidence)):
            if e.paper_n not in best or score > best[e.paper_n][0]:
                best[e.paper_n] = (float(score), e.text)
    elif hits:
        feats = candidate_features(retriever, s, topic, hits)
        scores = (
            probability(feats, s.lists.lister_model, s.lists.lister_model_intercept)
            if s.lists.lister_scoring == "model"
            else feats["blend"]
        )
        words, idf = content_words(topic), retriever.bm25().idf
        for n, (h, score) in enumerate(zip(hits, scores), start=1):
            if q := quote(h.paper, words, idf):
                best[n] = (float(score), q)
    # an absolute bar, and (blended scores) one relative to the topic's best paper
    top = max((b[0] for b in best.values()), default=0.0)
    relative = 0.0 if s.lists.lister_scoring == "model" else s.lists.lister_relative
    return best, max(s.lists.lister_min_score, relative * top)


_LIST = re.compile(r"\band\b|\bor\b|/|,", re.I)  # "weather forecasting and climate modeling": any of them


def absent_part(topic: str, papers: list[Paper]) -> str | None:
    """The first part of a combined topic ("X for Y", rag.shapes.list_score.topic_parts) that none of `papers`
    names by any of its words (any form: plural, hyphenated or spaced, an acronym or its spelled-out
    initials); None when every part is named by one of them. A part listing alternatives ("A and B") is
    not checked: a paper on either covers it."""
    from rag.retrieval.names import mentions
    from rag.shapes.list_score import topic_parts
    from rag.text import WORD, stopwords

    parts = topic_parts(topic)
    if len(parts) < 2 or not papers:
        return None
    flats = [p.flat for p in papers]
    for part in parts:
        toks = [t.lower() for t in WORD.findall(part) if t.lower() not in stopwords() and len(t) > 1]
        if not toks or _LIST.search(part):
            continue
        initials = "".join(t[0] for t in toks) if len(toks) >= 2 else None
        if not any(any(mentions(f, t) for t in toks) or (initials and mentions(f, initials)) for f in flats):
            return part
    return None


def uncovered(retriever, settings, topic: str, listed: list[Listed]) -> list[str]:
    """The words of the topic that no indexed abstract uses, else those that every one of the first
    `lister_cover_check` listed papers lacks (rag.grounding.gaps.missing_aspects, the chat's list rule); empty when each
    word is covered by one of them ("recognition and translation": a paper on either covers its word). A
    topic no indexed paper is about ("knitting patterns") still has closest papers; this says they are not
    about it."""
    import numpy as np

    from rag.grounding.gaps import absent_words, bare, missing_aspects, to_cover, unknown_words, words_of

    s = settings
    top = [x.paper for x in listed[: s.lists.lister_cover_check]]
    if not top:
        return []
    known = retriever.bm25().known
    described = to_cover(topic)
    unknown = unknown_words(described, known)
    if unknown:  # a word no indexed abstract uses: no paper covers it, however close
        return unknown
    texts = [f"{p.title or ''} {p.text}" for p in top]
    # a part of a combined topic that none of them names at all: "quantum cryptography for blockchains"
    # over quantum papers that never say "blockchain"
    lost = absent_part(topic, top)
    if lost:
        return [lost]
    # what missing_aspects can find lacking is within the words a text never uses: none shared, nothing to embed
    if not set.intersection(*(absent_words(described, t, known) for t in texts)):
        return []

    def encode(xs: list[str]) -> np.ndarray:
        return np.asarray(retriever.encode_query(xs), dtype=np.float32)  # as in every caller (float32)

    # its sentences and title stand for a paper, as in the chat's list rule; all five embedded in one batch
    parts = [[p.text[a:b] for a, b, _ in p.sentences] + [p.title or p.label] for p in top]
    vecs = encode([x for ps in parts for x in ps])
    ends = np.cumsum([len(ps) for ps in parts])
    papers = [(text, vecs[end - len(ps) : end]) for text, ps, end in zip(texts, parts, ends)]
    gaps = missing_aspects(described, papers, encode, s.grounding.list_aspect_gain, known)
    common = set.intersection(*(words_of(g) for g in gaps))
    order = [bare(w).lower() for w in described.split()]
    return sorted(common, key=lambda w: order.index(w) if w in order else len(order))
