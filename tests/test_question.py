"""Question analysis: named terms, answerability (refusal) and the sources a question is about."""

import numpy as np
import pytest

from rag.quantity import quantity_heads
from rag.question import answerability, best_covered, focus, idf_coverage
from rag.types import Hit, Paper
from tests.conftest import CEL, DESCRIBED, DESCRIPTION, NEAR, RL


def test_answerability_needs_the_named_terms_in_one_source(judge):
    hits = [Hit(CEL, 1.0), Hit(RL, 0.5)]
    score, why = answerability("What FID does Celcomen get on ImageNet?", hits, judge)
    assert score == 0.0 and "imagenet" in why
    score, why = answerability("Does Celcomen beat MR.Q on continuous control?", hits, judge)
    assert score == 0.0 and "no single source" in why  # needs both names in one abstract
    assert answerability("Compare Celcomen and MR.Q.", hits, judge)[0] > 0  # comparisons may span papers
    assert answerability("What does Celcomen do?", hits, judge)[0] > 0.3


def test_quantity_questions_need_the_asked_quantity_in_the_named_paper(judge):
    assert quantity_heads("How many GPU hours does MR.Q need?") == {"hour"}
    assert {"rate", "size"} <= quantity_heads("What learning rate and batch size were used?")
    hits = [Hit(RL, 1.0), Hit(CEL, 0.5)]
    assert (
        answerability("How many continuous-control tasks does MR.Q match baselines on?", hits, judge)[0] > 0.3
    )
    score, why = answerability("How many training hours does MR.Q need?", hits, judge)
    assert score == 0.0 and why.endswith("training hours")  # the abstract counts tasks, not hours
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
    assert focus("What does Celcomen do?", hits, judge, 0.7) == {1}
    assert focus("What does MR.Q use?", hits, judge, 0.7) == {2}  # named terms beat the rank
    assert focus("Compare Celcomen and MR.Q.", hits, judge, 0.7) == {1, 2}
    assert focus(
        "Which agent matches baselines on continuous-control tasks?",
        [Hit(RL, 1.0), Hit(CEL, 0.5)],
        judge,
        0.7,
    ) == {1}
    # one paper asked about: the top-ranked, even when another's best sentence reads closer
    rel = np.array([0.2, 0.4])
    assert focus("How does the agent learn its policy?", hits, judge, 0.7, rel=rel) == {1}
    assert focus("Summarize the papers on learning policies.", hits, judge, 0.7, rel=rel) == {1, 2}
    # comparison words without names mostly describe one paper ("matches between an image pair")
    assert focus("Rejecting matches between an image pair: how?", hits, judge, 0.7, rel=rel) == {1}
    # "compare" asks for several papers as an imperative or with two subjects, not against a baseline
    assert focus("Contrast the agent paper with the tissue one.", hits, judge, 0.7, rel=rel) == {1, 2}
    assert focus("How do agents and tissue models compare?", hits, judge, 0.7, rel=rel) == {1, 2}
    assert focus(
        "What did it learn, and how did they compare with baselines?", hits, judge, 0.7, rel=rel
    ) == {1}
    assert focus("How does their model compare with direct optimization?", hits, judge, 0.7, rel=rel) == {1}


def test_focus_of_a_name_several_sources_use_is_the_best_ranked_of_them(judge):
    from dataclasses import replace

    # a third paper that also names Celcomen (as a baseline): a one-paper question is about one of them
    other = replace(
        CEL, paper_id="P3", title="Tissue models", text="We compare against Celcomen on spleen data."
    )
    hits = [Hit(RL, 1.0), Hit(CEL, 0.8), Hit(other, 0.5)]
    assert focus("How does Celcomen model tissues?", hits, judge, 0.7) == {2}
    assert focus("How does Celcomen model tissues, and on which data?", hits, judge, 0.7) == {2}
    # two names compared: a source for each
    assert focus("Compare Celcomen and MR.Q.", hits, judge, 0.7) == {1, 2, 3}


