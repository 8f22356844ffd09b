"""Exports: CSV and BibTeX parse back; Markdown escapes corpus HTML; the chat as Markdown."""

from __future__ import annotations

import csv
import io
import re

import pytest

from rag import export
from rag.export import to_bibtex, to_csv, to_markdown
from rag.shapes.lister import Listed
from rag.types import Answer, Citation, Hit, Paper, Sentence
from tests.ui_support import FakeEngine, xss_paper

EVIL = Paper(
    "AbC123xyz",
    "We study {braces} & 100% $x_1$ ~ costs. Second sentence.",
    "iclr2025.jsonl.gz",
    0,
    "<script>alert(1)</script> A {Brace} Title & 50%",
    "Accept (Oral)",
    ["José Núñez", "=cmd Doe"],
    "learning on graphs and other geometries &amp; topologies",
)
REJ = Paper("Zz9", "An abstract.", "iclr2025.jsonl.gz", 1, "Plain", "Reject", ["A B"], "optimization")
ITEMS = [Listed(EVIL, "We study {braces} & 100% $x_1$ ~ costs.", 0.8), Listed(REJ, "An abstract.", 0.6)]


def parse_bibtex(text: str) -> list[dict]:
    """A small parser: @type{key, field = {value with balanced braces}, ...}."""
    entries = []
    for m in re.finditer(r"@(\w+)\{([^,]+),", text):
        pos, fields = m.end(), {"type": m.group(1), "key": m.group(2)}
        while True:
            f = re.compile(r"\s*(\w+) = \{").match(text, pos)
            if not f:
                break
            depth, i = 1, f.end()
            while depth:
                if text[i] == "\\":
                    i += 2
                    continue
                depth += {"{": 1, "}": -1}.get(text[i], 0)
                i += 1
            fields[f.group(1)] = text[f.end() : i - 1]
            pos = i + 1 if text[i : i + 1] == "," else i
        entries.append(fields)
    return entries


def test_bibtex_parses_back():
    entries = parse_bibtex(to_bibtex(ITEMS))
    assert [e["type"] for e in entries] == ["inproceedings", "misc"]
    oral, rej = entries
    assert oral["key"] == "AbC123xyz" and oral["booktitle"] == "ICLR 2025" and oral["year"] == "2025"
    assert oral["author"] == "José Núñez and =cmd Doe"
    assert oral["title"].startswith("{") and oral["title"].endswith("}")  # braced: capitals kept
    assert "A {Brace} Title" in oral["title"] and r"\&" in oral["title"] and r"\%" in oral["title"]
    assert "<script>" not in oral["title"]
    assert oral["url"] == "https://openreview.net/forum?id=AbC123xyz"
    assert rej["note"] == "ICLR 2025 submission (Reject)" and "booktitle" not in rej


@pytest.mark.parametrize(
    "title, written",
    [
        (r"$\epsilon$-VAE: Denoising as Visual Decoding", r"$\epsilon$-VAE: Denoising as Visual Decoding"),
        (r"ThunderKittens: Simple, Fast, and $\textit{Adorable}$ Kernels", r"$\textit{Adorable}$ Kernels"),
        (r"\emph{De Novo} Peptide Sequencing & 50\% more", r"\emph{De Novo} Peptide Sequencing \& 50\% more"),
        (r"A } broken { brace \ here", "A broken brace here"),  # unbalanced: braces and the lone \ dropped
        (r"\title{Hidden} Search\\for X", "{Hidden} Search for X"),  # no text style: its argument kept
        (r"A DATASET \OF ROADS", "A DATASET OF ROADS"),  # no command LaTeX knows: the backslash dropped
    ],
)
def test_bibtex_keeps_well_formed_latex_in_titles(title, written):
    p = Paper("L1", "x", "iclr2025.jsonl.gz", 1, title, "Accept (Poster)", ["A B"])
    bib = to_bibtex([Listed(p, "x", 0.5)])
    assert written in parse_bibtex(bib)[0]["title"] and bib.count("{") == bib.count("}")


def test_bibtex_says_when_the_author_order_is_the_sources_alphabetical_one():
    def note(authors):
        p = Paper("L1", "x", "iclr2025.jsonl.gz", 1, "T", "Accept (Poster)", authors)
        return parse_bibtex(to_bibtex([Listed(p, "x", 0.5)]))[0]["note"]

    assert "alphabetical order" in note(["Ann Z", "Bob Y", "Cid X"])
    assert "alphabetical" not in note(["Cid X", "Ann Z", "Bob Y"]) and "alphabetical" not in note(
        ["A B", "C D"]
    )


