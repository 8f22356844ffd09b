"""Papers -> chunks -> content-hash ids -> Chroma (embedded PersistentClient or a `chroma run` server).

Two collections:
- `<name>`: one record per chunk: its vector, with paper id and character offsets in metadata (the
  text is cut from the paper's abstract when read);
- `<name>_papers`: one record per paper (document = abstract) carrying its content hash. It is
  written after the paper's chunks, so it doubles as the commit marker: a paper whose record is
  missing or stale is re-chunked and its old chunks replaced. Killed mid-way, a re-run completes.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import uuid

from rag.index.store import (
    guarded,
    ingest_lock,
    not_indexed,
    open_client,
    store_exists,
    vector_damage,
    vector_segments,
)
from rag.ingest.chunk import stored_chunk
from rag.ingest.pipeline import Ingest, IngestReport
from rag.settings import StorageSettings
from rag.types import Chunk, Paper


def paper_from_record(pid: str, doc: str, meta: dict) -> Paper:
    return Paper(
        paper_id=pid,
        text=doc,
        source_file=meta.get("source_file", ""),
        source_id=meta.get("source_id", ""),
        index=int(meta.get("index", 0)),
        title=meta.get("title"),
        decision=meta.get("decision"),
        authors=json.loads(meta["authors"]) if meta.get("authors") else None,
        primary_area=meta.get("primary_area"),
    )


class Index:
    """The store. Opening never creates it: a missing store reads as empty (count() == 0; the data
    reads raise "Nothing is indexed yet"); `ingest` (or `create=True`) creates it."""

    def __init__(self, storage: StorageSettings, create: bool = False):
        self.storage = storage
        self.client = None
        self._chunks = self._papers = None
        self.max_batch = 1  # the client's largest write (set on open)
        self.writes = 0  # bumped by every ingest through this object that wrote: a free change check
        self._open(create)

    @guarded()
    def _open(self, create: bool) -> bool:
        """Open the collections (creating them when `create`); False when there is no store yet."""
        if self._papers is not None:
            return True
        if not create and not store_exists(self.storage):
            return False
        if self.client is None:
            self.client = open_client(self.storage)
        cfg = {"hnsw": {"space": "cosine"}}
        names = (self.storage.collection, f"{self.storage.collection}_papers")
        if create:
            colls = [
                self.client.get_or_create_collection(n, configuration=cfg, embedding_function=None)
                for n in names
            ]
        else:
            from chromadb.errors import NotFoundError

            try:
                colls = [self.client.get_collection(n, embedding_function=None) for n in names]
            except (NotFoundError, ValueError):
                return False
        self._chunks, self._papers = colls
        self.max_batch = max(1, min(self.client.get_max_batch_size(), 4096))
        return True

    @property
    def exists(self) -> bool:
        return self._papers is not None or self._open(False)

    @property
    def chunks(self):
        if not self.exists:
            raise not_indexed(self.storage)
        return self._chunks

    @property
    def papers(self):
        if not self.exists:
            raise not_indexed(self.storage)
        return self._papers

    @property
    def names(self) -> tuple[str, str]:
        return self.storage.collection, f"{self.storage.collection}_papers"

    def require(self) -> None:
        """UserError "Nothing is indexed yet" unless the store holds chunks (checked before models load);
        it names the store's other collections that hold papers."""
        if self.count() == 0:
            raise not_indexed(self.storage, self.other_collections())

    @guarded()
    def other_collections(self) -> dict[str, int]:
        """Collection name -> papers, for the store's other collections that hold papers."""
        if not store_exists(self.storage):
            return {}
        self.client = self.client or open_client(self.storage)
        out = {}
        for c in self.client.list_collections():
            name = c.name.removesuffix("_papers")
            if c.name.endswith("_papers") and name != self.storage.collection:
                n = self.client.get_collection(c.name, embedding_function=None).count()
                if n:
                    out[name] = n
        return out

    # ------------------------------------------------------------ reading
    @guarded()
    def count(self) -> int:
        return self._chunks.count() if self.exists else 0

    @guarded()
    def paper_count(self) -> int:
        return self._papers.count() if self.exists else 0

    @guarded()
    def get_papers(self, ids: list[str]) -> dict[str, Paper]:
        if not ids:
            return {}
        got = self.papers.get(ids=list(ids), include=["documents", "metadatas"])
        return {
            i: paper_from_record(i, d, m) for i, d, m in zip(got["ids"], got["documents"], got["metadatas"])
        }

    @guarded()
    def paper_records(self) -> dict[str, tuple[str, dict]]:
        """Every paper record: id -> (abstract, metadata), read in pages."""
        out: dict[str, tuple[str, dict]] = {}
        for offset in range(0, self.paper_count(), self.storage.store_page):
            got = self.papers.get(
                include=["documents", "metadatas"], limit=self.storage.store_page, offset=offset
            )
            out.update(zip(got["ids"], zip(got["documents"], got["metadatas"])))
        return out

    @guarded()
    def paper_vectors(self) -> tuple[list[str], list]:
        """Every paper's stored vector (the normalized mean of its chunk vectors), read in pages."""
        ids: list[str] = []
        vecs: list = []
        for offset in range(0, self.paper_count(), self.storage.store_page):
            got = self.papers.get(include=["embeddings"], limit=self.storage.store_page, offset=offset)
            ids += got["ids"]
            vecs += list(got["embeddings"])
        return ids, vecs

    @guarded()
    def chunk_records(self) -> list[tuple[str, dict]]:
        """Every stored chunk's (id, metadata), read in pages so large stores stay within limits."""
        out: list[tuple[str, dict]] = []
        for offset in range(0, self.count(), self.storage.store_page):
            got = self.chunks.get(include=["metadatas"], limit=self.storage.store_page, offset=offset)
            out += zip(got["ids"], got["metadatas"])
        return out

    def all_chunks(self, paper_texts: dict[str, str] | None = None, records=None) -> list[Chunk]:
        """Every stored chunk (for BM25); `records`: chunk_records() read already."""
        if paper_texts is None:
            paper_texts = {pid: doc for pid, (doc, _) in self.paper_records().items()}
        return list(
            filter(None, (stored_chunk(cid, m, paper_texts) for cid, m in records or self.chunk_records()))
        )

    @guarded()
    def chunk_vectors(self) -> list[tuple[dict, list[float]]]:
        """Every stored chunk's (metadata, vector), read in pages (rag.ingest.vector_bundle builds on it)."""
        out: list[tuple[dict, list[float]]] = []
        for offset in range(0, self.count(), self.storage.store_page):
            got = self.chunks.get(
                include=["metadatas", "embeddings"], limit=self.storage.store_page, offset=offset
            )
            out += zip(got["metadatas"], got["embeddings"])
        return out

    def fingerprint(self, metas: dict[str, dict]) -> str:
        """Identity of the stored content (from every paper record's metadata): changes whenever a
        paper is added, replaced or removed."""
        h = hashlib.sha256(str(self.count()).encode())
        for pid, m in sorted(metas.items()):
            h.update(f"{pid}:{m.get('content_hash')};".encode())
        return h.hexdigest()[:16]

    @guarded()
    def dense(
        self, vector: list[float], n: int, known: dict[str, Chunk] | None = None, where: dict | None = None
    ) -> list[tuple[Chunk, float]]:
        """Nearest chunks with cosine similarity. Chunk texts come from `known` (chunk id -> Chunk;
        ids hash the text, so any cached copy is right) or are cut from their papers' abstracts.
        `where` is a Chroma metadata filter on the chunks (e.g. `{"paper_id": {"$in": [...]}}`)."""
        if n <= 0:  # Chroma returns fewer than n when the store holds fewer
            return []
        res = self.chunks.query(query_embeddings=[vector], n_results=n, where=where, include=["distances"])
        ids, dists = res["ids"][0], res["distances"][0]
        known = known or {}
        fresh: dict[str, Chunk | None] = {}
        missing = [cid for cid in ids if cid not in known]
        if missing:  # metadata is read only for chunks the caller doesn't hold (a third of the query time)
            got = self.chunks.get(ids=missing, include=["metadatas"])
            metas = dict(zip(got["ids"], got["metadatas"]))
            texts = {
                pid: p.text
                for pid, p in self.get_papers(sorted({m["paper_id"] for m in metas.values()})).items()
            }
            fresh = {cid: stored_chunk(cid, m, texts) for cid, m in metas.items()}
        out = []
        for cid, dist in zip(ids, dists):
            c = known.get(cid) or fresh.get(cid)
            if c is not None:  # None: its paper's record is gone or not yet committed
                out.append((c, 1.0 - float(dist)))
        return out

    @guarded()
    def chunk_ids_of(self, paper_ids: list[str]) -> list[str]:
        ids: list[str] = []
        for i in range(0, len(paper_ids), 500):
            ids += self.chunks.get(where={"paper_id": {"$in": paper_ids[i : i + 500]}}, include=[])["ids"]
        return ids

    # ------------------------------------------------------------ writing (rag.ingest.pipeline)
    @guarded(writing=True)
    def ingest(
        self, papers: list[Paper], embedder, progress: bool = True, say=None, on_progress=None
    ) -> IngestReport:
        """Store papers (creating the store); one ingest per store at a time (`ingest_lock`).
        `on_progress(done, total)` (chunks embedded so far, chunks to embed) is called at the start and
        after every committed block: a UI's progress bar (`progress` is the terminal's tqdm bar)."""
        if self.storage.chroma_url:  # a server's lock is keyed on its id of the collection
            self._open(True)
        with ingest_lock(self.storage, say, identity=self._papers.id.hex if self._papers else None):
            self._open(True)  # embedded: inside the lock (two threads creating one store collide)
            if self.journal.exists():  # a rebuild was cut off: finish it first
                self._run(self._journal_papers(), embedder, progress, on_progress)
                self.journal.unlink()
            return self._run(papers, embedder, progress, on_progress)

    def _run(self, papers, embedder, progress, on_progress) -> IngestReport:
        self._open(True)
        job = Ingest(self)
        try:
            return job.run(papers, embedder, progress, on_progress)
        finally:
            if job.wrote:  # tell readers in any process (see generation())
                self.writes += 1
                self.papers.modify(metadata={"generation": uuid.uuid4().hex})

    # ------------------------------------------------------------ damage and rebuilding
    @property
    def journal(self):
        """The papers of a rebuild in progress: written before the old collections go, removed after."""
        return self.storage.data_dir / f"rebuild-{self.storage.collection}.jsonl"

    def damage(self) -> str | None:
        """Why the collections' vector index is unreadable (checked in a child process), or None."""
        return vector_damage(self.storage, self.names)

    @guarded(writing=True)
    def rebuild(self, embedder, progress: bool = True, say=None, on_progress=None) -> IngestReport:
        """Rebuild both collections from the paper records they still hold (every abstract with its
        metadata; vectors re-made, from the shipped bundle where it has them). Crash-safe: the papers go to
        `journal` before the old collections are dropped, and `ingest` finishes a rebuild cut off."""
        with ingest_lock(self.storage, say, identity=self._papers.id.hex if self._papers else None):
            if not self.journal.exists():
                old = vector_segments(self.storage, self.names)
                for folder in old:  # unreadable: without them the records (sqlite) read as they are
                    shutil.rmtree(folder, ignore_errors=True)
                if not self.storage.chroma_url:  # no client of this process may keep the old index loaded
                    from chromadb.api.client import SharedSystemClient

                    SharedSystemClient.clear_system_cache()
                self.client, self._chunks, self._papers = None, None, None
                records = self.paper_records() if self.exists else {}
                tmp = self.journal.with_suffix(".tmp")
                tmp.parent.mkdir(parents=True, exist_ok=True)
                with open(tmp, "w", encoding="utf-8") as f:
                    for pid, (doc, meta) in records.items():
                        f.write(json.dumps({"id": pid, "document": doc, "metadata": meta}) + "\n")
                    f.flush()
                    os.fsync(f.fileno())
                tmp.replace(self.journal)
                for name in self.names if self.exists else ():
                    self.client.delete_collection(name)
                for folder in old:  # reading the records left empty ones behind
                    shutil.rmtree(folder, ignore_errors=True)
                self._chunks = self._papers = None
            report = self._run(self._journal_papers(), embedder, progress, on_progress)
            self.journal.unlink()
            return report

    def _journal_papers(self) -> list[Paper]:
        with open(self.journal, encoding="utf-8") as f:
            return [paper_from_record(r["id"], r["document"], r["metadata"]) for r in map(json.loads, f)]

    @guarded()
    def generation(self) -> str | None:
        """Changes after every ingest that wrote, whichever process ran it: readers' change check."""
        if not self.exists:
            return None
        return (self.client.get_collection(self.papers.name, embedding_function=None).metadata or {}).get(
            "generation"
        )
