"""Find papers (ui/find/papers.py and its handlers), chat filters, what the page says is indexed, and the
indexing banner of `serve --conference`: over the 300-paper conference sample or the fake engine."""

from __future__ import annotations

import csv
import io

import pytest

from rag.retrieval.filters import Filters
from rag.types import Answer, Retrieved
from tests.ui_support import FakeEngine, corpus_papers
from ui.chat import render
from ui.chat.handlers import ChatHandlers
from ui.chat.session import Session, Turn
from ui.engine_holder import EngineHolder
from ui.find import papers as find
from ui.find.handlers import FindHandlers
from ui.handlers import Handlers, StatusHandlers


@pytest.fixture(scope="module")
def sample_engine(sample_data_dir, embedder):
    from rag.answer import Engine
    from tests.conftest import FakeLLM, make_settings

    # a shallower candidate pool than the default 300 keeps each search to seconds on 2 cores
    return Engine(make_settings(sample_data_dir, lister_candidates=60), embedder=embedder, llm=FakeLLM())


def test_topic_filter_is_detected_and_every_row_passes(sample_engine):
    found = find.find(
        sample_engine.retriever, sample_engine.settings, "orals about diffusion models", "any", "any", ""
    )
    assert found.error is None and found.detected == ("decision",)
    assert found.filters == Filters("oral") and "orals" not in found.topic.lower()
    assert found.result.papers and all(x.paper.decision == "Accept (Oral)" for x in found.result.papers)
    assert all(x.quote in x.paper.text for x in found.result.papers)
    assert find.chip_labels(found)["decision"] == "✕ Remove filter: orals (from your topic)"
    assert find.chip_labels(found)["area"] is None


def test_a_filter_matching_nothing_shows_the_valid_values(sample_engine):
    found = find.find(sample_engine.retriever, sample_engine.settings, "diffusion", "any", "No such area", "")
    assert found.result is None and "Valid areas:" in found.error
    html = find.render_summary(found)
    assert 'role="alert"' in html and "No indexed paper has primary area" in html
    assert find.render_table(found, 10) == "" and find.render_chart(found) == ""
    nobody = find.find(
        sample_engine.retriever, sample_engine.settings, "diffusion", "any", "any", "Zzyzx Nobody"
    )
    assert "author matching 'Zzyzx Nobody'" in nobody.error


def test_a_topic_no_paper_is_about_says_which_words_none_covers(sample_engine):
    found = find.find(
        sample_engine.retriever,
        sample_engine.settings,
        "knitting pattern generation with diffusion models",
        "any",
        "any",
        "",
    )
    assert found.error is None and found.result.papers == [] and "knitting" in found.result.lacking
    html = find.render_summary(found)
    assert 'role="status"' in html and "No indexed paper is about" in html and "never cover knitting" in html
    assert find.render_table(found, 10) == ""
    typo = find.find(sample_engine.retriever, sample_engine.settings, "difusion models", "any", "any", "")
    assert typo.result.papers == [] and typo.result.suggested == {"difusion": "diffusion"}
    assert "never cover difusion (did you mean “diffusion”?)" in find.render_summary(typo)
    assert 'Find instead: <a class="retry-link" role="button" href="#" data-q="diffusion models"' in (
        find.render_summary(typo)
    )
    assert "retry-link" not in html  # no typo, nothing to find instead
    # a topic's first word in capitals may be a sentence's first word
    typo = find.find(sample_engine.retriever, sample_engine.settings, "Difusion models", "any", "any", "")
    assert typo.result.papers == [] and typo.result.suggested == {"Difusion": "Diffusion"}


def test_table_pages_links_and_charts(sample_engine):
    found = find.find(
        sample_engine.retriever, sample_engine.settings, "reinforcement learning", "any", "any", ""
    )
    n = len(found.result.papers)
    assert n > 5
    assert f"<strong>{n:,} papers</strong>" in find.render_summary(found) and "may go on" not in (
        find.render_summary(found)
    )
    found.result.complete = False  # the lister stopped at its deepest pool: the count is a lower bound
    assert f"<strong>At least {n:,} papers</strong>" in find.render_summary(found)
    assert "The list may go on" in find.render_summary(found)
    found.result.complete = True
    page1 = find.render_table(found, 5)
    assert page1.count("<tr><td") == 5 and f"of {n:,} (page 1 of {found.pages(5)})" in page1
    assert 'href="https://openreview.net/forum?id=' in page1 and 'rel="noopener noreferrer"' in page1
    found.page = found.pages(5) - 1
    last = find.render_table(found, 5)
    assert last.count("<tr><td") == n - 5 * (found.pages(5) - 1)
    chart = find.render_chart(found)
    data = found.result.to_json()
    assert "<caption>By decision</caption>" in chart and "<caption>By primary area</caption>" in chart
    for decision, count in data["by_decision"].items():
        assert f"{render.esc(decision)}</th>" in chart and f">{count:,}<span" in chart
    assert chart.count('class="bar"') == len(data["by_decision"]) + min(
        find.CHART_AREAS, len(data["by_area"])
    )