def test_a_one_paper_question_cites_the_source_that_covers_its_description(judge):
    near, q = NEAR, DESCRIPTION
    hits = [Hit(near, 1.0), Hit(DESCRIBED, 0.9)]
    assert best_covered(q, hits, 0.15) == 2  # the near neighbour ranks first but lacks half the description
    assert focus(q, hits, judge, 0.7, cover_margin=0.15) == {2}
    assert focus(q, hits, judge, 0.7) == {1}  # default margin 1.0: the top-ranked source, as before
    # a one-word edge in seven does not overturn the ranking
    every = Paper(
        "N3",
        "We predict counterfactual outcomes over time from patient histories and treatments.",
        "n.txt",
        2,
    )
    q7 = "Predict counterfactual outcomes over time from patient histories and treatments"
    assert best_covered(q7, [Hit(near, 1.0), Hit(every, 0.9)], 0.15) == 1
    # nor does one word of a short question, whatever the margin ("handle" of "handle noisy labels")
    assert best_covered(q7, [Hit(near, 1.0), Hit(every, 0.9)], 0.0) == 1
    assert best_covered("", hits, 0.15) == 1 and best_covered(q, [], 0.15) == 1


def test_the_paper_asked_about_is_the_one_the_answer_would_cite(judge):
    from dataclasses import replace

    coded = replace(DESCRIBED, text=DESCRIBED.text + " Code is available at https://example.org/ss.")
    hits = [Hit(NEAR, 1.0), Hit(coded, 0.9)]
    q = "Is code released for " + DESCRIPTION[0].lower() + DESCRIPTION[1:] + "?"
    # the described paper (second) states a release: not refused when it is the one asked about
    assert answerability(q, hits, judge, cover_margin=0.15)[0] > 0
    # read by rank alone, the top paper (no release stated) is asked about
    score, why = answerability(q, hits, judge)
    assert score == 0.0 and "code" in why.lower()


def test_a_compared_name_of_several_words_is_one_subject(judge):
    def paper(pid, text):
        return Paper(pid, text, "c.txt", 0, title=pid)

    hits = [
        Hit(paper("S1", "We propose supervised batch normalization, normalizing per data context."), 1.0),
        Hit(
            paper(
                "S2",
                "Adaptive angular replay uses feature normalization on the hypersphere for continual learning.",
            ),
            0.9,
        ),
        Hit(
            paper(
                "S3", "Dropout and batch normalization interact; an adaptive schedule helps graph networks."
            ),
            0.8,
        ),
    ]
    q = "Compare Supervised Batch Normalization and Adaptive Angular Replay: what does each normalize?"
    # a comma ends a name: three names, three sources
    dpo, ppo, grpo = (paper(n, f"We study {n} for alignment.") for n in ("DPO", "PPO", "GRPO"))
    three = [Hit(dpo, 1.0), Hit(ppo, 0.9), Hit(grpo, 0.8)]
    assert focus("Compare DPO, PPO and GRPO for alignment.", three, judge, 0.7) == {1, 2, 3}
    # S3 shares a word with each name ("batch", "adaptive") but is neither subject; every source says
    # "normalization", so only "batch" singles out the first name's sources
    assert focus(q, hits, judge, 0.7) == {1, 2}


T2I = Paper(
    "P3",
    "Text-to-image diffusion models struggle with compositionality. We propose a multi-stage curriculum "
    "for contrastive learning of diffusion models with hard negative images. Code is available at "
    "https://example.org/curriculum.",
    "b.txt",
    0,
    title="Progressive compositionality in text-to-image diffusion models",
)


def test_a_swapped_variant_of_the_papers_own_compound_is_refused(judge):
    hits = [Hit(T2I, 1.0), Hit(CEL, 0.5)]
    q = "How does the multi-stage contrastive curriculum with hard negatives fix compositionality in {} diffusion models?"
    score, why = answerability(q.format("text-to-video"), hits, judge, variant_share=0.7)
    assert score == 0.0 and why.endswith("on text-to-image, not text-to-video")
    assert answerability(q.format("text-to-image"), hits, judge, variant_share=0.7)[0] > 0.3
    # a paraphrase in words of its own may swap a part for a synonym: not a variant
    loose = "Which work teaches picture generators to compose scenes, like a text-to-picture curriculum?"
    assert "not text-to-picture" not in answerability(loose, hits, judge, variant_share=0.7)[1]
    # another retrieved abstract on the asked variant: nothing is swapped
    video = Paper("P4", "Text-to-video diffusion models with hard negatives.", "c.txt", 0, title="Video")
    assert (
        "not text-to-video"
        not in answerability(q.format("text-to-video"), [*hits, Hit(video, 0.3)], judge, variant_share=0.7)[1]
    )


