import pytest

from tests.conftest import CELCOMEN, make_settings


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
    from rag.index.index import Index
    from rag.retrieval.retrieve import Retriever

    s = make_settings(data_dir=tmp_path / "d")
    index = Index(s.storage)
    index.ingest(seed_papers[:10], embedder, progress=False)
    r = Retriever(index, embedder, s.retrieval, s.generation.context_papers)
    fp = r.bm25().fingerprint
    assert (s.storage.data_dir / "bm25" / f"bm25-{fp}" / "retriever.json").exists()
    index.ingest(seed_papers, embedder, progress=False)
    assert _key(r.retrieve("What does Celcomen do?", 3, "bm25")[0]) == CELCOMEN  # rebuilt, not stale
    assert r.bm25().fingerprint != fp


def test_writes_by_another_client_are_seen_after_the_check_interval(embedder, tmp_path, seed_papers):
    from rag.index.index import Index
    from rag.retrieval.retrieve import Retriever

    s = make_settings(data_dir=tmp_path / "d", store_check_s=3600)
    ours = Index(s.storage)
    ours.ingest(seed_papers[:10], embedder, progress=False)
    r = Retriever(ours, embedder, s.retrieval)
    fp = r.bm25().fingerprint
    other = Index(s.storage)  # as another process sharing the store would
    other.ingest(seed_papers, embedder, progress=False)
    assert r.bm25().fingerprint == fp  # not re-checked within the interval
    ours.storage = s.replace(storage={"store_check_s": 0.0}).storage
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
    history = [{"role": "user", "content": "What does Celcomen do?"}]
    q = seed_engine.read("What datasets did they validate it on?", history).query
    assert "Celcomen" in q
    hits = seed_engine.retriever.retrieve(q, 5, "hybrid")
    assert _key(hits[0]) == CELCOMEN


def _cover_retriever(tmp_path, fake_embedder):
    texts = {
        "A0": (
            "AlphaBench for code agents",
            "AlphaBench tests code agents on many tasks. Agents write code.",
        ),
        "A1": ("Code agents at scale", "We study code agents that write code, evaluated on AlphaBench."),
        "N0": ("Agents writing code", "Agents write code for many tasks and we measure them."),
        "N1": ("More code agents", "Code agents write code; we report how they do."),
        "R0": ("Recycle old adapters", "We recycle adapters trained on other tasks to write code."),
        "Z0": ("Zeta Recycle", "Zeta Recycle distills one adapter from many pre-trained adapters."),
    }
    return _retriever_over(texts, tmp_path, fake_embedder, context_papers=4)


def _retriever_over(texts: dict[str, tuple[str, str]], tmp_path, fake_embedder, **settings):
    """A retriever over papers given as {id: (title, abstract)}, with the fake embedder."""
    from rag.index.index import Index
    from rag.retrieval.retrieve import Retriever
    from rag.types import Paper

    papers = [
        Paper(paper_id=k, text=t, source_file="c.jsonl", source_id="c", index=i, title=title)
        for i, (k, (title, t)) in enumerate(texts.items())
    ]
    s = make_settings(data_dir=tmp_path / "d", **settings)
    index = Index(s.storage)
    index.ingest(papers, fake_embedder, progress=False)
    return Retriever(index, fake_embedder, s.retrieval, s.generation.context_papers)


def test_an_uncovered_named_term_brings_in_the_paper_that_names_it(tmp_path, fake_embedder):
    from rag.retrieval.names import named_terms

    r = _cover_retriever(tmp_path, fake_embedder)
    q = "AlphaBench and Zeta Recycle both concern code agents. What does each contribute?"
    terms = named_terms(q)
    ranked = ["A0", "N0", "A1", "N1", "R0", "Z0"]
    scores = {p: 1.0 / (i + 1) for i, p in enumerate(ranked)}
    out = r._cover_terms(q, terms, ranked, dict(scores), {p: {} for p in ranked}, None, 4)
    # the first shown paper that names no term gives its slot and moves just below the shown ones;
    # the whole name wins over "recycle" alone
    assert out == ["A0", "Z0", "A1", "N1", "N0", "R0"]
    # the paper the new one replaces is the one that gives way: with a window of 2, "N0" (naming
    # nothing) does, and "A0", the only shown paper naming AlphaBench, stays shown
    assert r._cover_terms(q, terms, ["N0", "A0", "A1", "Z0"], dict(scores), {}, None, 2)[:2] == ["Z0", "A0"]
    # every shown paper is the only one naming some term: nothing is pushed out
    only = ["A0", "R0", "Z0"]
    assert r._cover_terms(q, terms | {"agents"}, only, dict(scores), {}, None, 1) == only
    # nothing in the index names the term: the ranking is left as it was
    fake = "AlphaBench and Omicron-Net both concern code agents. What does each contribute?"
    assert r._cover_terms(fake, named_terms(fake), ranked, dict(scores), {}, None, 4) == ranked
    # every term already named by a shown paper: unchanged
    ok = "How does AlphaBench test code agents?"
    assert r._cover_terms(ok, named_terms(ok), ranked, dict(scores), {}, None, 4) == ranked