def test_exports_cover_every_row(sample_engine):
    found = find.find(
        sample_engine.retriever, sample_engine.settings, "graph neural networks", "any", "any", ""
    )
    n = len(found.result.papers)
    rows = list(csv.reader(io.StringIO(find.export_text(found, "csv"))))
    assert len(rows) == n + 1 and rows[0][0] == "paper_id"
    bib = find.export_text(found, "bib")
    assert bib.count("@inproceedings{") + bib.count("@misc{") == n
    assert find.export_text(found, "md").startswith("# ICLR 2025 papers on graph neural networks")
    assert find.export_text(None, "csv").startswith("(")


def test_rendering_escapes_corpus_text():
    from rag.shapes.lister import Listed, PaperList
    from tests.ui_support import xss_paper

    p = xss_paper()
    found = find.Found(topic="x", result=PaperList("x", Filters(), [Listed(p, p.text[:40], 0.9)]))
    html = find.render_table(found, 10) + find.render_chart(found)
    assert "<img" not in html and "<script" not in html and "<b " not in html


def test_handlers_find_and_page(sample_engine):
    on = FindHandlers(EngineHolder(sample_engine))
    out = on.find_papers("orals about diffusion", "any", "any", "", 3)
    found, topic, decision, _author, summary, table, chart, chip_d, chip_a, *_ = out
    assert decision == "oral" and topic == found.topic
    assert "papers</strong>" in summary and "<table" in table and "By decision" in chart
    assert chip_d["visible"] and not chip_a["visible"]
    found2, *view = on.find_page(found, 1, 3)
    assert found2.page == 1 and "page 2 of" in view[1]
    # the chat's "See all N" shows the list the chat counted: its coverage was checked there
    topic = "knitting pattern generation with diffusion models"
    assert not on.find_papers(topic, "any", "any", "", 3)[0].result.papers
    assert on.find_all_papers(topic, "any", "any", "", 3)[0].result.papers


def test_handlers_find_before_the_engine_is_ready():
    holder = EngineHolder(loader=lambda: None)
    found, *_ = FindHandlers(holder).find_papers("diffusion", "any", "any", "", 10)
    assert "still loading" in found.error


class _ReadsFilters(FakeEngine):
    """Says which filters it applied, as the engine's Retrieved does: here none, whatever the question says."""

    def _stream(self, question, history, top_k, mode, task, filters=None):
        for item in super()._stream(question, history, top_k, mode, task, filters):
            yield (
                Retrieved(question, question, "decision", item, Filters()) if isinstance(item, list) else item
            )


def test_the_chat_shows_the_filters_the_engine_applied():
    # "was it a spotlight paper?" names a decision, but the engine read it as a question about the paper
    eng = _ReadsFilters(token_delay=0, announce_hits=True)
    on = ChatHandlers(EngineHolder(eng), 0)
    s = Session()
    on.submit_question("Was it a spotlight paper?", s, "Answer", False)
    list(on.stream_answer(s, 5, "hybrid", eng.llm_profile, False, "any", "any", ""))
    assert s.turns[-1].filters == "" and s.turns[-1].filter_values == (None, None, None)
    assert "filter-tag" not in render.render_chat(s.turns)


def test_chat_passes_control_filters_per_request_and_shows_the_questions_own():
    eng = FakeEngine(token_delay=0)
    on = ChatHandlers(EngineHolder(eng), 0)
    s = Session()
    on.submit_question("What does Celcomen do?", s, "Answer", False)
    list(on.stream_answer(s, 5, "hybrid", eng.llm_profile, False, "poster", "any", ""))
    assert eng.calls[-1].filters == Filters("poster") and s.turns[-1].filters == "posters"
    on.submit_question("Which orals use retrieval for agents?", s, "Answer", False)
    list(on.stream_answer(s, 5, "hybrid", eng.llm_profile, False, "any", "any", ""))
    # the engine reads the question's own filter (the chat's reading decides, "was it an oral?" is none)
    assert eng.calls[-1].filters is None and eng.calls[-1].question == "Which orals use retrieval for agents?"
    assert all(h.paper.decision == "Accept (Oral)" for h in s.turns[-1].answer.retrieved)
    assert 'class="filter-tag">Only orals' in render.render_chat(s.turns)
    on.submit_question("What does REGENT do?", s, "Answer", False)
    list(on.stream_answer(s, 5, "hybrid", eng.llm_profile, False, "any", "any", ""))
    assert eng.calls[-1].filters is None  # nothing set: the engine's own default applies


