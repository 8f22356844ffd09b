"""Paper -> chunks with character offsets into the abstract, sized for the embedder's window."""

from __future__ import annotations

import hashlib
import json
from functools import lru_cache

from llama_index.core.node_parser import SentenceSplitter

from rag.types import Chunk, Paper


@lru_cache(maxsize=4)
def make_splitter(chunk_size: int, chunk_overlap: int) -> SentenceSplitter:
    """Cached: building one loads the tiktoken vocabulary (~0.4 s), once per process is enough."""
    return SentenceSplitter(chunk_size=chunk_size, chunk_overlap=chunk_overlap)


def chunk_id(paper_id: str, text: str) -> str:
    return f"{paper_id}:{hashlib.sha256(text.encode()).hexdigest()[:16]}"


def content_hash(paper: Paper, *settings) -> str:
    """Changes when anything that shapes the stored chunks or their metadata changes."""
    payload = [
        paper.text,
        paper.title,
        paper.decision,
        paper.authors,
        paper.primary_area,
        paper.source_file,
        paper.index,
        *settings,
    ]
    return _digest(payload)


def vector_hash(paper: Paper, *settings) -> str:
    """Changes when anything that shapes the stored vectors changes (the text, the title each chunk is
    embedded with, the chunking and the embedder), not with metadata such as the file it came from."""
    return _digest([paper.text, paper.title, *settings])


def _digest(payload: list) -> str:
    return hashlib.sha256(json.dumps(payload, ensure_ascii=False).encode()).hexdigest()


def chunk_paper(paper: Paper, splitter: SentenceSplitter) -> list[Chunk]:
    chunks: list[Chunk] = []
    pos = 0
    for piece in splitter.split_text(paper.text):
        start = paper.text.find(piece, pos)
        if start < 0:  # the splitter normalised whitespace; fall back to a search from the top
            start = paper.text.find(piece)
        if start < 0:
            raise ValueError(f"chunk of {paper.paper_id} not found in its abstract")
        end = start + len(piece)
        chunks.append(Chunk(chunk_id(paper.paper_id, f"{start}:{piece}"), paper.paper_id, piece, start, end))
        pos = start + 1
    return chunks


def embed_text(chunk: Chunk, paper: Paper) -> str:
    """What the embedder and BM25 see: the title gives every chunk its paper's topic."""
    return f"{paper.title}\n{chunk.text}" if paper.title else chunk.text


def stored_chunk(cid: str, meta: dict, paper_texts: dict[str, str]) -> Chunk | None:
    """A chunk record back to a Chunk: its text is a slice of its paper's stored abstract (chunk
    records carry no document: Chroma's full-text indexing of them was most of ingest's write time)."""
    text = paper_texts.get(meta["paper_id"])
    if text is None:
        return None
    start, end = int(meta["start"]), int(meta["end"])
    piece = text[start:end]
    # The id hashes the chunk's text: a record written for another version of the abstract (an
    # ingest killed before its commit marker, or one racing this read) doesn't match and is skipped.
    if chunk_id(meta["paper_id"], f"{start}:{piece}") != cid:
        return None
    return Chunk(cid, meta["paper_id"], piece, start, end)