def test_csv_parses_back():
    rows = list(csv.DictReader(io.StringIO(to_csv(ITEMS))))
    assert [r["paper_id"] for r in rows] == ["AbC123xyz", "Zz9"]
    assert rows[0]["title"] == EVIL.title and rows[0]["quote"] == ITEMS[0].quote
    assert rows[0]["primary_area"] == "learning on graphs and other geometries & topologies"
    assert rows[0]["authors"] == "José Núñez; =cmd Doe"  # a cell is neutralised only at its start
    assert rows[1]["score"] == "0.6000"


def test_markdown_escapes_html():
    md = to_markdown(ITEMS, heading="Papers on <b>x</b>")
    assert "<script>" not in md and "&lt;script&gt;" in md and "<b>" not in md
    assert md.startswith("# Papers on &lt;b&gt;x&lt;/b&gt;")
    assert "1. **[" in md and "2. **[" in md and "> We study" in md


def test_exporters_take_plain_papers():
    assert to_csv([REJ]).count("\n") == 2
    assert parse_bibtex(to_bibtex([REJ]))[0]["key"] == "Zz9"


def ask(eng, question, history=None):
    return [x for x in eng.stream(question, history or [])][-1]


def test_answer_markdown_renumbers_markers_across_the_chat_with_one_reference_list():
    eng = FakeEngine(token_delay=0)
    a1 = ask(eng, "What does Celcomen do?")
    a2 = ask(eng, "What is ProtPainter used for?")
    md = export.answer_markdown([a1, a2])
    assert md.startswith("# ICLR 2025")
    assert "## 1. What does Celcomen do?" in md and "## 2. What is ProtPainter used for?" in md
    refs = md[md.index("## References") :]
    # each cited paper once, with authors, decision and its OpenReview URL
    assert refs.count("Estimation of single-cell") == 1
    assert "Ada Placeholder, Ben Placeholder" in refs and "(Accept (Poster))" in refs
    assert "<https://openreview.net/forum?id=Tqdsruwyac>" in refs
    # the second answer's [1] points at its own paper in the shared list
    body2 = md[md.index("## 2.") : md.index("## References")]
    n_protpainter = next(line for line in refs.splitlines() if "ProtPainter" in line).split("]")[0] + "]"
    assert n_protpainter in body2


def test_answer_markdown_uses_the_standalone_question_and_marks_unsupported():
    a = Answer(
        question="did they?",
        standalone_question="Did the Celcomen authors validate it?",
        answer="They did [1]. It cures everything.",
        citations=[Citation(1, "Tqdsruwyac", "Celcomen", "f.txt", 0, "q")],
        sentences=[
            Sentence("They did [1].", [1], True, 0.9),
            Sentence("It cures everything.", [], False, 0.1),
        ],
        retrieved=[],
    )
    md = export.answer_markdown([a])
    assert "Did the Celcomen authors validate it?" in md and "did they?" not in md
    assert "It cures everything. _(not found in the sources)_" in md


def test_answer_markdown_keeps_each_line_a_paragraph_and_reads_latex_marks_as_words():
    """markdown-it joins single newlines into one paragraph: a list answer's lines stay lines. LaTeX text
    commands, Markdown bold and "\\%" read as their words, in the answer and in quotes."""
    p = Paper("id1", "x", "f.txt", 0, title=r"\textsc{DySpec}: **P**arallel decoding")
    a = Answer(
        question="Which papers?",
        answer="2 papers match:\nA: up to 58.1\\% faster [1]\nB: uses \\texttt{Llama3-8B} [1]",
        citations=[Citation(1, "id1", p.title, "f.txt", 0, "q")],
        sentences=[],
        retrieved=[Hit(p, 1.0)],
    )
    md = export.answer_markdown([a], chat=False)
    assert "2 papers match:\n\nA: up to 58.1% faster [1]\n\nB: uses Llama3-8B [1]" in md
    assert "[1] DySpec: Parallel decoding." in md and "textsc" not in md and "**P**" not in md


def test_exports_strip_html_from_corpus_text():
    eng = FakeEngine([xss_paper()], token_delay=0)
    a = ask(eng, "verbatim xssmarker tracking pixels")
    md = export.answer_markdown([a])
    assert "<img" not in md and "<b " not in md and "onerror" not in md.split("## References")[1]
    bib = export.bibtex(export.cited_papers([a]))
    assert "<" not in bib and "onerror=" not in bib  # the key keeps only [A-Za-z0-9_-:]
    assert bib.count("{") == bib.count("}")


