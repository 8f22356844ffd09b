import json
import os
import re
import signal
import subprocess
import sys
from dataclasses import replace

import pytest

from rag.errors import UserError
from rag.index import Index
from rag.settings import Settings


class CountingEmbedder:
    """Wraps the real embedder and counts what it is asked to embed."""

    def __init__(self, inner):
        self.inner, self.name, self.calls = inner, inner.name, 0

    def encode(self, texts, progress=False, bulk=False):
        self.calls += len(texts)
        return self.inner.encode(texts)


def _ids(index: Index) -> list[str]:
    return index.chunks.get(include=[])["ids"]


def test_reingest_three_times_is_idempotent(settings, embedder, seed_papers):
    index, counting = Index(settings), CountingEmbedder(embedder)
    first = index.ingest(seed_papers, counting, progress=False)
    assert first.added == first.chunks == index.count() > 38 and first.skipped == 0
    embedded = counting.calls
    for _ in range(3):
        again = index.ingest(seed_papers, counting, progress=False)
        assert (again.added, again.removed, again.skipped) == (0, 0, first.chunks)
    assert counting.calls == embedded  # nothing embedded again
    assert index.count() == first.chunks and index.paper_count() == 38


def test_chunk_texts_are_cut_from_the_stored_abstracts(settings, embedder, seed_papers):
    index = Index(settings)
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
    from rag.index import _chunk

    c = chunks[0]
    meta = {"paper_id": c.paper_id, "start": c.start, "end": c.end}
    assert _chunk(c.chunk_id, meta, {c.paper_id: by_id[c.paper_id].text}) == c
    assert _chunk(c.chunk_id, meta, {c.paper_id: "A rewritten abstract. " + by_id[c.paper_id].text}) is None
    # a chunk whose paper record is missing (an ingest killed before its commit marker) is not returned
    index.papers.delete(ids=[seed_papers[2].paper_id])
    assert seed_papers[2].paper_id not in {c.paper_id for c, _ in index.dense(embedder.encode(["x"])[0], 40)}


def test_changed_abstract_replaces_its_chunks(settings, embedder, seed_papers):
    index = Index(settings)
    index.ingest(seed_papers, embedder, progress=False)
    before = index.count()
    target = seed_papers[1]
    old_ids = index._chunk_ids_of([target.paper_id])
    changed = [
        replace(p, text="A completely rewritten abstract about protein folding.") if p is target else p
        for p in seed_papers
    ]
    rep = index.ingest(changed, embedder, progress=False)
    new_ids = index._chunk_ids_of([target.paper_id])
    assert rep.added == 1 and rep.removed == len(old_ids)
    assert not set(old_ids) & set(new_ids)
    assert index.count() == before - len(old_ids) + 1
    assert index.get_papers([target.paper_id])[target.paper_id].text.startswith("A completely rewritten")


def test_abstract_removed_from_file_is_removed(settings, embedder, seed_papers):
    index = Index(settings)
    index.ingest(seed_papers, embedder, progress=False)
    gone = seed_papers[5]
    rep = index.ingest([p for p in seed_papers if p is not gone], embedder, progress=False)
    assert rep.removed > 0 and index.paper_count() == 37
    assert index._chunk_ids_of([gone.paper_id]) == []


def test_duplicate_ids_are_rejected_before_writing(settings, embedder, seed_papers):
    index = Index(settings)
    with pytest.raises(UserError, match="occurs twice"):
        index.ingest(seed_papers + [seed_papers[0]], embedder, progress=False)
    assert index.count() == 0


def _synthetic_corpus(path, seed_papers, copies=6):
    with open(path, "w") as f:
        for k in range(copies):
            for p in seed_papers:
                f.write(
                    json.dumps(
                        {"id": f"{p.paper_id}-v{k}", "title": p.title, "abstract": f"Variant {k}. {p.text}"}
                    )
                    + "\n"
                )
    return copies * len(seed_papers)


def test_kill_during_ingest_then_rerun_completes(tmp_path, seed_papers):
    corpus = tmp_path / "big.jsonl"
    n = _synthetic_corpus(corpus, seed_papers)
    data = tmp_path / "data"
    env = {**os.environ, "RAG_INGEST_BLOCK": "24", "RAG_DATA_DIR": str(data)}
    cmd = [sys.executable, "-m", "iclr_rag", "ingest", str(corpus)]
    proc = subprocess.Popen(cmd, env=env, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL)
    seen, buf = 0, b""
    while proc.poll() is None:
        buf += os.read(proc.stderr.fileno(), 256)
        done = [int(x) for x in re.findall(rb"\| *(\d+)/\d+ \[", buf)]
        seen = max(done, default=0)
        if seen >= 72:  # a few groups committed, most still to go
            break
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert 0 < seen, "ingest finished before it could be killed"

    partial = Index(Settings(data_dir=data))
    assert partial.paper_count() < n
    out = subprocess.run(cmd + ["--json"], env=env, capture_output=True, text=True, check=True)
    rep = json.loads(out.stdout)
    assert set(rep) == {"papers", "chunks", "added", "skipped", "removed", "seconds"}
    index = Index(Settings(data_dir=data))
    ids = _ids(index)
    assert len(ids) == len(set(ids)) == rep["chunks"] == index.count()
    assert index.paper_count() == n
    metas = index.papers.get(include=["metadatas"])["metadatas"]
    assert sum(m["n_chunks"] for m in metas) == index.count()  # every paper complete, no leftovers


