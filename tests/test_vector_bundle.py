"""rag.ingest.vector_bundle: shipped chunk vectors, used by ingest only where the local embedder would compute them."""

import logging
from dataclasses import replace

import numpy as np
import pytest

from rag.index.index import Index
from rag.ingest import vector_bundle as vb
from rag.ingest.chunk import chunk_paper, make_splitter, vector_hash
from rag.settings import VECTOR_BUNDLE
from rag.types import Paper
from tests.conftest import FakeEmbedder, make_settings


def unit_rows(n, seed=0):
    v = np.random.default_rng(seed).normal(size=(n, 384)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def test_round_trip_keeps_vectors_and_rejects_unknown_keys_or_counts(tmp_path):
    a, b = unit_rows(3, 1), unit_rows(1, 2)
    # a key whose 16th byte is NUL must survive (numpy 'S' arrays would strip it)
    ha, hb = "ab" * 15 + "00" + "cd" * 16, "12" * 32
    info = vb.write(tmp_path / "v.npz", [(ha, a), (hb, b)])
    assert info == {"papers": 2, "chunks": 4, "bytes": (tmp_path / "v.npz").stat().st_size}
    got = vb.VectorBundle.load(tmp_path / "v.npz")
    assert len(got) == 2
    va = got.get(ha, 3)
    assert va.shape == (3, 384)
    assert np.allclose(np.linalg.norm(va, axis=1), 1.0, atol=1e-5)
    assert (va * a).sum(1).min() > 0.9998  # int8 rows with a per-row scale
    assert (got.get(hb, 1) * b).sum() > 0.9998
    assert got.get(hb, 2) is None  # another chunk count: never trusted
    assert got.get("34" * 32, 1) is None


@pytest.mark.parametrize("content", [b"not a zip at all", None])
def test_missing_or_unreadable_bundle_is_none(tmp_path, caplog, content):
    path = tmp_path / "v.npz"
    if content is not None:
        path.write_bytes(content)
    with caplog.at_level(logging.WARNING):
        assert vb.VectorBundle.load(path) is None
    assert ("not used" in caplog.text) == (content is not None)
    assert vb.VectorBundle.load(None) is None


def test_bundle_of_another_format_is_not_used(tmp_path, caplog):
    path = tmp_path / "v.npz"
    vb.write(path, [("12" * 32, unit_rows(1))])
    with np.load(path) as z:
        arrays = dict(z)
    arrays["format"] = np.int64(vb.FORMAT + 1)
    np.savez(path, **arrays)
    with caplog.at_level(logging.WARNING):
        assert vb.VectorBundle.load(path) is None
    assert "format" in caplog.text


def test_ingest_takes_bundled_vectors_and_embeds_only_the_rest(tmp_path, tiny_papers):
    first = FakeEmbedder()
    src = Index(make_settings(tmp_path / "a", vector_bundle=None).storage)
    src.ingest(tiny_papers, first, progress=False)
    assert first.calls == 4
    info = vb.write(tmp_path / "v.npz", vb.from_index(src))
    assert info["papers"] == 4 and info["chunks"] == 4

    changed = [*tiny_papers[:3], replace(tiny_papers[3], text=tiny_papers[3].text + " More.")]
    second = FakeEmbedder()
    dst = Index(make_settings(tmp_path / "b", vector_bundle=tmp_path / "v.npz").storage)
    rep = dst.ingest(changed, second, progress=False)
    assert (rep.added, rep.bundled, second.calls) == (4, 3, 1)  # only the changed abstract is embedded
    want = src.chunks.get(include=["embeddings", "metadatas"])
    have = dst.chunks.get(ids=want["ids"], include=["embeddings", "metadatas"])
    kept = {
        i: v for i, v, m in zip(want["ids"], want["embeddings"], want["metadatas"]) if m["paper_id"] != "T3"
    }
    by_id = dict(zip(have["ids"], have["embeddings"]))
    assert len(kept) == 3
    for cid, v in kept.items():
        assert float(np.dot(v, by_id[cid])) > 0.9998


def test_bundle_of_another_embedder_is_ignored_and_a_broken_one_loses_nothing(tmp_path, tiny_papers):
    src = Index(make_settings(tmp_path / "a", vector_bundle=None).storage)
    src.ingest(tiny_papers, FakeEmbedder(), progress=False)
    vb.write(tmp_path / "v.npz", vb.from_index(src))
    other = FakeEmbedder()
    other.name = "another-embedder"  # its vector_hash differs: the bundle must not be used
    rep = Index(make_settings(tmp_path / "b", vector_bundle=tmp_path / "v.npz").storage).ingest(
        tiny_papers, other, progress=False
    )
    assert (rep.bundled, other.calls) == (0, 4)

    (tmp_path / "broken.npz").write_bytes(b"\x00" * 100)
    third = FakeEmbedder()
    index = Index(make_settings(tmp_path / "c", vector_bundle=tmp_path / "broken.npz").storage)
    rep = index.ingest(tiny_papers, third, progress=False)
    assert (rep.added, rep.bundled, third.calls, index.count()) == (4, 0, 4, 4)


def test_shipped_bundle_covers_the_shipped_conference_under_default_settings(embedder, sample_papers):
    """Guards the first start of the conference: a change to chunking or the embedder's window or name
    must come with a rebuilt bundle (`rag bundle-vectors`), or every chunk is embedded again."""
    s = make_settings(VECTOR_BUNDLE.parent)
    bundle = vb.VectorBundle.load(s.storage.vector_bundle)
    assert bundle is not None and len(bundle) == 11672
    splitter = make_splitter(s.storage.chunk_size, s.storage.chunk_overlap)
    shape = (s.storage.chunk_size, s.storage.chunk_overlap, embedder.name, embedder.max_seq_length)
    for p in sample_papers[:60]:
        got = bundle.get(vector_hash(p, *shape), len(chunk_paper(p, splitter)))
        assert got is not None, p.paper_id
    # and the bundled vectors are what this embedder computes (any CPU, float32 or bfloat16)
    p = sample_papers[0]
    from rag.ingest.chunk import embed_text

    chunks = chunk_paper(p, splitter)
    local = np.asarray(embedder.encode([embed_text(c, p) for c in chunks]))
    assert (local * bundle.get(vector_hash(p, *shape), len(chunks))).sum(1).min() > 0.999


def test_a_paper_not_in_the_bundle_is_embedded(tmp_path, embedder):
    p = Paper(
        paper_id="NEW1",
        text="We study a new thing. It is new.",
        title="A new paper",
        source_file="x.jsonl",
        index=0,
    )
    rep = Index(make_settings(tmp_path / "d").storage).ingest([p], embedder, progress=False)
    assert (rep.added, rep.bundled) == (1, 0)
