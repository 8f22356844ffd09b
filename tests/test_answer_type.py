"""Answer types: a number next to the thing measured, a name for "which simulator" questions."""

import pytest

from rag.answer_type import (
    asks_code,
    asks_quantity,
    choice_options,
    entity_heads,
    measured_on,
    names_measure,
    quantity_heads,
    quantity_phrase,
    states_code,
    states_quantity,
    unnamed_entity,
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
    ],
)
def test_questions_wanting_a_number(question, wants):
    assert asks_quantity(question) is wants


def test_quantity_heads_hold_the_measured_thing_and_where_it_is_measured():
    assert quantity_heads("How many cell images were used?") == {"imag"}
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


def test_a_number_the_question_already_gives_is_no_answer():
    q = "What speedup does it get for 4096 tokens?"
    assert not states_quantity("The speedup grows with 4096 tokens.", {"speedup"}, q, window=5)
    assert states_quantity("A 2.1x speedup at 4096 tokens.", {"speedup"}, q, window=5)


def test_entity_questions_want_a_name_unless_the_paper_made_the_thing():
    assert entity_heads("Which physics simulator were the policies trained in?") == ["simulator"]
    assert entity_heads("Which LLMs was it evaluated with?") == ["llms"]
    assert entity_heads("What new datasets were released with it?") == []  # described, not named
    assert entity_heads("What model family is it derived from?") == []  # "family" is the head
    assert entity_heads("What does it do, and which does it model?") == []  # "model" a verb


def test_unnamed_entity_needs_a_new_name_in_the_sentences_about_the_thing():
    q = "Which simulator were the SRSA policies trained in?"
    vague = [("Policies trained with SRSA in simulation reach a 90% success rate.", "SRSA")]
    named = [("Policies trained with SRSA in the IsaacLab simulator transfer to real robots.", "SRSA")]
    assert unnamed_entity(q, vague) == "simulator"
    assert unnamed_entity(q, named) is None
    # the paper's own name (in its title) is not the simulator's
    assert unnamed_entity(q, [("SimCore simulates assembly.", "SimCore: fast assembly")]) == "simulator"
    assert unnamed_entity(q, [("We study assembly.", "SRSA")]) is None  # never talked about: others decide


def test_siblings_of_the_papers_own_artifact_and_capitalised_function_words_name_nothing():
    q = "Which of the 12 LLMs tested on QuuxEval-2K was the most robust?"
    title = "QuuxEval-Suite: Benchmarking Robustness of Chat LLMs"
    own = [
        ("Our analysis on QuuxEval-20K shows that LLMs are fragile.", title),
        ("Specifically, We test 12 state-of-the-art (SOTA) LLMs on QuuxEval-2K.", title),
    ]
    assert unnamed_entity(q, own) == "llms"
    # a model from elsewhere is a name, and a sibling family needs the paper's title to be the paper's own
    assert unnamed_entity(q, [*own, ("Among the LLMs, Llama-3-70B was the most robust.", title)]) is None
    assert unnamed_entity(q, [("LLMs such as QuuxEval-20K fail.", "A robustness study")]) is None


def test_one_of_several_named_things_and_acronyms_of_the_question():
    q = "Which of the six deep learning models benchmarked on the corpus performed best?"
    assert entity_heads(q) == ["models"]  # "which of the …", a participle after the head
    assert entity_heads("Which of the baselines does it beat?") == ["baselines"]
    assert entity_heads("What improvement over the baselines does it report?") == []  # a relation, no name
    assert entity_heads("Which of the robot benchmark papers uses a real arm?") == []  # a paper is asked for
    # "DL" only abbreviates the question's own "deep learning": no model is named
    assert unnamed_entity(q, [("We benchmark six well-known DL models on it.", "A corpus")]) == "models"
    assert unnamed_entity(q, [("DL models such as ResNet-50 are benchmarked.", "A corpus")]) is None


def test_answerability_refuses_what_the_abstract_never_states(judge):
    hits = [Hit(CEL, 1.0), Hit(RL, 0.5)]
    score, why = answerability("What F1 score does Celcomen reach?", hits, judge)
    assert score == 0.0 and why.endswith("F1 score")  # it states an accuracy, no F1
    assert answerability("What accuracy does Celcomen reach?", hits, judge)[0] > 0.3
    sim = Paper(
        "P3", "We train MR.Q policies in simulation and deploy them on a real arm.", "a.txt", 2, title="X"
    )
    score, why = answerability("Which simulator were the MR.Q policies trained in?", [Hit(sim, 1.0)], judge)
    assert score == 0.0 and why.endswith("simulator")
    named = Paper("P4", "We train MR.Q policies in the MuJoCo simulator.", "a.txt", 3, title="X")
    assert (
        answerability("Which simulator were the MR.Q policies trained in?", [Hit(named, 1.0)], judge)[0] > 0.3
    )


