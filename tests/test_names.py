"""Named terms of a question and whether a text mentions them (rag/names.py)."""

import pytest

from rag.names import domain_words, domains, mentions, name_runs, named_terms, swapped_variant


def test_named_terms_are_names_not_question_words():
    assert named_terms("What accuracy does MR.Q reach on GSM8K?") == {"mr.q", "gsm8k"}
    assert named_terms("What does Celcomen do?") == {"celcomen"}
    assert named_terms("How does the method work?") == set()
    # a field acronym with a lowercase word after it names the kind and describes it: the kind is the term
    assert named_terms("How are the LLM-generated queries kept cheap?") == {"llm"}
    assert named_terms("What does GPT-4o score?") == {"gpt-4o"}


@pytest.mark.parametrize(
    "term, text, found",
    [
        ("llms", "large language models (llm) are used", True),
        ("transformers", "a transformer block", True),
        ("rlhf", "reinforcement learning from human feedback", True),
        ("celcomen", "a generative graph neural network", False),
        ("gan", "generative adversarial networks", True),
        ("lean-star", "we introduce lean-star, a framework", True),
        ("fourier-transform", "an optical fourier transform layer", True),
        ("ppo-based", "we fine-tune with ppo on", True),
        ("ppo-based", "we fine-tune with dpo on", False),
        ("lean-star", "lean and star are unrelated here", False),
    ],
)
def test_named_terms_match_plurals_and_acronym_expansions(term, text, found):
    assert mentions(text, term) is found


def test_name_runs_are_consecutive_named_terms():
    assert name_runs("Partial-LoRA and LoRA Recycle both build on adapters.") == ["lora recycle"]
    assert name_runs("How does the Belief State Transformer work?") == ["belief state transformer"]
    assert name_runs("What does Celcomen do?") == []


def test_swapped_variant_finds_a_compound_with_one_part_changed():
    text = "Text-to-image diffusion models miss compositions; a contrastive curriculum with hard negatives helps."
    q = "does the contrastive curriculum with hard negatives help text-to-video diffusion models?"
    assert swapped_variant(q, text, 0.7) == ("text-to-video", "text-to-image")
    assert swapped_variant(q.replace("video", "image"), text, 0.7) is None  # the paper's own compound
    assert swapped_variant(q.replace("text-to-video", "text to image"), text, 0.7) is None  # spelled apart
    assert swapped_variant(q, text, 0.95) is None  # in words of its own: a paraphrase may swap a synonym
    assert swapped_variant("does it help image-to-video models?", text, 0.0) is None  # two parts changed
    # the changed part is a word the text uses elsewhere: the paper's own words recombined
    reused = text + " The curriculum orders negatives by difficulty."
    assert swapped_variant(q.replace("text-to-video", "difficulty-aware"), reused, 0.5) is None
    assert swapped_variant(q.replace("text-to-video", "text-to-difficulty"), reused, 0.5) is None
    assert swapped_variant(q, reused, 0.7) == ("text-to-video", "text-to-image")


def test_a_hyphenated_name_is_mentioned_with_a_short_symbol_between_its_parts():
    assert mentions("bounded by schatten p-norms of the error", "schatten-norm")
    assert mentions("we fine-tune llama 2 70b", "llama-70b")
    assert not mentions("schatten and nuclear norms", "schatten-norm")
    assert not mentions("schatten classes of long p-norms", "schatten-norm")


def test_domains_names_the_kinds_of_data_a_text_talks_about():
    assert domains("KV-cache eviction for speech recognition and music models, a sound trade-off") == {
        "audio"
    }
    assert domains("Text-to-image diffusion on time series and point clouds") == {
        "images",
        "time series",
        "point clouds",
    }
    assert domains("We forecast stock prices from satellite images.") == {
        "finance",
        "remote sensing",
        "images",
    }
    assert domains("A transformer for language modelling with a new optimizer.") == set()


def test_domains_leaves_out_words_with_a_common_other_sense():
    assert domains("Is the bound theoretically sound, and what trade-off do the models face?") == set()
    assert domains("What table of results and game-theoretic driving factors do they report?") == set()
    assert domains("planning for autonomous driving") == {"vehicles"}


def test_domain_words_keeps_the_users_word_for_each_kind():
    assert domain_words("KV-cache eviction for music and speech models on stock prices") == {
        "audio": "music",
        "finance": "stock",
    }
    assert domain_words("planning for autonomous driving") == {"vehicles": "autonomous driving"}


def test_options_joined_by_or_are_one_group_and_no_two_subjects():
    from rag.names import alternatives, joined, named_terms

    groups = lambda q: sorted(sorted(g) for g in alternatives(q, named_terms(q)))  # noqa: E731
    assert groups("Does MR.Q beat TD-MPC2 or DreamerV3 or PPO?") == [
        ["dreamerv3", "ppo", "td-mpc2"],
        ["mr.q"],
    ]
    assert groups("Is FooNet trained with PPO or with DPO?") == [["dpo", "ppo"], ["foonet"]]
    assert groups("Does FooNet use PPO/DPO?") == [["dpo", "ppo"], ["foonet"]]
    # a bare comma lists rather than offers: the subject before it stays a group of its own
    assert groups("For MR.Q, PPO or DPO: which is used?") == [["dpo", "ppo"], ["mr.q"]]
    # options are not two subjects: joined by "or" they don't make a comparison of papers
    assert not joined("How much does X improve A or B?", {"x", "a", "b"})
    assert joined("How many tasks do A and B report?", {"a", "b"})


def test_a_task_asked_of_a_paper_doing_another_is_a_swap():
    from rag.names import swapped_task, tasks

    assert tasks("Text-to-image synthesis and object detectors") == {"generation", "detection"}
    detection = "An interactive state space model for 3D object detection."
    assert swapped_task("semantic segmentation", detection)
    assert not swapped_task("image generation", "A text-to-image synthesis model.")  # the same task
    assert not swapped_task("semantic segmentation", "A new state space model.")  # no task named: unknown
    assert not swapped_task("interactive queries", detection)  # no task asked
