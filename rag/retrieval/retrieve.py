"""Dense (Chroma) + BM25 (rag.retrieval.bm25) -> weighted reciprocal-rank fusion -> top papers with best chunks."""

from __future__ import annotations

import logging
import threading
import time
from collections import defaultdict
from dataclasses import dataclass, field

from rag.index.index import Index
from rag.retrieval.bm25 import BM25Side
from rag.retrieval.filters import Filters
from rag.retrieval.names import field_word, mentions, name_runs, named_terms
from rag.settings import GenerationSettings, Mode, RetrievalSettings
from rag.types import Chunk, Hit

log = logging.getLogger(__name__)


def group_by_paper(ranked: list[tuple[Chunk, float]]) -> dict[str, tuple[int, list[tuple[Chunk, float]]]]:
    """paper_id -> (rank of its best chunk among papers, its chunks best first)."""
    groups: dict[str, list[tuple[Chunk, float]]] = defaultdict(list)
    order: list[str] = []
    for c, s in ranked:
        if c.paper_id not in groups:
            order.append(c.paper_id)
        groups[c.paper_id].append((c, s))
    return {pid: (r, groups[pid]) for r, pid in enumerate(order, start=1)}


# the papers an answer reads: a named term the first ones miss is covered within them (`_cover_terms`)
CONTEXT_PAPERS = GenerationSettings.model_fields["context_papers"].default


