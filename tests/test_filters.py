"""Filters: parsing, matching, validation, on dense/BM25/hybrid retrieval over 300 real abstracts."""

from __future__ import annotations

import pytest

from rag.errors import UserError
from rag.retrieval.filters import Filters, decision_class, filters_from_question
from rag.types import Paper


def paper(decision=None, area=None, authors=None) -> Paper:
    return Paper("x", "text", "f.jsonl", 0, "T", decision, authors, area)


@pytest.mark.parametrize(
    ("raw", "cls"),
    [
        ("Accept (Oral)", "oral"),
        ("Accept (Spotlight)", "spotlight"),
        ("Accept (Poster)", "poster"),
        ("Reject", "rejected"),
        ("Withdrawn", "withdrawn"),
        ("Desk Rejected", "desk_rejected"),
        (None, ""),
    ],
)
def test_decision_class(raw, cls):
    assert decision_class(raw) == cls


def test_decision_words_and_exact_strings():
    oral, poster, rej, desk = (
        paper(d) for d in ("Accept (Oral)", "Accept (Poster)", "Reject", "Desk Rejected")
    )
    assert Filters("accepted").matches(oral) and Filters("accepted").matches(poster)
    assert not Filters("accepted").matches(rej)
    assert Filters("oral").matches(oral) and not Filters("oral").matches(poster)
    assert Filters("Accept (Oral)").matches(oral) and Filters("accept (oral)").matches(oral)
    assert Filters("rejected").matches(rej) and not Filters("rejected").matches(desk)
    assert Filters("Desk Rejected").matches(desk) and Filters("desk_rejected").matches(desk)


def test_area_and_author_matching():
    p = paper(
        area="learning on graphs and other geometries &amp; topologies", authors=["José Núñez", "Ann Li"]
    )
    assert Filters(area="Learning on graphs and other geometries & topologies").matches(p)
    assert not Filters(area="learning on graphs").matches(p)  # exact, not substring
    assert Filters(author="jose nunez").matches(p) and Filters(author="NÚÑ").matches(p)
    assert not Filters(author="Bob").matches(p)
    assert Filters.of("  ", "", None) == Filters() and not Filters()
    # a name written another usual way: surname first, an initial, a German transliteration
    s = paper(authors=["Bernhard Schölkopf"])
    for typed in ("Schölkopf, Bernhard", "B. Schölkopf", "Bernhard Schoelkopf", "b scholkopf"):
        assert Filters(author=typed).matches(s), typed
    assert not Filters(author="Bernd Schölkopf").matches(s) and not Filters(author="C. Schölkopf").matches(s)
    # an initial is a first name's, not the surname's; a typed "ue" is no umlaut ("Yujie" is not "Yuejie")
    others = paper(authors=["Xiao Wang", "Yuejie Chi", "Michael Jordan"])
    assert not any(Filters(author=a).matches(others) for a in ("W. Wang", "Yujie", "Michal"))
    assert Filters(author="X. Wang").matches(others) and Filters(author="Jordan, Michael").matches(others)


def test_describe():
    assert (
        Filters("oral", "optimization", "Li").describe()
        == 'orals, in "optimization", by an author matching "Li"'
    )
    assert Filters().describe() == ""


def test_validation_lists_valid_values(sample_papers):
    papers = {p.paper_id: p for p in sample_papers}
    with pytest.raises(UserError, match=r"oral, spotlight, poster, accepted.*Accept \(Oral\)"):
        Filters("maybe").validate(papers)
    with pytest.raises(UserError, match=r"Valid areas: .*reinforcement learning"):
        Filters(area="cooking").validate(papers)
    with pytest.raises(UserError, match="No indexed paper has an author matching 'Zzyzx Qwerty'"):
        Filters(author="Zzyzx Qwerty").validate(papers)
    assert Filters("oral").validate(papers) == {
        p.paper_id for p in sample_papers if p.decision == "Accept (Oral)"
    }


QUESTIONS = [
    ("Which orals are about diffusion models?", "oral", None, "Which papers are about diffusion models?"),
    (
        "List the rejected papers on graph neural networks",
        "rejected",
        None,
        "List the papers on graph neural networks",
    ),
    ("accepted papers about RLHF", "accepted", None, "papers about RLHF"),
    ("What withdrawn submissions study LLM agents?", "withdrawn", None, "What papers study LLM agents?"),
    ("spotlight papers on robustness", "spotlight", None, "papers on robustness"),
    ("Which papers were accepted as oral about optimization?", "oral", None, None),
    ("Show me the spotlights on world models", "spotlight", None, None),
    ("Which posters use transformers?", "poster", None, "Which papers use transformers?"),
    ("papers that were rejected about privacy", "rejected", None, "papers about privacy"),
    ("desk rejected papers on vision", "desk_rejected", None, "papers on vision"),
    ("papers by Yoshua Bengio on causality", None, "Yoshua Bengio", "papers on causality"),
    ("Show me work from Kaiming He", None, "Kaiming He", None),
    ("Bengio's papers about GFlowNets", None, "Bengio", "papers about GFlowNets"),
    ("papers authored by yann lecun about world models", None, "yann lecun", "papers about world models"),
    ("papers by José Hernández-Lobato", None, "José Hernández-Lobato", None),
    ("oral papers by Sergey Levine on offline RL", "oral", "Sergey Levine", None),
]


