"""rag.reading.reader: a question read once into a Reading (shape, parts, names, leaning on the chat)."""

from types import SimpleNamespace

import pytest

from rag.reading.reader import (
    Reader,
    courtesy_only,
    leans,
    more_asked,
    number_asked,
    ordinal,
    parts,
    picked_by,
    pointer,
    positions,
    shape,
    states_switch,
    topic,
    words,
)
from rag.retrieval.filters import Filters
from rag.types import Hit, Paper


@pytest.mark.parametrize(
    "question, expected",
    [
        ("Which papers study protein design with diffusion?", ("list", True)),
        ("What recent works use graph transformers for weather?", ("list", True)),
        ("Is there any work on speculative decoding?", ("list", True)),
        ("Are there papers about data pruning?", ("list", True)),
        ("List papers on model merging", ("list", True)),
        ("Papers on federated unlearning?", ("list", True)),
        ("How many papers study grokking?", ("list", True)),
        ("Which paper shows that a single attention layer can sort?", ("which", False)),
        ("Is there a paper that trains robots from videos?", ("which", False)),
        ("Who proposed the FooNet optimizer?", ("which", False)),
        ("Summarize the work on test-time scaling", ("summary", True)),
        ("Give me an overview of tabular foundation models", ("summary", True)),
        ("How do FooNet and BarNet differ in their training data?", ("compare", False)),
        ("Compare FooNet with BarNet", ("compare", False)),
        ("What does FooNet do?", ("explain", False)),
        ("Which dataset does FooNet use?", ("explain", False)),  # a fact of a paper, not a paper
        ("What loss do the authors of FooNet minimise?", ("explain", False)),
        ("OK so which papers use LoRA for vision?", ("list", True)),
        # methods are asked of a paper: "what methods did they try", "what two methods does X propose"
        ("What methods did they try to make the images more engaging?", ("explain", False)),
        ("What two methods are proposed in 'Unified Discrete Representations'?", ("explain", False)),
        # a request framed around its topic, however it is put
        ("Can you list papers on model merging?", ("list", True)),
        ("Which one uses graph neural networks?", ("which", False)),  # a paper, named in the answer
        ("I'm looking for papers about weather forecasting.", ("list", True)),
        ("TTS papers?", ("list", True)),
        ("nl2sql / text2sql papers - can you list them?", ("list", True)),
        ("anything on time series anomaly detection? list them", ("list", True)),
        ("looking for the paper that adapts conformal inference to segmentation masks", ("which", False)),
        ("any paper on federated learning under relaxed smoothness?", ("which", False)),
        ("Can you show me the results of FooNet?", ("explain", False)),
        ("Can you summarize the paper on shuffled differential privacy?", ("explain", False)),
        ("Could you pull up papers on causal discovery?", ("list", True)),
        ("Got anything on offline RL? list please", ("list", True)),
        # "list" and "papers" of one paper, and a comparison with papers: no list
        ("Can you list the datasets used in FooNet?", ("explain", False)),
        ("Does the paper cite other papers on RL?", ("explain", False)),
        ("How does it differ from papers that use RLHF?", ("compare", False)),
        ("I'm looking for work focusing on diffusion models for robotics.", ("list", True)),
        # one of some papers: no list
        ("Which of the LLM benchmark papers relies on GPT-4 as a judge?", ("explain", False)),
        ("Among the RL papers here, which one learns from explanations?", ("explain", False)),
    ],
)
def test_shape(question, expected):
    assert shape(question) == expected


@pytest.mark.parametrize(
    "question, expected",
    [
        ("How many cell lines does FooNet use?", "cell lines"),
        ("how much faster is it than the baseline?", "faster"),
        ("What accuracy does BarNet reach on ImageNet?", "accuracy"),
        ("What is the speedup over FlashAttention?", "speedup"),
        ("What does FooNet do?", None),
        ("Which benchmark do they use?", None),
    ],
)
def test_number_asked(question, expected):
    assert number_asked(question) == expected


def test_parts_split_at_new_clauses_and_read_what_each_asks():
    got = parts("How does FooNet compare with the baseline, and how many cell lines does it use?")
    assert [p.text for p in got] == [
        "How does FooNet compare with the baseline",
        "how many cell lines does it use",
    ]
    assert [p.number for p in got] == [None, "cell lines"]
    two = parts("What model size do they train? Which GPUs?")
    assert len(two) == 2
    # "and" inside a description is no new clause
    assert len(parts("Which paper combines symbolic and neural planning?")) == 1


