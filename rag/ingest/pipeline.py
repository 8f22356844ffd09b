"""The write path of the store (rag.index.index.Index.ingest): which papers changed, their chunks embedded in
blocks of about `ingest_block`, each block's chunk records written before its paper records (the
commit markers), and the papers a re-ingested file no longer holds removed."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass

import numpy as np
from tqdm import tqdm

from rag.errors import UserError
from rag.ingest.chunk import chunk_paper, content_hash, embed_text, make_splitter, stored_chunk, vector_hash
from rag.ingest.vector_bundle import VectorBundle
from rag.types import Chunk, Paper

PAPER_FIELDS = ("title", "source_file", "source_id", "index", "decision", "primary_area")


@dataclass
class IngestReport:
    papers: int = 0
    chunks: int = 0
    added: int = 0
    bundled: int = 0  # of `added`: vectors taken from the shipped bundle, not embedded
    skipped: int = 0
    removed: int = 0
    seconds: float = 0.0

    def to_json(self) -> dict:
        d = asdict(self)
        d["seconds"] = round(self.seconds, 3)
        return d


def paper_meta(p: Paper, digest: str, n_chunks: int, vectors: str) -> dict:
    meta = {k: getattr(p, k) for k in PAPER_FIELDS if getattr(p, k) is not None}
    if p.authors:
        meta["authors"] = json.dumps(p.authors, ensure_ascii=False)
    meta.update(content_hash=digest, vector_hash=vectors, n_chunks=n_chunks)
    return meta


def chunk_meta(p: Paper, start: int, end: int) -> dict:
    return {
        "paper_id": p.paper_id,
        "start": start,
        "end": end,
        "source_file": p.source_file,
        "index": p.index,
    }


class Ingest:
    """One ingest into an open `Index` (the caller holds its ingest lock). `wrote` tells whether
    anything in the store changed."""

    def __init__(self, index):
        self.index = index
        self.storage = index.storage
        self.wrote = False
        self.vectors: dict[str, str] = {}  # paper id -> vector_hash, for the paper records written

    def meta(self, p: Paper, digest: str, n_chunks: int) -> dict:
        return paper_meta(p, digest, n_chunks, self.vectors[p.paper_id])

    def write(self, coll, ids, embeddings, documents, metadatas) -> None:
        self.wrote = True
        step = self.index.max_batch
        for i in range(0, len(ids), step):
            j = i + step
            coll.upsert(
                ids=ids[i:j],
                embeddings=embeddings[i:j],
                metadatas=metadatas[i:j],
                documents=documents[i:j] if documents is not None else None,
            )

    def delete(self, coll, ids: list[str]) -> None:
        self.wrote = self.wrote or bool(ids)
        step = self.index.max_batch
        for i in range(0, len(ids), step):
            coll.delete(ids=ids[i : i + step])

    def run(self, papers: list[Paper], embedder, progress: bool, on_progress=None) -> IngestReport:
        t0 = time.perf_counter()
        s, index = self.storage, self.index
        splitter = make_splitter(s.chunk_size, s.chunk_overlap)
        rep = IngestReport(papers=len(papers))
        ids = [p.paper_id for p in papers]
        if len(set(ids)) != len(ids):
            seen: set[str] = set()
            dup = next(i for i in ids if i in seen or seen.add(i))
            raise UserError(f"Paper id '{dup}' occurs twice in the input; ids must be unique.")

        known: dict[str, dict] = {}
        for i in range(0, len(ids), 1000):
            got = index.papers.get(ids=ids[i : i + 1000], include=["metadatas"])
            known.update(zip(got["ids"], got["metadatas"]))

        todo: list[tuple[Paper, str, list[Chunk]]] = []
        moved: list[tuple[Paper, str, int]] = []
        relabel: list[tuple[Paper, str, int]] = []
        shape = (
            s.chunk_size,
            s.chunk_overlap,
            embedder.name,
            getattr(embedder, "max_seq_length", None),
        )
        for p in papers:
            digest = content_hash(p, *shape)
            m = known.get(p.paper_id)
            n = int((m or {}).get("n_chunks", 0))
            if m and m.get("content_hash") == digest and m.get("source_id") == p.source_id:
                rep.skipped += n
                continue
            vectors = self.vectors[p.paper_id] = vector_hash(p, *shape)  # for the paper record written
            if m and m.get("content_hash") == digest:
                rep.skipped += n
                moved.append((p, digest, n))  # same text, now owned by this file
            elif m and m.get("vector_hash") == vectors:
                rep.skipped += n  # same vectors, other metadata (another file, decision): nothing to embed
                relabel.append((p, digest, n))
            else:
                todo.append((p, digest, chunk_paper(p, splitter)))

        total = sum(len(c) for _, _, c in todo)
        bundle = VectorBundle.load(s.vector_bundle) if todo else None
        if on_progress:
            on_progress(0, total)
        # closed on a failure too, so an error prints on its own line, not on the bar's
        with tqdm(
            total=total, desc="embedding chunks", unit="chunk", disable=not progress or total == 0
        ) as bar:
            for group in self.groups(todo):
                vecs, bundled = self.group_vectors(group, embedder, bundle)
                added, replaced = self.write_group(group, vecs)
                rep.added += added
                rep.bundled += bundled
                rep.removed += replaced
                bar.update(added)
                if on_progress:
                    on_progress(rep.added, total)

        step = index.max_batch  # the whole conference moving to another file is more than one write allows
        for i in range(0, len(moved), step):
            self.wrote = True
            part = moved[i : i + step]
            index.papers.update(ids=[p.paper_id for p, _, _ in part], metadatas=[self.meta(*x) for x in part])
        for i in range(0, len(relabel), 500):
            self.relabel(relabel[i : i + 500])
        # papers that disappeared from a re-ingested file: only that very file's (by source_id)
        sources, id_set = {p.source_id for p in papers if p.source_id}, set(ids)
        stale = []
        for sid in sources:
            got = index.papers.get(where={"source_id": sid}, include=[])
            stale += [pid for pid in got["ids"] if pid not in id_set]
        if stale:
            old = index.chunk_ids_of(stale)
            self.delete(index.chunks, old)
            self.delete(index.papers, stale)
            rep.removed += len(old)

        rep.removed += self.sweep()
        rep.chunks = rep.skipped + rep.added
        rep.seconds = time.perf_counter() - t0
        return rep

    def sweep(self) -> int:
        """Delete chunk records no paper record accounts for (two ingests of two versions of a paper that
        raced, or an ingest killed before its commit marker) and return how many: only when the store holds
        more chunk records than its papers' `n_chunks` add up to, so the usual cost is one metadata read."""
        index, page = self.index, self.storage.store_page
        expected = 0
        for offset in range(0, index.paper_count(), page):
            got = index.papers.get(include=["metadatas"], limit=page, offset=offset)
            expected += sum(int(m.get("n_chunks", 0)) for m in got["metadatas"])
        if index.count() <= expected:
            return 0
        texts = {pid: doc for pid, (doc, _) in index.paper_records().items()}
        stale = []
        for offset in range(0, index.count(), page):
            got = index.chunks.get(include=["metadatas"], limit=page, offset=offset)
            stale += [c for c, m in zip(got["ids"], got["metadatas"]) if stored_chunk(c, m, texts) is None]
        self.delete(index.chunks, stale)
        return len(stale)

    def group_vectors(self, group: list, embedder, bundle: VectorBundle | None) -> tuple[np.ndarray, int]:
        """The group's chunk vectors in order: the bundle's where it holds the paper's vector_hash, the
        embedder's for the rest (one encode call); and how many came from the bundle."""
        parts: list[np.ndarray | None] = []
        texts: list[str] = []
        bundled = 0
        for p, _, chunks in group:
            got = bundle.get(self.vectors[p.paper_id], len(chunks)) if bundle else None
            parts.append(got)
            if got is None:
                texts += [embed_text(c, p) for c in chunks]
            else:
                bundled += len(chunks)
        fresh = np.asarray(embedder.encode(texts, bulk=True), dtype=np.float32) if texts else None
        k, out = 0, []
        for (_, _, chunks), got in zip(group, parts):
            if got is None:
                got, k = fresh[k : k + len(chunks)], k + len(chunks)
            out.append(got)
        return np.concatenate(out), bundled

    def relabel(self, group: list[tuple[Paper, str, int]]) -> None:
        """New metadata for papers whose vectors stay: their chunk records first, then (the commit
        marker) their paper records; killed in between, a re-run relabels them again."""
        index, step = self.index, self.index.max_batch
        by_id = {p.paper_id: p for p, _, _ in group}
        got = index.chunks.get(where={"paper_id": {"$in": list(by_id)}}, include=["metadatas"])
        metas = [chunk_meta(by_id[m["paper_id"]], m["start"], m["end"]) for m in got["metadatas"]]
        self.wrote = True
        for i in range(0, len(metas), step):
            index.chunks.update(ids=got["ids"][i : i + step], metadatas=metas[i : i + step])
        for i in range(0, len(group), step):
            part = group[i : i + step]
            index.papers.update(ids=[p.paper_id for p, _, _ in part], metadatas=[self.meta(*x) for x in part])

    def groups(self, todo: list) -> Iterator[list]:
        """Consecutive papers holding about `ingest_block` chunks: the crash-safe unit."""
        group, n = [], 0
        for item in todo:
            group.append(item)
            n += len(item[2])
            if n >= self.storage.ingest_block:
                yield group
                group, n = [], 0
        if group:
            yield group

    def write_group(self, group: list[tuple[Paper, str, list[Chunk]]], vecs) -> tuple[int, int]:
        """Write one embedded group of papers; returns (chunks added, old chunks removed)."""
        index = self.index
        pids = [p.paper_id for p, _, _ in group]
        new_ids = {c.chunk_id for _, _, chunks in group for c in chunks}
        old = [i for i in index.chunk_ids_of(pids) if i not in new_ids]
        self.delete(index.chunks, old)  # replaced text: old chunks go

        ids, metas = [], []
        p_ids, p_docs, p_metas, p_vecs = [], [], [], []
        k = 0
        for p, digest, chunks in group:
            for c in chunks:
                ids.append(c.chunk_id)
                metas.append(chunk_meta(p, c.start, c.end))
            mean = np.mean(vecs[k : k + len(chunks)], axis=0)
            k += len(chunks)
            p_ids.append(p.paper_id)
            p_docs.append(p.text)
            p_metas.append(self.meta(p, digest, len(chunks)))
            p_vecs.append((mean / (np.linalg.norm(mean) or 1.0)).tolist())
        self.write(index.chunks, ids, vecs, None, metas)
        self.write(index.papers, p_ids, p_vecs, p_docs, p_metas)  # commit marker last
        return len(ids), len(old)
