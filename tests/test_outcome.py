"""rag.grounding.outcome: one decision per question, with fakes (a word-overlap judge, hand-made abstracts):
refuse only when nothing is relevant; a caveat with a code for a missing name or an unstated part; every
other part answered from its own best sentences."""

import pytest

from rag.grounding.cite import Judge
from rag.grounding.evidence import select
from rag.grounding.outcome import NOTHING_RELEVANT, decide
from rag.reading.reader import Reader
from rag.types import Hit, Paper
from tests.conftest import FakeEmbedder, make_settings

PAPERS = [
    Paper(
        "a",
        "We introduce FooNet, a diffusion model of cell morphology. FooNet is trained on 12 cell lines "
        "from three microscopes. It predicts morphology under unseen drug perturbations.",
        "f",
        0,
        title="FooNet: diffusion for cell painting",
    ),
    Paper(
        "b",
        "We present BarNet, a graph network for weather forecasting. BarNet is evaluated on 40 benchmark "
        "tasks. It beats numerical models at ten-day lead times.",
        "f",
        1,
        title="BarNet: graph weather forecasting",
    ),
    Paper(
        "c",
        "We study sparse attention for long documents. Our kernel is faster than dense attention on GPUs.",
        "f",
        2,
        title="Sparse attention for long documents",
    ),
]


def settings(**kw):
    base = dict(
        context_papers=3,
        focus_broad_ratio=0.7,
        # nothing relevant when the best sentence scores under about 0.1
        refuse_model={"relevance": (0.0, 1.0, -40.0)},
        refuse_intercept=4.0,
        refuse_bar=0.5,
        # a part is not stated when its words' share in its papers plus its best score is under about 0.7
        caveat_model={"cover": (0.0, 1.0, -10.0), "score": (0.0, 1.0, -10.0)},
        caveat_intercept=7.0,
        caveat_bar=0.5,
        part_sentences=2,
        part_share=0.85,
        number_window=8,
        contribution_bonus=0.15,
        list_aspect_gain=0.06,
        condense_check=False,
        condense_cache=8,
    )
    return make_settings(**{**base, **kw})


JUDGE = Judge(FakeEmbedder(), cos_weight=0.0)  # content-word overlap only: deterministic


def idf(word):
    return 1.0


def ask(question, order=("a", "b", "c"), known=lambda w: False, **kw):
    s = settings(**kw)
    reading = Reader(s.conversation, lambda: idf)(question, None, lambda q, f: [])
    papers = {p.paper_id: p for p in PAPERS}
    hits = [Hit(papers[i], 1.0) for i in order]
    evset = select(reading.query, hits, JUDGE)
    return reading, decide(reading, evset, JUDGE, idf, known, s)


def ask_with(extra, question, **kw):
    """`ask` with one more paper, ranked first."""
    PAPERS.append(extra)
    try:
        return ask(question, order=(extra.paper_id, "a", "b"), **kw)
    finally:
        PAPERS.remove(extra)


def quoted(outcome):
    return [e.text for pa in outcome.parts for e in pa.quotes]


def test_nothing_relevant_is_the_only_refusal():
    _, out = ask("What is the capital of France?")
    assert out.refused == NOTHING_RELEVANT


def test_a_missing_detail_is_a_caveat_and_the_rest_is_answered():
    reading, out = ask("How does FooNet predict morphology, and how many GPUs does it train on?")
    assert out.refused is None
    assert [p.number for p in reading.parts] == [None, "gpus"]
    first, second = out.parts
    assert first.caveat is None and any("predicts morphology" in t for t in quoted(out))
    assert second.caveat is not None and second.caveat.code == "no_number"
    assert second.caveat.part == 1 and "FooNet" in second.caveat.text
    assert [c.code for c in out.caveats] == ["no_number"]
    # "how big is it?" asks "how big": the line says so, not "no number for big"
    _, out = ask("How does FooNet predict morphology, and how big is it?")
    (c,) = [c for c in out.caveats if c.code == "no_number"]
    assert c.text.endswith("gives no number for “how big”.")


def test_a_number_stated_answers_its_part_with_the_sentence_that_states_it():
    _, out = ask("How many cell lines is FooNet trained on?")
    assert not out.caveats
    assert quoted(out) == ["FooNet is trained on 12 cell lines from three microscopes."]


