"""Quantity questions: a number next to the thing counted or measured."""

import pytest

from rag.quantity import (
    asks_quantity,
    measured_on,
    names_measure,
    quantity_heads,
    quantity_phrase,
    states_quantity,
)
from rag.question import answerability
from rag.types import Hit, Paper
from tests.conftest import CEL, RL


@pytest.mark.parametrize(
    "question, wants",
    [
        ("How many GPU hours does it need?", True),
        ("What exact PSNR does the method reach on KAIST?", True),
        ("What perplexity does it get on WikiText2?", True),
        ("What FLOPs savings does it report?", True),
        ("What accuracy does MR.Q reach?", True),
        ("What does the method do?", False),
        ("What two changes does it make to CLIP?", False),
        ("Which metric does it propose?", False),
        ("What does the discriminator learn, and what exactly does it score?", False),  # "score" a verb
        ("How many papers study unlearning?", False),  # a count of papers: the lister's
        # a setting's value
        ("What epsilon / privacy budget did they use in experiments?", True),
        ("What is the value of epsilon in their experiments?", True),
        ("which temperature do they sample at?", True),
        ("Which temperature scaling method do they use?", False),  # a method, named after a setting
        ("Does it work under a small privacy budget?", False),
    ],
)
def test_questions_wanting_a_number(question, wants):
    assert asks_quantity(question) is wants


def test_quantity_heads_hold_the_measured_thing_and_where_it_is_measured():
    assert quantity_heads("How many cell images were used?") == {"imag"}
    # the counted noun ends where a preposition or a clause starts
    assert quantity_heads("How many task vectors before quality collapses?") == {"vector"}
    assert quantity_heads("How many tokens until convergence?") == {"token"}
    assert quantity_heads("How many images generated with SDXL were used?") == {"imag"}  # not the participle
    heads = quantity_heads("What AP50 gains does DEST report on ScanNet V2?")
    assert {"ap50", "gain", "improv"} <= heads and "dest" not in heads  # metric and synonym, not the method
    assert measured_on("What AP50 gains does DEST report on ScanNet V2?") == " on ScanNet V2?"
    assert measured_on("How many GPU hours does it need?") == ""
    assert quantity_heads("What exact PSNR does it reach?") == {"psnr"}  # "exact" only qualifies
    assert quantity_phrase("How many GPU hours does MR.Q need?") == "GPU hours"
    assert quantity_phrase("What exact PSNR does it reach?") == "PSNR"


def test_an_adjective_says_what_is_measured_when_no_noun_does():
    q = "How much faster is it than the baseline?"
    heads = quantity_heads(q)
    assert {"faster", "speedup", "time"} <= heads and quantity_phrase(q) == "speed"
    assert states_quantity("It runs 1.26 times faster in beam search.", heads, q, window=5)
    assert not states_quantity("It was tested on 8 benchmarks and is fast.", heads, q, window=3)
    assert "hour" in quantity_heads("How long does training take?")
    assert quantity_phrase("How long does training take?") == "time"
    assert "speed" in quantity_heads("How much faster than FlashAttention is it?")
    # "how much data": any unit may answer ("2T tokens"), so no head is required
    assert quantity_heads("How much data was it trained on?") == set()


@pytest.mark.parametrize(
    "sentence, found",
    [
        ("It reaches 35.2 dB PSNR on KAIST.", True),
        ("PSNR improves to 35.2 dB.", True),
        ("We report PSNR and SSIM that beat all baselines on KAIST and three other datasets.", False),
        ("Trained with Llama3-70B, the PSNR is high.", False),  # a name with digits is no number
        ("It attains $\\mathcal{O}(k)$ PSNR scaling.", True),  # a math expression counts
        ("We prove a linear PSNR gain in the number of views.", True),  # an order of growth counts
    ],
)
def test_a_number_must_stand_next_to_the_measured_thing(sentence, found):
    assert states_quantity(sentence, {"psnr"}, "What PSNR does it reach?", window=3) is found


@pytest.mark.parametrize(
    "sentence, found",
    [
        ("We train a 12-layer transformer on it.", True),  # a number fused to what it counts
        ("A two-stage pipeline adds layers.", False),  # counts stages, and "layers" stands too far
        ("Unlike the 3-WL test, it adds layers.", False),  # a test's name, not a count
        ("It evaluates single-omics and multi-omics layers.", False),  # "single" counts no layers
        ("A thirty-two-layer net.", True),
    ],
)
def test_a_count_fused_to_its_noun_is_a_count(sentence, found):
    assert states_quantity(sentence, {"layer"}, "How many layers does it use?", window=2) is found


def test_a_fused_count_answers_only_the_noun_a_how_many_counts():
    # "how long" measures time: "one-step" states no duration
    assert not states_quantity("We propose a one-step method.", {"step", "time"}, "How long does it take?", 5)
    assert states_quantity("A 7B-parameter model.", {"paramet"}, "How many parameters does it have?", 5)


def test_a_number_the_question_already_gives_is_no_answer():
    q = "What speedup does it get for 4096 tokens?"
    assert not states_quantity("The speedup grows with 4096 tokens.", {"speedup"}, q, window=5)
    assert states_quantity("A 2.1x speedup at 4096 tokens.", {"speedup"}, q, window=5)