def test_topic_drops_the_frame_and_a_closing_verb_of_what_papers_said():
    assert (
        topic("Which recent papers study diffusion models for proteins?") == "diffusion models for proteins"
    )
    assert topic("Is there any work on speculative decoding?") == "speculative decoding"
    assert topic("What did the papers on machine unlearning claim?") == "machine unlearning"
    assert topic("Summarize the work on test-time scaling") == "test-time scaling"
    # words that close a question about the indexed papers: the lister needs every word of a topic covered
    assert topic("Summarize the work on diffusion models in this collection.") == "diffusion models"
    assert topic("Which papers are about graph neural networks here?") == "graph neural networks"
    assert (
        topic("Summarize the robotics and embodied-agent papers in this collection")
        == "robotics and embodied-agent"
    )


@pytest.mark.parametrize(
    "question, expected",
    [
        ("Which papers deal with reinforcement learning? Give me a list.", "reinforcement learning"),
        ("Can you list all the papers related to speculative decoding?", "speculative decoding"),
        (
            "I'm looking for work focusing on diffusion models for robotics. Thanks!",
            "diffusion models for robotics",
        ),
        ("KAN papers? (Kolmogorov-Arnold networks)", "KAN Kolmogorov-Arnold networks"),
        ("hallucination in VLMs - what papers are there?", "hallucination in VLMs"),
        ("What's the list of papers working on graph neural networks?", "graph neural networks"),
        ("I want the papers about reward models for RLHF.", "reward models for RLHF"),
        ("papers on chain-of-thought. What's out there?", "chain-of-thought"),
        (
            "grokking papers? (generalization long after overfitting)",
            "grokking generalization long after overfitting",
        ),
        (
            "Can you list methods for detecting AI-written papers on arXiv?",
            "methods for detecting AI-written papers on arXiv",
        ),
        ("List the papers", "papers"),  # "… by NAME": the author's papers, no topic
        ("I'd like a list of SNN papers. Thanks.", "SNN"),
        ("list of papers on web agents?", "web agents"),
        # a verb with no particle may be the topic's own ("decode"); "the paper studies X": "studies" is a verb
        ("Which papers decode speech from brain activity?", "decode speech from brain activity"),
        (
            "Which paper studies speech recognition for low-resource languages?",
            "speech recognition for low-resource languages",
        ),
    ],
)
def test_topic_drops_a_request_frame_its_verb_and_sentences_that_only_ask(question, expected):
    assert topic(question) == expected


def test_pointers_switches_and_leaning_words():
    turns = ["What does FooNet do?", "And BarNet?", "What about BazNet?"]
    assert pointer("Back to the first one: what data does it use?", turns) == 0
    assert pointer("Does the second paper use labels?", turns) == 1
    assert pointer("Tell me more about that paper", turns) == 2
    assert pointer("the first time a model learns", turns) is None  # "first" of something else
    assert pointer("It is the first method to do so", turns) is None
    assert states_switch("Unrelated: what is BarNet?")
    assert states_switch("New topic - which papers use LoRA?")
    assert not states_switch("What does the switching cost depend on?")
    assert leans("Does it also handle occlusion?")
    assert leans("And on CIFAR-10?")
    assert leans("What about the ablations?")
    assert leans("Datasets used?")  # too short to stand alone
    assert not leans("Which benchmark does FooNet introduce for long-context retrieval?")


def test_words_straighten_apostrophes():
    assert words("What’s FooNet's loss?") == ["what's", "foonet's", "loss"]


def _hit(pid: str, text: str, title: str = "") -> Hit:
    return Hit(Paper(pid, text, "f.jsonl", 0, title=title), 1.0)


class _FakeRetrieval:
    """Retrieves by word overlap with each paper's text (no model): enough to test the reading check."""

    def __init__(self, papers):
        self.papers = papers
        self.calls = []

    def __call__(self, query, filters):
        self.calls.append((query, filters))
        query = query.split("(", 1)[-1]  # a follow-up reading is led by the turn it leans on
        q = {w.strip("?.,()").lower() for w in query.split()}
        scored = sorted(self.papers, key=lambda p: -len(q & {w.lower() for w in p.text.split()}))
        return [Hit(p, 1.0) for p in scored]


def _reader(switch_min_gain=1.0):
    s = SimpleNamespace(
        condense_check=True,
        switch_min_gain=switch_min_gain,
        switch_min_words=2,
        follow_min_gain=1.0,
        condense_cache=8,
    )
    return Reader(s, lambda: lambda w: 2.0)


PAPERS = [
    Paper("a", "FooNet segments cells in microscopy images with a diffusion prior", "f", 0, title="FooNet"),
    Paper("b", "BarNet forecasts weather with graph networks over the globe", "f", 1, title="BarNet"),
]


