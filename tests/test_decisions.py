"""rag.shapes.decisions: a decision asked of papers is said from the index's decisions, never cited."""

from types import SimpleNamespace

import pytest

from rag.reading.reader import Reading
from rag.shapes.decisions import SOURCE, decision_answer
from rag.types import Hit, Paper

ORAL = Paper("a", "FooNet segments cells.", "f", 0, title="FooNet", decision="Accept (Oral)")
REJECTED = Paper("b", "BarNet forecasts weather.", "f", 1, title="BarNet", decision="Reject")
UNKNOWN = Paper("c", "BazNet sorts lists.", "f", 2, title="BazNet")


def _said(asked: str, decision: str, papers) -> tuple[str, list]:
    reading = Reading(asked, asked, "decision", decision=decision)
    answers = []
    turn = SimpleNamespace(
        reading=reading, answer=lambda sentences, hits, text: answers.append(sentences) or text
    )
    *streamed, text = list(decision_answer(turn, [Hit(p, 1.0) for p in papers]))
    assert streamed == [text]  # the text streamed is the answer's
    return text, answers[0]


@pytest.mark.parametrize(
    ("asked", "decision", "papers", "first"),
    [
        ("Was it an oral?", "oral", [ORAL], "Yes: “FooNet” was accepted at ICLR 2025 as an oral."),
        ("Was it accepted?", "accepted", [REJECTED], "No: “BarNet” was rejected."),
        ("What decision did it get?", "", [ORAL], "“FooNet” was accepted at ICLR 2025 as an oral."),
        (
            "Which of the two was an oral?",
            "oral",
            [REJECTED, ORAL],
            "1 of the 2 papers matches “oral”: “FooNet”.",
        ),
        ("were both accepted?", "accepted", [REJECTED, UNKNOWN], "None of the 2 papers matches “accepted”."),
    ],
)
def test_a_decision_answer_says_what_the_index_holds(asked, decision, papers, first):
    text, sentences = _said(asked, decision, papers)
    lines = text.splitlines()
    assert lines[0] == first and lines[-1] == SOURCE
    assert len(sentences) == len(papers) and all(not s.citations for s in sentences)  # no abstract sentence


def test_a_paper_with_no_decision_says_so():
    text, _ = _said("What decision did it get?", "", [UNKNOWN])
    assert text.splitlines()[0] == "The index holds no decision for “BazNet”."


def test_a_choice_of_decisions_gets_each_papers_not_a_yes_or_no():
    text, _ = _said("Was it accepted or rejected?", "rejected, accepted", [REJECTED])
    assert text.splitlines()[0] == "“BarNet” was rejected."
