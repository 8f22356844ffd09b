"""Question analysis: named terms, answerability (refusal) and the sources a question is about."""

import pytest

from rag.cite import Judge
from rag.question import answerability, focus, idf_coverage, named_terms, quantity_heads
from rag.types import Hit
from tests.conftest import CEL, RL


@pytest.fixture(scope="module")
def judge(embedder):
    return Judge(embedder)


def test_named_terms_and_answerability(judge):
    assert named_terms("What accuracy does MR.Q reach on GSM8K?") == {"mr.q", "gsm8k"}
    assert named_terms("What does Celcomen do?") == {"celcomen"}
    assert named_terms("How does the method work?") == set()
    hits = [Hit(CEL, 1.0), Hit(RL, 0.5)]
    score, why = answerability("What FID does Celcomen get on ImageNet?", hits, judge)
    assert score == 0.0 and "imagenet" in why
    score, why = answerability("Does Celcomen beat MR.Q on continuous control?", hits, judge)
    assert score == 0.0 and "no single source" in why  # needs both names in one abstract
    assert answerability("Compare Celcomen and MR.Q.", hits, judge)[0] > 0  # comparisons may span papers
    assert answerability("What does Celcomen do?", hits, judge)[0] > 0.3


def test_quantity_questions_need_the_asked_quantity_in_the_named_paper(judge):
    assert quantity_heads("How many GPU hours does MR.Q need?") == {"hour"}
    assert quantity_heads("What learning rate and batch size were used?") == {"rate", "size"}
    hits = [Hit(RL, 1.0), Hit(CEL, 0.5)]
    assert (
        answerability("How many continuous-control tasks does MR.Q match baselines on?", hits, judge)[0] > 0.3
    )
    score, why = answerability("How many training hours does MR.Q need?", hits, judge)
    assert score == 0.0 and "hour" in why  # the abstract counts tasks, not hours
    # Celcomen states an accuracy, MR.Q doesn't: the question is about MR.Q
    assert answerability("What accuracy does MR.Q reach?", hits, judge)[0] == 0.0
    assert answerability("What accuracy does Celcomen reach?", hits, judge)[0] > 0.3


def test_which_paper_coverage_weighs_rare_words():
    words = {"generat", "graph", "protein"}
    assert idf_coverage(words, [Hit(CEL, 1.0)], None) == pytest.approx(2 / 3)
    assert idf_coverage(words, [Hit(CEL, 1.0)], lambda w: 5.0 if w == "protein" else 1.0) == pytest.approx(
        2 / 7
    )


def test_focus_picks_the_papers_the_question_is_about(judge):
    hits = [Hit(CEL, 1.0), Hit(RL, 0.5)]
    assert focus("What does Celcomen do?", hits, judge, 0.95, 0.7) == {1}
    assert focus("What does MR.Q use?", hits, judge, 0.95, 0.7) == {2}  # named terms beat the rank
    assert focus("Compare Celcomen and MR.Q.", hits, judge, 0.95, 0.7) == {1, 2}
    assert focus(
        "Which agent matches baselines on continuous-control tasks?",
        [Hit(RL, 1.0), Hit(CEL, 0.5)],
        judge,
        0.95,
        0.7,
    ) == {1}


@pytest.mark.parametrize(
    "q, want",
    [
        ("Which papers in this collection are about diffusion models?", "list"),
        ("Which paper proposes a next-token predictor that sees a prefix and a suffix?", "list"),
        ("Is there work on smoothing a policy's actions in continuous control?", "list"),
        ("Are there any studies of LLM fairness over many turns?", "list"),
        ("Any papers on protein inverse folding?", "list"),
        ("List the papers about federated learning.", "list"),
        ("Find me works on watermarking language models", "list"),
        ("Papers about spiking neural networks?", "list"),
        ("What recent works study reward hacking?", "list"),
        ("Summarize the work on diffusion models in this collection.", "summary"),
        ("Give me an overview of reinforcement learning papers", "summary"),
        ("Can you give a summary of the graph learning abstracts?", "summary"),
        ("How do DANSM and EvoGen differ?", "compare"),
        ("Compare Lean-STaR with MR.Q.", "compare"),
        ("What is the difference between the two diffusion training methods?", "compare"),
        ("What does Celcomen do?", "explain"),
        ("How many chaotic systems were used to test forecasting?", "explain"),
        ("Why does the randomized midpoint method converge faster?", "explain"),
        ("What datasets did they validate it on?", "explain"),
    ],
)
def test_answer_shape_follows_what_was_asked(q, want):
    from rag.question import shape

    assert shape(q) == want


@pytest.mark.parametrize(
    "q, turns, want",
    [
        ("What does Lean-STaR do?", ["What does EvoGen do?"], None),  # names its own subject: a switch
        ("Which papers are about diffusion?", ["What does Celcomen do?"], None),
        ("How does the method that uses prefixes work?", ["What does EvoGen do?"], None),
        ("What datasets did they validate it on?", ["What does Celcomen do?"], 0),
        ("And on SUN RGB-D?", ["What AP50 gains does DEST report on ScanNet V2?"], 0),
        ("How does this method scale?", ["What does EvoGen do?"], 0),
        ("What about its limitations?", ["Q1", "What does EvoGen do?"], 1),
        ("In the first one, what data was used?", ["What does Celcomen do?", "What does EvoGen do?"], 0),
        ("Going back to the first paper, who benefits?", ["A?", "B?", "C?"], 0),
        ("What did the second one find?", ["A?", "B?", "C?"], 1),
        ("Datasets used?", ["What does Celcomen do?"], 0),
        ("What does Celcomen do?", [], None),
        ("And what does Topograph do for segmentation?", ["What does EvoGen do?"], None),  # new subject
        ("What about SmODE: how does it bound its Lipschitz constant?", ["What does MR.Q do?"], None),
        ("Let's move to the video retrieval paper. How does it scale?", ["What does EvoGen do?"], None),
        ("Which examples stay memorized according to that paper?", ["Q?", "What does EvoGen do?"], 1),
        ("And on SUN RGB-D?", ["What AP50 gains does DEST report on ScanNet V2?"], 0),
        ("How does EvoGen's curriculum work?", ["What does EvoGen do?"], None),
    ],
)
def test_history_is_used_only_when_the_question_depends_on_it(q, turns, want):
    from rag.question import referent, standalone

    assert referent(q, turns) == want
    out = standalone(q, turns)
    assert out == q if want is None else turns[want] in out


@pytest.mark.parametrize(
    "term, text, found",
    [
        ("llms", "large language models (llm) are used", True),
        ("transformers", "a transformer block", True),
        ("rlhf", "reinforcement learning from human feedback", True),
        ("celcomen", "a generative graph neural network", False),
        ("gan", "generative adversarial networks", True),
        ("lean-star", "we introduce lean-star, a framework", True),
    ],
)
def test_named_terms_match_plurals_and_acronym_expansions(term, text, found):
    from rag.question import mentions

    assert mentions(text, term) is found
