"""rag/grounding/gaps.py: what a paper lacks of a described topic, and what a follow-up asks of its paper."""

from rag.grounding.gaps import _absent_runs, missing_aspects, run_gains, unknown_words

PRECONDITIONER = (
    "Graph Neural Preconditioners. We train a graph neural network to act as a preconditioner for "
    "iterative solvers of sparse linear systems. The learned preconditioner speeds up convergence."
)


def test_absent_runs_group_the_words_a_paper_never_uses():
    runs = _absent_runs("graph neural networks for weather and climate forecasting", PRECONDITIONER)
    assert runs == [("weather and climate forecasting", "graph neural networks for")]
    # singular/plural and acronym spellings count as used
    assert _absent_runs("GNN preconditioners for linear systems", PRECONDITIONER) == []


def test_a_modifier_goes_with_its_absent_head():
    text = "We apply machine learning to weather forecasting with graph networks."
    assert _absent_runs("machine unlearning for weather forecasting", text) == [
        ("unlearning", "machine for weather forecasting"),
        ("machine unlearning", "for weather forecasting"),
    ]
    # a word after an absent one is not its modifier
    assert _absent_runs("unlearning machine models", "Machine models are trained.") == [
        ("unlearning", "machine models")
    ]


def test_missing_aspects_flags_the_half_of_a_combination_a_paper_lacks(judge):
    sents = [x.strip() for x in PRECONDITIONER.split(".") if x.strip()]
    paper = [(PRECONDITIONER, judge.vectors(sents))]
    assert missing_aspects("graph neural networks for weather forecasting", paper, judge.vectors, 0.06) == [
        ["weather forecasting"]
    ]
    # a paraphrase of what the paper does, with words it never uses, is not a gap
    assert missing_aspects(
        "a neural network that makes iterative solvers converge faster", paper, judge.vectors, 0.06
    ) == [[]]
    assert missing_aspects(
        "learned preconditioners for linear solvers on graphs", paper, judge.vectors, 0.06
    ) == [[]]


def test_run_gains_say_how_much_closer_a_part_comes_without_the_words_a_paper_lacks(judge):
    """The caveat model's `gain` signal: an asked aspect the paper lacks moves the part far, a paraphrase
    little, and a part in the paper's own words has no absent run at all."""
    sents = [x.strip() for x in PRECONDITIONER.split(".") if x.strip()]
    paper = [(PRECONDITIONER, judge.vectors(sents))]
    (lacking,) = run_gains("graph neural networks for weather forecasting", paper, judge.vectors)
    (paraphrase,) = run_gains(
        "a neural network that makes iterative solvers converge faster", paper, judge.vectors
    )
    assert dict(lacking)["weather forecasting"] >= 0.06 > max(g for _, g in paraphrase)
    assert run_gains("graph neural preconditioners for sparse linear systems", paper, judge.vectors) == [[]]


def test_a_task_swapped_for_another_is_lacking_however_little_it_moves_the_vector(judge):
    text = (
        "We propose an interactive state space model for 3D indoor object detection on point clouds. "
        "System states serve as queries and improve AP on ScanNet."
    )
    paper = [(text, judge.vectors([x.strip() for x in text.split(".") if x.strip()]))]
    swapped = (
        "a state space model whose states are queries for 3D indoor semantic segmentation of point clouds"
    )
    assert missing_aspects(swapped, paper, judge.vectors, 0.06) == [["semantic segmentation"]]
    # the same task in other words is no swap
    assert missing_aspects(
        "a state space model for detecting objects in 3D point clouds", paper, judge.vectors, 0.06
    ) == [[]]


def test_a_mistyped_function_word_no_abstract_uses_is_no_part_of_the_topic(judge):
    topic = "graph networks wheter they forecast weather"
    known = lambda w: w.lower() not in {"wheter", "histopathology"}  # noqa: E731 - what the index has seen
    assert "networks wheter they forecast weather" in [r for r, _ in _absent_runs(topic, PRECONDITIONER)]
    assert [r for r, _ in _absent_runs(topic, PRECONDITIONER, known)] == ["forecast weather"]
    # a real word no abstract uses is still lacking: a small index has not seen every topic
    assert [r for r, _ in _absent_runs("histopathology preconditioners", PRECONDITIONER, known)] == [
        "histopathology"
    ]


def test_frame_verbs_are_not_part_of_what_is_described():
    assert _absent_runs("studies graph neural networks for weather", PRECONDITIONER) == [
        ("weather", "studies graph neural networks for")
    ]


def test_unknown_words_are_the_topics_words_no_abstract_uses_in_any_spelling():
    vocab = {"pattern", "generation", "diffusion", "model", "optimization", "behavior", "network"}

    def known(w: str) -> bool:
        return w.lower().rstrip("s") in vocab

    assert unknown_words("knitting pattern generation with diffusion models", known) == ["knitting"]
    # British spellings are the abstracts' American ones; frame and function words are no part of a topic
    assert unknown_words("optimisation of networks and their behaviour", known) == []
    assert unknown_words("which studies crochet?", known) == ["crochet"]
    assert unknown_words("diffusion models", known) == []
    # symbols the index drops are no evidence of absence; a mistyped function word is no part of the topic
    assert unknown_words("C++ and Q&A generation wheter diffusion", known) == []
    # a contraction is its function word, with either apostrophe; a quoted word is read without its quotes
    assert unknown_words("what’s new in diffusion that can't model? they’re “knitting”", known) == [
        "knitting"
    ]
    assert unknown_words("who's doing the network's generation", known) == []


def test_a_task_asked_of_a_paper_doing_another_is_a_swap():
    from rag.grounding.gaps import swapped_task, tasks

    assert tasks("Text-to-image synthesis and object detectors") == {"generation", "detection"}
    detection = "An interactive state space model for 3D object detection."
    assert swapped_task("semantic segmentation", detection)
    assert not swapped_task("image generation", "A text-to-image synthesis model.")  # the same task
    assert not swapped_task("semantic segmentation", "A new state space model.")  # no task named: unknown
    assert not swapped_task("interactive queries", detection)  # no task asked
