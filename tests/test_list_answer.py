"""List-shaped answers (rag/list_answer.py). Over a large index they come from the lister: a count, the
first `list_max`, and citations that are verifiable (quote = the abstract at its offsets)."""

from __future__ import annotations

from rag.answer import Engine
from rag.types import final_answer
from tests.conftest import CELCOMEN, FakeLLM, make_settings

QUESTION = "Which papers use diffusion models?"


def _engine(data_dir, embedder, **kw):
    return Engine(make_settings(data_dir, **kw), embedder=embedder, llm=FakeLLM())


def test_large_index_list_answer_uses_the_lister(sample_data_dir, embedder):
    eng = _engine(sample_data_dir, embedder, list_lister_min_papers=100, list_max=5)
    ans = final_answer(eng.stream(QUESTION))
    assert not ans.refused and ans.shape == "list"
    assert ans.listed is not None and ans.listed >= len(ans.citations) > 0
    assert len(ans.citations) <= 5
    assert ans.answer.splitlines()[0].startswith(f"{ans.listed} indexed paper")
    papers = {h.paper.paper_id: h.paper for h in ans.retrieved}
    for c in ans.citations:
        text = papers[c.paper_id].text
        assert c.quote and text[c.quote_start : c.quote_end] == c.quote
        assert f"[{c.n}]" in ans.answer
    assert all(s.supported and s.citations for s in ans.sentences)
    assert ans.to_json()["listed"] == ans.listed


def test_large_index_list_answer_keeps_the_request_filters(sample_data_dir, embedder):
    from rag.filters import Filters

    eng = _engine(sample_data_dir, embedder, list_lister_min_papers=100)
    ans = final_answer(eng.stream(QUESTION, filters=Filters.of("oral")))
    assert ans.listed and all(h.paper.decision == "Accept (Oral)" for h in ans.retrieved)


def test_small_index_list_answer_is_unchanged(sample_data_dir, embedder):
    ans = final_answer(_engine(sample_data_dir, embedder).stream(QUESTION))
    assert ans.listed is None


def test_which_question_half_covered_by_every_paper_is_refused_with_the_missing_part(seed_engine, fake_llm):
    # the seeds have graph neural networks, and nothing on music: no paper covers the combination
    ans = seed_engine.ask("Which paper uses graph neural networks for music recommendation?")
    # what is missing is named in the user's words ("music": no source mentions any audio)
    assert ans.refused and "music" in ans.refusal_reason
    assert "music" in ans.answer  # told to the user, not only kept in the record
    assert fake_llm.calls == []
    # the same frame about what a seed paper does is answered, by that paper
    ans = seed_engine.ask("Which paper trains a graph neural network as a preconditioner for linear solvers?")
    assert not ans.refused and ans.shape == "list"
    assert all(c.title.startswith("Graph Neural Preconditioners") for c in ans.citations)


def test_standout_needs_both_the_cosine_and_the_gap(tiny_papers):
    from rag.list_answer import standout
    from rag.types import Hit

    def hits(*cos):
        return [Hit(p, 0.0, [], c) for p, c in zip(tiny_papers, cos)]

    assert standout(hits(0.5, 0.75, 0.6), 0.55, 0.1) == 2  # the best cosine, wherever it ranks
    assert standout(hits(0.75, 0.7), 0.55, 0.1) is None  # two papers fit about as well
    assert standout(hits(0.5, 0.3), 0.55, 0.1) is None  # none fits well enough
    assert standout(hits(None, 0.6), 0.55, 0.1) == 2  # a paper the dense side never saw has no say
    assert standout(hits(None, None), 0.55, 0.1) is None


def test_one_paper_asked_for_gets_the_standout_else_the_best_ranked():
    from rag.list_answer import shown

    # positions in retrieval order; `covered` comes best evidence sentence first
    assert shown([3, 1, 2], None, many=False, limit=1) == [1]
    assert shown([3, 1, 2], 2, many=False, limit=1) == [2]
    assert shown([3, 1, 2], None, many=False, limit=2) == [1, 2]
    assert shown([3, 1, 2], None, many=True, limit=2) == [3, 1]  # papers asked for: best sentence first
    assert shown([], None, many=False, limit=1) == []


def test_a_which_paper_question_names_one_paper(seed_engine, fake_llm):
    ans = seed_engine.ask(
        "Which paper uses neural networks to accelerate the convergence of iterative solvers?"
    )
    assert not ans.refused and ans.shape == "list"
    assert len({c.paper_id for c in ans.citations}) == 1
    assert fake_llm.calls == []


def test_a_long_description_spread_over_several_sentences_still_finds_its_paper(seed_engine, fake_llm):
    # every single sentence and the chunk cosine kept under their bars: only sentences read together count
    q = (
        "Which paper builds a generative graph neural network that disentangles gene regulation within and "
        "between cells and can be prompted with perturbations to produce spatial counterfactuals?"
    )

    def ask(**kw):
        s = seed_engine.settings.model_copy(
            update={"list_min_score": 0.99, "list_standout_cosine": 0.99, "list_min_answerability": 0.0, **kw}
        )
        return Engine(s, embedder=seed_engine.embedder, llm=fake_llm, index=seed_engine.index).ask(q)

    assert ask(list_joined_sentences=0).refused
    assert ask(list_joined_score=0.99).refused
    defaults = ask()  # the shipped score and lead
    assert not defaults.refused and {(c.source_file, c.index) for c in defaults.citations} == {CELCOMEN}
    ans = ask(list_joined_score=0.3, list_joined_gap=0.0)
    assert not ans.refused and ans.shape == "list"
    assert {(c.source_file, c.index) for c in ans.citations} == {CELCOMEN}
    assert fake_llm.calls == []


def test_sentences_read_together_support_what_each_supports_in_part(judge):
    from rag.list_answer import joined_score
    from rag.types import Hit, Paper

    text = (
        "We train a graph neural network on spatial transcriptomics. "
        "It can be prompted with perturbations to generate counterfactual tissues."
    )
    hit = Hit(Paper("P1", text, "f.txt", 0, title="A paper"), 1.0)
    first, second = judge.evidence([hit])
    claim = "a graph neural network on spatial transcriptomics that generates counterfactual tissues"
    alone = judge.scores(claim, [first, second])
    both = joined_score(judge, claim, [first, second])
    assert both > max(alone)  # each sentence holds half of the description, together all of it
    assert joined_score(judge, claim, []) == 0.0


def test_the_users_examples_are_no_part_of_what_a_paper_must_cover():
    from rag.intent import EXAMPLES as _EXAMPLES

    q = "Which paper aligns unpaired modalities from available pairs (e.g., audio-image and image-text)?"
    assert _EXAMPLES.sub("", q) == "Which paper aligns unpaired modalities from available pairs?"
    # a gloss is kept: it says what the topic is
    assert _EXAMPLES.sub("", "papers on inverse folding (protein sequence design)") == (
        "papers on inverse folding (protein sequence design)"
    )
