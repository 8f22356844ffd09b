"""The shared text utilities: the stopword list, stems, content words, sentence spans, named terms,
acronym expansions, LaTeX flattening and negation."""

import pytest

from rag.text import (
    PAPER_WORDS,
    Spelling,
    claim_rank,
    content_words,
    flatten,
    initials_pattern,
    key_terms,
    negated,
    nltk_stopwords,
    retyped,
    sentence_spans,
    stem,
    stopwords,
    typo_of,
    without_venue,
)


def test_the_stopword_list_is_the_one_llama_index_bundles():
    from llama_index.core.utils import globals_helper

    assert nltk_stopwords() == frozenset(globals_helper.stopwords)
    assert {"what", "does", "do", "the"} <= nltk_stopwords()
    assert stopwords() == nltk_stopwords() | PAPER_WORDS
    assert "paper" in stopwords() and "paper" not in nltk_stopwords()


def test_stems_and_content_words():
    assert stem("Transformers") == stem("transformer")
    assert stem("L0") == "l0"  # a token with a digit is kept as written
    assert content_words("What does the proposed method do with Transformers?") == {stem("transformers")}


def test_key_terms_are_numbers_and_named_methods():
    assert key_terms("Celcomen reaches 0.93 with GPT-4 and LoRA on the DATA split") == {
        "0.93",
        "gpt-4",
        "lora",
        "data",
        "4",
    }
    assert key_terms("a plain sentence with nothing named") == set()


def test_flatten_drops_latex_noise():
    assert flatten("$(L_0,L_1)$-smoothness") == "(l0,l1)-smoothness"
    assert flatten(r"\emph{Bold} claim") == " bold claim"


def test_negation_ignores_not_only():
    assert negated("It doesn't scale") and negated("with no labels")
    assert not negated("not only fast but also exact")
    assert not negated("a no-regret learner, as good if not better than the rest")


@pytest.mark.parametrize(
    "text, parts",
    [
        (
            "We use e.g. GNNs as in Zhang et al. (2020). Results hold. Accuracy is 0.93 on v2.1 data!",
            [
                "We use e.g. GNNs as in Zhang et al. (2020).",
                "Results hold.",
                "Accuracy is 0.93 on v2.1 data!",
            ],
        ),
        # sentences run together with no space still split; an initial or "e.g." before a capital does not
        (
            "It is slow during attention calculation.This leads to waste. See e.g.GPT-4 and J.Smith.",
            [
                "It is slow during attention calculation.",
                "This leads to waste.",
                "See e.g.GPT-4 and J.Smith.",
            ],
        ),
        # "v.s." is how some abstracts write "vs." (a quote cut there starts mid-bracket)
        (
            "It is 200x faster (10 v.s. 2000 steps) than before. It holds.",
            ["It is 200x faster (10 v.s. 2000 steps) than before.", "It holds."],
        ),
    ],
)
def test_sentence_spans_keep_abbreviations_together(text, parts):
    assert [text[a:b] for a, b in sentence_spans(text)] == parts


@pytest.mark.parametrize(
    "acronym, text, spelled",
    [
        ("rlhf", "reinforcement learning from human feedback", True),
        ("fem", "the finite element method", True),  # "method" is a paper word, yet a name's word
        ("sam", "sharpness-aware minimization", True),
        ("ibm", "information beyond the matrix", False),  # a preposition stands for no letter
        ("ibm", "trained in both modes", False),
        # inside a hyphenated compound a function word is a part of the name
        ("cot", "chain-of-thought prompting", True),
        ("ood", "detecting out-of-distribution inputs", True),
        ("icl", "in-context learning", True),
        ("sota", "state-of-the-art results", True),
        ("ood", "out of distribution", False),
        ("tar", "state-of-the-art rlhf", False),  # a name does not start inside a compound
    ],
)
def test_an_acronym_is_spelled_by_content_words(acronym, text, spelled):
    assert bool(initials_pattern(acronym).search(text)) is spelled


def test_a_slip_is_one_letter_from_a_function_word():
    from rag.text import slip

    assert all(map(slip, ["wheter", "wich", "teh", "thier"]))
    assert not any(map(slip, ["whether", "histopathology", "vehicle", "neural", "at"]))


