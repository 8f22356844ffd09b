"""The lexical side: llama-index's BM25Retriever over the stored chunks (bm25s underneath), with the
snapshot of papers and chunks the retriever reads instead of the store, the corpus IDF the refusal
weighs rare words by, and the paper-vector matrix of the paper side."""

from __future__ import annotations

import hashlib
import logging
import math
import os
import pickle
import shutil
from collections import Counter, defaultdict
from functools import cached_property
from pathlib import Path

from rag.index.index import Index, paper_from_record
from rag.ingest.catalog import conference_words
from rag.ingest.chunk import embed_text
from rag.settings import CONFERENCE_FILE
from rag.text import COURTESY, POSSESSIVE, WORD, Idf, Spelling, flatten, nltk_stopwords
from rag.types import Chunk

log = logging.getLogger(__name__)


def idf_from_counts(df, n_docs: int) -> Idf:
    """BM25's idf; words the corpus never uses weigh most (their absence is the strongest signal)."""

    def idf(word: str) -> float:
        parts = [p for p in word.split("-") if p] or [word]
        d = min(df(p) for p in parts)
        return math.log(1 + (n_docs - d + 0.5) / (d + 0.5))

    return idf


def _bm25_stopwords() -> list[str]:
    # NLTK's list: bm25s's own misses what/does/do, which drowns named methods (see notes).
    return sorted(nltk_stopwords())