def test_a_quantity_clause_is_judged_on_its_own(judge):
    """The second clause of a two-part question must not dilute the number the first part asks for."""
    q = "How many continuous-control tasks does MR.Q match baselines on, and what does MR.Q represent?"
    assert answerability(q, [Hit(RL, 1.0), Hit(CEL, 0.5)], judge)[0] > 0.3


def test_the_size_of_a_named_thing_is_a_count_stated_next_to_it():
    q = "How big is the PairSet dataset?"
    heads = quantity_heads(q)
    assert {"pairset", "dataset", "size"} <= heads
    assert states_quantity(
        "We curate a dataset, PairSet, of 15k contrastive image pairs.", heads, q, window=5
    )
    assert not states_quantity(
        "PairSet is curated with an LLM. It improves accuracy by 3%.", heads, q, window=3
    )
    # names that start like a preposition are names; the capture ends before a clause or a comparison
    assert "ontonot" in quantity_heads("How big is the OntoNotes corpus?")
    assert "office-hom" in quantity_heads("How big is the Office-Home dataset?")
    assert "train" not in quantity_heads("How large are the models they train?")
    assert "ppo" not in quantity_heads("How large is the gap between PPO and DPO?")
    assert quantity_heads("How big is it relative to other models?") == quantity_heads("How big is it?")


def test_a_count_stands_before_what_it_counts():
    q = "How many adaptors per client do they use?"
    heads = quantity_heads(q)
    assert heads == {"adaptor"}
    assert states_quantity("Each client mixes 8 LoRA adaptors.", heads, q, window=5)
    assert states_quantity("The number of adaptors: 4 per client.", heads, q, window=5)
    assert states_quantity("The number of LoRA adaptors K is set to 8.", heads, q, window=5)
    # a number of something else per adaptor counts that something
    assert not states_quantity("It learns only one number per adaptor.", heads, q, window=5)
    # a value asked beside a count keeps its window on both sides
    v = "How many GPUs does it use, and what accuracy does it reach?"
    assert states_quantity("Accuracy rises to 93% on spleen data.", quantity_heads(v), v, window=5)


def test_a_named_metric_needs_its_own_number_a_gain_the_places_number():
    assert names_measure(set()) and names_measure(quantity_heads("What AP50 gains does it report on X?"))
    assert not names_measure(quantity_heads("What inference speed does it report on ScanNet V2?"))
    assert not names_measure(quantity_heads("What L2 error does it get on Burgers' equation?"))


def test_a_named_metric_is_refused_when_only_the_dataset_has_a_number(judge):
    det = Paper(
        "P9",
        "DEST is a state space model for 3D object detection. On ScanNet V2 it gains +5.3 AP50 over "
        "GroupFree, and it runs on point clouds.",
        "d.txt",
        0,
        title="DEST",
    )
    hits = [Hit(det, 1.0)]
    score, why = answerability("What inference speed does DEST report on ScanNet V2?", hits, judge)
    assert score == 0.0 and why.endswith("inference speed")
    assert answerability("What AP50 gains does DEST report on ScanNet V2?", hits, judge)[0] > 0.3


def test_an_acronyms_plural_and_spelled_out_counts_are_counts():
    q = "How many GPUs does it train on?"
    heads = quantity_heads(q)
    assert {"gpus", "gpu"} <= heads
    assert states_quantity("It trains on a single GPU in a day.", heads, q, window=5)
    a = "How many adaptors does each client use?"
    assert states_quantity("Each client mixes twelve different adaptors.", quantity_heads(a), a, window=5)
    assert not states_quantity("Each client mixes different adaptors.", quantity_heads(a), a, window=5)


def test_a_settings_value_is_a_number_by_its_name_or_symbol():
    q = "What epsilon / privacy budget did they use?"
    h = quantity_heads(q)
    assert states_quantity("We train with a privacy budget $\\varepsilon=1$ on CIFAR.", h, q, 5)
    assert states_quantity("At ε = 8 the accuracy stays high.", h, q, 5)
    assert not states_quantity("Our experiments show favorable performance at 3 sites.", h, q, 5)


def test_a_count_with_a_magnitude_is_a_size():
    q = "how big were the instances they tested on?"
    h = quantity_heads(q)
    assert states_quantity("Results on TSP and CVRP with up to 100K nodes show gains.", h, q, 5)
    assert not states_quantity("It is 5.3x faster on 4 GPUs.", h, q, 5)
    # a "how many" counts its own noun: a magnitude alone is no answer to it
    assert not states_quantity(
        "Results with up to 100K nodes.", quantity_heads("How many GPUs?"), "How many GPUs?", 5
    )


def test_single_counts_things_but_states_no_measured_value():
    q = "What top-1 accuracy does the method reach?"
    heads = quantity_heads(q)
    assert not states_quantity("It fits accuracy and speed in a single model.", heads, q, window=5)
    assert states_quantity("It reaches 81.2% top-1 accuracy in a single model.", heads, q, window=5)
    q = "How many GPUs does training take?"
    assert states_quantity("Training takes a single GPU.", quantity_heads(q), q, window=5)