def test_a_follow_up_with_a_pronoun_leans_on_the_last_turn():
    fake = _FakeRetrieval(PAPERS)
    history = [{"role": "user", "content": "What does FooNet do?"}, {"role": "assistant", "content": "…"}]
    r = _reader()("Does it use a prior?", history, fake)
    assert r.how == "follow-up" and r.base == "What does FooNet do?"
    assert r.query == "Does it use a prior? (What does FooNet do?)"
    assert r.asked == "Does it use a prior?"  # stages read the user's words, never the joined query


def test_a_new_subject_in_rare_words_is_read_alone_even_with_a_pronoun():
    fake = _FakeRetrieval(PAPERS)
    history = [{"role": "user", "content": "What does FooNet do?"}]
    r = _reader()("How does it forecast weather over the globe with graph networks?", history, fake)
    assert r.how == "alone" and r.base is None and r.gain and r.gain > 0


@pytest.mark.parametrize(
    ("question", "told"),
    [
        # the words before the pronoun point to the other paper: "they" is that paper, nothing is told
        ("BarNet - which regions do they forecast?", False),
        ("and the weather one over the globe: how do they forecast?", False),
        # the words after it do: "it" is still FooNet, and the answer says FooNet never mentions them
        ("Does it forecast weather over the globe with graph networks?", True),
    ],
)
def test_a_switch_is_told_only_when_the_pronoun_comes_before_the_new_words(question, told):
    history = [{"role": "user", "content": "What does FooNet do?"}]
    r = _reader()(question, history, _FakeRetrieval(PAPERS))
    assert r.how == "alone" and r.base is None
    assert bool(r.left) is told
    if told:
        assert r.left[0].paper_id == "a" and "weather" in r.left[1]


def test_a_stated_switch_and_a_pointer_need_no_retrieval_check():
    fake = _FakeRetrieval(PAPERS)
    history = [
        {"role": "user", "content": "What does FooNet do?"},
        {"role": "user", "content": "What does BarNet do?"},
    ]
    assert _reader()("Unrelated: what is a diffusion prior?", history, fake).how == "stated switch"
    r = _reader()("Back to the first one: which images?", history, fake)
    assert r.how == "points back" and r.base == "What does FooNet do?"
    assert fake.calls == []


def test_a_question_names_its_filter_and_is_read_without_it():
    fake = _FakeRetrieval(PAPERS)
    r = _reader()("Which orals are about weather forecasting?", None, fake)
    assert r.filters.decision == "oral" and "oral" not in r.asked.lower()
    assert r.shape == "list" and r.topic == "weather forecasting"
    given = _reader()("Which orals are about weather?", None, fake, filters=Filters("poster"))
    assert given.filters.decision == "poster"  # the caller's filter wins


def test_the_generator_sees_the_question_without_chat_openers():
    r = _reader()("OK so, what does FooNet do?", None, _FakeRetrieval(PAPERS))
    assert r.prompt_question == "What does FooNet do?"
    assert _reader()("mRNA design with FooNet?", None, _FakeRetrieval(PAPERS)).prompt_question.startswith(
        "mRNA"
    )


@pytest.mark.parametrize(
    ("question", "items"),
    [
        (
            "Compare Block Diffusion and One Step Diffusion via Shortcut Models",
            ["Block Diffusion", "One Step Diffusion via Shortcut Models"],
        ),
        ("How does Celcomen differ from MorphoDiff?", ["Celcomen", "MorphoDiff"]),
        ("DANSM vs EvoGen", ["DANSM", "EvoGen"]),
        ("Compare SRSA, VisualPredicator and UTILITY", ["SRSA", "VisualPredicator", "UTILITY"]),
        ("What does Celcomen do?", []),
    ],
)
def test_a_comparison_names_its_items(question, items):
    from rag.reading.reader import compared

    assert compared(question) == items


def test_a_bare_summary_reads_the_list_shown_or_the_paper_followed():
    shown = [
        {"role": "user", "content": "Which papers are about weather forecasting?"},
        {"role": "assistant", "content": "…", "papers": ["b", "a"]},
    ]
    for q in ("Summarize them", "summarize", "give me a summary of these"):
        r = _reader()(q, shown, _FakeRetrieval(PAPERS))
        assert (r.shape, r.over, r.topic) == ("summary", ("b", "a"), "weather forecasting"), q
    r = _reader()("Summarize the papers on cell microscopy", shown, _FakeRetrieval(PAPERS))
    assert (r.shape, r.over, r.topic) == ("summary", (), "cell microscopy")
    # no list: "summarize it" is the paper the chat is on
    r = _reader()(
        "summarize it", [{"role": "user", "content": "What does FooNet do?"}], _FakeRetrieval(PAPERS)
    )
    assert r.shape == "explain" and r.base == "What does FooNet do?"