def _snapshot(index: Index, cache_dir: Path) -> tuple[dict, list, tuple | None]:
    """(paper records, chunk records, paper vectors) as the store holds them, from a file under the BM25
    cache keyed by the store's write generation and counts (rag.index.index.generation: every ingest that wrote
    changes it), else read from the store and saved: reading 11,672 papers and 24,132 chunks from Chroma
    took 2-2.5 s of every cold `rag list`, the file 0.2 s. The file is this data dir's own cache, as the
    Chroma store beside it. A store with no generation marker (written before it existed) is read each time."""
    gen = index.generation()
    state = (index.storage.collection, gen, index.count(), index.paper_count())
    key = hashlib.sha256(repr(state).encode()).hexdigest()[:16]
    path = cache_dir / f"snapshot-{key}.pkl"
    if gen and path.is_file():
        try:
            with open(path, "rb") as f:
                return pickle.load(f)
        except (OSError, pickle.UnpicklingError, EOFError, ValueError) as e:
            log.warning("could not read the store snapshot %s: %s", path, e)
    ids, vecs = index.paper_vectors()
    import numpy as np

    got = (index.paper_records(), index.chunk_records(), (ids, np.asarray(vecs, dtype=np.float32)))
    if gen:
        try:
            cache_dir.mkdir(parents=True, exist_ok=True)
            tmp = path.with_name(f"{path.name}.tmp{os.getpid()}")
            with open(tmp, "wb") as f:
                pickle.dump(got, f, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(tmp, path)  # atomic: a reader never sees half a file
            for old in cache_dir.glob("snapshot-*.pkl"):
                if old != path:
                    old.unlink(missing_ok=True)
        except OSError as e:  # a read-only data dir only costs reading the store next time
            log.warning("could not save the store snapshot: %s", e)
    return got


class BM25Side:
    """llama-index BM25Retriever over the stored chunks, rebuilt from Chroma (never re-embedded)
    and persisted under the data dir keyed by the store's fingerprint."""

    def __init__(self, index: Index, cache_dir: Path, top_n: int):
        from llama_index.core.schema import TextNode
        from llama_index.retrievers.bm25 import BM25Retriever

        self._index = index
        records, chunk_records, self._vectors = _snapshot(index, cache_dir)
        self.fingerprint = index.fingerprint({pid: m for pid, (_, m) in records.items()})
        # The papers as of this snapshot: queries read no paper records (at most store_check_s stale
        # for other processes' writes; our own ingests rebuild it).
        self.papers = {pid: paper_from_record(pid, d, m) for pid, (d, m) in records.items()}
        path = cache_dir / f"bm25-{self.fingerprint}"
        chunks = index.all_chunks({pid: p.text for pid, p in self.papers.items()}, chunk_records)
        self.by_id = {c.chunk_id: c for c in chunks}
        self.by_paper: dict[str, list[Chunk]] = defaultdict(list)
        for c in chunks:
            self.by_paper[c.paper_id].append(c)
        self._named: dict[str, str] = {}
        top_n = max(1, min(top_n, len(chunks)))
        if (path / "retriever.json").exists():
            try:
                self.retriever = BM25Retriever.from_persist_dir(str(path))
                self.retriever.similarity_top_k = top_n
                return
            except Exception as e:  # a damaged cache is derived data: rebuilt below
                log.warning("rebuilding the damaged BM25 cache %s (%s: %s)", path, type(e).__name__, e)
                shutil.rmtree(path, ignore_errors=True)
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

    @cached_property
    def paper_matrix(self):
        """(paper ids, their stored vectors as rows): the paper-vector side, searched exactly in memory."""
        import numpy as np

        ids, vecs = self._vectors or self._index.paper_vectors()
        keep = [i for i, pid in enumerate(ids) if pid in self.papers]
        mat = np.asarray([vecs[i] for i in keep], dtype=np.float32).reshape(len(keep), -1)
        return [ids[i] for i in keep], {ids[i]: n for n, i in enumerate(keep)}, mat

    def search_papers(self, vec, allowed: set[str] | None, n: int) -> list[tuple[str, float]]:
        """Papers by cosine of `vec` to their mean chunk vector, best first."""
        import numpy as np

        ids, _, mat = self.paper_matrix
        if not ids:
            return []
        sims = mat @ np.asarray(vec, dtype=np.float32)
        if allowed is not None:
            sims = np.where(np.fromiter((p in allowed for p in ids), bool, len(ids)), sims, -np.inf)
        top = np.argsort(-sims)[:n]
        return [(ids[i], float(sims[i])) for i in top if np.isfinite(sims[i])]

    def tokens(self, texts: list[str], unknown: bool = False) -> list[list[str]]:
        """Stemmed index words of each text (stopwords dropped; unknown words too, unless `unknown`)."""
        import bm25s

        r = self.retriever
        toks = bm25s.tokenize(
            texts,
            stopwords=_bm25_stopwords(),
            stemmer=r.stemmer if not r.skip_stemming else None,
            token_pattern=r.token_pattern,
            return_ids=False,
            show_progress=False,
        )
        vocab = r.bm25.vocab_dict
        return [list(ts) if unknown else [t for t in ts if t in vocab] for ts in toks]

    def expansion(self, query: str, paper_ids: list[str], m: int) -> list[str]:
        """The m words of the feedback papers (title and abstract) with the highest
        sum of log(1 + tf) x idf, found in two of them at least (when there are two), not in the query."""
        import math

        texts = [
            f"{self.papers[p].title or ''}. {self.papers[p].text}" for p in paper_ids if p in self.papers
        ]
        if not texts or m <= 0:
            return []
        q = set(self.tokens([query])[0])
        score: dict[str, float] = defaultdict(float)
        docs: dict[str, int] = defaultdict(int)
        for ts in self.tokens(texts):
            for t, tf in Counter(ts).items():
                score[t] += math.log(1 + tf)
                docs[t] += 1
        need = 2 if len(texts) >= 2 else 1
        cands = [t for t in score if t not in q and docs[t] >= need and len(t) > 2 and not t.isdigit()]
        cands.sort(key=lambda t: (-score[t] * self.idf(t), t))
        return cands[:m]

    @cached_property
    def spelling(self) -> Spelling:
        """The words written in the titles and abstracts (rag.text.Spelling), for mending a typo: read once,
        only when a question or topic has a word no abstract uses."""
        # written forms from the abstracts; titles are in Title Case, so they count only as lowercase words
        words = Counter(w for p in self.papers.values() for w in WORD.findall(p.text))
        words.update(w.lower() for p in self.papers.values() for w in WORD.findall(p.title or ""))
        return Spelling(words)

    @cached_property
    def real_words(self) -> frozenset[str]:
        """Words an index lacks that are still no typos: those the bundled conference writes ("samplers",
        "taken" are absent from the 38 seeds, not mistyped)."""
        return conference_words() if CONFERENCE_FILE.exists() else frozenset()

    def typos(self, words, text: str = "", limit: int = 5) -> dict[str, str]:
        """Each of these words that no abstract uses -> the written word it is one typo from, where there is
        one ("speculatve" -> "speculative", "Celcomenn's" -> "Celcomen", "spatial-transcriptomcs" ->
        "spatial-transcriptomics"); the first `limit` such words only. The first word of `text` may be
        capitalised as a sentence's is or as a name's; a courtesy ("Thnaks") is no typo worth telling."""
        first = next(iter(WORD.findall(text)), "")
        out = {}
        for w in list(dict.fromkeys(POSSESSIVE.sub("", w) for w in words))[:limit]:
            # "spatial-transcriptomcs": each part no abstract uses is guessed, and all must be
            parts = [p for p in w.split("-") if self._unknown(p)]
            if not parts:
                continue
            guesses = {p: self._guess(p, first=w == first and w.startswith(p)) for p in parts}
            if all(guesses.values()) and not any(g.lower() in COURTESY for g in guesses.values()):
                out[w] = "-".join(guesses.get(p, p) for p in w.split("-"))
        return out

    def _unknown(self, part: str) -> bool:
        """An index word (no stopword) no abstract uses, and no word the bundled conference writes."""
        indexed = self.tokens([part], unknown=True)[0]
        return bool(indexed) and not self.known(part) and part.lower() not in self.real_words

    def _guess(self, word: str, first: bool) -> str | None:
        """`Spelling.guess`; a text's first word in Capitals may be a sentence's first word or a name, so both
        are tried ("Speculatve decoding", "Celcommen")."""
        if first and word[:1].isupper() and word[1:].islower():
            right = self.spelling.guess(word.lower())
            if right:
                return right[:1].upper() + right[1:]
        return self.spelling.guess(word)

    def known(self, word: str) -> bool:
        """Whether indexed chunks use the word: each of its parts, as the index splits "spatial-transcriptomics"
        (stopwords are never indexed, so a stopword alone is not known)."""
        parts = self.tokens([word], unknown=True)[0]
        vocab = self.retriever.bm25.vocab_dict
        return bool(parts) and all(t in vocab for t in parts)

    def named_text(self, paper_id: str) -> str:
        """A paper's title and chunks, flattened for named-term matching (kept in memory, so
        the named boost reads no store records)."""
        if paper_id not in self._named:
            p = self.papers.get(paper_id)
            parts = [(p.title or "") if p else ""] + [c.text for c in self.by_paper.get(paper_id, [])]
            self._named[paper_id] = flatten(" ".join(parts))
        return self._named[paper_id]

    def search(
        self, query: str, allowed: set[str] | None = None, n: int | None = None
    ) -> list[tuple[Chunk, float]]:
        """Chunks by BM25 score (> 0), best first; with `allowed`, only those papers' chunks (bm25s's
        weight mask: the ranking is over the allowed subset, so a deep pool is never needed)."""
        if allowed is not None or n is not None:
            return self._search_masked(query, allowed, n or self.retriever.similarity_top_k)
        out = []
        for nws in self.retriever.retrieve(query):
            c = self.by_id.get(nws.node.node_id)
            if c is not None and nws.score > 0:
                out.append((c, float(nws.score)))
        return out

    @cached_property
    def doc_papers(self) -> list[str]:
        """The paper id of each BM25 document, in bm25s's order."""
        return [
            c.paper_id if c else "" for c in (self.by_id.get(d["node_id"]) for d in self.retriever.corpus)
        ]

    def _search_masked(
        self, query: str | list[str], allowed: set[str] | None, n: int
    ) -> list[tuple[Chunk, float]]:
        import bm25s
        import numpy as np

        r = self.retriever
        docs = self.doc_papers
        mask = None
        if allowed is not None:
            mask = np.fromiter((pid in allowed for pid in docs), dtype=np.float32, count=len(docs))
            if not mask.any():
                return []
        if isinstance(query, list):  # stemmed index words (see `tokens`)
            if not query:
                return []
            tokens = [query]
        else:
            tokens = bm25s.tokenize(
                query,
                stemmer=r.stemmer if not r.skip_stemming else None,
                token_pattern=r.token_pattern,
                show_progress=False,
            )
        k = max(1, min(n, len(docs)))
        idx, scores = r.bm25.retrieve(tokens, k=k, show_progress=False, weight_mask=mask)
        out = []
        for i, score in zip(idx[0], scores[0]):
            doc = (
                i if isinstance(i, dict) else r.corpus[int(i)]
            )  # bm25s hands back corpus entries when saved with one
            c = self.by_id.get(doc["node_id"])
            if c is not None and score > 0 and (allowed is None or c.paper_id in allowed):
                out.append((c, float(score)))
        return out
