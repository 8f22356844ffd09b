"""List-shaped answers (rag/shapes/list_answer.py) come from the lister: a count, the first `list_max`, and
citations that are verifiable (quote = the abstract at its offsets)."""

from __future__ import annotations

from rag.answer import Engine
from tests.conftest import FakeLLM, make_settings

QUESTION = "Which papers use diffusion models?"


def _engine(data_dir, embedder, **kw):
    return Engine(make_settings(data_dir, **kw), embedder=embedder, llm=FakeLLM())


def test_a_list_answer_uses_the_lister(sample_data_dir, embedder):
    eng = _engine(sample_data_dir, embedder, list_max=5)
    ans = eng.stream(QUESTION).answer()
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
    # each entry says its paper's decision: "Title (Oral): …", "Title (Rejected): …"
    for s in ans.sentences:
        paper = papers[next(c.paper_id for c in ans.citations if c.n == s.citations[0])]
        word = {"Accept (Oral)": "Oral", "Accept (Poster)": "Poster", "Accept (Spotlight)": "Spotlight"}
        word |= {"Reject": "Rejected", "Desk Rejected": "Desk-rejected"}
        assert s.text.startswith(f"{paper.title} ({word.get(paper.decision, paper.decision)}): "), s.text


def test_a_list_answer_keeps_the_request_filters(sample_data_dir, embedder):
    from rag.retrieval.filters import Filters

    eng = _engine(sample_data_dir, embedder)
    ans = eng.stream(QUESTION, filters=Filters.of("oral")).answer()
    assert ans.listed and all(h.paper.decision == "Accept (Oral)" for h in ans.retrieved)


def test_a_paper_described_in_part_is_named_with_what_it_lacks(seed_engine, fake_llm):
    # the seeds have graph neural networks, and nothing on music: the closest is named, with a caveat
    ans = seed_engine.ask("Which paper uses graph neural networks for music recommendation?")
    assert fake_llm.calls == []
    if not ans.refused:
        assert any(c.code in ("partial_match", "term_absent") for c in ans.caveats)
    # the same frame about what a seed paper does is answered, by that paper, with no caveat
    ans = seed_engine.ask("Which paper trains a graph neural network as a preconditioner for linear solvers?")
    assert not ans.refused and ans.shape == "which" and not ans.caveats
    assert all(c.title.startswith("Graph Neural Preconditioners") for c in ans.citations)
    assert ans.answer.startswith("Graph Neural Preconditioners")


def test_a_follow_up_ordinal_is_the_lists_entry_and_a_plural_asks_every_listed_paper(seed_engine):
    first = seed_engine.ask("Which papers are about diffusion models?")
    history = first.as_turns()
    listed = history[-1]["papers"]
    assert len(listed) >= 3 and listed == [c.paper_id for c in sorted(first.citations, key=lambda c: c.n)]
    ans = seed_engine.ask("Tell me more about the second one", history)
    assert {c.paper_id for c in ans.citations} == {listed[1]}
    # nothing asked of it: its problem, method, data and result sentences, in the abstract's order
    starts = [s.spans[0][1] for s in ans.sentences]
    assert len(starts) >= 3 and starts == sorted(starts)
    assert all(s.text in ans.retrieved[0].paper.text for s in ans.sentences)
    # a list shows up to 10 lines: every ordinal to "tenth" points into it (six seed papers are on diffusion)
    ans = seed_engine.ask("Tell me more about the sixth one", history)
    assert len(listed) >= 6 and [h.paper.paper_id for h in ans.retrieved] == [listed[5]]
    ans = seed_engine.ask("What datasets do they use?", history)
    assert ans.shape == "per_paper" and ans.table is not None
    assert [ans.retrieved[n - 1].paper.paper_id for n, _ in ans.table.rows] == listed
    for n, (cell,) in ans.table.rows:  # a cell is a sentence of that paper's abstract, or not stated
        assert cell is None or cell in ans.retrieved[n - 1].paper.text
    assert any(cell is None for _, (cell,) in ans.table.rows) or len(ans.citations) == len(listed)


def test_it_after_an_ordinal_stays_on_that_entry_and_these_papers_go_back_to_the_list(seed_engine):
    """ "The second one", then "what GPU did they use for it?": "it" is still the list's second entry, not the
    topic the list was asked with; "each of these papers", or "they" alone, asks the whole list again."""
    first = seed_engine.ask("Which papers are about diffusion models?")
    second = seed_engine.ask("Tell me more about the second one", first.as_turns())
    history = first.as_turns() + second.as_turns()
    listed = history[1]["papers"]
    assert history[-1]["papers"] == listed  # the list stays the one pointed at
    for q in ("What GPU did they use for it?", "and how well does it work?"):
        ans = seed_engine.ask(q, history)
        assert [h.paper.paper_id for h in ans.retrieved] == [listed[1]], q
        assert {c.paper_id for c in ans.citations} <= {listed[1]}, q
    for q in ("What data does each of these papers use?", "What datasets do they use?"):  # "they": the list
        ans = seed_engine.ask(q, history)
        assert ans.shape == "per_paper", q
        assert [ans.retrieved[n - 1].paper.paper_id for n, _ in ans.table.rows] == listed, q


