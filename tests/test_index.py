import os
import re

import pytest

from rag.errors import UserError
from rag.index.index import Index
from tests.conftest import make_settings


def test_chunk_texts_are_cut_from_the_stored_abstracts(settings, embedder, seed_papers):
    index = Index(settings.storage)
    index.ingest(seed_papers[:6], embedder, progress=False)
    assert all(d is None for d in index.chunks.get(include=["documents"])["documents"])  # no second copy
    by_id = {p.paper_id: p for p in seed_papers}
    chunks = index.all_chunks()
    assert len(chunks) == index.count()
    found = index.dense(embedder.encode([seed_papers[2].text[:300]])[0], 5)
    assert found[0][0].paper_id == seed_papers[2].paper_id
    for c in chunks + [c for c, _ in found]:
        assert c.text and c.text == by_id[c.paper_id].text[c.start : c.end]
    # a chunk record left from another version of the abstract (killed before its commit marker) is skipped
    from rag.ingest.chunk import stored_chunk as _chunk

    c = chunks[0]
    meta = {"paper_id": c.paper_id, "start": c.start, "end": c.end}
    assert _chunk(c.chunk_id, meta, {c.paper_id: by_id[c.paper_id].text}) == c
    assert _chunk(c.chunk_id, meta, {c.paper_id: "A rewritten abstract. " + by_id[c.paper_id].text}) is None
    # a chunk whose paper record is missing (an ingest killed before its commit marker) is not returned
    index.papers.delete(ids=[seed_papers[2].paper_id])
    assert seed_papers[2].paper_id not in {c.paper_id for c, _ in index.dense(embedder.encode(["x"])[0], 40)}


def test_server_mode_uses_the_same_code(chroma_server, tmp_path, embedder, seed_papers):
    s = make_settings(data_dir=tmp_path / "d", chroma_url=chroma_server)
    index = Index(s.storage)
    rep = index.ingest(seed_papers, embedder, progress=False)
    assert index.count() == rep.chunks and rep.added == rep.chunks
    assert not (tmp_path / "d" / "chroma").exists()  # nothing stored locally
    again = Index(s.storage).ingest(seed_papers, embedder, progress=False)
    assert again.added == 0 and again.skipped == rep.chunks
    from rag.retrieval.retrieve import Retriever

    hits = Retriever(Index(s.storage), embedder, s.retrieval).retrieve("What does Celcomen do?", 3, "hybrid")
    assert (hits[0].paper.source_file, hits[0].paper.index) == ("000_e01d3feec203c69d.txt", 1)


def test_unreachable_server_names_the_url(tmp_path):
    from tests.conftest import free_port

    url = f"http://127.0.0.1:{free_port()}"
    with pytest.raises(UserError, match=re.escape(url)):
        Index(make_settings(data_dir=tmp_path, chroma_url=url).storage)


# ------------------------------------------------------------ storage failures (issue 14, defects 3, 4, 9)
def _internal(msg):
    from chromadb.errors import InternalError

    return InternalError(msg)


@pytest.mark.parametrize(
    "exc, url, expect",
    [
        (
            lambda: _internal("error returned from database: (code: 8) attempt to write a readonly database"),
            None,
            "is read-only",
        ),
        (lambda: PermissionError(13, "Permission denied"), None, "is read-only"),
        (
            lambda: _internal("error returned from database: (code: 26) file is not a database"),
            None,
            "is damaged",
        ),
        (
            lambda: _internal(
                'Database(SqliteError { code: 11, message: "database disk image is malformed" })'
            ),
            None,
            "is damaged",
        ),
        (
            lambda: _internal("Error in compaction: Failed to apply logs to the hnsw segment writer"),
            None,
            "disk is full",
        ),
        (lambda: OSError(28, "No space left on device"), None, "disk is full"),
        (
            lambda: __import__("httpx").ConnectError("[Errno 111] Connection refused"),
            "http://127.0.0.1:9",
            "Lost the connection",
        ),
    ],
)
def test_storage_failures_become_one_line_naming_the_store(tmp_path, exc, url, expect):
    from rag.errors import StorageError
    from rag.index.store import storage_errors

    s = make_settings(data_dir=tmp_path / "data", chroma_url=url)
    with pytest.raises(StorageError, match=expect) as got:
        with storage_errors(s.storage, writing=True):
            raise exc()
    msg = str(got.value)
    assert "\n" not in msg and (url or str(tmp_path / "data")) in msg
    assert "rag ingest" in msg or "writable" in msg


def test_unknown_errors_pass_through(tmp_path):
    from rag.index.store import storage_errors

    with pytest.raises(KeyError):
        with storage_errors(make_settings(data_dir=tmp_path).storage):
            raise KeyError("x")


def test_index_reads_translate_storage_failures(settings, fake_embedder, tiny_papers, monkeypatch):
    from rag.errors import StorageError

    index = Index(settings.storage)
    index.ingest(tiny_papers, fake_embedder, progress=False)

    def broken(*a, **kw):
        raise _internal("error returned from database: (code: 26) file is not a database")

    monkeypatch.setattr(type(index._chunks), "count", broken)
    with pytest.raises(StorageError, match="is damaged"):
        index.count()


@pytest.mark.parametrize("damage", ["junk", "middle"])
def test_damaged_sqlite_is_one_line(settings, fake_embedder, tiny_papers, damage):
    """Junk bytes: 'file is not a database'; a damaged middle: pyo3 PanicException (a BaseException)."""
    from rag.errors import StorageError

    Index(settings.storage).ingest(tiny_papers, fake_embedder, progress=False)
    db = settings.storage.chroma_path / "chroma.sqlite3"
    if damage == "junk":
        db.write_bytes(os.urandom(5000))
    else:
        with open(db, "r+b") as f:
            f.seek(30000)
            f.write(b"\xff" * 20000)
    with pytest.raises(StorageError, match="is damaged.*mv .*damaged.*rag ingest"):
        Index(settings.storage)


def test_reading_a_missing_store_creates_nothing(tmp_path):
    data = tmp_path / "empty"
    data.mkdir()
    index = Index(make_settings(data_dir=data).storage)
    assert index.count() == 0 and index.paper_count() == 0 and not index.exists
    with pytest.raises(UserError, match="Nothing is indexed yet"):
        index.require()
    with pytest.raises(UserError, match="Nothing is indexed yet"):
        index.papers.get()
    assert list(data.iterdir()) == []
