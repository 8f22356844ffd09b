"""Answer types: a name for "which simulator" questions, a stated code release, a named option."""

import pytest

from rag.answer_type import (
    asks_code,
    choice_options,
    entity_heads,
    states_code,
    unnamed_entity,
    without_guesses,
)
from rag.question import answerability
from rag.types import Hit, Paper
from tests.conftest import CEL, RL


def test_entity_questions_want_a_name_unless_the_paper_made_the_thing():
    assert entity_heads("Which physics simulator were the policies trained in?") == ["simulator"]
    assert entity_heads("Which LLMs was it evaluated with?") == ["llms"]
    assert entity_heads("What new datasets were released with it?") == []  # described, not named
    assert entity_heads("What model family is it derived from?") == []  # "family" is the head
    assert entity_heads("What does it do, and which does it model?") == []  # "model" a verb
    # "Which three are they?" asks for names of the kind the question named before
    assert entity_heads("It is validated on three Cell Painting datasets. Which three are they?") == [
        "datasets"
    ]
    assert entity_heads("Which three are they?") == []
    # "novel-class samples" describes the samples: the question still wants the model's name
    assert entity_heads("Which diffusion model generates the novel-class samples?") == ["model"]


def test_unnamed_entity_needs_a_new_name_in_the_sentences_about_the_thing():
    q = "Which simulator were the SRSA policies trained in?"
    vague = [("Policies trained with SRSA in simulation reach a 90% success rate.", "SRSA")]
    named = [("Policies trained with SRSA in the IsaacLab simulator transfer to real robots.", "SRSA")]
    assert unnamed_entity(q, vague) == "simulator"
    assert unnamed_entity(q, named) is None
    # the paper's own name (in its title) is not the simulator's
    assert unnamed_entity(q, [("SimCore simulates assembly.", "SimCore: fast assembly")]) == "simulator"
    # never talked about: an abstract naming nothing can't say which one; one naming things leaves it to others
    assert unnamed_entity(q, [("We study assembly.", "SRSA")]) == "simulator"
    assert unnamed_entity(q, [("We study assembly on the Franka arm.", "SRSA")]) is None


def test_which_model_is_read_in_the_sentences_about_that_kind_of_model():
    q = "Which segmentation model provides the masks?"
    own = [
        ("A Gated Fusion Block is introduced in our model.", "MaskMix"),
        ("Masks come from an off-the-shelf segmentation model.", "MaskMix"),
    ]
    assert unnamed_entity(q, own) == "model"  # "Gated Fusion Block" is the paper's model, not the mask model
    named = [*own[:1], ("Masks come from the SAM segmentation model.", "MaskMix")]
    assert unnamed_entity(q, named) is None
    # stress words say nothing of which models: every sentence on a model is read
    assert unnamed_entity("Which exact model is used?", own) is None


def test_a_share_of_a_thing_and_a_base_it_is_built_on():
    assert entity_heads("What share of the benchmark do they solve?") == []  # asks for a share
    assert entity_heads("Which of the four benchmarks is hardest?") == ["benchmarks"]
    assert entity_heads("Which backbone is the detector built on?") == ["backbone"]  # "built on" uses it
    assert entity_heads("Which backbone does the dataset they built use?") == []  # the paper built it


def test_guessed_answers_after_the_asked_kind_are_not_its_subject():
    assert (
        without_guesses("Which GPUs (A100? H100?) did FooNet train on?") == "Which GPUs did FooNet train on?"
    )
    assert without_guesses("Which optimizer (e.g. AdamW) does it use?") == "Which optimizer does it use?"
    assert without_guesses("Which benchmark (MMLU) is hardest?") == "Which benchmark (MMLU) is hardest?"
    assert entity_heads("Which specific LLMs (GPT-4? Llama?) are compared?") == ["llms"]


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
    # a field spelled out before its acronym, capitalised, still names no particular model
    spelled = [
        ("Samples are made by diffusion models from descriptions by Large Language Models (LLMs).", "X")
    ]
    assert unnamed_entity("Which diffusion model makes the samples?", spelled) == "model"
    named = [("Samples are made by Stable Diffusion from descriptions by Large Language Models (LLMs).", "X")]
    assert unnamed_entity("Which diffusion model makes the samples?", named) is None
    # a part of a name the question gives, or a metric's cut-off, names no model either
    own = [
        ("We fine-tune the model on proofs verified by the Lean solver, beating base models (Pass@64).", "X")
    ]
    assert unnamed_entity("Which base model is Lean-STaR fine-tuned from?", own) == "base model"
    named = [("We fine-tune the InternLM2-7B base model with the Lean solver.", "X")]
    assert unnamed_entity("Which base model is Lean-STaR fine-tuned from?", named) is None


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


@pytest.mark.parametrize(
    "question, options",
    [
        ("Which platform was the data from, visium or xenium?", [["visium"], ["xenium"]]),
        ("Which is faster: PPO or DPO?", [["PPO"], ["DPO"]]),
        ("Was it trained on ImageNet (full or subset)?", [["full"], ["subset"]]),
        ("Which backbone - a ViT or a CNN?", [["ViT"], ["CNN"]]),  # articles are no option's word
        ("Does it beat GPT-4, Claude or Gemini?", [["GPT-4"], ["Claude"], ["Gemini"]]),  # a list of three
        ("Which sampler, DDPM or DDIM sampling?", [["sampler"], ["DDPM"], ["DDIM", "sampling"]]),
        ("Does it work on images, or not?", []),
        ("Is the claim proven, true or false?", []),
        ("Is it right, yes or no?", []),
        ("Is it tested on ImageNet, CIFAR-10 or both?", []),
        ("Which optimizer (e.g. Adam or SGD)?", []),  # examples: any optimizer answers
        ("Which platform, like Visium or Xenium?", []),
        ("What is the speedup: 2x or 10x?", []),  # any stated number answers
        ("Does it use a ViT-B or ViT-L backbone?", []),  # a hyphen inside a name separates nothing
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
    # one option a source names is enough to answer (and say which), by any of its words
    assert answerability("Celcomen: which tissue was it validated on, liver or spleen?", hits, judge)[0] > 0
    assert answerability("Celcomen: which data, liver or fetal spleen data?", hits, judge)[0] > 0
