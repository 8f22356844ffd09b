import pytest

from rag.settings import Settings
from tests.conftest import CELCOMEN


def _key(hit):
    return (hit.paper.source_file, hit.paper.index)


@pytest.mark.parametrize("mode", ["hybrid", "bm25"])
def test_named_method_ranks_first(seed_engine, mode):
    hits = seed_engine.retriever.retrieve("What does Celcomen do?", 5, mode)
    assert _key(hits[0]) == CELCOMEN


def test_results_are_distinct_papers_with_their_chunks(seed_engine):
    hits = seed_engine.retriever.retrieve("reinforcement learning policy", 5, "hybrid")
    assert len(hits) == 5
    assert len({h.paper.paper_id for h in hits}) == 5
    for h in hits:
        assert h.chunks and all(c.paper_id == h.paper.paper_id for c in h.chunks)
        assert all(h.paper.text[c.start : c.end] == c.text for c in h.chunks)
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


def test_dense_mode_finds_paraphrase(seed_engine):
    hits = seed_engine.retriever.retrieve(
        "re-identifying people across different surveillance cameras", 3, "dense"
    )
    assert any(_key(h) == ("002_fdada5ea96b8bec8.txt", 0) for h in hits)


def test_bm25_is_persisted_and_rebuilt_after_ingest(seed_data_dir, embedder, tmp_path, seed_papers):
    from rag.index import Index
    from rag.retrieve import Retriever

    s = Settings(data_dir=tmp_path / "d")
    index = Index(s)
    index.ingest(seed_papers[:10], embedder, progress=False)
    r = Retriever(index, embedder, s)
    fp = r.bm25().fingerprint
    assert (s.data_dir / "bm25" / f"bm25-{fp}" / "retriever.json").exists()
    index.ingest(seed_papers, embedder, progress=False)
    assert _key(r.retrieve("What does Celcomen do?", 3, "bm25")[0]) == CELCOMEN  # rebuilt, not stale
    assert r.bm25().fingerprint != fp


def test_writes_by_another_client_are_seen_after_the_check_interval(embedder, tmp_path, seed_papers):
    from rag.index import Index
    from rag.retrieve import Retriever

    s = Settings(data_dir=tmp_path / "d", store_check_s=3600)
    ours = Index(s)
    ours.ingest(seed_papers[:10], embedder, progress=False)
    r = Retriever(ours, embedder, s)
    fp = r.bm25().fingerprint
    other = Index(s)  # as another process sharing the store would
    other.ingest(seed_papers, embedder, progress=False)
    assert r.bm25().fingerprint == fp  # not re-checked within the interval
    r.settings = s.model_copy(update={"store_check_s": 0.0})
    fp2 = r.bm25().fingerprint
    assert fp2 != fp
    assert _key(r.retrieve("What does Celcomen do?", 3, "hybrid")[0]) == CELCOMEN
    # a replaced abstract with the same number of chunks leaves the counts alone; the generation marker moves
    from dataclasses import replace

    target = next(p for p in seed_papers if len(p.text) < 1000)
    changed = [
        replace(p, text="Celcomen-free rewrite about protein folding.") if p is target else p
        for p in seed_papers
    ]
    other.ingest(changed, embedder, progress=False)
    assert r.bm25().fingerprint != fp2
    hit = next(
        h
        for h in r.retrieve("rewrite about protein folding", 5, "hybrid")
        if h.paper.paper_id == target.paper_id
    )
    assert hit.paper.text.startswith("Celcomen-free") and all(
        hit.paper.text[c.start : c.end] == c.text for c in hit.chunks
    )


def test_followup_is_searched_with_the_turn_it_depends_on(seed_engine):
    from rag.intent import standalone

    q = standalone("What datasets did they validate it on?", ["What does Celcomen do?"])
    assert "Celcomen" in q
    hits = seed_engine.retriever.retrieve(q, 5, "hybrid")
    assert _key(hits[0]) == CELCOMEN
