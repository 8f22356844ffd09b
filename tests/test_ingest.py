"""rag.ingest.pipeline through Index.ingest: idempotent re-ingest, replaced and removed abstracts, crash safety,
per-file stale clean-up, one ingest at a time."""

import json
import os
import re
import signal
import subprocess
import sys
from dataclasses import replace

import pytest

from rag.errors import UserError
from rag.index.index import Index
from tests.conftest import make_settings


def _ids(index: Index) -> list[str]:
    return index.chunks.get(include=[])["ids"]


class CountingEmbedder:
    """Wraps the real embedder and counts what it is asked to embed."""

    def __init__(self, inner):
        self.inner, self.name, self.calls = inner, inner.name, 0

    def encode(self, texts, progress=False, bulk=False):
        self.calls += len(texts)
        return self.inner.encode(texts)

    def __getattr__(self, name):  # max_seq_length and the rest: the real embedder's
        return getattr(self.inner, name)


def test_reingest_three_times_is_idempotent(settings, embedder, seed_papers):
    index, counting = Index(settings.storage), CountingEmbedder(embedder)
    first = index.ingest(seed_papers, counting, progress=False)
    assert first.added == first.chunks == index.count() > 38 and first.skipped == 0
    embedded = counting.calls
    for _ in range(3):
        again = index.ingest(seed_papers, counting, progress=False)
        assert (again.added, again.removed, again.skipped) == (0, 0, first.chunks)
    assert counting.calls == embedded  # nothing embedded again
    assert index.count() == first.chunks and index.paper_count() == 38


def test_changed_abstract_replaces_its_chunks(settings, embedder, seed_papers):
    index = Index(settings.storage)
    index.ingest(seed_papers, embedder, progress=False)
    before = index.count()
    target = seed_papers[1]
    old_ids = index.chunk_ids_of([target.paper_id])
    changed = [
        replace(p, text="A completely rewritten abstract about protein folding.") if p is target else p
        for p in seed_papers
    ]
    rep = index.ingest(changed, embedder, progress=False)
    new_ids = index.chunk_ids_of([target.paper_id])
    assert rep.added == 1 and rep.removed == len(old_ids)
    assert not set(old_ids) & set(new_ids)
    assert index.count() == before - len(old_ids) + 1
    assert index.get_papers([target.paper_id])[target.paper_id].text.startswith("A completely rewritten")


def test_abstract_removed_from_file_is_removed(settings, embedder, seed_papers):
    index = Index(settings.storage)
    index.ingest(seed_papers, embedder, progress=False)
    gone = seed_papers[5]
    rep = index.ingest([p for p in seed_papers if p is not gone], embedder, progress=False)
    assert rep.removed > 0 and index.paper_count() == 37
    assert index.chunk_ids_of([gone.paper_id]) == []


def test_duplicate_ids_are_rejected_before_writing(settings, embedder, seed_papers):
    index = Index(settings.storage)
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
    env = {**os.environ, "RAG_STORAGE__INGEST_BLOCK": "24", "RAG_STORAGE__DATA_DIR": str(data)}
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

    partial = Index(make_settings(data_dir=data).storage)
    assert partial.paper_count() < n
    out = subprocess.run(cmd + ["--json"], env=env, capture_output=True, text=True, check=True)
    rep = json.loads(out.stdout)
    assert set(rep) == {"papers", "chunks", "added", "bundled", "skipped", "removed", "seconds"}
    index = Index(make_settings(data_dir=data).storage)
    ids = _ids(index)
    assert len(ids) == len(set(ids)) == rep["chunks"] == index.count()
    assert index.paper_count() == n
    metas = index.papers.get(include=["metadatas"])["metadatas"]
    assert sum(m["n_chunks"] for m in metas) == index.count()  # every paper complete, no leftovers


def test_files_with_the_same_name_in_different_folders_keep_each_others_papers(tmp_path, settings, embedder):
    """Stale clean-up is per source file identity, not per basename (it used to delete the other file's papers)."""
    from rag.ingest.corpus import read_file

    rows = [
        {"id": f"P{i}", "title": f"Paper {i}", "abstract": f"We study topic number {i}. It works well."}
        for i in range(6)
    ]
    for name, part in (("a", rows[:3]), ("b", rows[3:])):
        (tmp_path / name).mkdir()
        (tmp_path / name / "corpus.jsonl").write_text("\n".join(json.dumps(r) for r in part))
    index = Index(settings.storage)
    index.ingest(read_file(tmp_path / "a" / "corpus.jsonl"), embedder, progress=False)
    second = index.ingest(read_file(tmp_path / "b" / "corpus.jsonl"), embedder, progress=False)
    assert second.removed == 0
    assert index.paper_count() == 6
    # a paper still vanishes when its own file drops it
    (tmp_path / "b" / "corpus.jsonl").write_text("\n".join(json.dumps(r) for r in rows[3:5]))
    third = index.ingest(read_file(tmp_path / "b" / "corpus.jsonl"), embedder, progress=False)
    assert third.removed > 0 and index.paper_count() == 5
    assert sorted(index.paper_records()) == ["P0", "P1", "P2", "P3", "P4"]