def test_covered_terms_reach_the_hits_of_retrieve(tmp_path, fake_embedder):
    # one chunk per side: the fused pool holds one paper, so AlphaBench's comes from outside it
    r = _cover_retriever(tmp_path, fake_embedder)
    q = "AlphaBench and Zeta Recycle both concern code agents writing code. What does each contribute?"
    ids = [h.paper.paper_id for h in r.retrieve(q, 4, "hybrid", candidates=1)]
    assert ids[0] == "Z0" and ids[1] in ("A0", "A1")
    assert all(h.chunks for h in r.retrieve(q, 4, "hybrid", candidates=1))
    r.retrieval = r.retrieval.model_copy(update={"cover_depth": 0})
    assert [h.paper.paper_id for h in r.retrieve(q, 4, "hybrid", candidates=1)] == ["Z0"]


def test_a_field_acronym_weighs_bm25_in_but_boosts_no_paper(tmp_path, fake_embedder):
    """ "LLM-generated queries" names a kind (LLM), not a paper: the papers that say "LLM-generated" get no
    named-term votes, so a huge boost ranks as no boost; a real name ("AlphaBench") still lifts its paper."""
    texts = {
        "F0": ("Detecting essays", "We detect LLM-generated essays written by students."),
        "V0": (
            "Text-video retrieval",
            "For text-video retrieval many queries are written; we keep them cheap.",
        ),
        "A0": ("AlphaBench", "AlphaBench scores retrieval of video by text queries."),
    }
    r = _retriever_over(texts, tmp_path, fake_embedder, named_boost=0.0, prf_docs=0)
    s = r.retrieval

    def order(q: str, boost: float) -> list[str]:
        r.retrieval = s.model_copy(update={"named_boost": boost})
        return [h.paper.paper_id for h in r.retrieve(q, 3, "hybrid")]

    q = "How does the text-video retrieval paper keep its many LLM-generated queries cheap?"
    assert order(q, 100.0) == order(q, 0.0)
    named = "How does AlphaBench keep its many text queries cheap?"
    assert order(named, 100.0)[0] == "A0"
    # a name whose first part is a field acronym is a name
    from rag.retrieval.names import named_terms
    from rag.retrieval.retrieve import boosted

    assert boosted(named_terms("Does GNN-RAG beat LLM-Pruner on LLM-generated data with GNNs?")) == {
        "gnn-rag",
        "llm-pruner",
    }


def test_the_trace_replays_the_fusion_and_records_the_cover(tmp_path, fake_embedder, seed_engine):
    """retrieve(trace=True): the same hits, and a trace whose re-fusion gives each hit its score (papers the
    term cover moved in excepted, listed in `covered`); other weights re-rank from the same sides."""
    from rag.retrieval.retrieve import Trace

    q = "How does Celcomen disentangle intra- and inter-cellular gene regulation?"
    r = seed_engine.retriever
    plain = r.retrieve(q, 8, "hybrid")
    hits, trace = r.retrieve(q, 8, "hybrid", trace=True)
    assert [h.paper.paper_id for h in hits] == [h.paper.paper_id for h in plain]
    assert {n for n, _, _ in trace.sides} >= {"dense", "bm25"}
    replay = Trace.from_json(trace.to_json()).scores()
    assert all(
        abs(replay[h.paper.paper_id] - h.score) < 1e-9 for h in hits if h.paper.paper_id not in trace.covered
    )
    dense_only = trace.scores({"bm25": 0.0, "paper": 0.0, "prf_bm25": 0.0, "prf_paper": 0.0}, named_boost=0.0)
    dense = dict(next(x for x in trace.sides if x[0] == "dense")[2])
    assert sorted(dense_only, key=lambda p: -dense_only[p])[:3] == sorted(dense, key=dense.get)[:3]
    # a paper the cover moved in is recorded (one chunk per side: AlphaBench's paper comes from outside)
    cov = _cover_retriever(tmp_path, fake_embedder)
    q = "AlphaBench and Zeta Recycle both concern code agents writing code. What does each contribute?"
    hits, trace = cov.retrieve(q, 4, "hybrid", candidates=1, trace=True)
    assert (
        trace.covered
        and trace.covered[0] in ("A0", "A1")
        and trace.covered[0] in [h.paper.paper_id for h in hits]
    )
