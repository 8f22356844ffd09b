"""Chunk vectors shipped with the product (seeds/iclr2025.vectors.npz), so the conference indexes in about
a minute on any CPU instead of the encoder's 5 (AVX-512 BF16) to 12 (AVX2 only) minutes.

Each entry is keyed by the paper's `vector_hash` (its text, its title, the chunking and the embedder's
name and window: rag.ingest.chunk.vector_hash), so a vector is used only where the local embedder would compute
the same one; any other paper, chunking or embedder is embedded as before. Vectors are stored as int8
with one float32 scale per row (mean cosine to the float32 vectors in README 'Performance')."""

from __future__ import annotations

import logging
import zipfile
from pathlib import Path

import numpy as np

log = logging.getLogger(__name__)

FORMAT = 1
_KEY_BYTES = 16  # of the sha256 hex digest: 128 bits


def _key(vector_hash: str) -> bytes:
    return bytes.fromhex(vector_hash)[:_KEY_BYTES]


def quantize(vecs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """int8 rows and their scales (max |component| / 127)."""
    vecs = np.asarray(vecs, dtype=np.float32)
    scale = np.abs(vecs).max(axis=1) / 127.0
    scale[scale == 0] = 1.0
    return np.round(vecs / scale[:, None]).astype(np.int8), scale.astype(np.float32)


class VectorBundle:
    """Read side: `get(vector_hash, n)` gives the paper's n chunk vectors (normalized float32) or None."""

    def __init__(self, keys: np.ndarray, offsets: np.ndarray, codes: np.ndarray, scales: np.ndarray):
        self.offsets, self.codes, self.scales = offsets, codes, scales
        self.rows = {k.tobytes(): i for i, k in enumerate(keys)}  # uint8 rows: 'S' arrays drop trailing NULs

    def __len__(self) -> int:
        return len(self.rows)

    @classmethod
    def load(cls, path: Path | str | None) -> VectorBundle | None:
        """The bundle at `path`, or None (with a warning) when it is missing, unreadable or of another format:
        ingest then embeds everything, as without a bundle."""
        if not path:
            return None
        path = Path(path)
        if not path.exists():
            return None
        try:
            with np.load(path, allow_pickle=False) as z:
                if int(z["format"]) != FORMAT:
                    raise ValueError(f"format {int(z['format'])}, expected {FORMAT}")
                keys, offsets, codes, scales = z["keys"], z["offsets"], z["codes"], z["scales"]
            if (
                keys.ndim != 2
                or keys.shape[1] != _KEY_BYTES
                or len(offsets) != len(keys) + 1
                or offsets[-1] != len(codes)
                or len(scales) != len(codes)
            ):
                raise ValueError("inconsistent array sizes")
        except (OSError, ValueError, KeyError, zipfile.BadZipFile) as e:
            log.warning("vector bundle %s not used (%s); embedding every chunk", path, e)
            return None
        return cls(keys, offsets, codes, scales)

    def get(self, vector_hash: str, n_chunks: int) -> np.ndarray | None:
        i = self.rows.get(_key(vector_hash))
        if i is None:
            return None
        a, b = int(self.offsets[i]), int(self.offsets[i + 1])
        if b - a != n_chunks:  # another chunking under the same key cannot happen; never trust it
            return None
        vecs = self.codes[a:b].astype(np.float32) * self.scales[a:b, None]
        return vecs / np.clip(np.linalg.norm(vecs, axis=1, keepdims=True), 1e-12, None)


def write(path: Path | str, entries: list[tuple[str, np.ndarray]]) -> dict:
    """Write (vector_hash, chunk vectors in chunk order) entries atomically; returns sizes."""
    path = Path(path)
    keys = np.frombuffer(b"".join(_key(h) for h, _ in entries), dtype=np.uint8).reshape(-1, _KEY_BYTES)
    sizes = [len(v) for _, v in entries]
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    codes, scales = quantize(np.concatenate([v for _, v in entries]))
    tmp = path.with_name(path.name + ".tmp.npz")
    np.savez_compressed(tmp, format=np.int64(FORMAT), keys=keys, offsets=offsets, codes=codes, scales=scales)
    tmp.replace(path)
    return {"papers": len(entries), "chunks": int(offsets[-1]), "bytes": path.stat().st_size}


def from_index(index) -> list[tuple[str, np.ndarray]]:
    """Every stored paper's (vector_hash, chunk vectors in abstract order), read from an open index."""
    hashes = {pid: m.get("vector_hash") for pid, (_, m) in index.paper_records().items()}
    chunks: dict[str, list[tuple[int, np.ndarray]]] = {}
    for m, v in index.chunk_vectors():
        chunks.setdefault(m["paper_id"], []).append((int(m["start"]), np.asarray(v, dtype=np.float32)))
    return [
        (hashes[pid], np.stack([v for _, v in sorted(chunks[pid], key=lambda x: x[0])]))
        for pid in sorted(chunks)
        if hashes.get(pid)
    ]
