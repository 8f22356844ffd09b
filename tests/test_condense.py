"""rag/condense.py: the words' reading of a chat question, checked against retrieval (fake retrieval)."""

from __future__ import annotations

import pytest

from rag.condense import Condenser, user_turns, word_gain
from rag.settings import Settings
from rag.types import Hit, Paper

# Two papers of one area: the chat was on the first; questions describe the second or ask more of the first.
SOLVER = Paper(
    "solver",
    "We train a graph network to solve sparse linear systems. It converges on meshes and reduces "
    "iterations on elliptic problems, tested on 800 matrices.",
    "x.jsonl",
    0,
    title="Learned preconditioners for sparse linear systems",
)
WAVES = Paper(
    "waves",
    "A multigrid network for the Helmholtz equation at high wavenumber. Convergence stays optimal up to "
    "wavenumber 2000 on heterogeneous media.",
    "x.jsonl",
    1,
    title="Neural multigrid for Helmholtz",
)
PAPERS = [SOLVER, WAVES]


def fake_retrieve(calls: list[str]):
    """Ranks the two papers by the question's words each uses, the solver paper on ties."""
    from rag.text import content_words

    def retrieve(q: str) -> list[Hit]:
        calls.append(q)
        words = content_words(q)
        ranked = sorted(
            PAPERS, key=lambda p: -len(words & content_words(f"{p.title} {p.text}")) + (p is WAVES) * 0.5
        )
        return [Hit(p, 1.0 / (i + 1)) for i, p in enumerate(ranked)]

    return retrieve


def flat_idf(word: str) -> float:
    return 3.0


def rare_idf(word: str) -> float:
    """ "helmholtz" and "heterogen" are rare, every other word common."""
    return 5.0 if word in ("helmholtz", "heterogen") else 3.0


@pytest.fixture
def condenser():
    return Condenser(Settings(), lambda: flat_idf)


def test_no_history_reads_alone_without_retrieving(condenser):
    calls: list[str] = []
    got = condenser("What does it converge on?", [], fake_retrieve(calls))
    assert (got.query, got.reading, calls) == ("What does it converge on?", "alone", [])


def test_a_pronoun_question_that_describes_another_paper_reads_alone(condenser):
    turns = ["How many matrices were the learned preconditioners tested on?"]
    q = "up to what wavenumber do they keep optimal convergence for the Helmholtz equation?"
    got = condenser(q, turns, fake_retrieve([]))
    assert got.words_reading == "follow-up"  # the pronoun alone says follow-up
    assert (got.reading, got.query, got.alone_top, got.follow_top) == ("alone", q, "waves", "solver")
    assert got.gain >= 4.0


def test_one_new_word_is_no_switch():
    # "Helmholtz" is rare and the other paper's word only, but one word is no description of a paper
    condenser = Condenser(Settings(), lambda: rare_idf)
    turns = ["How many matrices were the learned preconditioners tested on?"]
    got = condenser("What results do they give for Helmholtz?", turns, fake_retrieve([]))
    assert got.alone_top == "waves" and got.gain >= 4.0
    assert got.reading == "follow-up" and got.query.endswith(f"({turns[0]})")


@pytest.mark.parametrize(
    "q",
    [
        "Does it reach optimal convergence for Helmholtz at high wavenumber?",
        "did they test it for Helmholtz problems at high wavenumber and optimal convergence?",
        "OK and how do they keep optimal convergence at high wavenumber for Helmholtz?",
    ],
)
def test_a_clause_about_the_pronoun_subject_stays_a_follow_up(condenser, q):
    # the words describe the other paper well, but "does it / did they / how do they" asks them of this one
    turns = ["How many matrices were the learned preconditioners tested on?"]
    got = condenser(q, turns, fake_retrieve([]))
    assert got.alone_top == "waves" and got.gain >= 4.0
    assert got.reading == "follow-up" and got.query.endswith(f"({turns[0]})")


def test_words_read_alone_but_the_last_papers_words_make_it_a_follow_up():
    condenser = Condenser(Settings(), lambda: rare_idf)
    turns = ["What is the neural multigrid Helmholtz paper about?"]
    q = "How many iterations are needed on heterogeneous grids?"  # no pronoun: "alone" by its words
    calls: list[str] = []
    got = condenser(q, turns, fake_retrieve(calls))
    assert got.words_reading == "alone"
    # alone, one word each (the solver paper wins the tie); with the turn, the multigrid paper; the rarer
    # word ("heterogeneous") is the multigrid paper's
    assert (got.alone_top, got.follow_top, got.gain) == ("solver", "waves", 3.0 - 5.0)
    assert got.reading == "follow-up" and got.query == f"{q} ({turns[0]})"
    assert got.hits[got.query][0].paper is WAVES  # the chosen reading's retrieval comes along


def test_same_paper_either_way_keeps_the_words_reading(condenser):
    turns = ["How does the neural multigrid solve Helmholtz problems?"]
    got = condenser("What wavenumber do they reach?", turns, fake_retrieve([]))
    assert got.alone_top == got.follow_top == "waves"
    assert got.reading == got.words_reading == "follow-up"


def test_pointing_back_and_stated_switches_retrieve_nothing(condenser):
    calls: list[str] = []
    turns = ["What is the Helmholtz multigrid about?", "How many matrices did the preconditioners use?"]
    got = condenser("Back to the first one: what media?", turns, fake_retrieve(calls))
    assert got.reading == "points back" and got.query.endswith(f"({turns[0]})")
    got = condenser("Different topic: what do they converge on?", turns, fake_retrieve(calls))
    assert (got.reading, got.query) == ("stated switch", "Different topic: what do they converge on?")
    assert calls == []


def test_check_off_is_the_words_reading(condenser):
    condenser.settings = Settings(condense_check=False)
    calls: list[str] = []
    turns = ["How many matrices were the learned preconditioners tested on?"]
    q = "up to what wavenumber do they keep optimal convergence for the Helmholtz equation?"
    got = condenser(q, turns, fake_retrieve(calls))
    assert got.reading == "follow-up" and calls == []


def test_earlier_turns_are_read_once_and_cached_without_their_hits(condenser):
    calls: list[str] = []
    turns = ["What is the Helmholtz multigrid about?", "What wavenumber does it reach?"]
    condenser(turns[1], turns[:1], fake_retrieve(calls))
    first = len(calls)
    got = condenser("And on which media?", turns, fake_retrieve(calls))
    assert len(calls) == first + 2  # only the new question's two readings
    assert got.query.endswith(f"({turns[1]} ({turns[0]}))")
    cached = condenser("And on which media?", turns, fake_retrieve(calls))
    assert cached.query == got.query and cached.hits == {} and len(calls) == first + 2


def test_word_gain_counts_rare_words_only_one_side_uses():
    gain, n = word_gain("optimal convergence at high wavenumber on matrices", WAVES, SOLVER, flat_idf)
    # wavenumber, optim, high only in WAVES; matric only in SOLVER; converg in both
    assert (gain, n) == (3 * 3.0 - 3.0, 3)


def test_user_turns_keep_the_users_words_only():
    history = [
        {"role": "user", "content": "What is X?"},
        {"role": "assistant", "content": "X is ..."},
        {"role": "user", "content": "  "},
    ]
    assert user_turns(history) == ["What is X?"]
