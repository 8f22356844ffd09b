"""Named terms of a question and whether a text mentions them (rag/names.py)."""

import pytest

from rag.names import mentions, name_runs, named_terms


def test_named_terms_are_names_not_question_words():
    assert named_terms("What accuracy does MR.Q reach on GSM8K?") == {"mr.q", "gsm8k"}
    assert named_terms("What does Celcomen do?") == {"celcomen"}
    assert named_terms("How does the method work?") == set()


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
