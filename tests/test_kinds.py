"""rag.grounding.kinds: names and the kinds of thing they name, read off abstracts."""

from __future__ import annotations


def test_a_name_takes_the_kind_its_sentences_use_far_more_than_others():
    from rag.grounding.kinds import build, is_name

    assert is_name("CIFAR-10") and is_name("ImageNet") and is_name("GPT-4") and is_name("MMLU")
    assert not is_name("Transformers") and not is_name("We") and not is_name("2024")
    sents = (
        [f"We evaluate on the CIFAR-10 and ImageNet datasets in setting {i}." for i in range(6)]
        + [f"Our model beats GPT-4 on reasoning {i}." for i in range(6)]
        + [f"Filler sentence {i} about methods and results." for i in range(60)]
    )
    kinds = build(sents, min_names=5)
    assert "dataset" in kinds["cifar-10"] and "dataset" in kinds["imagenet"]
    assert "dataset" not in kinds.get("gpt-4", []) and "reason" in kinds["gpt-4"]


def test_the_shipped_table_knows_common_benchmarks_and_what_a_question_asks_for():
    from rag.grounding.kinds import kinds_asked, names_a

    assert kinds_asked("registration datasets") == {"dataset"}  # the head word is the kind asked
    assert kinds_asked("base llm") == {"llm"} and kinds_asked("perturbation budget") == set()
    assert names_a("We validate on CIFAR-10 and ImageNet.", {"dataset"})
    assert not names_a("We validate on several standard image collections.", {"dataset"})