class Retriever:
    """Retrieval reads its settings group; the store's group comes with the index."""

    def __init__(
        self, index: Index, embedder, retrieval: RetrievalSettings, context_papers: int = CONTEXT_PAPERS
    ):
        self.index = index
        self.embedder = embedder
        self.retrieval = retrieval
        self.context_papers = context_papers
        self._bm25: BM25Side | None = None
        self._state: tuple = ()
        self._checked = 0.0
        self._lock = threading.Lock()
        # The default filter of every retrieve() (settings decision/area/author; a caller may reset it).
        self.filters = Filters.of(retrieval.decision, retrieval.area, retrieval.author)
        self._float32 = None

    def encode_query(self, texts: list[str]):
        """Vectors of queries (a question, a topic and its parts): in float32 with rag.models.minilm when the
        embedder is the packaged MiniLM, so the CLI, the page and the chat get the same vectors and the same
        lists (the torch embedder computes in bfloat16 where the CPU has it: cosine 0.99998, enough to swap
        a paper at a list's bar); milliseconds for a short text. Another embedder encodes its own."""
        from rag.models.embedder import EMBEDDER_NAME, Embedder

        if not isinstance(self.embedder, Embedder) or self.embedder.name != EMBEDDER_NAME:
            return self.embedder.encode(texts)
        if self._float32 is None:
            from rag.models.minilm import QueryEmbedder

            self._float32 = QueryEmbedder(self.index.storage)
        return self._float32.encode(texts)

    def bm25(self) -> BM25Side:
        # Ingests through this process bump index.writes (free to read); another process's ingest
        # moves the store's generation marker, read (with the counts) at most every `store_check_s`:
        # store round trips per query were a sixth of its time at full scale.
        with self._lock:
            now = time.monotonic()
            if (
                self._bm25 is None
                or self.index.writes != self._state[0]
                or now - self._checked >= self.index.storage.store_check_s
            ):
                state = (
                    self.index.writes,
                    self.index.generation(),
                    self.index.count(),
                    self.index.paper_count(),
                )
                self._checked = now
                if self._bm25 is None or state != self._state:
                    self._bm25 = BM25Side(
                        self.index,
                        self.index.storage.data_dir / "bm25",
                        self.retrieval.candidates,
                    )
                    self._state = state
            return self._bm25

    @staticmethod
    def _paper_side(lexical: BM25Side, vec, allowed: set[str] | None, n: int) -> dict:
        """Papers by their mean vector, grouped like the chunk sides (each with its stored chunks)."""
        found = lexical.search_papers(vec, allowed, n)
        return {
            pid: (rank, [(c, score) for c in lexical.by_paper.get(pid, [])])
            for rank, (pid, score) in enumerate(found, start=1)
        }

    def refresh(self) -> None:
        """Drop the BM25 side after an ingest so the next query rebuilds it."""
        with self._lock:
            self._bm25 = None

    def retrieve(
        self,
        query: str,
        top_k: int | None = None,
        mode: Mode | None = None,
        filters: Filters | None = None,
        candidates: int | None = None,
        trace: bool = False,
    ) -> list[Hit] | tuple[list[Hit], Trace]:
        """Top papers, fused. `filters` (default: `self.filters`, which a caller may set once) keeps only
        matching papers on both sides, so when k matching papers exist k come back; a filter value that
        matches no indexed paper raises UserError. `candidates`: chunks per side (default: settings).
        `trace=True` returns (hits, Trace): every side's ranks and weight, the boosts, the covered papers."""
        s = self.retrieval
        top_k = top_k or s.top_k
        mode = mode or s.mode
        f = self.filters if filters is None else filters
        n = candidates or s.candidates
        need = 0 if candidates else top_k  # a caller-set pool depth is kept as is (see _deepen)
        named = named_terms(query) if mode != "dense" else set()
        terms = boosted(named)
        sides: list[tuple[str, float, dict]] = []
        lexical = self.bm25()  # also the store snapshot: chunk texts and paper records in memory
        allowed = f.validate(lexical.papers) if f else None
        if allowed is not None and len(allowed) == len(lexical.papers):
            allowed = None  # the filter keeps everything
        cosine: dict[str, float] = {}
        moved: set[str] = set()  # papers with chunks newer than the snapshot: read them from the store
        if mode in ("dense", "hybrid"):
            vec = self.encode_query([query])[0]
            # Filtered by paper id: works for chunks written before any filter metadata existed
            # (Chroma: ~0.1 s for 9,000 ids over 30,000 chunks, measured).
            where = {"paper_id": {"$in": sorted(allowed)}} if allowed is not None else None
            found = _deepen(lambda m: self.index.dense(vec, m, lexical.by_id, where), n, need, allowed)
            moved = {c.paper_id for c, _ in found if c.chunk_id not in lexical.by_id}
            if moved:
                self._checked = 0.0  # the store changed since the snapshot: re-check on the next query
            sides.append(("dense", s.dense_weight, group_by_paper(found)))
            for c, sim in found:
                cosine[c.paper_id] = max(sim, cosine.get(c.paper_id, sim))
        if mode in ("bm25", "hybrid"):
            weight = s.bm25_weight if mode == "hybrid" else 1.0
            if allowed is None and candidates is None:
                found = lexical.search(query)
            else:
                found = _deepen(lambda m: lexical.search(query, allowed, m), n, need, allowed)
            sides.append(("bm25", weight, group_by_paper(found)))
        if mode in ("dense", "hybrid") and s.paper_weight > 0:
            sides.append(
                (
                    "paper",
                    s.paper_weight,
                    self._paper_side(lexical, vec, allowed, max(s.paper_candidates, need)),
                )
            )

        scores, chunks = _fuse(sides, s.rrf_k)
        if s.prf_docs > 0 and mode == "hybrid":
            # Pseudo-relevance feedback: the first pass's top papers lend their words (a second BM25 pass)
            # and their vectors (a second dense pass, on the paper-vector side) as extra RRF sides.
            top = sorted(scores, key=lambda p: -scores[p])[: s.prf_docs]
            if s.prf_weight > 0:
                words = lexical.expansion(query, top, s.prf_terms)
                if words:
                    toks = lexical.tokens([query])[0] + words
                    found = _deepen(lambda m: lexical.search(toks, allowed, m), n, need, allowed)
                    sides.append(("prf_bm25", s.prf_weight, group_by_paper(found)))
            if s.prf_dense_weight > 0:
                import numpy as np

                _, row, mat = lexical.paper_matrix
                fb = [mat[row[p]] for p in top if p in row]
                if fb:
                    v2 = np.asarray(vec, dtype=np.float32) + s.prf_beta * np.mean(fb, axis=0)
                    v2 /= np.linalg.norm(v2) or 1.0
                    side = self._paper_side(lexical, v2, allowed, max(s.paper_candidates, need))
                    sides.append(("prf_paper", s.prf_dense_weight, side))
            scores, chunks = _fuse(sides, s.rrf_k)
        # Named methods, acronyms and numbers are the lexical side's strength: a paper that
        # mentions them gets up to one extra rank-1 vote (RRF alone lets any paper found by both
        # sides outrank the only paper that names the method).
        shares: dict[str, float] = {}
        if terms and s.named_boost:
            for pid in scores:
                share = sum(mentions(lexical.named_text(pid), t) for t in terms) / len(terms)
                if share:
                    shares[pid] = share
                    scores[pid] += s.named_boost * share / (s.rrf_k + 1)
        ranked = sorted(scores, key=lambda p: -scores[p])
        fused = ranked
        if terms and s.cover_depth:
            ranked = self._cover_terms(
                query, terms, ranked, scores, chunks, allowed, min(top_k, self.context_papers)
            )
        # Paper records come from the snapshot; only papers newer than it are read from the store.
        papers = {
            pid: lexical.papers[pid] for pid in ranked[:top_k] if pid in lexical.papers and pid not in moved
        }
        if len(papers) < top_k:
            papers.update(self.index.get_papers([p for p in ranked[: top_k + 5] if p not in papers]))
        if f:
            papers = {pid: p for pid, p in papers.items() if f.matches(p)}
        hits = []
        for pid in (p for p in ranked if p in papers):
            # only chunks cut from this very text (a paper replaced mid-query keeps no foreign chunk)
            cs = [c for c in chunks[pid].values() if papers[pid].text[c.start : c.end] == c.text]
            if cs:
                hits.append(Hit(papers[pid], scores[pid], cs, cosine.get(pid)))
            if len(hits) == top_k:
                break
        if not trace:
            return hits
        window = ranked[: self.context_papers]
        return hits, Trace(
            s.rrf_k,
            [(name, w, {pid: r for pid, (r, _) in g.items()}) for name, w, g in sides],
            s.named_boost,
            shares,
            [p for p in window if p not in fused[: len(window)]],
        )

    def _cover_terms(self, query, terms, ranked, scores, chunks, allowed, window: int) -> list[str]:
        """`ranked` with each named term that no paper of its first `window` mentions covered by the
        best indexed paper that does ("MLE-bench and API Pack …": the fused ranking may hold two papers
        on one and none on the other). The paper takes the first shown slot whose paper names none of
        the terms (else one whose terms another shown paper names too), and the paper there moves just
        below the shown ones; the rest keep their order. `scores` and `chunks` are updated in place."""
        lexical = self.bm25()
        s = self.retrieval
        ranked = list(ranked)
        runs = name_runs(query)
        for t in sorted(terms):
            shown = ranked[:window]
            if any(mentions(lexical.named_text(p), t) for p in shown):
                continue
            pool = {c.paper_id for c, _ in lexical.search(t, allowed, s.cover_depth)}
            have = {p for p in pool if mentions(lexical.named_text(p), t)}
            if not have:
                continue  # no indexed paper names it: the refusal will say so, truthfully
            # a paper naming the whole name the term is part of ("LoRA Recycle", not just "recycle")
            whole = [r for r in runs if t in r.split()]
            have = {p for p in have if any(mentions(lexical.named_text(p), r) for r in whole)} or have
            names = {p: {u for u in terms if mentions(lexical.named_text(p), u)} for p in shown}
            # an empty slot, one whose paper names no term, or one whose terms another shown paper names
            free = [len(shown)] if len(shown) < window else []
            free = (
                free
                or [i for i, p in enumerate(shown) if not names[p]]
                or [
                    i
                    for i, p in enumerate(shown)
                    if all(any(u in names[q] for q in shown if q != p) for u in names[p])
                ]
            )
            if not free:
                continue  # every shown paper is the only one naming some term
            fused = [p for p in ranked if p in have]
            if fused:
                best = fused[0]
            else:
                found = lexical.search(query, have, s.candidates) or lexical.search(t, have, s.candidates)
                best = found[0][0].paper_id if found else sorted(have)[0]
                for c in lexical.by_paper.get(best, []):
                    chunks[best].setdefault(c.chunk_id, c)
            if best in ranked:
                ranked.remove(best)
            # the paper takes the slot; the one it displaces moves just below the shown ones
            if free[0] == len(shown):
                ranked.insert(free[0], best)
                continue
            out = ranked[free[0]]
            ranked[free[0]] = best
            ranked.insert(min(window, len(ranked)), out)
            scores[best] = max(scores.get(best, 0.0), scores.get(out, 0.0))
        return ranked