def test_concurrent_ingests_embed_each_chunk_once(tmp_path, tiny_papers, slow_embedder):
    """Two ingests of the same papers at once: the second waits for the lock, then skips all."""
    import threading

    s = make_settings(data_dir=tmp_path / "data", ingest_block=1)
    emb = slow_embedder
    said, reports = [], []

    def run():
        reports.append(Index(s.storage).ingest(tiny_papers, emb, progress=False, say=said.append))

    threads = [threading.Thread(target=run) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(600)  # a guard against a hang only: a loaded machine can take a minute
    assert emb.calls == len(tiny_papers)  # not 2x
    assert sorted(r.added for r in reports) == [0, len(tiny_papers)]
    assert any("waiting for another ingest" in m for m in said)
    assert Index(s.storage).count() == len(tiny_papers)


def test_the_same_papers_from_another_file_are_relabelled_not_embedded_again(tmp_path, settings, embedder):
    """A corpus moved or renamed keeps its vectors: only the chunk and paper records' metadata change."""
    from rag.ingest.corpus import read_file
    from rag.retrieval.retrieve import Retriever

    topics = ["graph neural networks", "protein folding", "speech recognition", "robot grasping"]
    rows = [
        {"id": f"P{i}", "title": f"Paper {i}", "abstract": f"We study {t}. It works well."}
        for i, t in enumerate(topics)
    ]
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "old.jsonl").write_text("\n".join(json.dumps(r) for r in rows))
    index = Index(settings.storage)
    first = index.ingest(read_file(tmp_path / "a" / "old.jsonl"), embedder, progress=False)
    (tmp_path / "b").mkdir()
    rows[0]["decision"] = "Accept (Oral)"  # metadata the vectors don't depend on
    (tmp_path / "b" / "new.jsonl").write_text("\n".join(json.dumps(r) for r in rows))
    counting = CountingEmbedder(embedder)
    rep = index.ingest(read_file(tmp_path / "b" / "new.jsonl"), counting, progress=False)
    assert counting.calls == 0 and rep.added == 0 and rep.skipped == first.chunks == index.count()
    chunk_metas = index.chunks.get(include=["metadatas"])["metadatas"]
    assert {m["source_file"] for m in chunk_metas} == {"new.jsonl"}
    papers = index.get_papers([f"P{i}" for i in range(4)])
    assert {p.source_file for p in papers.values()} == {"new.jsonl"} and papers[
        "P0"
    ].decision == "Accept (Oral)"
    hits = Retriever(index, embedder, settings.retrieval).retrieve("speech recognition", 2)
    assert hits[0].paper.paper_id == "P2" and hits[0].paper.source_file == "new.jsonl"
    assert all(c.text for h in hits for c in h.chunks)  # chunk texts still cut from the abstracts
    # a third run finds everything current; a changed text is embedded again
    assert (
        index.ingest(read_file(tmp_path / "b" / "new.jsonl"), counting, progress=False).skipped
        == index.count()
    )
    rows[1]["abstract"] += " A new sentence."
    (tmp_path / "b" / "new.jsonl").write_text("\n".join(json.dumps(r) for r in rows))
    assert index.ingest(read_file(tmp_path / "b" / "new.jsonl"), counting, progress=False).added > 0


def test_a_moved_corpus_larger_than_one_store_write_is_relabelled_in_writes_the_store_allows(
    tmp_path, settings, embedder, monkeypatch
):
    """Every paper of a corpus ingested again from another path ("moved") gets its new owner in writes no
    larger than the store's batch limit (the whole conference is twice Chroma's)."""
    from rag.ingest.corpus import read_file

    rows = [
        {"id": f"P{i}", "title": f"Paper {i}", "abstract": f"We study topic {i}. It works."} for i in range(5)
    ]
    for d in ("a", "b"):
        (tmp_path / d).mkdir()
        (tmp_path / d / "corpus.jsonl").write_text("\n".join(json.dumps(r) for r in rows))
    index = Index(settings.storage)
    index.ingest(read_file(tmp_path / "a" / "corpus.jsonl"), embedder, progress=False)
    index.max_batch = 2
    coll = type(index.papers)
    sizes, update = [], coll.update

    def limited(self, ids, *a, **kw):
        sizes.append(len(ids))
        assert len(ids) <= 2, "more than the store's batch limit in one write"
        return update(self, ids, *a, **kw)

    monkeypatch.setattr(coll, "update", limited)
    rep = index.ingest(read_file(tmp_path / "b" / "corpus.jsonl"), embedder, progress=False)
    assert rep.added == 0 and sum(sizes) >= 5
    assert {p.source_id for p in index.get_papers([r["id"] for r in rows]).values()} == {
        read_file(tmp_path / "b" / "corpus.jsonl")[0].source_id
    }