def test_a_mistyped_word_is_guessed_as_the_most_used_written_word_one_edit_away():
    from collections import Counter

    written = Counter({"diffusion": 40, "diffusions": 2, "transformer": 9, "graph": 30, "grape": 1})
    written.update({"QLoRA": 50, "Gaudi2": 9, "Lizard": 5, "Celcomen": 4, "celcomen": 1})
    sp = Spelling(written)
    assert sp.guess("difusion") == "diffusion"  # one letter dropped
    assert sp.guess("tranformer") == "transformer"
    assert sp.guess("diffusion") is None  # not mistyped
    assert sp.guess("knitting") is None  # nothing one edit away
    assert sp.guess("grapj") == "graph"  # a neighbouring key
    assert sp.guess("grapes") is None  # "grape" is written once: too weak a guess
    assert sp.guess("grap") is None  # too short to guess
    assert Spelling(Counter({"qwen2": 5})).guess("qwen3") is None  # another version, not a typo
    assert sp.guess("Gaudi") is None  # nor is adding a version number
    assert sp.guess("Wizard") is None  # a typo keeps the first letter
    assert sp.guess("Quora") is None  # one capital typed, four written: another name
    assert sp.guess("Celcomenn") == sp.guess("celcomenn") == "Celcomen"  # as the abstracts mostly write it
    assert sp.guess("Tranformer") is None  # a capitalised word is a name: only a name is guessed for it


def test_retyped_mends_whole_words_as_typed():
    fixes = {"transcriptomcs": "transcriptomics", "Celcomenn": "Celcomen"}
    assert retyped("Does Celcomenn use spatial transcriptomcs?", fixes) == (
        "Does Celcomen use spatial transcriptomics?"
    )
    # part of a longer word or of a hyphenated name is left alone
    assert retyped("Celcomenn-2 and xtranscriptomcs", fixes) == "Celcomenn-2 and xtranscriptomcs"


def test_a_typo_is_a_slip_of_the_fingers_not_any_one_edit():
    slips = [("speculatve", "speculative"), ("celcomenn", "celcomen"), ("protien", "protein")]
    slips += [("flashatention", "flashattention"), ("tramsformer", "transformer"), ("diffusiom", "diffusion")]
    assert all(typo_of(t, m) for t, m in slips)
    # a real name one edit from a word is not mistyped: an ending added, a far key, a stray letter
    others = [("imagen", "image"), ("wavenet", "wavelet"), ("glide", "guide"), ("fibre", "fire")]
    others += [("craiyon", "crayon"), ("storey", "store"), ("speculative", "speculative")]
    assert not any(typo_of(t, m) for t, m in others)


def test_the_venue_every_paper_shares_is_no_part_of_a_question():
    assert without_venue("Which ICLR 2025 papers study grokking?") == "Which papers study grokking?"
    assert without_venue("orals at ICLR’25 on RLHF") == "orals on RLHF"
    assert without_venue("the benchmark paper from ICLR 2025 — how big is it?") == (
        "the benchmark paper — how big is it?"
    )
    assert without_venue("ICLR 2025's best papers on X") == "best papers on X"
    assert without_venue("ICLR-2025 orals on X") == "orals on X"
    # another year, a name that starts with it, or nothing else left: kept as written
    assert without_venue("ICLR 2024 papers on X") == "ICLR 2024 papers on X"
    assert without_venue("ICLRNet results") == "ICLRNet results" and without_venue("ICLR 2025") == "ICLR 2025"


def test_unbraced_drops_only_the_braces_left_unmatched_outside_math():
    from rag.text import unbraced

    assert unbraced("We introduce SRSA} (Skill Retrieval).") == "We introduce SRSA (Skill Retrieval)."
    assert unbraced("generative tasks\\textblue{, with quality.") == "generative tasks, with quality."
    kept = "We use \\textbf{SRSA}, $\\{a\\}$ and $x^{2}$ in {both} cases."
    assert unbraced(kept) == kept


@pytest.mark.parametrize(
    ("sentence", "rank"),
    [
        ("In this paper, we propose FooNet, a sparse transformer.", 2),
        ("Here we develop Proteina, a flow-based generator.", 2),
        ("Towards closing this gap, we establish an iteration complexity of order d/eps.", 1),
        ("Improving our understanding of diffusion models has attracted a lot of interest.", 0),
        ("Weather forecasting matters.", 0),  # "we" as a word, not a prefix
    ],
)
def test_a_claim_is_ranked_above_background(sentence, rank):
    assert claim_rank(sentence) == rank