def test_a_number_in_the_parts_best_sentence_answers_it_in_words_of_its_own():
    """ "How fast is ZapNet?": its best sentence gives the number as a speed-up, far from the name; that
    states it (no `no_number` signal), and it is the sentence quoted."""
    zap = Paper(
        "e",
        "We present ZapNet for speech. ZapNet decodes speech in parallel rather than with beam search, and "
        "our experiments show that this makes decoding fast: a 10x speed-up.",
        "f",
        4,
        title="ZapNet",
    )
    _, out = ask_with(zap, "How fast is ZapNet?")
    (part,) = out.parts
    assert part.signals["no_number"] == 0.0
    assert [e.text for e in part.quotes][-1].endswith("a 10x speed-up.")
    # "how large" asks a measure, not about a "large" the abstract must hold: no asked thing goes uncovered
    _, out = ask("How large are the FooNet experiments?")
    assert out.parts[0].part.number == "large" and out.parts[0].signals["thing"] == 1.0


def test_a_number_is_looked_for_next_to_what_is_counted():
    """ "How many models": the counted noun is what a number must stand near, though "model" frames other
    questions; "how much data" is near "dataset" (a stem's start)."""
    weak = Paper(
        "w",
        "We study the weakest link of language models on cross-skill tasks. Across 58 scores from 17 models, "
        "most fall below the single skills. The suite is built on a dataset of 1,400 prompts.",
        "f",
        5,
        title="The weakest link",
    )
    _, many = ask_with(weak, "How many models does the weakest link study test?")
    _, data = ask_with(weak, "How much data is the weakest link suite built on?")
    _, none = ask_with(weak, "How many GPUs does the weakest link study use?")
    assert many.parts[0].signals["no_number"] == 0.0 and not many.caveats
    assert "from 17 models" in quoted(many)[0]
    assert data.parts[0].signals["no_number"] == 0.0
    assert none.parts[0].signals["no_number"] == 1.0


def test_what_a_paper_is_is_answered_by_the_sentence_saying_what_it_develops():
    prot = Paper(
        "p",
        "Protein design is hard. Proteina is trained on 21 million synthetic protein structures. "
        "Here, we develop Proteina, a flow model for protein backbones.",
        "f",
        6,
        title="Flow models for protein backbones",
    )
    _, out = ask_with(prot, "What is Proteina?", part_sentences=1)
    assert quoted(out) == ["Here, we develop Proteina, a flow model for protein backbones."]


class BagEmbedder:
    """Unit vectors of word counts (hashed into 4096 slots): a text nearer in words is nearer in cosine."""

    def encode(self, texts, progress=False, bulk=False):
        import zlib

        import numpy as np

        from rag.text import content_words

        out = np.zeros((len(texts), 4096), np.float32)
        for i, t in enumerate(texts):
            for w in content_words(t):
                out[i, zlib.crc32(w.encode()) % 4096] += 1.0
        return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-9)


def test_a_part_the_paper_is_not_about_moves_it_far_and_gets_a_caveat():
    """The `gain` signal: how much closer the part comes to its paper without the words the paper never
    uses. Asking FooNet about weather forecasting is a caveat; asking about its own cell lines is not."""
    s = settings(caveat_model={"gain": (0.0, 1.0, 60.0)}, caveat_intercept=-6.0)  # a caveat from gain 0.1
    judge = Judge(BagEmbedder(), cos_weight=0.0)
    papers = {p.paper_id: p for p in PAPERS}
    out = {}
    for q in (
        "How well does FooNet do at ten-day weather forecasting?",
        "Which cell lines is FooNet trained on?",
    ):
        reading = Reader(s.conversation, lambda: idf)(q, None, lambda q, f: [])
        evset = select(reading.query, [Hit(papers["a"], 1.0), Hit(papers["c"], 0.5)], judge)
        out[q] = decide(reading, evset, judge, idf, lambda w: True, s)
    far, near = out.values()
    assert far.parts[0].signals["gain"] > 0.1 and [c.code for c in far.caveats] == ["not_stated"]
    assert "weather forecasting" in far.caveats[0].text
    assert near.parts[0].signals["gain"] == 0.0 and not near.caveats


def test_each_part_is_answered_from_the_paper_it_names():
    _, out = ask(
        "How many cell lines does FooNet use, compared with the number of tasks BarNet is evaluated on?"
    )
    assert out.refused is None and not out.caveats
    texts = " ".join(quoted(out))
    assert "12 cell lines" in texts and "40 benchmark tasks" in texts
    assert out.focus == {1, 2}