def test_which_of_them_picks_by_what_follows_and_ranking_them_is_no_pick():
    assert picked_by("Which of them is about cells") == "cells"
    assert picked_by("OK, which one of these papers deals with RL") == "RL"
    assert picked_by("Which of them has the highest accuracy") is None  # ranks them: every paper's row
    assert picked_by("Which of them is best on ImageNet") is None
    assert picked_by("What data do they use") is None
    assert picked_by("Which one uses RL") == "RL" and picked_by("which ones deal with proteins") == "proteins"
    assert picked_by("Which one is best?") is None


LISTED = [
    {"role": "user", "content": "Which spotlight papers are about weather forecasting?"},
    {"role": "assistant", "content": "…", "papers": ["a", "b", "c", "d"]},
]


def test_after_a_list_positions_name_its_entries_and_two_or_more_compare_them():
    for q, at in (
        ("what's the 4th one about", 3),
        ("#2 - which dataset do they use?", 1),
        ("Who are the authors of paper 3?", 2),
        ("does number two release code?", 1),
        ("the last one, what does it report?", -1),
        ("the first method to use X", None),  # a superlative, not a pointer
        ("First one needs a baseline", None),
    ):
        assert ordinal(q) == at, q
    for q, at in (
        ("compare the first two", [0, 1]),
        ("how is #3 different from #1", [2, 0]),
        ("2 vs 3 - which is cheaper?", [1, 2]),
        ("side by side: the first and the last", [0, -1]),
        ("Llama 2 and Llama 3 results", [1]),  # a name's version is no position
    ):
        assert positions(q) == at, q
    r = _reader()("how do the 4th and 2nd differ?", LISTED, _FakeRetrieval(PAPERS))
    assert (r.shape, r.over, r.shown) == ("compare", ("d", "b"), ("a", "b", "c", "d"))
    r = _reader()("what's the 4th one about", LISTED, _FakeRetrieval(PAPERS))
    assert (r.how, r.entry) == ("list entry", "d")


def test_after_a_list_more_asks_its_next_page_under_its_topic_and_filters():
    for q in (
        "show me the rest",
        "next 10 please",
        "any others?",
        "keep going",
        "more results",
        "what else is there",
    ):
        assert more_asked(q), q
    for q in ("more on transformers", "what else do they use?", "keep only the spotlights"):
        assert not more_asked(q) or q.startswith("keep"), q
    r = _reader()("show me the rest", LISTED, _FakeRetrieval(PAPERS))
    assert (r.shape, r.how, r.page, r.topic, r.filters.decision) == (
        "list",
        "more",
        1,
        "weather forecasting",
        "spotlight",
    )
    paged = [
        *LISTED,
        {"role": "user", "content": "next 10"},
        {"role": "assistant", "content": "…", "papers": ["e"]},
    ]
    r = _reader()("more please", paged, _FakeRetrieval(PAPERS))
    assert (r.page, r.topic) == (2, "weather forecasting")
    # a filter with "keep" is a filter of the list, not its next page
    r = _reader()("keep only the orals", LISTED, _FakeRetrieval(PAPERS))
    assert (r.how, r.page, r.filters.decision, r.topic) == ("over the list", 0, "oral", "weather forecasting")
    # no list: "more" is an ordinary question
    assert _reader()("show me the rest", [], _FakeRetrieval(PAPERS)).how != "more"


def test_after_a_list_picks_overviews_and_thanks_are_read_from_their_words():
    assert picked_by("Do any of them use LLMs?") == "LLMs"
    assert picked_by("are any training-free") == "training-free"
    assert picked_by("which use the Laplace approximation?") == "Laplace approximation"
    assert picked_by("which datasets do they use?") is None  # asks every paper
    assert picked_by("any papers on quantum computing?") is None  # a new list
    for q in (
        "main takeaways from these?",
        "what do these papers have in common",
        "sum up",
        "quick overview pls",
    ):
        r = _reader()(q, LISTED, _FakeRetrieval(PAPERS))
        assert (r.shape, r.over) == ("summary", ("a", "b", "c", "d")), q
    for q in ("thank u", "got it", "This is helpful, thanks a lot", "perfect, ty", "ok"):
        assert courtesy_only(q), q
    for q in ("what's V there", "thanks, what about the third one?", "more"):
        assert not courtesy_only(q), q