def test_refusal_names_what_is_indexed():
    eng = FakeEngine(token_delay=0)
    holder = EngineHolder(eng)
    on = Handlers(holder, 0)
    what = holder.indexed()["what"]
    assert what.endswith("abstracts") and what.split()[0] == str(len(corpus_papers()))
    assert what in on.status.indexed_html()
    s = Session()
    on.chat.submit_question("zzyzx qwerty plugh", s, "Answer", False)
    list(on.chat.stream_answer(s, 5, "hybrid", eng.llm_profile, False))
    chat = render.render_chat(s.turns)
    assert render.esc(f"The {what} don't answer this question.") in chat
    assert render.esc(f"The {what} don't answer") in render.render_sources(s.turns)
    a = s.turns[-1].answer
    assert f"The {what} don't" in render.answer_markdown(a, what)
    assert render.refusal_text("38 seed abstracts") == "The 38 seed abstracts don't answer this question."
    assert render.refusal_text("1 seed abstract") == "The 1 seed abstract doesn't answer this question."


def test_list_answer_offers_the_whole_list():
    from rag.types import Citation

    a = Answer(
        "Which papers use X?", "30 indexed papers match; the 1 closest:\nP: x [1]", [], [], [], shape="list"
    )
    a.listed = 30
    s = Session(
        turns=[Turn(question=a.question, answer=a, status="done", filter_values=("oral", None, None))]
    )
    assert ChatHandlers.see_all_button(s)["value"] == "See all 30 papers in Find papers"
    tabs, topic, decision, area, author = ChatHandlers.see_all(s)
    assert tabs.selected == "find" and topic == a.question and decision == "oral" and area == "any"
    assert "Showing 0 of 30" in render.render_chat(s.turns)
    a.listed_from = 10  # "show me the rest": the note says which of them this page shows
    a.citations = [Citation(n, f"p{n}", "T", "f", n, "q") for n in range(1, 11)]
    assert "Showing 11–20 of 30 matching papers. Ask for more" in render.render_chat(s.turns)
    a.citations, a.listed_from = [], 0
    # the topic and filters the lister listed, not the question's words: Find shows the same list
    a.listed_query = ("speculative decoding", "accepted", None, None)
    _, topic, decision, _, _ = ChatHandlers.see_all(s)
    assert (topic, decision) == ("speculative decoding", "accepted")
    # the sources panel says what was listed, so "more" or "only orals" shows its topic
    from ui.chat.sources_html import render_sources

    assert "Listed: papers on <span>“speculative decoding”</span> (accepted papers)" in render_sources(
        s.turns
    )
    a.listed = None
    assert ChatHandlers.see_all_button(s)["visible"] is False


def test_loading_banner_counts_indexed_chunks():
    holder = EngineHolder(loader=lambda: None)
    holder.set_progress("Indexing the 11,672 ICLR 2025 submissions…")
    holder.set_index_progress(1536, 30000)
    html = StatusHandlers(holder, 0).status_html()
    assert 'progress max="30000" value="1536"' in html and "1,536 / 30,000 chunks (5%)" in html


def test_serve_conference_indexes_in_the_loader_with_progress(monkeypatch, settings):
    """`load_engine(conference=True)` indexes the bundle when the index lacks it, reporting progress."""
    import rag.ingest.catalog as catalog
    from ui import app

    calls = []

    class Eng:
        def __init__(self, s):
            self.index, self.embedder, self.settings = object(), object(), s
            self.retriever = type("R", (), {"refresh": lambda self: calls.append("refresh")})()

        def warm_up(self):
            calls.append("warm")

    def fake_ingest(index, embedder, progress=True, on_progress=None):
        on_progress(0, 10)
        on_progress(10, 10)
        return type("Rep", (), {"papers": 3, "added": 10, "seconds": 0.1})()

    monkeypatch.setattr("rag.answer.Engine", Eng)
    monkeypatch.setattr(catalog, "holds_conference", lambda index: False)
    monkeypatch.setattr(catalog, "ingest_conference", fake_ingest)
    seen, msgs = [], []
    app.load_engine(
        settings, conference=True, report=msgs.append, on_progress=lambda d, t: seen.append((d, t))
    )
    assert seen == [(0, 10), (10, 10)] and calls == ["refresh", "warm"]
    assert any("Indexing the 11,672" in m for m in msgs)
    monkeypatch.setattr(catalog, "holds_conference", lambda index: True)
    seen.clear()
    app.load_engine(settings, conference=True, on_progress=lambda d, t: seen.append((d, t)))
    assert seen == []