def test_the_users_examples_are_no_part_of_what_a_paper_must_cover():
    from rag.grounding.gaps import to_cover

    assert to_cover("Which papers align modalities (e.g., audio-image and image-text)?") == "align modalities"


def test_which_of_them_keeps_the_listed_papers_the_lister_finds_about_it(seed_engine):
    """ "Which of them is about X (, and what …)?" after a list: the listed papers the one lister finds on X,
    each answered for the rest of the question; none found is said in a caveat, not a table of every paper."""
    first = seed_engine.ask("Which papers are about diffusion models?")
    history = first.as_turns()
    listed = history[-1]["papers"]
    ans = seed_engine.ask("Which of them is about cells, and what data do they use?", history)
    assert ans.shape == "per_paper" and ans.table is not None
    rows = [ans.retrieved[n - 1].paper.paper_id for n, _ in ans.table.rows]
    assert set(rows) < set(listed) and ans.table.columns == ["what data do they use"]
    assert [ans.retrieved[n - 1].paper.title[:10] for n, _ in ans.table.rows] == ["MorphoDiff"]
    for n, (cell,) in ans.table.rows:
        assert cell is None or cell in ans.retrieved[n - 1].paper.text
    ans = seed_engine.ask("Which of them is about music?", history)
    assert ans.table is None and not ans.citations
    assert [c.code for c in ans.caveats] == ["not_stated"] and "music" in ans.answer


def test_a_filter_after_a_list_lists_its_topic_again_with_the_filter(seed_engine):
    """ "only the spotlights please", "how many of those were posters?": the list's own question with the filter
    (the one lister's count), not a search for "please"."""
    first = seed_engine.ask("Which papers are about diffusion models?")
    history = first.as_turns()
    for q, decision in (
        ("only the spotlights please", "Accept (Spotlight)"),
        ("how many of those were posters?", "Accept (Poster)"),
    ):
        ans = seed_engine.ask(q, history)
        assert ans.shape == "list" and 0 < ans.listed < first.listed, q
        assert all(h.paper.decision == decision for h in ans.retrieved[: ans.listed]), q
        assert {c.paper_id for c in ans.citations} <= set(history[-1]["papers"]), q
    # as the page asks it: the question's filter already taken out and passed as the request's filter
    found, cleaned = seed_engine.question_filters("only the spotlights please")
    ans = seed_engine.ask(cleaned, history, filters=found)
    assert ans.listed_query == ("diffusion models", "spotlight", None, None) and 0 < ans.listed < first.listed


def test_thanks_is_answered_without_a_search_and_keeps_the_list(seed_engine):
    first = seed_engine.ask("Which papers are about diffusion models?")
    history = first.as_turns()
    ans = seed_engine.ask("thanks!", history)
    assert not ans.citations and not ans.refused and ans.answer.startswith("You're welcome")
    again = seed_engine.ask("Tell me more about the second one", history + ans.as_turns())
    assert {c.paper_id for c in again.citations} == {history[-1]["papers"][1]}


def test_a_negated_pick_is_every_papers_row():
    from rag.reading.reader import picked_by

    assert picked_by("which of them don't need a draft model") is None


def test_more_after_a_list_shows_its_next_page_then_says_the_list_is_done(sample_data_dir, embedder):
    """ "show me the rest", then "next 10 please": the same lister's list, one page further each time, numbered
    from where the last page stopped; past its end, a line saying so, and the list stays the one shown."""
    whole = _engine(sample_data_dir, embedder, list_max=50).ask(QUESTION)
    order = [c.paper_id for c in sorted(whole.citations, key=lambda c: c.n)]
    assert len(order) >= 5
    eng = _engine(sample_data_dir, embedder, list_max=2)
    history = eng.ask(QUESTION).as_turns()
    assert history[-1]["papers"] == order[:2]
    for q, page in (("show me the rest", order[2:4]), ("next 10 please", order[4:6])):
        ans = eng.ask(q, history)
        assert ans.shape == "list" and ans.listed == whole.listed, q
        assert [c.paper_id for c in sorted(ans.citations, key=lambda c: c.n)] == page, q
        first = order.index(page[0]) + 1
        assert f"{first}–{first + len(page) - 1}:" in ans.answer.splitlines()[0], q
        assert [h.paper.paper_id for h in ans.retrieved] == order[: first + len(page) - 1]
        history += ans.as_turns()
        assert history[-1]["papers"] == order[: first + len(page) - 1]  # "#3" is the list's third
    ans = eng.ask("what does #3 do?", history)
    assert [h.paper.paper_id for h in ans.retrieved] == order[2:3]
    done = _engine(sample_data_dir, embedder, list_max=len(order)).ask(QUESTION)
    more = _engine(sample_data_dir, embedder, list_max=len(order)).ask("any others?", done.as_turns())
    assert not more.citations and "whole list" in more.answer
    assert more.as_turns()[-1]["papers"] == done.as_turns()[-1]["papers"]