def test_a_dataset_another_paper_names_brings_that_paper_into_no_part():
    """ "What accuracy does FooNet reach on ImageNet-21K?": ImageNet-21K is a dataset the second paper trains
    on, not its name; the part stays FooNet's, and FooNet's abstract gives no accuracy."""
    other = Paper(
        "d", "We present QuxNet. QuxNet reaches 88.1% accuracy on ImageNet-21K.", "f", 3, title="QuxNet"
    )
    s = settings()
    reading = Reader(s.conversation, lambda: idf)(
        "What accuracy does FooNet reach on ImageNet-21K?", None, lambda q, f: []
    )
    evset = select(reading.query, [Hit(PAPERS[0], 1.0), Hit(other, 1.0)], JUDGE)
    out = decide(reading, evset, JUDGE, idf, lambda w: False, s)
    assert [pa.papers for pa in out.parts] == [[1]]
    assert not any("88.1%" in t for t in quoted(out))


def test_a_name_no_abstract_mentions_is_a_caveat_not_a_refusal():
    _, out = ask("How does FooNet compare with QuuxNet on cell morphology?")
    assert out.refused is None
    assert [c.code for c in out.caveats] == ["term_absent"]
    assert out.caveats[0].text == "No indexed abstract mentions “QuuxNet”."
    _, out = ask("Does FooNet beat QuuxNet?", known=lambda w: True)  # indexed elsewhere, not retrieved
    assert out.caveats[0].text == "None of the closest abstracts mentions “QuuxNet”."


def test_one_of_two_offered_names_is_enough():
    _, out = ask("Is FooNet trained with QuuxNet or BarNet?")
    assert not [c for c in out.caveats if c.code == "term_absent"]


def test_an_unstated_part_is_named_in_the_users_words():
    _, out = ask("Which optimizer and learning schedule does FooNet train with?")
    (c,) = out.caveats
    assert c.code == "not_stated" and "optimizer" in c.text and "schedule" in c.text


@pytest.mark.parametrize("bar, refused", [(0.99, None), (0.0, NOTHING_RELEVANT)])
def test_the_refusal_is_one_bar_on_the_fitted_model(bar, refused):
    _, out = ask("How does FooNet predict morphology?", refuse_bar=bar)
    assert out.refused == refused
    assert 0.0 <= out.signals["p_nothing"] <= 1.0


@pytest.mark.parametrize(
    "question, other",
    [
        ("Welche Arbeiten untersuchen FooNet für Zellen?", True),
        ("哪篇论文研究了细胞形态?", True),
        ("How many cell lines is FooNet trained on?", False),
        ("FooNet cell lines microscopes", False),  # terse English: the index knows its words
        ("Was macht FooNet genau und welche Daten nutzt es?", True),  # "was" is German too
        ("what's the main idea behind BarNet tokenization?", False),  # two function words, one unknown name
        ("knitting pattern generation", False),  # a bare topic: English words the index does not use
    ],
)
def test_a_question_in_another_language_is_said_to_be_so(question, other):
    known = lambda w: w.lower() in {"foonet", "cell", "cells", "lines", "microscopes"}  # noqa: E731
    _, out = ask(question, known=known)
    codes = [c.code for c in out.caveats]
    assert ("language" in codes) is other
    if other:
        assert "term_absent" not in codes  # its words are no missing names


@pytest.mark.parametrize("which_bar, shared_bar, caveated", [(0.0, 1.0, True), (1.0, 0.0, False)])
def test_a_description_is_decided_by_its_own_caveat_model(which_bar, shared_bar, caveated):
    """A "which paper" description's part is caveated by the description model and its bar alone; the
    shared model decides the other shapes."""
    kw = dict(which_caveat_model={"cover": (0.0, 1.0, -10.0)}, which_caveat_intercept=7.0)
    reading, out = ask(
        "Which paper predicts cell morphology under drug perturbations?",
        which_caveat_bar=which_bar,
        caveat_bar=shared_bar,
        **kw,
    )
    assert reading.shape == "which" and out.refused is None
    assert [c.code for c in out.caveats] == (["partial_match"] if caveated else [])
    _, out = ask("How does FooNet predict morphology?", which_caveat_bar=0.0, caveat_bar=1.0, **kw)
    assert out.caveats == []


def test_an_unknown_cosine_adds_nothing_to_the_refusal():
    """Hits with no dense-side cosine (found by the lexical side only) are not read as a cosine of 0."""
    model = {"relevance": (0.0, 1.0, -40.0), "cosine": (0.5, 0.1, -5.0)}
    _, out = ask("How does FooNet predict morphology?", refuse_model=model)
    assert out.refused is None and out.signals["cosine"] == 0.5
