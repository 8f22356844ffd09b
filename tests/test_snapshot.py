"""The BM25 side's snapshot of the store: read once per store generation, then from its file (cold `rag list`)."""

from __future__ import annotations

from rag.index.index import Index
from rag.retrieval.bm25 import BM25Side


def test_the_snapshot_is_read_from_its_file_until_an_ingest_changes_the_store(
    settings, tiny_papers, fake_embedder, monkeypatch
):
    index = Index(settings.storage)
    index.ingest(tiny_papers[:3], fake_embedder, progress=False)
    cache = settings.storage.data_dir / "bm25"
    first = BM25Side(index, cache, 10)
    assert len(list(cache.glob("snapshot-*.pkl"))) == 1

    def no_store_reads(*a, **kw):
        raise AssertionError("read the store although its snapshot is current")

    with monkeypatch.context() as m:
        for name in ("paper_records", "chunk_records", "paper_vectors"):
            m.setattr(Index, name, no_store_reads)
        again = BM25Side(Index(settings.storage), cache, 10)
    assert set(again.papers) == set(first.papers) and set(again.by_id) == set(first.by_id)
    assert again.paper_matrix[0] == first.paper_matrix[0]
    assert (again.paper_matrix[2] == first.paper_matrix[2]).all()

    index.ingest(tiny_papers, fake_embedder, progress=False)  # a new generation: read again, one file kept
    fresh = BM25Side(Index(settings.storage), cache, 10)
    assert set(fresh.papers) == {p.paper_id for p in tiny_papers}
    assert len(list(cache.glob("snapshot-*.pkl"))) == 1