def test_after_a_list_what_about_x_and_more_x_papers_are_read_against_the_list():
    r = _reader()("what about cell microscopy?", LISTED, _FakeRetrieval(PAPERS))
    assert (r.shape, r.topic) == ("list", "cell microscopy")
    r = _reader()("more forecasting papers", LISTED, _FakeRetrieval(PAPERS))
    assert (r.how, r.page, r.topic) == ("more", 1, "weather forecasting")
    assert more_asked("more RL papers", "reinforcement learning") and not more_asked(
        "more papers on RL", "weather"
    )
    r = _reader()("what does 3 do?", LISTED, _FakeRetrieval(PAPERS))
    assert (r.how, r.entry) == ("list entry", "c")


def test_after_a_list_a_decision_word_alone_filters_it():
    r = _reader()("which were oral or spotlight?", LISTED, _FakeRetrieval(PAPERS))
    assert (r.shape, r.how, r.filters.decision, r.topic) == (
        "list",
        "over the list",
        "oral, spotlight",  # either
        "weather forecasting",
    )
    # a decision said after "remove" is one the user does not want
    r = _reader()("can u remove the rejected ones, i want only accepted", LISTED, _FakeRetrieval(PAPERS))
    assert (r.how, r.filters.decision) == ("over the list", "accepted")
    assert _reader()("oral cancer detection", [], _FakeRetrieval(PAPERS)).filters.decision is None


def test_a_filter_after_a_narrowing_and_a_comparison_keeps_the_lists_topic():
    chat = [
        *LISTED,
        {"role": "user", "content": "compare 1 and 2"},
        {"role": "assistant", "content": "…", "papers": ["a", "b", "c", "d"]},
        {"role": "user", "content": "only the ones about storms"},
        {"role": "assistant", "content": "…", "papers": ["b", "c"]},
    ]
    r = _reader()("which were orals?", chat, _FakeRetrieval(PAPERS))
    assert (r.shape, r.filters.decision, r.topic) == ("list", "oral", "storms in weather forecasting")


DECIDED_PAPERS = [
    Paper(
        "a", "FooNet segments cells in microscopy images", "f", 0, title="FooNet", decision="Accept (Oral)"
    ),
    Paper("b", "BarNet forecasts weather with graph networks", "f", 1, title="BarNet", decision="Reject"),
]
_ON_FOONET = [
    {"role": "user", "content": "What does FooNet do?"},
    {"role": "assistant", "content": "…", "shape": "explain", "cited": ["a"]},
]


@pytest.mark.parametrize(
    ("question", "history", "over", "asked"),
    [
        ("Was it accepted?", _ON_FOONET, ("a",), "accepted"),
        ("was it an oral? feels like it", _ON_FOONET, ("a",), "oral"),  # words its abstract lacks
        ("What decision did it get?", _ON_FOONET, ("a",), ""),
        ("Was BarNet a spotlight?", [], ("b",), "spotlight"),  # a name that is one paper's own
        # the papers the last answer cited: "both", "which one"
        (
            "were both accepted?",
            [_ON_FOONET[0], {**_ON_FOONET[1], "cited": ["a", "b"]}],
            ("a", "b"),
            "accepted",
        ),
        # after a comparison (its papers go with it), and an entry of a list
        (
            "Which of the two was an oral?",
            [{"role": "assistant", "papers": ["b", "a"], "shape": "compare"}],
            ("b", "a"),
            "oral",
        ),
        (
            "was the second one accepted?",
            [{"role": "assistant", "papers": ["b", "a"], "shape": "list"}],
            ("a",),
            "accepted",
        ),
    ],
)
def test_a_decision_asked_of_the_papers_in_the_chat_is_read_as_one(question, history, over, asked):
    r = _reader()(question, history, _FakeRetrieval(DECIDED_PAPERS))
    assert (r.shape, r.over, r.decision) == ("decision", over, asked)


@pytest.mark.parametrize(
    ("question", "history"),
    [
        ("How does it decide which cells are accepted as segmented?", _ON_FOONET),  # its abstract's words
        ("Does it use rejection sampling?", _ON_FOONET),
        ("Was it accepted?", []),  # nothing in the chat
        # after a list, "which were orals?" filters it (the list's topic asked again)
        (
            "which were orals?",
            [
                {"role": "user", "content": "papers on cells"},
                {"role": "assistant", "papers": ["a", "b"], "shape": "list"},
            ],
        ),
    ],
)
def test_other_questions_with_decision_words_are_not_decision_questions(question, history):
    assert _reader()(question, history, _FakeRetrieval(DECIDED_PAPERS)).shape != "decision"
