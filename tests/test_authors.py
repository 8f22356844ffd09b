"""An author as a query: every paper listing the author, on 300 real conference records (engine, CLI, Find)."""

from __future__ import annotations

import json
from collections import Counter

import pytest
from typer.testing import CliRunner

from iclr_rag.cli import app
from rag.retrieval.authors import author_papers, author_view
from rag.retrieval.filters import fold
from rag.types import Paper
from ui.find import papers as find


def _listing(papers, name: str) -> set[str]:
    """The ground truth, written apart from the matcher: papers with an author whose folded words, in any
    order, are the name's."""
    key = sorted(fold(name).split())
    return {p.paper_id for p in papers if any(sorted(fold(a).split()) == key for a in p.authors or [])}


def _names(papers) -> list[str]:
    return sorted({a for p in papers for a in p.authors or [] if a.strip()})


def test_every_author_of_300_records_gets_every_paper_listing_them(sample_papers):
    names = _names(sample_papers)
    assert len(names) > 1000  # the sample's authors, each asked for
    for name in names:
        papers, coauthors = author_papers(sample_papers, name)
        assert {p.paper_id for p in papers} == _listing(sample_papers, name), name
        mine = {a for p in papers for a in p.authors}
        assert {c for c, _ in coauthors} <= mine and name not in dict(coauthors)


def test_the_view_counts_shared_papers_and_orders_by_decision():
    def paper(pid, decision, authors):
        return Paper(pid, "We propose X.", "f", 0, title=f"T {pid}", decision=decision, authors=authors)

    ps = [
        paper("a", "Reject", ["Ana Núñez", "Bo Li"]),
        paper("b", "Accept (Oral)", ["Bo Li", "Ana Nunez"]),
        paper("c", "Accept (Poster)", ["Ana Núñez", "Cy Wu", "Bo Li"]),
        paper("d", "Accept (Oral)", ["Bo Lin"]),  # not Bo Li
    ]
    v = author_view(ps, "bo li")
    assert [p.paper_id for p in v.papers] == ["b", "c", "a"]  # oral, poster, rejected
    assert v.matched == ["Bo Li"]
    assert v.coauthors == [("Ana Núñez", 2), ("Ana Nunez", 1), ("Cy Wu", 1)]
    assert [p.paper_id for p in author_view(ps, "ana nunez").papers] == ["b", "c", "a"]  # accents folded
    assert author_view(ps, "Li, Bo").matched == ["Bo Li"]  # "Last, First"
    assert {p.paper_id for p in author_view(ps, "Núñ").papers} == {"a", "b", "c"}  # a part of a name


def _most_published(sample_papers, k=3) -> list[str]:
    counts = Counter(a for p in sample_papers for a in p.authors or [])
    return [a for a, _ in counts.most_common(k)]


def test_cli_list_with_an_author_and_no_topic_lists_every_paper(sample_data_dir, sample_papers):
    for name in _most_published(sample_papers):
        r = CliRunner().invoke(app, ["list", "--author", name, "--json", "--data-dir", str(sample_data_dir)])
        assert r.exit_code == 0, r.output
        out = json.loads(r.stdout)
        assert {p["paper_id"] for p in out["papers"]} == _listing(sample_papers, name)
        assert out["count"] == len(out["papers"]) and out["matched_authors"] == [name]
        assert all(c["name"] != name for c in out["coauthors"])


def test_cli_author_prints_papers_decisions_areas_and_coauthors(sample_data_dir, sample_papers):
    name = _most_published(sample_papers, 1)[0]
    r = CliRunner().invoke(app, ["author", name, "--data-dir", str(sample_data_dir)])
    assert r.exit_code == 0, r.output
    n = len(_listing(sample_papers, name))
    assert f"{n} paper{'s' if n > 1 else ''} by an author matching “{name}”" in r.output
    assert "Co-authors in the conference" in r.output and " · " in r.output  # decision · area
    r = CliRunner().invoke(app, ["author", "Nobody Atall", "--data-dir", str(sample_data_dir)])
    assert r.exit_code != 0 and "No indexed paper has an author matching 'Nobody Atall'" in r.output


@pytest.mark.parametrize("typed", ["", "papers by {name}"])
def test_find_with_an_author_and_no_topic_shows_the_author_view(
    sample_retriever, sample_settings, sample_papers, typed
):
    name = _most_published(sample_papers, 1)[0]
    if typed:  # the author read from the topic box
        found = find.find(sample_retriever, sample_settings, typed.format(name=name), find.ANY, find.ANY, "")
    else:  # the author box alone
        found = find.find(sample_retriever, sample_settings, "", find.ANY, find.ANY, name)
    assert found.error is None
    assert {x.paper.paper_id for x in found.result.papers} == _listing(sample_papers, name)
    html = find.render_summary(found)
    assert f"by an author matching “{name}”" in html and "Co-authors in the conference" in html
    assert "More like this" in find.render_table(found, 25)
    assert find.export_text(found, "md").startswith(f"# ICLR 2025 papers by an author matching {name}")


def test_an_authors_full_name_in_any_case_filters_a_chat_question(
    sample_data_dir, sample_papers, embedder, fake_llm
):
    """ "what has NAME got on …?" names no "papers by": an author's full name as the corpus writes it, in any
    case, still filters the question to that author's papers. Common words never make a name."""
    from rag.answer import Engine
    from tests.conftest import make_settings

    eng = Engine(make_settings(sample_data_dir), embedder=embedder, llm=fake_llm)
    for name in _most_published(sample_papers):
        found, _ = eng.question_filters(f"what has {name.lower()} got at iclr this year?")
        assert found.author == name
        ans = eng.ask(f"what has {name.lower()} got at iclr this year on learning?")
        assert ans.retrieved and all(name in h.paper.authors for h in ans.retrieved), name
    for q in (
        "What does deep learning do for weather forecasting?",
        "Which papers use graph neural networks?",
    ):
        assert eng.question_filters(q)[0].author is None