def test_a_code_release_question_needs_an_abstract_that_states_one(judge):
    score, why = answerability("Is the official code for Celcomen released? link?", [Hit(CEL, 1.0)], judge)
    assert score == 0.0 and "released code" in why
    hits = [Hit(T2I, 1.0), Hit(CEL, 0.5)]
    assert answerability("Is the code for the multi-stage curriculum available?", hits, judge)[0] > 0.3
    # the release of one abstract doesn't answer for another
    assert answerability("Is Celcomen's code public?", hits, judge)[0] == 0.0


def test_a_number_is_one_papers_so_its_names_must_share_an_abstract(judge):
    hits = [Hit(CEL, 1.0), Hit(RL, 0.5)]
    # "compared with" a baseline does not make a quantity question a comparison of papers
    score, why = answerability("What accuracy does Celcomen reach compared with MR.Q?", hits, judge)
    assert score == 0.0 and "no single source" in why
    score, why = answerability("What accuracy does Celcomen reach, and how does MR.Q work?", hits, judge)
    assert score == 0.0 and "no single source" in why
    # two names joined, or an explicit comparison, may span papers
    assert answerability("How many tasks do Celcomen and MR.Q report?", hits, judge)[0] > 0
    assert answerability("Compare the accuracy of Celcomen and MR.Q.", hits, judge)[0] > 0


def test_options_joined_by_or_are_one_thing_to_find_in_the_papers_abstract(judge):
    foo = Paper(
        "P3", "We present FooNet, a policy trained with PPO on Atari games.", "b.txt", 0, title="FooNet"
    )
    dpo = Paper("P4", "We align chat models with DPO on preference pairs.", "b.txt", 1, title="Aligning chat")
    # "A or B" offers options: one of them in the asked paper's abstract is enough ...
    assert answerability("Is FooNet trained with PPO or DPO?", [Hit(foo, 1.0), Hit(dpo, 0.5)], judge)[0] > 0
    assert answerability("Is FooNet trained with PPO or DPO?", [Hit(foo, 1.0)], judge)[0] > 0
    score, why = answerability("Is FooNet trained with GRPO or DPO?", [Hit(foo, 1.0)], judge)
    assert score == 0.0 and "dpo" in why and "grpo" in why  # no option named at all
    # ... but an option only another paper names is no answer about this one
    hits = [Hit(CEL, 1.0), Hit(RL, 0.5), Hit(dpo, 0.4)]
    score, why = answerability("How much does Celcomen improve MR.Q or DPO accuracy?", hits, judge)
    assert score == 0.0 and "no single source" in why


def test_a_kind_of_data_no_source_mentions_is_refused(judge):
    hits = [Hit(T2I, 1.0), Hit(RL, 0.5)]
    score, why = answerability(
        "Which paper uses a contrastive curriculum for speech recognition?", hits, judge
    )
    assert score == 0.0 and why.endswith("never mention speech")
    # a source that names the kind of data answers for it, whichever word it uses
    assert (
        answerability("Which paper fixes compositionality of visual diffusion models?", hits, judge)[0] > 0.3
    )


def test_a_follow_up_asking_its_paper_about_what_it_never_mentions_is_refused(judge):
    # CEL is the paper talked about; "continuous-control" and "reinforcement" are RL's words only
    hits = [Hit(CEL, 1.0), Hit(RL, 0.5)]
    ask = "Does it also work for continuous-control reinforcement tasks?"
    gap = (0.2, 1.0)
    score, why = answerability(ask + " (What is Celcomen?)", hits, judge, asked=ask, asked_gap=gap)
    assert (score, why) == (
        0.0,
        "the abstract of “Celcomen” never mentions “continuous-control reinforcement tasks”",
    )
    # not this rule: no earlier turn; a wh-question (it asks for something, not of the paper); the check off
    assert not answerability(ask, hits, judge, asked=ask, asked_gap=gap)[1].startswith("the abstract of")
    what = "What continuous-control reinforcement tasks are used?"
    got = answerability(what + " (What is Celcomen?)", hits, judge, asked=what, asked_gap=gap)
    assert not got[1].startswith("the abstract of")
    assert not answerability(ask + " (What is Celcomen?)", hits, judge, asked=ask)[1].startswith(
        "the abstract"
    )