def test_entries_named_by_position_are_compared_side_by_side(seed_engine):
    first = seed_engine.ask("Which papers are about diffusion models?")
    history = first.as_turns()
    listed = history[-1]["papers"]
    for q, at in (("compare the first and the third", [0, 2]), ("how do #2 and #1 differ?", [1, 0])):
        ans = seed_engine.ask(q, history)
        assert ans.shape == "compare" and ans.table is not None, q
        assert [ans.retrieved[n - 1].paper.paper_id for n, _ in ans.table.rows] == [listed[k] for k in at], q
        for n, cells in ans.table.rows:  # each cell is a sentence of that paper's abstract, or not stated
            assert all(c is None or c in ans.retrieved[n - 1].paper.text for c in cells), q
        assert ans.as_turns()[-1]["papers"] == listed  # the list stays the one shown
    ans = seed_engine.ask("what's the last one about?", history)
    assert [h.paper.paper_id for h in ans.retrieved] == [listed[-1]]


def test_a_pick_narrows_the_list_that_later_follow_ups_mean(seed_engine):
    """After "which of them is about cells", "the first one" and "summarize them" mean the papers picked."""
    first = seed_engine.ask("Which papers are about diffusion models?")
    pick = seed_engine.ask("Do any of them work on cells?", first.as_turns())
    assert pick.shape == "per_paper" and pick.table is not None
    kept = [pick.retrieved[n - 1].paper.paper_id for n, _ in pick.table.rows]
    assert 0 < len(kept) < len(first.as_turns()[-1]["papers"])
    history = first.as_turns() + pick.as_turns()
    assert history[-1]["papers"] == kept
    ans = seed_engine.ask("tell me more about the first one", history)
    assert [h.paper.paper_id for h in ans.retrieved] == kept[:1]
    ans = seed_engine.ask("main takeaways from these?", history)
    assert ans.shape == "summary" and {c.paper_id for c in ans.citations} <= set(kept)


def test_thanks_in_a_sentence_is_no_question(seed_engine):
    first = seed_engine.ask("Which papers are about diffusion models?")
    for q in ("Great list, appreciate it.", "Thanks, I'll go through them."):
        ans = seed_engine.ask(q, first.as_turns())
        assert not ans.citations and not ans.refused, q
        assert ans.as_turns()[-1]["papers"] == first.as_turns()[-1]["papers"], q


def test_a_narrowing_lists_the_papers_on_both_the_list_topic_and_the_new_part(seed_engine):
    from rag.shapes.lister import find

    """ "only the ones about cells": the one lister on the list's topic within cells, not a search for "cells"
    alone; "more" after it pages that narrowed list."""
    first = seed_engine.ask("Which papers are about diffusion models?")
    history = first.as_turns()
    ans = seed_engine.ask("only the ones about cells", history)
    assert ans.shape == "list" and ans.listed_query[0] == "cells in diffusion models"
    # on the 38 seeds the lister's bar lets in every diffusion paper; the one on cells comes first
    assert 0 < ans.listed <= first.listed and ans.retrieved[0].paper.title.startswith("MorphoDiff")
    # the one lister's list for that topic: Find papers shows the same count
    assert find(seed_engine.retriever, seed_engine.settings, "cells in diffusion models").found == ans.listed
    assert ans.as_turns()[-1]["papers"] == [c.paper_id for c in sorted(ans.citations, key=lambda c: c.n)]
    more = seed_engine.ask("show me the rest", history + ans.as_turns())
    assert f"all {ans.listed} matching papers" in more.answer and not more.citations


def test_a_bare_topic_or_a_casual_ask_is_a_list_and_a_papers_own_name_is_not(seed_engine):
    """ "diffusion models" typed as into a search box, "anything on X?", "what's out there on X": the papers on
    it; "MorphoDiff" alone is that paper, and a measure asked of a name is a question about it."""
    for q in (
        "diffusion models",
        "anything on diffusion models?",
        "what's out there on diffusion models",
        "What work exists on diffusion models?",
    ):
        ans = seed_engine.ask(q)
        assert ans.shape == "list" and ans.listed_query[0] == "diffusion models", q
    for q in ("MorphoDiff", "MorphoDiff accuracy?"):
        ans = seed_engine.ask(q)
        assert ans.shape == "explain" and ans.citations[0].title.startswith("MorphoDiff"), q
    # in a chat about a paper, a short phrase is a follow-up, not a new list
    first = seed_engine.ask("What does MorphoDiff do?")
    assert seed_engine.ask("cell lines", first.as_turns()).shape != "list"


def test_a_list_with_no_paper_on_all_of_it_numbers_its_closest_as_shown(seed_engine):
    ans = seed_engine.ask("papers on graph neural networks for music recommendation")
    assert ans.shape == "list" and ans.answer.startswith("No indexed paper is about all of it")
    shown = [c.paper_id for c in sorted(ans.citations, key=lambda c: c.n)]
    assert [c.n for c in sorted(ans.citations, key=lambda c: c.n)] == list(range(1, len(shown) + 1))
    assert ans.as_turns()[-1]["papers"] == shown  # "what does 2 do?" is the second shown
    assert len([c for c in ans.caveats if "music" in c.text.lower()]) == 1  # said once
