"""eval/defects.py: the eval's own check of cited sentences, apart from the product's judge."""

import pytest

from eval.defects import answer_defects, defects

SOURCE = [
    "We build a benchmark of 135 distinct chaotic dynamical systems and $10^8$ timepoints.",
    "Foundation models forecast them zero-shot.",
]


@pytest.mark.parametrize(
    "sentence, kind",
    [
        ("We build a benchmark of 135 distinct chaotic dynamical systems. [1]", None),
        (
            "135 distinct chaotic dynamical systems and timepoints across 135 distinct chaotic dynamical systems.",
            "repeated",
        ),
        ("of 135 distinct chaotic dynamical systems.", "fragment"),
        ("The benchmark uses the method of.", "fragment"),
        ("The benchmark has 9 out of 10 systems that support this idea.", "not in source"),
        ("Foundation models forecast them with GPT-4.", "not in source"),
        ("Foundation models forecast them ($10^8.", "fragment"),
    ],
)
def test_defects_of_a_cited_sentence(sentence, kind):
    found = defects(sentence, SOURCE)
    assert (kind is None and not found) or any(f.startswith(kind) for f in found), found


def test_a_papers_title_may_lead_a_quoted_sentence():
    assert not defects(
        "Chaos: We build a benchmark of 135 distinct chaotic dynamical systems.", SOURCE, ["Chaos"]
    )
    assert defects("Chaos: we build a benchmark.", SOURCE, ["Chaos"])  # the sentence itself starts mid-clause


def test_a_row_is_checked_against_the_sentences_its_spans_point_at():
    text = " ".join(SOURCE)
    a, b = 0, len(SOURCE[0])
    row = {
        "sources": {"1": {"title": "Chaos", "text": text}},
        "sentences": [
            {"text": SOURCE[0], "citations": [1], "spans": [[1, a, b]]},
            {"text": "Foundation models forecast them zero-shot.", "citations": [1], "spans": [[1, a, b]]},
            {"text": "Uncited words, never checked", "citations": [], "spans": []},
        ],
    }
    bad = answer_defects(row)
    assert [x["text"] for x in bad] == ["Foundation models forecast them zero-shot."]


def test_a_decimal_before_a_closing_bracket_is_no_enumeration():
    """ "(+5.3)" is balanced; "1) …, 2) …" enumerates (its ")" has no "(")."""
    quoted = "It improves AP on ScanNet V2 (+5.3) and SUN RGB-D (+3.2) datasets."
    assert defects(quoted, [quoted]) == []
    listed = "It has two parts: 1) a planner and 2) a critic."
    assert defects(listed, [listed]) == []


def test_a_balanced_bracket_after_a_symbol_is_no_enumeration():
    quoted = "It outperforms base models (43.4% → 46.3%, Pass@64)."
    assert defects(quoted, [quoted]) == []
    assert defects("It outperforms base models (43.4% → 46.3%, Pass@64.", [quoted])  # the ")" lost


def test_a_repeat_the_abstract_itself_makes_is_quoted_as_written():
    quoted = "It gains 2.6% on CIFAR datasets in the PGD case and 1.7% on CIFAR datasets in the PGD case."
    assert defects(quoted, [quoted]) == []
    assert any(d == "repeated run" for d in defects(quoted, [quoted[:48]]))  # a repeat the source lacks


def test_a_title_label_repeated_by_its_sentence_is_no_repeat():
    source = ["We introduce Discrete Diffusion with Planned Denoising, a framework with a planner."]
    label = "Discrete Diffusion with Planned Denoising"
    assert defects(f"{label}: {source[0]}", source + [label], [label]) == []