def test_bibtex_accepted_is_inproceedings_others_misc_keyed_by_openreview_id():
    accepted = Paper(
        "Tqdsruwyac",
        "x",
        "f.txt",
        0,
        title="Celcomen & $L_0$ 100%",
        decision="Accept (Oral)",
        authors=["A B", "C D"],
    )
    rejected = Paper("AbCdEf1234", "x", "f.txt", 1, title="A {rejected} paper", decision="Reject")
    seed = Paper("002_x.txt#4", "x", "002_x.txt", 4)
    bib = export.bibtex([accepted, rejected, seed])
    first, second, third = bib.strip().split("\n\n")
    assert first.startswith("@inproceedings{Tqdsruwyac,")
    assert "booktitle = {ICLR 2025}" in first and "author = {A B and C D}" in first
    assert r"title = {{Celcomen \& $L_0$ 100\%}}" in first
    assert "url = {https://openreview.net/forum?id=Tqdsruwyac}" in first
    assert second.startswith("@misc{AbCdEf1234,") and "note = {ICLR 2025 submission (Reject)}" in second
    assert "title = {{A {rejected} paper}}" in second  # balanced braces are kept
    assert third.startswith("@misc{002_x_txt_4,") and "url" not in third and "decision unknown" in third
    assert export.bibtex([]) == ""


def test_cited_papers_in_order_of_first_citation_each_once():
    p1, p2 = Paper("P1", "t", "f", 0, title="One"), Paper("P2", "t", "f", 1, title="Two")

    def ans(*ids):
        cites = [Citation(i + 1, pid, None, "f", 0, "q") for i, pid in enumerate(ids)]
        return Answer("q", "a", cites, [], [Hit(p1, 0.5), Hit(p2, 0.4)])

    papers = export.cited_papers([ans("P2"), ans("P1", "P2")])
    assert [p.title for p in papers] == ["Two", "One"]


def test_one_answers_references_keep_the_numbers_its_text_cites():
    p1, p2 = Paper("P1", "t", "f", 0, title="One"), Paper("P2", "t", "f", 1, title="Two")
    cites = [Citation(2, "P2", "Two", "f", 1, "q"), Citation(2, "P2", "Two", "f", 1, "q2")]
    a = Answer("q", "Two does it [2].", cites, [], [Hit(p1, 0.5), Hit(p2, 0.4)])
    refs = export.own_references(a)
    assert len(refs) == 1 and refs[0].startswith("[2] Two. ICLR 2025.")  # not renumbered to [1], listed once
    # the chat-wide Markdown renumbers text and list together
    md = export.answer_markdown([a], chat=False)
    assert "Two does it [1]." in md and "[1] Two. ICLR 2025." in md and "[2]" not in md


# ------------------------------------------------------------ issue 39: Markdown exports are inert
HOSTILE_ID = "x)](javascript:alert(1))<img src=x onerror=alert(2)>"
LINKS = (
    "We study graphs. See [click](javascript:alert(document.cookie)) and "
    "![img](http://evil.example/track.png), code at http://evil.example/x."
)


def _rendered(md: str) -> str:
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark").render(md)


def _links(html: str) -> list[str]:
    return re.findall(r'<a href="([^"]*)"', html) + re.findall(r"<img", html)


def test_a_paper_id_never_makes_a_link_of_its_own():
    p = Paper(HOSTILE_ID, "We study graphs.", "c.jsonl", 0, title="Linked paper")
    assert p.url is None  # no OpenReview id, no OpenReview link
    html = _rendered(to_markdown([p]) + export.reference(1, p))
    assert _links(html) == [] and "javascript" not in html.replace("javascript:alert(1)", "")
    ok = Paper("AbC-12_x", "We study graphs.", "c.jsonl", 0, title="Linked paper")
    assert _links(_rendered(to_markdown([ok]))) == ["https://openreview.net/forum?id=AbC-12_x"]


def test_answer_markdown_neutralises_links_and_images_from_the_abstract():
    from ui.chat import render

    p = Paper("AbC123xyz", LINKS, "c.jsonl", 0, title="T")
    own = f"[the paper]({p.url})"
    cite = Citation(1, p.paper_id, p.title, "c.jsonl", 0, "We study graphs.")
    ans = Answer("q", f"{LINKS} [1] Read {own}.", [cite], [Sentence(LINKS, [1], True, 0.9)], [Hit(p, 1.0)])
    for md in (
        export.answer_markdown([ans]),  # the chat export
        export.answer_markdown([ans], chat=False),  # Copy, `rag summarize --markdown`
        render.answer_markdown(ans),  # the page's Copy
    ):
        html = _rendered(md)
        assert _links(html) == [p.url, p.url], md  # the paper's own link (in the text and its reference) only
        assert "[click](javascript:alert(document.cookie))" in re.sub(r"<[^>]+>", "", html).replace("\\", "")
        assert "<code>http://evil.example/x</code>" in html
        assert "[1]" in md