def test_which_paper_questions_want_a_paper_not_a_number_or_a_name(judge):
    hits = [Hit(RL, 1.0), Hit(CEL, 0.5)]
    score, why = answerability("Which paper defines a precision score for offline RL agents?", hits, judge)
    assert "which-paper" in why  # scored by coverage, not refused for stating no precision number
    sim = Paper(
        "P5", "We train robot policies in simulation and study their transfer.", "a.txt", 4, title="T"
    )
    score, why = answerability("Which paper uses a simulator?", [Hit(sim, 1.0)], judge)
    assert "which-paper" in why  # not "never name the simulator"


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


def test_a_field_acronym_names_no_particular_thing():
    q = "Which benchmarks was the agent evaluated on?"
    vague = [("Results over three benchmarks show its promise for embodied AI and LLMs.", "Agent")]
    named = [("Results on three benchmarks (HM3D, GOAT) show its promise for embodied AI.", "Agent")]
    assert unnamed_entity(q, vague) == "benchmarks"
    assert unnamed_entity(q, named) is None
    hyphened = [("Three benchmarks show LLM-based and AI-driven agents improve on GPU-heavy rigs.", "Agent")]
    assert unnamed_entity(q, hyphened) == "benchmarks"
    assert (
        unnamed_entity("Which backbones were used?", [("Backbones ViT-B and GPT-4 are used.", "X")]) is None
    )


@pytest.mark.parametrize(
    "question, wants",
    [
        ("Is there an official code release for Topograph? link?", True),
        ("is the source code for it available anywhere", True),
        ("did they open-source the model weights?", True),
        ("Where can I find the implementation?", True),
        ("Is the repository public?", True),
        ("What new datasets were released with it?", False),  # a dataset the abstract may describe
        ("How many demonstrations were released?", False),
        ("Does the code generation model release a benchmark?", False),  # code as a task
        ("Which paper studies memorization in code completion?", False),
    ],
)
def test_asks_code_is_about_a_release_of_code_or_weights(question, wants):
    assert asks_code(question) is wants


@pytest.mark.parametrize(
    "sentence, states",
    [
        ("Code is available at https://github.com/x/y.", True),
        ("Our code and models will be released.", True),
        ("We release an open-source toolkit.", True),
        ("We evaluate on code completion benchmarks.", False),
    ],
)
def test_states_code_reads_a_release(sentence, states):
    assert states_code(sentence) is states


def test_a_count_stands_before_what_it_counts():
    q = "How many adaptors per client do they use?"
    heads = quantity_heads(q)
    assert heads == {"adaptor"}
    assert states_quantity("Each client mixes 8 LoRA adaptors.", heads, q, window=5)
    assert states_quantity("The number of adaptors: 4 per client.", heads, q, window=5)
    # a number of something else per adaptor counts that something
    assert not states_quantity("It learns only one number per adaptor.", heads, q, window=5)
    # a value question keeps its window on both sides
    v = "What accuracy does it reach?"
    assert states_quantity("Accuracy rises to 93% on spleen data.", quantity_heads(v), v, window=5)


def test_a_named_metric_needs_its_own_number_a_gain_the_places_number():
    assert names_measure(set()) and names_measure(quantity_heads("What AP50 gains does it report on X?"))
    assert not names_measure(quantity_heads("What inference speed does it report on ScanNet V2?"))
    assert not names_measure(quantity_heads("What L2 error does it get on Burgers' equation?"))


@pytest.mark.parametrize(
    "question, options",
    [
        ("Which platform was the data from, visium or xenium?", ["visium", "xenium"]),
        ("Which is faster: PPO or DPO?", ["PPO", "DPO"]),
        ("Was it trained on ImageNet (full or subset)?", ["full", "subset"]),
        ("Does it work on images, or not?", []),
        ("Is it tested on ImageNet, CIFAR-10 or both?", []),
        ("Is the method supervised or unsupervised?", []),  # no offer set apart: a plain question
        ("What does Celcomen do?", []),
    ],
)
def test_choice_options_are_the_alternatives_a_question_ends_by_offering(question, options):
    assert choice_options(question) == options


def test_a_choice_between_options_no_source_names_is_refused(judge):
    hits = [Hit(CEL, 1.0), Hit(RL, 0.5)]
    score, why = answerability("Celcomen: which tissue was it validated on, liver or kidney?", hits, judge)
    assert score == 0.0 and why.endswith("never mention liver or kidney")
    # one option a source names is enough to answer (and say which)
    assert answerability("Celcomen: which tissue was it validated on, liver or spleen?", hits, judge)[0] > 0
