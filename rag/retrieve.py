"""Dense (Chroma) + BM25 (llama-index) -> weighted reciprocal-rank fusion -> top papers with best chunks."""

from __future__ import annotations

import logging
import threading
import time
from collections import defaultdict
from functools import cached_property
from pathlib import Path

from rag.chunk import embed_text
from rag.index import Index, paper_from_record
from rag.question import Idf, flatten, idf_from_counts, mentions, named_terms
from rag.settings import Mode, Settings
from rag.types import Chunk, Hit

log = logging.getLogger(__name__)


def _bm25_stopwords() -> list[str]:
    # NLTK's list: bm25s's own misses what/does/do, which drowns named methods (see notes).
    from llama_index.core.utils import globals_helper

    return sorted(globals_helper.stopwords)


class BM25Side:
    """llama-index BM25Retriever over the stored chunks, rebuilt from Chroma (never re-embedded)
    and persisted under the data dir keyed by the store's fingerprint."""

    def __init__(self, index: Index, cache_dir: Path, top_n: int):
        from llama_index.core.schema import TextNode
        from llama_index.retrievers.bm25 import BM25Retriever

        records = index.paper_records()
        self.fingerprint = index.fingerprint({pid: m for pid, (_, m) in records.items()})
        # The papers as of this snapshot: queries read no paper records (at most store_check_s stale
        # for other processes' writes; our own ingests rebuild it).
        self.papers = {pid: paper_from_record(pid, d, m) for pid, (d, m) in records.items()}
        path = cache_dir / f"bm25-{self.fingerprint}"
        chunks = index.all_chunks({pid: p.text for pid, p in self.papers.items()})
        self.by_id = {c.chunk_id: c for c in chunks}
        self.by_paper: dict[str, list[Chunk]] = defaultdict(list)
        for c in chunks:
            self.by_paper[c.paper_id].append(c)
        self._named: dict[str, str] = {}
        top_n = max(1, min(top_n, len(chunks)))
        if (path / "retriever.json").exists():
            self.retriever = BM25Retriever.from_persist_dir(str(path))
            self.retriever.similarity_top_k = top_n
            return
        nodes = [TextNode(id_=c.chunk_id, text=embed_text(c, self.papers[c.paper_id])) for c in chunks]
        self.retriever = BM25Retriever(nodes=nodes, language=_bm25_stopwords(), similarity_top_k=top_n)
        try:
            path.mkdir(parents=True, exist_ok=True)
            self.retriever.persist(str(path))
        except OSError as e:  # a read-only data dir only costs a rebuild next time
            log.warning("could not persist BM25 index: %s", e)

    @cached_property
    def idf(self) -> Idf:
        """Inverse document frequency of a stemmed word over the chunks (bm25s's own statistics)."""
        model = self.retriever.bm25
        vocab, indptr = model.vocab_dict, model.scores["indptr"]

        def df(word: str) -> int:
            t = vocab.get(word)
            return 0 if t is None or t + 1 >= len(indptr) else int(indptr[t + 1] - indptr[t])

        return idf_from_counts(df, int(model.scores["num_docs"]))

    def named_text(self, paper_id: str) -> str:
        """A paper's title and chunks, flattened for named-term matching (kept in memory, so
        the named boost reads no store records)."""
        if paper_id not in self._named:
            p = self.papers.get(paper_id)
            parts = [(p.title or "") if p else ""] + [c.text for c in self.by_paper.get(paper_id, [])]
            self._named[paper_id] = flatten(" ".join(parts))
        return self._named[paper_id]

    def search(self, query: str) -> list[tuple[Chunk, float]]:
        out = []
        for nws in self.retriever.retrieve(query):
            c = self.by_id.get(nws.node.node_id)
            if c is not None and nws.score > 0:
                out.append((c, float(nws.score)))
        return out


