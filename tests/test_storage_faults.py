"""Issue 39: storage faults. A damaged or truncated vector index (full disk, overwritten bytes, deleted
segment folders) is found and rebuilt from the stored abstracts; a damaged BM25 cache is rebuilt; stale
chunk records go; a server's ingest lock is its collection's; an empty collection names the one that holds
papers; a full disk's error starts its own line."""

from __future__ import annotations

import errno
import glob
import os
import shutil
import threading
import time

import pytest

from rag.errors import StorageError, UserError
from rag.index.index import Index
from rag.types import Paper
from tests.conftest import FakeEmbedder, make_settings


def _papers(n: int, version: str = "") -> list[Paper]:
    return [
        Paper(
            f"T{i}",
            f"We propose method M{i}{version} for graph learning. It works well on benchmark {i}.",
            "t.jsonl",
            i,
            title=f"Tiny paper {i}",
            source_id="t",
        )
        for i in range(n)
    ]


@pytest.fixture(scope="module")
def flushed_store(tmp_path_factory) -> str:
    """1,100 one-chunk papers: enough that Chroma writes its HNSW segment files (it keeps fewer in its log)."""
    d = tmp_path_factory.mktemp("flushed") / "data"
    Index(make_settings(data_dir=d).storage).ingest(_papers(1100), FakeEmbedder(), progress=False)
    assert glob.glob(f"{d}/chroma/*-*/index_metadata.pickle"), "the fixture must reach the HNSW files"
    return str(d)