def boosted(named: set[str]) -> set[str]:
    """The named terms that lift the papers naming them. "LLMs", "GNN" name a kind of thing, not a paper:
    they boost no paper. "GNN-RAG" is a name (named_terms already cut a described kind,
    "LLM-generated", to "llm")."""
    return {t for t in named if "-" in t or not field_word(t)}


def fuse_ranks(sides, rrf_k: int) -> dict[str, float]:
    """Weighted reciprocal-rank fusion: `sides` are (name, weight, {paper_id: rank from 1}); a paper's score
    is the sum of weight / (rrf_k + rank) over the sides that found it. The retriever and eval's replay
    (eval/calibrate.py) both fuse with this."""
    scores: dict[str, float] = defaultdict(float)
    for _, weight, ranks in sides:
        for pid, rank in ranks.items():
            scores[pid] += weight / (rrf_k + rank)
    return scores


def _fuse(sides: list[tuple[str, float, dict]], rrf_k: int):
    """Fused scores, and each paper's chunks from every side."""
    chunks: dict[str, dict[str, Chunk]] = defaultdict(dict)
    for _, _, groups in sides:
        for pid, (_, cs) in groups.items():
            for c, _ in cs:
                chunks[pid].setdefault(c.chunk_id, c)
    ranks = [(name, w, {pid: r for pid, (r, _) in g.items()}) for name, w, g in sides]
    return fuse_ranks(ranks, rrf_k), chunks


