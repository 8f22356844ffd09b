"""Unit tests for ui/chat/render.py: escaping, highlight offsets, chips, copy-Markdown."""

from __future__ import annotations

import re
from dataclasses import replace
from html.parser import HTMLParser

import pytest

from rag.prompts import REFUSAL
from rag.types import Answer, Caveat, Citation, Hit, Sentence
from tests.ui_support import UNTITLED, FakeEngine, corpus_papers, xss_paper
from ui.chat import render
from ui.chat.render import Turn

ALLOWED_TAGS = {
    "a",
    "article",
    "br",
    "details",
    "div",
    "em",
    "h2",
    "h3",
    "h4",
    "header",
    "li",
    "mark",
    "p",
    "section",
    "span",
    "strong",
    "summary",
    "ul",
}


class TagAudit(HTMLParser):
    """Collects every tag and attribute the renderer emitted."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.attrs: list[tuple[str, str | None]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.attrs.extend(attrs)

    def handle_data(self, data):
        self.text.append(data)


def audit(html: str) -> TagAudit:
    a = TagAudit()
    a.feed(html)
    a.close()
    return a


def assert_safe(html: str) -> TagAudit:
    a = audit(html)
    assert set(a.tags) <= ALLOWED_TAGS, set(a.tags) - ALLOWED_TAGS
    for name, value in a.attrs:
        assert not name.startswith("on"), (name, value)
        assert name not in {"src", "srcset", "style", "action", "formaction"}, name
        if name == "href":
            assert value.startswith("#") or value.startswith("https://openreview.net/"), value
    return a


def celcomen_answer(**kw) -> Answer:
    eng = FakeEngine(token_delay=0)
    return [x for x in eng.stream("What does Celcomen do?", **kw)][-1]


# --------------------------------------------------------------------------- escaping


def test_esc_escapes_html_and_quotes():
    assert render.esc('<a href="x">\'&') == "&lt;a href=&quot;x&quot;&gt;&#x27;&amp;"
    assert render.esc(None) == ""


@pytest.mark.parametrize(
    "url,ok",
    [
        ("https://openreview.net/forum?id=Tqdsruwyac", True),
        ("javascript:alert(1)", False),
        ("data:text/html,hi", False),
        ('https://openreview.net/forum?id=x"><img src=x>', False),
        (None, False),
    ],
)
def test_safe_url(url, ok):
    assert (render.safe_url(url) is not None) is ok


def test_xss_paper_renders_inert_everywhere():
    paper = xss_paper("http://127.0.0.1:9/track.png")
    eng = FakeEngine([paper, *corpus_papers()], token_delay=0)
    answer = list(eng.stream("verbatim xssmarker tracking pixels"))[-1]
    assert answer.citations and answer.citations[0].paper_id == paper.paper_id
    turn = Turn(question='<img src=x onerror="window.__xss=8"> xssmarker?', answer=answer, status="done")
    chat = render.render_chat([turn])
    sources = render.render_sources([turn], show_scores=True)
    for html in (chat, sources):
        a = assert_safe(html)
        assert "<script" not in html.lower()
        assert "<img" not in html.lower()
        assert "onerror=" not in html.replace("onerror=&quot;", "")  # only as escaped text
        text = "".join(a.text)
        # Markdown stays literal text: nothing turns it into an image or a link.
        if html is sources:
            assert "![x](http://127.0.0.1:9/track.png)" in text
            assert "<script>window.__xss = 2;" in text
            assert 'Tracking pixel study <img src=x onerror="window.__xss=1">' in text
    # the hostile paper_id does not become a link
    assert "id=evil" not in sources


def test_streaming_text_is_escaped():
    turn = Turn(question="q", text='<b onmouseover="x()">bold</b> [1]')
    html = render.render_chat([turn])
    assert_safe(html)
    assert "&lt;b onmouseover=&quot;x()&quot;&gt;" in html
    # markers are renumbered by the engine's check: the draft shows none, the final answer chips
    assert "cite-chip" not in html and "[1]" not in html


def test_error_message_is_escaped():
    turn = Turn(question="q", status="error", error="<script>alert(1)</script>")
    html = render.render_chat([turn])
    assert_safe(html)
    assert "&lt;script&gt;" in html


# --------------------------------------------------------------------------- highlight


def test_merge_spans_clamps_sorts_and_merges():
    assert render.merge_spans([(10, 20), (0, 5), (15, 30), (40, 35), (-5, 2), (90, 200)], 100) == [
        (0, 5),
        (10, 30),
        (90, 100),
    ]


def test_highlight_offsets_refer_to_raw_text():
    text = "A <b> & B. Second sentence here. Third."
    s = text.index("Second")
    e = text.index("Third") - 1
    html = render.highlight(text, [(s, e)])
    assert html == "A &lt;b&gt; &amp; B. " + '<mark class="evidence">Second sentence here.</mark>' + " Third."


def test_highlight_multiple_spans_and_overlaps():
    text = "one two three four five"
    html = render.highlight(text, [(0, 3), (8, 13), (10, 18)])
    assert html == '<mark class="evidence">one</mark> two <mark class="evidence">three four</mark> five'


def test_citation_spans_fallbacks():
    text = "Alpha beta. Gamma delta. Epsilon."
    c = Citation(n=1, paper_id="p", title=None, source_file="f", index=0, quote="Gamma delta.")
    assert render.citation_spans(c, text) == [(12, 24)]  # found by text search
    c.quote_start, c.quote_end = 0, 11
    assert render.citation_spans(c, text) == [(0, 11)]  # explicit offsets win
    c.spans = [(25, 33), (0, 11)]
    assert render.citation_spans(c, text) == [(0, 11), (25, 33)]  # spans win over the quote


def test_source_card_highlights_supporting_sentences():
    a = celcomen_answer()
    turn = Turn(question=a.question, answer=a, status="done")
    html = render.render_sources([turn])
    assert_safe(html)
    c = a.citations[0]
    card = re.search(r'<article class="source" id="src-0-1".*?</article>', html, re.S).group(0)
    marks = re.findall(r'<mark class="evidence">(.*?)</mark>', card)
    paper = a.retrieved[0].paper
    assert marks == [render.esc(paper.text[s:e]) for s, e in c.spans]
    assert "Celcomen" in marks[0]
    assert 'href="https://openreview.net/forum?id=Tqdsruwyac"' in card
    assert "Accept (Poster)" in card


def test_untitled_paper_is_labelled_file_hash_index():
    c = Citation(
        n=1,
        paper_id=UNTITLED.paper_id,
        title=None,
        source_file=UNTITLED.source_file,
        index=UNTITLED.index,
        quote="x",
        spans=[(0, 10)],
    )
    a = Answer(
        question="q",
        answer="Routing [1].",
        citations=[c],
        sentences=[Sentence("Routing [1].", [1], True, 0.9)],
        retrieved=[Hit(UNTITLED, 0.5)],
    )
    html = render.render_sources([Turn(question="q", answer=a, status="done")])
    assert "002_fdada5ea96b8bec8.txt #4" in html
    assert "openreview" not in html.lower()  # no id, no link


# --------------------------------------------------------------------------- chips


def test_inline_markers_become_chips():
    html = render.render_inline("A [1]. B [1, 2]. C [3][1]. D [9].", 4, valid={1, 2, 3})
    assert html.count('class="cite-chip"') == 5
    assert 'href="#src-4-1" data-turn="4" data-n="1"' in html
    assert "D [9]." in html  # not a citation of this answer: left as text


def test_answer_body_chips_link_to_cards_and_dim_unsupported():
    eng = FakeEngine(token_delay=0)
    a = list(eng.stream("What does Celcomen do? speculate"))[-1]
    html = render.render_answer_body(a, 2)
    assert_safe(html)
    assert 'data-turn="2" data-n="1"' in html
    m = re.search(
        r'<span class="unsupported"[^>]*>(.*?)<span class="nf-mark">not found in the sources</span>', html
    )
    assert m and "first method ever" in m.group(1)
    # every chip targets a card that exists in the sources panel
    sources = render.render_sources(
        [Turn("x", status="done")] * 2 + [Turn(a.question, answer=a, status="done")]
    )
    for n in set(re.findall(r'data-turn="2" data-n="(\d+)"', html)):
        assert f'id="src-2-{n}"' in sources


def test_a_summary_is_a_block_per_line_with_its_themes_as_headings():
    a = celcomen_answer()
    line = f"{a.sentences[0].text} [1]"
    text = f"2 indexed papers match, in 2 themes:\nTheme: cell <maps>\n{line}\nTheme: other\n{line}"
    html = render.render_answer_body(replace(a, shape="summary", answer=text), 3)
    assert_safe(html)
    assert re.findall(r'<p class="theme">(.*?)</p>', html) == ["Theme: cell &lt;maps&gt;", "Theme: other"]
    lines = re.findall(r'<p class="line">(.*?)</p>', html)
    assert len(lines) == 3 and lines[0] == "2 indexed papers match, in 2 themes:"
    assert all('data-turn="3" data-n="1"' in x for x in lines[1:]) and "<br>" not in html


def test_sentence_without_marker_gets_chips_appended():
    p = corpus_papers()[0]
    c = Citation(
        n=1,
        paper_id=p.paper_id,
        title=p.title,
        source_file=p.source_file,
        index=p.index,
        quote=p.text[:20],
        spans=[(0, 20)],
    )
    a = Answer(
        question="q",
        answer="A claim without markers.",
        citations=[c],
        sentences=[Sentence("A claim without markers.", [1], True, 0.8)],
        retrieved=[Hit(p, 1.0)],
    )
    assert 'data-n="1"' in render.render_answer_body(a, 0)


def test_uncited_retrieved_are_collapsed_with_scores():
    a = celcomen_answer(top_k=4)
    assert len(a.retrieved) > len(a.citations)
    turn = Turn(a.question, answer=a, status="done")
    html = render.render_sources([turn], show_scores=True)
    also = html[html.index('<details class="also">') :]
    assert "Also retrieved" in also
    assert re.search(r'<span class="score">0\.\d{3}</span>', also)
    assert "Also retrieved" in render.render_sources([turn], show_scores=False)
    assert 'class="score"' not in render.render_sources([turn], show_scores=False)


def test_refusal_shows_plainly_with_related_papers():
    hits = [Hit(p, 0.1) for p in corpus_papers()[:3]]
    a = Answer(question="q", answer=REFUSAL, citations=[], sentences=[], retrieved=hits, refused=True)
    turn = Turn("q", answer=a, status="done")
    chat = render.render_chat([turn])
    assert render.esc(REFUSAL) in chat and "related-link" in chat
    sources = render.render_sources([turn])
    assert "Related papers" in sources and hits[0].paper.title in sources
    assert 'id="rel-0-1"' in sources
    # its caveats show under the headline, from their codes: the answer text is never parsed
    why = replace(a, caveats=[Caveat("term_absent", "No indexed abstract mentions “Zorb”.")])
    chat = render.render_chat([Turn("q", answer=why, status="done")])
    assert chat.count(render.esc(REFUSAL)) == 1
    assert (
        'class="caveat caveat-term_absent" data-code="term_absent">No indexed abstract mentions “Zorb”.'
        in chat
    )
    # a typo's mended question is one click away, escaped into its attribute
    typo = replace(a, suggested_question='What does "Celcomen" do?')
    chat = render.render_chat([Turn("q", answer=typo, status="done")])
    assert 'class="retry-link" role="button" href="#" data-q="What does &quot;Celcomen&quot; do?"' in chat
    assert "retry-link" not in render.render_chat([turn])
    # an answer offers it too
    answered = replace(celcomen_answer(), suggested_question="What does Celcomen do?")
    assert 'data-q="What does Celcomen do?"' in render.render_chat(
        [Turn("q", answer=answered, status="done")]
    )


def test_only_latest_turn_sources_visible():
    a = celcomen_answer()
    turns = [Turn("a", answer=a, status="done"), Turn("b", answer=a, status="done")]
    html = render.render_sources(turns)
    assert '<section class="turn-sources" data-turn="0" hidden>' in html
    assert '<section class="turn-sources" data-turn="1">' in html


def test_sources_say_which_earlier_question_a_follow_up_was_read_with():
    a = celcomen_answer()
    follow = replace(
        a,
        question="Does it <b>scale</b>?",
        standalone_question="Does it <b>scale</b>? (What is X?)",
        leaned_on="What is X?",
    )
    alone = replace(a, question="What is Y?", standalone_question="What is Y?", leaned_on=None)
    html = render.render_sources([Turn(follow.question, answer=follow, status="done")])
    assert "Read as a follow-up to: <span>What is X?</span>" in html and "<b>" not in html
    assert "Read as a follow-up" not in render.render_sources(
        [Turn("What is Y?", answer=alone, status="done")]
    )


def test_empty_states():
    assert "empty-state" in render.render_chat([])
    assert "sources-empty" in render.render_sources([])


# --------------------------------------------------------------------------- copy


def test_answer_markdown_has_numbered_references():
    eng = FakeEngine(token_delay=0)
    a = list(eng.stream("What does Celcomen do? speculate"))[-1]
    md = render.answer_markdown(a)
    assert md.startswith("**Q:** What does Celcomen do? speculate")
    assert "[1]" in md.split("## References")[0]
    assert "_(not found in the sources)_" in md
    refs = md.split("## References")[1]
    assert re.search(
        r"^\[1\] Estimation of single-cell .*Spatial Causal Disentanglement\. .*ICLR 2025 \(Accept \(Poster\)\)\. "
        r"<https://openreview\.net/forum\?id=Tqdsruwyac>$",
        refs,
        re.M,
    )


def test_answer_markdown_refusal_lists_related():
    hits = [Hit(p, 0.1) for p in corpus_papers()[:2]]
    a = Answer(question="q", answer="", citations=[], sentences=[], retrieved=hits, refused=True)
    md = render.answer_markdown(a)
    assert REFUSAL in md and "Closest papers:" in md and md.count("\n- ") == 2


def test_status_banner_escapes():
    html = render.render_status("error", "<img src=x>")
    assert "&lt;img" in html and 'class="status-banner error"' in html


def test_markers_after_the_sentence_are_not_duplicated():
    # the engine's Sentence.text may stop before the markers: "… data. [1]"
    p = corpus_papers()[0]
    c = Citation(
        n=1,
        paper_id=p.paper_id,
        title=p.title,
        source_file=p.source_file,
        index=p.index,
        quote=p.text[:20],
        spans=[(0, 20)],
    )
    a = Answer(
        question="q",
        answer="First claim. [1] Second claim. [1]",
        citations=[c],
        sentences=[Sentence("First claim.", [1], True, 0.8), Sentence("Second claim.", [1], False, 0.1)],
        retrieved=[Hit(p, 1.0)],
    )
    html = render.render_answer_body(a, 0)
    assert html.count('class="cite-chip"') == 2
    unsupported = re.search(r'<span class="unsupported".*?</span></span>', html).group(0)
    assert "Second claim." in unsupported and 'data-n="1"' in unsupported  # its chip is dimmed with it
    md = render.answer_markdown(a)
    assert "First claim. [1] Second claim. _(not found in the sources)_ [1]" in md


# --------------------------------------------------------------------------- issue 13


def test_draft_hides_markers_including_a_half_typed_one():
    assert render.draft_text("A claim [1]. Another [2, 3] and [") == "A claim. Another and"
    html = render.render_chat([Turn(question="q", text="Celcomen works [2]. It [1")])
    assert "[2]" not in html and "[1" not in html and "Celcomen works." in html


def test_stopped_turn_keeps_its_draft_and_says_so():
    html = render.render_chat([Turn(question="q", text="Half an answer [1]", status="stopped")])
    assert 'class="bubble stopped"' in html and "Stopped" in html and "Half an answer" in html
    assert "[1]" not in html and "pending" not in html


def test_sources_panel_lists_hits_announced_before_the_answer():
    hits = [Hit(p, 0.5) for p in corpus_papers()[:3]]
    html = render.render_sources([Turn(question="q", status="streaming", retrieved=hits)])
    assert_safe(html)
    assert "Retrieved (3)" in html and "Looking through" not in html
    assert html.count('class="retrieved"') == 3


def test_cards_show_authors_not_internal_ids_and_scores_need_the_toggle():
    a = celcomen_answer(top_k=4)
    turn = Turn(a.question, answer=a, status="done")
    html = render.render_sources([turn])
    assert "000_e01d3feec203c69d.txt" not in html  # no internal file ids on titled papers
    assert "Ada Placeholder, Ben Placeholder" in html
    assert "score" not in html and "score-legend" not in html
    shown = render.render_sources([turn], show_scores=True)
    assert 'class="score-legend"' in shown and "not probabilities" in shown
    assert re.search(r"retrieval score \d\.\d{3}", shown)


def test_a_table_answer_shows_a_row_per_paper_with_chips_and_not_stated_cells():
    from rag.types import Citation, Table

    papers = corpus_papers()[:2]
    hits = [Hit(p, 1.0) for p in papers]
    first = papers[0].text.split(". ")[0] + "."
    a = Answer(
        question="What data do they use?",
        answer="…",
        citations=[
            Citation(
                1,
                papers[0].paper_id,
                papers[0].title,
                papers[0].source_file,
                papers[0].index,
                first,
                0,
                len(first),
            )
        ],
        sentences=[],
        retrieved=hits,
        shape="per_paper",
        table=Table(["What data do they use?"], [(1, [first]), (2, [None])]),
    )
    html = render.render_chat([Turn("q", answer=a, status="done")])
    assert '<table class="paper-table">' in html and html.count("<tr>") == 3
    assert "not stated in the abstract" in html and render.esc(first) in html and 'data-n="1"' in html
    assert "1 cited paper · 1 not stated" in html  # the count under the table says what the rows show
    md = render.answer_markdown(a)
    assert "| Paper | What data do they use? |" in md and "_not stated_" in md


def test_a_paper_not_accepted_is_not_shown_in_the_accepted_colour():
    from ui.chat.sources_html import _paper_meta

    p = corpus_papers()[0]
    assert 'class="decision"' in _paper_meta(replace(p, decision="Accept (Oral)"), None, False)
    for d in ("Reject", "Withdrawn"):
        assert 'class="decision not-accepted"' in _paper_meta(replace(p, decision=d), None, False)


def test_a_caveat_saying_the_answer_is_from_other_papers_comes_before_it():
    caveats = [
        Caveat("term_absent", "No indexed abstract mentions “Zorb”."),
        Caveat(
            "not_in_followed",
            "The abstract of X never mentions “Zorb”; this answer is from the abstracts that do.",
        ),
    ]
    chat = render.render_chat([Turn("q", answer=replace(celcomen_answer(), caveats=caveats), status="done")])
    at = [
        chat.index(s)
        for s in ('data-code="not_in_followed"', 'class="answer-text"', 'data-code="term_absent"')
    ]
    assert at == sorted(at)


def test_a_decision_answers_sources_are_the_papers_asked_about_with_their_decisions():
    paper = next(p for p in corpus_papers() if p.decision)
    a = Answer("Was it accepted?", "Yes: …", [], [], [Hit(paper, 1.0)], shape="decision")
    sources = render.render_sources([Turn("Was it accepted?", answer=a, status="done")])
    assert "Asked about (1)" in sources and render.esc(paper.decision) in sources
    assert "cites no paper" not in sources and "Also retrieved" not in sources