def test_server_mode_uses_the_same_code(chroma_server, tmp_path, embedder, seed_papers):
    s = Settings(data_dir=tmp_path / "d", chroma_url=chroma_server)
    index = Index(s)
    rep = index.ingest(seed_papers, embedder, progress=False)
    assert index.count() == rep.chunks and rep.added == rep.chunks
    assert not (tmp_path / "d" / "chroma").exists()  # nothing stored locally
    again = Index(s).ingest(seed_papers, embedder, progress=False)
    assert again.added == 0 and again.skipped == rep.chunks
    from rag.retrieve import Retriever

    hits = Retriever(Index(s), embedder, s).retrieve("What does Celcomen do?", 3, "hybrid")
    assert (hits[0].paper.source_file, hits[0].paper.index) == ("000_e01d3feec203c69d.txt", 1)


def test_unreachable_server_names_the_url(tmp_path):
    from tests.conftest import free_port

    url = f"http://127.0.0.1:{free_port()}"
    with pytest.raises(UserError, match=re.escape(url)):
        Index(Settings(data_dir=tmp_path, chroma_url=url))


def test_files_with_the_same_name_in_different_folders_keep_each_others_papers(tmp_path, settings, embedder):
    """Stale clean-up is per source file identity, not per basename (it used to delete the other file's papers)."""
    from rag.corpus import read_file

    rows = [
        {"id": f"P{i}", "title": f"Paper {i}", "abstract": f"We study topic number {i}. It works well."}
        for i in range(6)
    ]
    for name, part in (("a", rows[:3]), ("b", rows[3:])):
        (tmp_path / name).mkdir()
        (tmp_path / name / "corpus.jsonl").write_text("\n".join(json.dumps(r) for r in part))
    index = Index(settings)
    index.ingest(read_file(tmp_path / "a" / "corpus.jsonl"), embedder, progress=False)
    second = index.ingest(read_file(tmp_path / "b" / "corpus.jsonl"), embedder, progress=False)
    assert second.removed == 0
    assert index.paper_count() == 6
    # a paper still vanishes when its own file drops it
    (tmp_path / "b" / "corpus.jsonl").write_text("\n".join(json.dumps(r) for r in rows[3:5]))
    third = index.ingest(read_file(tmp_path / "b" / "corpus.jsonl"), embedder, progress=False)
    assert third.removed > 0 and index.paper_count() == 5
    assert sorted(index.paper_records()) == ["P0", "P1", "P2", "P3", "P4"]


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
    from rag.store import storage_errors

    s = Settings(data_dir=tmp_path / "data", chroma_url=url)
    with pytest.raises(StorageError, match=expect) as got:
        with storage_errors(s, writing=True):
            raise exc()
    msg = str(got.value)
    assert "\n" not in msg and (url or str(tmp_path / "data")) in msg
    assert "rag ingest" in msg or "writable" in msg


def test_unknown_errors_pass_through(tmp_path):
    from rag.store import storage_errors

    with pytest.raises(KeyError):
        with storage_errors(Settings(data_dir=tmp_path)):
            raise KeyError("x")


def test_index_reads_translate_storage_failures(settings, fake_embedder, tiny_papers, monkeypatch):
    from rag.errors import StorageError

    index = Index(settings)
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

    Index(settings).ingest(tiny_papers, fake_embedder, progress=False)
    db = settings.chroma_path / "chroma.sqlite3"
    if damage == "junk":
        db.write_bytes(os.urandom(5000))
    else:
        with open(db, "r+b") as f:
            f.seek(30000)
            f.write(b"\xff" * 20000)
    with pytest.raises(StorageError, match="is damaged.*mv .*damaged.*rag ingest"):
        Index(settings)


def test_reading_a_missing_store_creates_nothing(tmp_path):
    data = tmp_path / "empty"
    data.mkdir()
    index = Index(Settings(data_dir=data))
    assert index.count() == 0 and index.paper_count() == 0 and not index.exists
    with pytest.raises(UserError, match="Nothing is indexed yet"):
        index.require()
    with pytest.raises(UserError, match="Nothing is indexed yet"):
        index.papers.get()
    assert list(data.iterdir()) == []


def test_concurrent_ingests_embed_each_chunk_once(tmp_path, tiny_papers, slow_embedder):
    """Two ingests of the same papers at once: the second waits for the lock, then skips all."""
    import threading

    s = Settings(data_dir=tmp_path / "data", ingest_block=1)
    emb = slow_embedder
    said, reports = [], []

    def run():
        reports.append(Index(s).ingest(tiny_papers, emb, progress=False, say=said.append))

    threads = [threading.Thread(target=run) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert emb.calls == len(tiny_papers)  # not 2x
    assert sorted(r.added for r in reports) == [0, len(tiny_papers)]
    assert any("waiting for another ingest" in m for m in said)
    assert Index(s).count() == len(tiny_papers)