@pytest.mark.parametrize(
    ("q", "decision", "cleaned"),
    [
        ("orals or spotlights on diffusion", "oral, spotlight", "papers on diffusion"),
        ("orals/spotlights about world models", "oral, spotlight", "papers about world models"),
        ("non-rejected papers on RL", "accepted", "papers on RL"),
        ("papers that were not accepted about privacy", "rejected", "papers about privacy"),
        ("papers that did not get accepted on graphs", "rejected", "papers on graphs"),
        ("accepted papers but not posters about LLMs", "oral, spotlight", "papers about LLMs"),
        ("restrict to accepted papers, i don't want rejected stuff", "accepted", None),
        ("No, I meant orals", "oral", None),  # "no," says no decision is unwanted
    ],
)
def test_several_decisions_and_decisions_not_wanted(q, decision, cleaned):
    f, rest = filters_from_question(q)
    assert f.decision == decision
    if cleaned:
        assert rest == cleaned


def test_a_filter_of_several_decisions_matches_either_and_checks_each(sample_papers):
    oral, spot, poster, rej = (
        paper(d) for d in ("Accept (Oral)", "Accept (Spotlight)", "Accept (Poster)", "Reject")
    )
    for value in ("oral, spotlight", "oral or spotlight", "oral/spotlight"):
        f = Filters(value)
        assert f.matches(oral) and f.matches(spot) and not f.matches(poster) and not f.matches(rej)
    assert Filters("oral, spotlight").describe() == "orals or spotlights"
    papers = {p.paper_id: p for p in sample_papers}
    with pytest.raises(UserError, match="No indexed paper has decision 'maybe'"):
        Filters("oral, maybe").validate(papers)


def test_the_conference_named_in_a_question_is_no_author():
    f, cleaned = filters_from_question("spotlights from iclr25 about diffusion")
    assert (f.decision, f.author) == ("spotlight", None) and "iclr" not in cleaned.lower()


@pytest.mark.parametrize(("q", "decision", "author", "cleaned"), QUESTIONS)
def test_filters_from_question(q, decision, author, cleaned):
    f, rest = filters_from_question(q)
    assert (f.decision, f.author) == (decision, author)
    if cleaned:
        assert rest == cleaned
    for word in filter(None, [author, decision if decision not in ("accepted", "desk_rejected") else None]):
        assert word.lower() not in rest.lower()


@pytest.mark.parametrize(
    "q",
    [
        "How does Celcomen work?",
        "What are the methods by which models learn?",
        "What is an oral cavity model?",
        "Which method rejects outliers?",
        "How do posterior samples improve calibration?",
    ],
)
def test_no_filter_in_plain_questions(q):
    f, rest = filters_from_question(q)
    assert not f and rest == q


CASES = [
    Filters("oral"),
    Filters("accepted"),
    Filters("rejected"),
    Filters("Withdrawn"),
    Filters(area="reinforcement learning"),
    Filters("accepted", area="generative models"),
]


@pytest.mark.parametrize("mode", ["dense", "bm25", "hybrid"])
@pytest.mark.parametrize("f", CASES, ids=lambda f: f.describe())
def test_retrieval_filters(sample_retriever, sample_papers, mode, f):
    matching = [p for p in sample_papers if f.matches(p)]
    k = min(5, len(matching))
    assert k >= 3
    hits = sample_retriever.retrieve("a method for learning models from data", top_k=k, mode=mode, filters=f)
    assert len(hits) == k
    assert all(f.matches(h.paper) for h in hits)


@pytest.mark.parametrize("mode", ["dense", "bm25", "hybrid"])
def test_author_filter_and_default(sample_retriever, sample_papers, mode):
    author = sample_papers[7].authors[0]
    f = Filters(author=author.upper())
    mine = [p for p in sample_papers if f.matches(p)]
    sample_retriever.filters = f  # the session default, used when no filter is passed
    hits = sample_retriever.retrieve(sample_papers[7].title, top_k=len(mine), mode=mode)
    assert {h.paper.paper_id for h in hits} <= {p.paper_id for p in mine}
    assert sample_papers[7].paper_id in {h.paper.paper_id for h in hits}


def test_unknown_value_is_user_error(sample_retriever):
    with pytest.raises(UserError, match="Valid areas"):
        sample_retriever.retrieve("graphs", filters=Filters(area="nope"))


def test_papers_from_earlier_name_no_author():
    from rag.retrieval.filters import filters_from_question

    assert not filters_from_question("can you summarize the insect papers from earlier?")[0]
    # "There's a paper that …" describes a paper; it was read as a paper by an author named "There"
    assert not filters_from_question("There's a paper that fine-tunes many checkpoints of an LLM")[0]
    assert filters_from_question("papers from bengio")[0].author == "bengio"


@pytest.mark.parametrize(
    ("question", "listed", "decision"),
    [
        ("accepted papers on diffusion", False, "accepted"),
        ("LLM agent papers that were not accepted", False, "rejected"),
        # "accepted" said of something other than papers is no filter
        ("how does the discriminator decide whether an action is accepted or rejected?", False, None),
        ("do they use rejection sampling to filter the proofs?", False, None),
        # a list is shown: "rejected only" is said of its papers
        ("rejected/withdrawn only", True, "rejected, withdrawn"),
        ("rejected/withdrawn only", False, None),
        ("orals on world models", False, "oral"),  # a kind of talk is a decision however it is said
    ],
)
def test_a_fate_is_a_filter_when_said_of_papers(question, listed, decision):
    assert filters_from_question(question, listed)[0].decision == decision
