"""Named terms of a question and whether a text mentions them (rag/retrieval/names.py)."""

import pytest

from rag.retrieval.names import mentions, name_runs, named_terms


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
        (
            "timemoe",
            "we introduce time-moe, a scalable",
            True,
        ),  # the text hyphenates what the term runs together
        ("timemoe", "time series and moe layers", False),
    ],
)
def test_named_terms_match_plurals_and_acronym_expansions(term, text, found):
    assert mentions(text, term) is found


def test_a_version_after_a_name_is_part_of_it():
    assert named_terms("What does the SAM 2 paper do?") == {"sam-2"}
    assert "llama-3" in named_terms("How does Llama 3 do on GSM8K?")
    assert mentions("we present sam 2, a model", "sam-2") and mentions("using llama3-8b", "llama-3")
    # "AUC@5", "nDCG@10": a metric at a cut-off, no version
    assert named_terms("What AUC@5 does EDM get?") == {"auc", "edm"}


def test_name_runs_are_consecutive_named_terms():
    assert name_runs("Partial-LoRA and LoRA Recycle both build on adapters.") == ["lora recycle"]
    assert name_runs("How does the Belief State Transformer work?") == ["belief state transformer"]
    assert name_runs("What does Celcomen do?") == []


def test_a_hyphenated_name_is_mentioned_with_a_short_symbol_between_its_parts():
    assert mentions("bounded by schatten p-norms of the error", "schatten-norm")
    assert mentions("we fine-tune llama 2 70b", "llama-70b")
    assert not mentions("schatten and nuclear norms", "schatten-norm")
    assert not mentions("schatten classes of long p-norms", "schatten-norm")


def test_options_joined_by_or_are_one_group_and_no_two_subjects():
    from rag.retrieval.names import alternatives, named_terms

    groups = lambda q: sorted(sorted(g) for g in alternatives(q, named_terms(q)))  # noqa: E731
    assert groups("Does MR.Q beat TD-MPC2 or DreamerV3 or PPO?") == [
        ["dreamerv3", "ppo", "td-mpc2"],
        ["mr.q"],
    ]
    assert groups("Is FooNet trained with PPO or with DPO?") == [["dpo", "ppo"], ["foonet"]]
    assert groups("Does FooNet use PPO/DPO?") == [["dpo", "ppo"], ["foonet"]]
    # a bare comma lists rather than offers: the subject before it stays a group of its own
    assert groups("For MR.Q, PPO or DPO: which is used?") == [["dpo", "ppo"], ["mr.q"]]