def group_by_paper(ranked: list[tuple[Chunk, float]]) -> dict[str, tuple[int, list[tuple[Chunk, float]]]]:
    """paper_id -> (rank of its best chunk among papers, its chunks best first)."""
    groups: dict[str, list[tuple[Chunk, float]]] = defaultdict(list)
    order: list[str] = []
    for c, s in ranked:
        if c.paper_id not in groups:
            order.append(c.paper_id)
        groups[c.paper_id].append((c, s))
    return {pid: (r, groups[pid]) for r, pid in enumerate(order, start=1)}


class Retriever:
    def __init__(self, index: Index, embedder, settings: Settings):
        self.index = index
        self.embedder = embedder
        self.settings = settings
        self._bm25: BM25Side | None = None
        self._state: tuple = ()
        self._checked = 0.0
        self._lock = threading.Lock()

    def bm25(self) -> BM25Side:
        # Ingests through this process bump index.writes (free to read); another process's ingest
        # moves the store's generation marker, read (with the counts) at most every `store_check_s`:
        # store round trips per query were a sixth of its time at full scale.
        with self._lock:
            now = time.monotonic()
            if (
                self._bm25 is None
                or self.index.writes != self._state[0]
                or now - self._checked >= self.settings.store_check_s
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
                        self.index, self.settings.data_dir / "bm25", self.settings.candidates
                    )
                    self._state = state
            return self._bm25

    def refresh(self) -> None:
        """Drop the BM25 side after an ingest so the next query rebuilds it."""
        with self._lock:
            self._bm25 = None

    def retrieve(self, query: str, top_k: int | None = None, mode: Mode | None = None) -> list[Hit]:
        s = self.settings
        top_k = top_k or s.top_k
        mode = mode or s.mode
        terms = named_terms(query) if mode != "dense" else set()
        sides: list[tuple[float, dict]] = []
        lexical = self.bm25()  # also the store snapshot: chunk texts and paper records in memory
        moved: set[str] = set()  # papers with chunks newer than the snapshot: read them from the store
        if mode in ("dense", "hybrid"):
            vec = self.embedder.encode([query])[0]
            found = self.index.dense(vec, s.candidates, lexical.by_id)
            moved = {c.paper_id for c, _ in found if c.chunk_id not in lexical.by_id}
            if moved:
                self._checked = 0.0  # the store changed since the snapshot: re-check on the next query
            sides.append((s.dense_weight, group_by_paper(found)))
        if mode in ("bm25", "hybrid"):
            weight = (s.bm25_weight if terms else s.bm25_weight_plain) if mode == "hybrid" else 1.0
            sides.append((weight, group_by_paper(lexical.search(query))))

        # Weighted RRF over paper ranks; each paper keeps its best chunks from every side.
        scores: dict[str, float] = defaultdict(float)
        chunks: dict[str, dict[str, Chunk]] = defaultdict(dict)
        for weight, groups in sides:
            for pid, (rank, cs) in groups.items():
                scores[pid] += weight / (s.rrf_k + rank)
                for c, _ in cs:
                    chunks[pid].setdefault(c.chunk_id, c)
        # Named methods, acronyms and numbers are the lexical side's strength: a paper that
        # mentions them gets up to one extra rank-1 vote (RRF alone lets any paper found by both
        # sides outrank the only paper that names the method).
        if terms and s.named_boost:
            for pid in scores:
                share = sum(mentions(lexical.named_text(pid), t) for t in terms) / len(terms)
                scores[pid] += s.named_boost * share / (s.rrf_k + 1)
        ranked = sorted(scores, key=lambda p: -scores[p])
        # Paper records come from the snapshot; only papers newer than it are read from the store.
        papers = {
            pid: lexical.papers[pid] for pid in ranked[:top_k] if pid in lexical.papers and pid not in moved
        }
        if len(papers) < top_k:
            papers.update(self.index.get_papers([p for p in ranked[: top_k + 5] if p not in papers]))
        hits = []
        for pid in (p for p in ranked if p in papers):
            # only chunks cut from this very text (a paper replaced mid-query keeps no foreign chunk)
            cs = [c for c in chunks[pid].values() if papers[pid].text[c.start : c.end] == c.text]
            if cs:
                hits.append(Hit(papers[pid], scores[pid], cs))
            if len(hits) == top_k:
                break
        return hits
