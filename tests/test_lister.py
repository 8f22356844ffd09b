"""`rag list`: every paper on a topic over 300 sampled conference abstracts; JSON shape and counts."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from iclr_rag.cli import app
from rag.retrieval.filters import Filters
from rag.shapes.lister import list_papers

KEYS = {"paper_id", "title", "decision", "primary_area", "authors", "url", "quote", "score"}


def check_shape(out: dict, texts: dict[str, str]) -> None:
    assert set(out) == {"topic", "filters", "count", "by_decision", "by_area", "papers"}
    assert (
        out["count"] == len(out["papers"]) == sum(out["by_decision"].values()) == sum(out["by_area"].values())
    )
    scores = [p["score"] for p in out["papers"]]
    assert scores == sorted(scores, reverse=True)
    for p in out["papers"]:
        assert set(p) == KEYS
        assert p["quote"] and p["quote"] in texts[p["paper_id"]]


def test_list_papers(sample_retriever, sample_settings, sample_papers):
    texts = {p.paper_id: p.text for p in sample_papers}
    res = list_papers(sample_retriever, sample_settings, "reinforcement learning")
    out = res.to_json()
    check_shape(out, texts)
    assert out["count"] >= 3


def test_cli_list_says_when_limit_shows_only_the_first_papers(sample_data_dir):
    args = ["list", "reinforcement learning", "--data-dir", str(sample_data_dir)]
    r = CliRunner().invoke(app, args)
    n = int(r.output.split(" papers on “reinforcement learning”")[0].split()[-1])
    assert r.exit_code == 0 and n >= 3 and "The first" not in r.output and r.output.count("\n   “") == n
    r = CliRunner().invoke(app, [*args, "--limit", "2"])
    assert r.exit_code == 0 and f"The first 2 of {n} papers on “reinforcement learning”" in r.output
    assert r.output.count("\n   “") == 2


def test_list_filtered(sample_retriever, sample_settings, sample_papers):
    texts = {p.paper_id: p.text for p in sample_papers}
    f = Filters("accepted")
    out = list_papers(sample_retriever, sample_settings, "language models", f, limit=5).to_json()
    check_shape(out, texts)
    assert 0 < out["count"] <= 5
    assert all(p["decision"].startswith("Accept") for p in out["papers"])


@pytest.mark.parametrize(
    "f", [Filters("accepted"), Filters("rejected"), Filters(area="reinforcement learning")]
)
def test_a_filter_only_removes_papers_it_never_moves_the_bar(sample_retriever, sample_settings, f):
    # scored on the unfiltered pool: the filtered list is the unfiltered one's matching papers, same scores
    whole = {
        x.paper.paper_id: x.score
        for x in list_papers(sample_retriever, sample_settings, "reinforcement learning").papers
    }
    part = {
        x.paper.paper_id: x.score
        for x in list_papers(sample_retriever, sample_settings, "reinforcement learning", f).papers
    }
    assert part and part == {pid: sc for pid, sc in whole.items() if pid in part}
    matching = {pid for pid in whole if f.matches(sample_retriever.bm25().papers[pid])}
    assert set(part) == matching


def test_a_broad_topic_looks_deeper_and_says_at_least_when_it_stops(
    sample_retriever, sample_settings, sample_data_dir
):
    s = sample_settings
    whole = list_papers(sample_retriever, s, "reinforcement learning")
    assert whole.complete and whole.found > 6
    # a pool a few chunks deep doubles until its last quarter stops clearing: a stopping rule, so it finds
    # the whole list's papers but for one or two that rank deeper than where the tail stopped clearing
    deep = list_papers(sample_retriever, s.replace(lists={"lister_candidates": 4}), "reinforcement learning")
    found, all_ = {x.paper.paper_id for x in deep.papers}, {x.paper.paper_id for x in whole.papers}
    assert deep.complete and found <= all_ and len(found) >= 0.9 * len(all_)
    four = s.replace(lists={"lister_candidates": 4, "lister_max_candidates": 4})
    cut = list_papers(sample_retriever, four, "reinforcement learning")
    assert not cut.complete and cut.found < whole.found
    args = ["list", "reinforcement learning", "--data-dir", str(sample_data_dir)]
    env = {"RAG_LISTS__LISTER_CANDIDATES": "4", "RAG_LISTS__LISTER_MAX_CANDIDATES": "4"}
    r = CliRunner().invoke(app, args, env=env)
    assert (
        r.exit_code == 0
        and f"At least {cut.found} papers on" in r.output
        and "The list may go on" in r.output
    )


def test_a_pool_holding_every_paper_is_complete(seed_engine):
    # 38 papers, most of them "machine learning": the pool holds them all, so nothing lies deeper
    res = list_papers(seed_engine.retriever, seed_engine.settings, "machine learning")
    assert res.candidates == len(seed_engine.retriever.bm25().papers) and res.complete and res.found > 10


def test_cli_list_json_and_exports(sample_data_dir, sample_papers, tmp_path):
    texts = {p.paper_id: p.text for p in sample_papers}
    csv_path, bib, md = tmp_path / "l.csv", tmp_path / "l.bib", tmp_path / "l.md"
    args = ["list", "graph neural networks", "--json", "--data-dir", str(sample_data_dir)]
    r = CliRunner().invoke(app, [*args, "--csv", str(csv_path), "--bibtex", str(bib), "--markdown", str(md)])
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    check_shape(out, texts)
    assert csv_path.read_text().count("\n") == out["count"] + 1 or "\n" in texts[out["papers"][0]["paper_id"]]
    assert bib.read_text().count("@") >= out["count"]


def test_a_topic_no_paper_is_about_lists_nothing_and_says_what_is_missing(
    sample_retriever, sample_settings, sample_data_dir
):
    """The closest papers of an absent topic are no list: each lacks the topic's own word. A real topic
    of the sample keeps its list, and the JSON of an empty list is the same shape with count 0."""
    absent = list_papers(
        sample_retriever, sample_settings, "knitting pattern generation with diffusion models"
    )
    assert absent.papers == [] and "knitting" in absent.lacking and absent.to_json()["count"] == 0
    assert list_papers(
        sample_retriever, sample_settings, "knitting pattern generation", check_coverage=False
    ).papers
    present = list_papers(sample_retriever, sample_settings, "diffusion models")
    assert present.papers and present.lacking == []
    topic = "knitting pattern generation with diffusion models"
    r = CliRunner().invoke(app, ["list", topic, "--data-dir", str(sample_data_dir)])
    assert r.exit_code == 0 and "No indexed paper is about" in r.output and "knitting" in r.output
    r = CliRunner().invoke(app, ["list", topic, "--json", "--data-dir", str(sample_data_dir)])
    assert r.exit_code == 0 and json.loads(r.stdout)["count"] == 0 and "never cover knitting" in r.stderr
    # a mistyped word empties the list too, and the message offers the word the abstracts use
    r = CliRunner().invoke(app, ["list", "difusion models", "--data-dir", str(sample_data_dir)])
    assert r.exit_code == 0 and "never cover difusion (did you mean “diffusion”?)" in r.output


def test_a_topic_is_covered_when_each_word_is_covered_by_one_of_the_best_papers(
    sample_retriever, sample_settings, monkeypatch
):
    """ "recognition and translation": a paper on either covers its word; only words every one of the best
    papers lacks empty the list, in the topic's order (rag.grounding.gaps faked: the rule over its gaps is tested)."""
    import rag.grounding.gaps
    from rag.shapes.lister import uncovered

    listed = list_papers(
        sample_retriever, sample_settings, "reinforcement learning", check_coverage=False
    ).papers[:3]
    assert len(listed) == 3
    topic = "knitting pattern recognition and translation"
    monkeypatch.setattr(rag.grounding.gaps, "unknown_words", lambda *a: [])
    monkeypatch.setattr(
        rag.grounding.gaps, "absent_words", lambda *a: {"knitting", "pattern", "recognition", "translation"}
    )
    cases = [
        ([["translation"], ["recognition"], ["recognition and translation"]], []),
        ([["knitting", "translation"], ["knitting pattern"], ["knitting"]], ["knitting"]),
        (
            [["knitting pattern"], ["pattern recognition"], ["pattern"]],
            ["pattern"],
        ),  # inside longer phrases too
        (
            [["pattern recognition", "knitting"], ["knitting pattern"], ["knitting", "pattern"]],
            ["knitting", "pattern"],
        ),
        ([["knitting"], [], ["knitting"]], []),
    ]
    for gaps, lacking in cases:
        monkeypatch.setattr(rag.grounding.gaps, "missing_aspects", lambda *a, g=gaps: g)
        assert uncovered(sample_retriever, sample_settings, topic, listed) == lacking
    # no word that every text lacks: nothing is embedded or read further
    monkeypatch.setattr(rag.grounding.gaps, "absent_words", lambda *a: set())
    monkeypatch.setattr(rag.grounding.gaps, "missing_aspects", lambda *a: pytest.fail("embedded for nothing"))
    assert uncovered(sample_retriever, sample_settings, topic, listed) == []


