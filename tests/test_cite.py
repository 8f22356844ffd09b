"""The support judge, citation binding, and the clean-sentence gate for generated sentences."""

import pytest

from rag.grounding.cite import bind, clean_claim, split_markers
from rag.types import Hit, Paper
from tests.conftest import CEL, RL


def best(judge, claim, paper, polarity=True):
    ev = judge.evidence([Hit(paper, 1.0)])
    return float(judge.scores(claim, ev, polarity=polarity).max())


def test_split_markers():
    assert split_markers("Celcomen is a GNN [1][3] .") == ("Celcomen is a GNN.", [1, 3])
    assert split_markers("Both do [1, 2].") == ("Both do.", [1, 2])


def test_judge_on_hand_made_pairs(judge):
    supported = best(judge, "Celcomen is a generative graph neural network for spatial transcriptomics.", CEL)
    paraphrased = best(
        judge, "The model is validated using data from glioblastoma and fetal spleen tissue.", CEL
    )
    wrong_number = best(judge, "Celcomen reaches 71% accuracy.", CEL)
    right_number = best(judge, "Celcomen reaches 93% accuracy.", CEL)
    unrelated = best(judge, "The transformer is pretrained on ImageNet with a contrastive loss.", CEL)
    from rag.settings import Settings

    t = Settings().grounding.support_threshold
    assert supported >= t and paraphrased >= t and right_number >= t
    assert wrong_number < t and unrelated < t
    assert right_number > wrong_number > 0


def test_named_terms_match_latex_in_the_evidence(judge):
    fl = Paper("P3", "We analyze local steps under $(L_0,L_1)$-smoothness and prove convergence.", "a.txt", 2)
    assert best(judge, "The analysis assumes (L0,L1)-smoothness.", fl) >= 2 * best(
        judge, "The analysis assumes (L2,L3)-smoothness.", fl
    )


def test_judge_rejects_a_claim_that_negates_its_evidence(judge):
    from rag.settings import Settings

    t = Settings().grounding.support_threshold
    assert best(judge, "Celcomen is a generative graph neural network for spatial transcriptomics.", CEL) >= t
    assert (
        best(judge, "Celcomen is not a generative graph neural network for spatial transcriptomics.", CEL) < t
    )
    free = Paper("P3", "Our probe does not require labels. It is fast.", "a.txt", 2, title="LabelFree")
    assert best(judge, "The probe does not require labels.", free) >= t
    assert best(judge, "The probe requires labels.", free) < t
    # a question is not a claim: "does it need labels?" is answered by "it does not"
    assert best(judge, "Does the probe require labels?", free, polarity=False) > best(
        judge, "Does the probe require labels?", free, polarity=True
    )


def test_binding_reattributes_wrong_markers_and_drops_unsupported(judge):
    hits = [Hit(CEL, 1.0), Hit(RL, 0.5)]
    raw = (
        "MR.Q uses model-based representations for continuous control [1]. "
        "Celcomen is a generative graph neural network [1][7]. "
        "It was trained on 5,000 GPUs in Antarctica [2]."
    )
    text, sents, cites = bind(raw, hits, judge, threshold=0.45)
    assert [s.supported for s in sents] == [True, True, False]
    # the first sentence cited [1] (Celcomen) but only MR.Q supports it -> re-attributed
    by_n = {c.n: c for c in cites}
    assert by_n[sents[0].citations[0]].paper_id == "P2"
    assert by_n[sents[1].citations[0]].paper_id == "P1"
    assert sents[2].citations == []  # unsupported: its marker is removed
    assert "[7]" not in text and "[2]" not in text.split("Antarctica")[1]
    # quotes are real sentences of the abstract, with offsets that round-trip
    for c in cites:
        paper = CEL if c.paper_id == "P1" else RL
        assert paper.text[c.quote_start : c.quote_end] == c.quote
    assert len(cites) == 2 and [c.n for c in cites] == [1, 2]


def test_drop_unsupported_setting(judge):
    hits = [Hit(CEL, 1.0)]
    _, sents, _ = bind(
        "Celcomen is a graph neural network [1]. Bananas are yellow [1].",
        hits,
        judge,
        0.45,
        drop_unsupported=True,
    )
    assert [s.text for s in sents] == ["Celcomen is a graph neural network."]


def test_bound_sentences_carry_the_abstract_sentence_that_supports_them(judge):
    _, sents, _ = bind("Celcomen is a generative graph neural network [1].", [Hit(CEL, 1.0)], judge, 0.45)
    ((n, a, b),) = sents[0].spans
    assert n == 1 and "graph neural network" in CEL.text[a:b]


EVIDENCE = [
    "MorphoDiff is trained on 3 cell lines and predicts morphology under 135 perturbations.",
    "It outperforms the GAN baseline on FID.",
]


@pytest.mark.parametrize(
    "sentence, clean",
    [
        ("MorphoDiff is trained on 3 cell lines.", True),
        ("MorphoDiff outperforms the GAN baseline on FID.", True),
        ("MorphoDiff is trained on 5 cell lines.", False),  # a number the evidence lacks
        ("MorphoDiff beats StyleGAN on FID.", False),  # a name the evidence lacks
        ("MorphoDiff predicts morphology and reduces toxicity in patients.", False),  # words it lacks
        ("trained on 3 cell lines and predicts morphology.", False),  # starts mid-clause
        ("MorphoDiff is trained on 3 cell lines and the", False),  # cut off
        ("MorphoDiff is trained on 3 cell lines and 3 cell lines and more.", False),  # a repeated run
    ],
)
def test_a_generated_sentence_is_shown_cited_only_when_clean_and_contained(sentence, clean):
    assert clean_claim(sentence, EVIDENCE) is clean