def _damage(d, how: str) -> None:
    for seg in glob.glob(f"{d}/chroma/*-*/"):
        if how == "full disk":  # what a full disk left in the probe: a truncated index_metadata.pickle
            p = seg + "index_metadata.pickle"
            os.truncate(p, os.path.getsize(p) // 2)
        elif how == "random header":
            with open(seg + "header.bin", "wb") as f:
                f.write(os.urandom(100))
        elif how == "folders deleted":
            shutil.rmtree(seg)


@pytest.mark.parametrize("how", ["full disk", "random header", "folders deleted"])
def test_a_damaged_vector_index_is_found_and_rebuilt(flushed_store, tmp_path, how):
    d = tmp_path / "data"
    shutil.copytree(flushed_store, d)
    _damage(d, how)
    index = Index(make_settings(data_dir=d).storage)
    assert index.damage()  # found, in a child process (a damaged HNSW file can crash its reader)
    if how != "folders deleted":  # reading it is one line saying what to run
        with pytest.raises(StorageError, match=r"is damaged .*rag ingest --repair"):
            index.dense([0.25] * 16, 5)
    rep = index.rebuild(FakeEmbedder(), progress=False)
    assert rep.papers == rep.added == 1100
    assert (index.count(), index.paper_count()) == (1100, 1100) and index.damage() is None
    assert len(index.dense([0.25] * 16, 5)) == 5
    assert not index.journal.exists()
    # no segment folder of the dropped collections is left behind
    assert len(glob.glob(f"{d}/chroma/*-*/")) == 2


def test_plain_ingest_rebuilds_a_damaged_store_and_says_so(flushed_store, tmp_path, monkeypatch):
    """`rag ingest` of the same corpus after the damage (deleted segment folders reported "unchanged")."""
    import json
    from types import SimpleNamespace

    from typer.testing import CliRunner

    import iclr_rag.cli as cli

    d = tmp_path / "data"
    shutil.copytree(flushed_store, d)
    _damage(d, "folders deleted")
    corpus = tmp_path / "t.jsonl"
    corpus.write_text(
        "".join(
            json.dumps({"id": p.paper_id, "title": p.title, "abstract": p.text}) + "\n" for p in _papers(1100)
        )
    )
    monkeypatch.setattr(
        cli, "_engine", lambda s, index=None: SimpleNamespace(index=index, embedder=FakeEmbedder())
    )
    r = CliRunner().invoke(cli.app, ["ingest", str(corpus), "--data-dir", str(d), "--json"])
    assert r.exit_code == 0, r.output
    assert "Rebuilt the vector index from its 1100 stored abstracts (it was damaged" in r.stderr
    assert Index(make_settings(data_dir=d).storage).damage() is None


def test_a_rebuild_cut_off_is_finished_by_the_next_ingest(tiny_papers, tmp_path, monkeypatch):
    s = make_settings(data_dir=tmp_path / "d")
    index = Index(s.storage)
    index.ingest(tiny_papers, FakeEmbedder(), progress=False)

    class Cut(Exception):
        pass

    def cut(*a, **kw):
        raise Cut  # killed after the old collections were dropped

    monkeypatch.setattr(Index, "_run", cut)
    with pytest.raises(Cut):
        index.rebuild(FakeEmbedder(), progress=False)
    monkeypatch.undo()
    assert index.journal.exists()
    index = Index(s.storage)
    index.ingest([], FakeEmbedder(), progress=False)
    assert index.paper_count() == 4 and index.count() == 4 and not index.journal.exists()


def test_a_damaged_bm25_cache_is_rebuilt(tiny_papers, settings):
    from rag.retrieval.retrieve import Retriever

    index = Index(settings.storage)
    index.ingest(tiny_papers, FakeEmbedder(), progress=False)
    Retriever(index, FakeEmbedder(), settings.retrieval).bm25()
    (saved,) = glob.glob(f"{settings.storage.data_dir}/bm25/*/retriever.json")
    with open(saved, "w") as f:
        f.write("{ not json")
    hits = (
        Retriever(Index(settings.storage), FakeEmbedder(), settings.retrieval)
        .bm25()
        .search("method M2 graph learning")
    )
    assert hits and hits[0][0].paper_id == "T2"
    with open(saved) as f:
        assert f.read().startswith("{")  # rewritten


def test_reingest_removes_chunk_records_no_paper_accounts_for(tiny_papers, settings):
    """Two versions of one paper written by racing ingests left the loser's chunks; a re-ingest deletes them."""
    index = Index(settings.storage)
    index.ingest(tiny_papers, FakeEmbedder(), progress=False)
    index.chunks.upsert(
        ids=["stale-1", "stale-2"],
        embeddings=[[0.25] * 16] * 2,
        metadatas=[{"paper_id": "T1", "start": 0, "end": 9, "source_file": "x", "index": 1}] * 2,
    )
    rep = index.ingest(tiny_papers, FakeEmbedder(), progress=False)
    assert (rep.removed, rep.skipped, index.count()) == (2, 4, 4)


def test_server_ingest_lock_is_the_collections_not_the_urls(chroma_server, tmp_path):
    port = chroma_server.rsplit(":", 1)[1]
    a = Index(make_settings(chroma_url=chroma_server, model_cache=tmp_path / "cache").storage, create=True)
    b = Index(make_settings(chroma_url=f"http://localhost:{port}/", model_cache=tmp_path / "cache").storage)
    said: list[str] = []
    slow = threading.Thread(
        target=a.ingest, args=(_papers(3), FakeEmbedder(delay_s=1.5)), kwargs={"progress": False}
    )
    slow.start()
    time.sleep(0.7)
    b.ingest(_papers(3, " v2"), FakeEmbedder(), progress=False, say=said.append)
    slow.join()
    assert said and "waiting for another ingest" in said[0]
    assert b.count() == 3  # the second version replaced the first, no chunk of either left over


def test_an_empty_collection_names_the_one_that_holds_papers(tiny_papers, tmp_path):
    d = tmp_path / "d"
    Index(make_settings(data_dir=d, collection="iclr2025").storage).ingest(
        tiny_papers, FakeEmbedder(), progress=False
    )
    with pytest.raises(UserError, match=r"collection .iclr2025. holds 4 papers: add --conference to read it"):
        Index(make_settings(data_dir=d).storage).require()
    with pytest.raises(UserError, match=r"'iclr2025' holds 4 papers: add --collection iclr2025"):
        Index(make_settings(data_dir=d, collection="other", conference_collection="conf").storage).require()


def test_a_full_disk_error_starts_its_own_line(tiny_papers, tmp_path, monkeypatch):
    from typer.testing import CliRunner

    import iclr_rag.cli as cli
    from rag.ingest.pipeline import Ingest

    corpus = tmp_path / "c.jsonl"
    corpus.write_text("".join(f'{{"id": "{p.paper_id}", "abstract": "{p.text}"}}\n' for p in tiny_papers))

    def full(self, group, vecs):
        raise OSError(errno.ENOSPC, "No space left on device")

    from types import SimpleNamespace

    monkeypatch.setattr(Ingest, "write_group", full)
    monkeypatch.setattr(
        cli, "_engine", lambda s, index=None: SimpleNamespace(index=index, embedder=FakeEmbedder())
    )
    r = CliRunner().invoke(cli.app, ["ingest", str(corpus), "--data-dir", str(tmp_path / "d")])
    assert r.exit_code == 2
    err = r.stderr.replace("\r", "\n")
    (line,) = [x for x in err.split("\n") if "error:" in x]
    assert line.startswith("error: ") and "the disk is full" in line