@dataclass
class Trace:
    """How one retrieve() ranked: each side's paper ranks and weight, the named-term share each paper
    mentions (the boost is named_boost * share / (rrf_k + 1)), and the papers the term cover put into the
    first `context_papers` slots. `scores()` replays the fusion, with other weights for a sweep."""

    rrf_k: int
    sides: list[tuple[str, float, dict[str, int]]] = field(default_factory=list)
    named_boost: float = 0.0
    shares: dict[str, float] = field(default_factory=dict)
    covered: list[str] = field(default_factory=list)

    def scores(
        self,
        weights: dict[str, float] | None = None,
        rrf_k: int | None = None,
        named_boost: float | None = None,
    ) -> dict[str, float]:
        """Fused scores as retrieve() computed them; `weights` (side name -> weight), `rrf_k` and
        `named_boost` replace the traced ones. Feedback sides keep their ranks (their pool came from the
        first pass at the traced weights)."""
        k = self.rrf_k if rrf_k is None else rrf_k
        boost = self.named_boost if named_boost is None else named_boost
        w = weights or {}
        scores = fuse_ranks([(n, w.get(n, x), r) for n, x, r in self.sides], k)
        for pid, share in self.shares.items():
            if pid in scores:
                scores[pid] += boost * share / (k + 1)
        return scores

    def to_json(self) -> dict:
        return {
            "rrf_k": self.rrf_k,
            "sides": [{"name": n, "weight": w, "ranking": sorted(r, key=r.get)} for n, w, r in self.sides],
            "named_boost": self.named_boost,
            "shares": {p: round(x, 4) for p, x in self.shares.items()},
            "covered": self.covered,
        }

    @classmethod
    def from_json(cls, d: dict) -> Trace:
        sides = [(x["name"], x["weight"], {p: r for r, p in enumerate(x["ranking"], 1)}) for x in d["sides"]]
        return cls(d["rrf_k"], sides, d.get("named_boost", 0.0), d.get("shares", {}), d.get("covered", []))


def _deepen(fetch, n: int, top_k: int, allowed: set[str] | None) -> list[tuple[Chunk, float]]:
    """fetch(n) -> ranked chunks; a filtered pool that came back full with fewer than top_k papers is
    fetched again twice as deep, so k matching papers come back whenever k exist."""
    found = fetch(n)
    while allowed is not None and len(found) >= n and len({c.paper_id for c, _ in found}) < top_k:
        n *= 2
        found = fetch(n)
    return found