@pytest.mark.parametrize(
    ("flag", "value", "message"),
    [
        ("--decision", "maybe", "Use one of: oral"),
        ("--area", "cooking", "Valid areas"),
        ("--author", "Zzyzx", "author"),
    ],
)
def test_cli_list_bad_filter(sample_data_dir, flag, value, message):
    r = CliRunner().invoke(app, ["list", "graphs", flag, value, "--data-dir", str(sample_data_dir)])
    assert r.exit_code == 2 and message in r.output and "Traceback" not in r.output


@pytest.mark.slow
def test_list_on_2000_paper_slice(tmp_path, embedder, conference_papers):
    """End to end: ingest a 2,000-paper slice of the bundle through the CLI, then `rag list` on it."""
    import gzip
    import time

    from rag.settings import CONFERENCE_FILE

    lines = gzip.decompress(CONFERENCE_FILE.read_bytes()).decode().splitlines()[::5][:2000]
    src = tmp_path / "slice.jsonl"
    src.write_text("\n".join(lines) + "\n", encoding="utf-8")
    data = tmp_path / "data"
    r = CliRunner().invoke(app, ["ingest", str(src), "--json", "--data-dir", str(data)])
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["papers"] == 2000
    t0 = time.perf_counter()
    r = CliRunner().invoke(app, ["list", "diffusion models", "--json", "--data-dir", str(data)])
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    texts = {p.paper_id: p.text for p in conference_papers}
    check_shape(out, texts)
    assert out["count"] >= 5
    assert time.perf_counter() - t0 < 120
