"""One lister: Find papers and `rag list` call rag.shapes.lister.find with the same topic and filters, so they give
the same list and count (300 real conference abstracts). `rag list` runs on the numpy embedder (rag.models.minilm)
and Find on the engine's sentence-transformers one: queries are encoded by rag.models.minilm for both
(Retriever.encode_query), so the lists are the same to the last digit."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from iclr_rag.cli import app
from rag.models.minilm import QueryEmbedder
from rag.settings import Settings
from tests.conftest import make_settings
from ui.find import papers as find

CASES = [
    ("reinforcement learning", {}),
    ("language models", {"decision": "accepted"}),
    ("orals about image generation", {}),  # the decision read from the topic, by both
    ("graph learning", {"decision": "rejected"}),
    ("image generation", {"decision": "oral,spotlight"}),  # either
    ("optimization", {"area": "optimization"}),
    ("*", {}),  # nothing to look for: both empty
]


@pytest.mark.parametrize(("topic", "filters"), CASES)
def test_find_and_rag_list_give_the_same_list(
    sample_retriever, sample_settings, sample_data_dir, topic, filters
):
    flags = [x for k, v in filters.items() for x in (f"--{k}", v)]
    r = CliRunner().invoke(app, ["list", topic, "--json", "--data-dir", str(sample_data_dir), *flags])
    assert r.exit_code == 0, r.output
    cli = json.loads(r.stdout)
    found = find.find(
        sample_retriever,
        sample_settings,
        topic,
        filters.get("decision", find.ANY),
        filters.get("area", find.ANY),
        "",
    )
    assert found.error is None
    listed = found.result.to_json()
    assert cli["count"] == listed["count"] and cli["filters"] == listed["filters"]
    assert [(p["paper_id"], p["score"]) for p in cli["papers"]] == [
        (p["paper_id"], p["score"]) for p in listed["papers"]
    ]


@pytest.mark.parametrize(
    ("question", "topic", "filters"),
    [
        ("Which papers are about reinforcement learning?", "reinforcement learning", {}),
        ("Which orals are about image generation?", "image generation", {"decision": "oral"}),
        ("List the accepted papers on language models", "language models", {"decision": "accepted"}),
        ("Orals or spotlights on image generation?", "image generation", {"decision": "oral, spotlight"}),
        ("language models papers, not the rejected ones", "language models", {"decision": "accepted"}),
        ("Can you find papers that deal with reinforcement learning? Thanks!", "reinforcement learning", {}),
    ],
)
def test_the_chat_lists_what_find_lists(sample_data_dir, embedder, question, topic, filters):
    """The chat's list answer counts the papers Find lists for its topic and filters, first ones the same."""
    from rag.answer import Engine
    from tests.conftest import FakeLLM

    eng = Engine(make_settings(data_dir=sample_data_dir), embedder=embedder, llm=FakeLLM())
    ans = eng.ask(question)
    found = find.find(eng.retriever, eng.settings, topic, filters.get("decision", find.ANY), find.ANY, "")
    listed = found.result.to_json()["papers"]
    assert ans.shape == "list" and ans.listed == len(listed) > 0
    assert ans.listed_query[:2] == (topic, filters.get("decision"))  # "See all" opens Find on this
    assert [c.paper_id for c in sorted(ans.citations, key=lambda c: c.n)] == [
        p["paper_id"] for p in listed[: eng.settings.grounding.list_max]
    ]


@pytest.mark.parametrize(
    ("question", "topic", "filters"),
    [
        ("Summarize the papers on reinforcement learning", "reinforcement learning", {}),
        ("Summarize the oral papers on image generation", "image generation", {"decision": "oral"}),
    ],
)
def test_a_summary_quotes_what_find_lists(sample_data_dir, embedder, question, topic, filters):
    """A summary counts the papers Find lists for its topic and filters, and quotes the first of them."""
    from rag.answer import Engine
    from tests.conftest import FakeLLM

    eng = Engine(make_settings(data_dir=sample_data_dir), embedder=embedder, llm=FakeLLM())
    ans = eng.ask(question, task="summarize")
    found = find.find(eng.retriever, eng.settings, topic, filters.get("decision", find.ANY), find.ANY, "")
    listed = found.result.to_json()["papers"]
    first = eng.settings.generation.summary_max_papers
    assert ans.shape == "summary" and ans.listed == len(listed) > 0
    assert ans.answer.startswith(f"{len(listed)} indexed papers match")
    assert sorted(c.paper_id for c in ans.citations) == sorted(p["paper_id"] for p in listed[:first])


def test_a_topic_with_no_word_lists_nothing_and_says_why(sample_retriever, sample_settings, sample_data_dir):
    found = find.find(sample_retriever, sample_settings, "*", find.ANY, find.ANY, "")
    assert found.result.papers == [] and "no word to look for" in find.render_summary(found)
    r = CliRunner().invoke(app, ["list", "*", "--data-dir", str(sample_data_dir)])
    assert r.exit_code == 0 and "no word to look for" in r.output


def test_the_numpy_embedder_gives_the_packaged_models_vectors():
    from rag.models.embedder import get_embedder

    embedder = get_embedder(make_settings(embed_dtype="float32"))
    texts = [
        "reinforcement learning",
        "Schölkopf's kernel two-sample tests",
        "We propose a diffusion model that conditions on chord progressions. " * 12,  # past 128 wordpieces
    ]
    ours = QueryEmbedder(Settings().storage).encode(texts)
    theirs = np.asarray(embedder.encode(texts), dtype=np.float32)
    assert ours.shape == theirs.shape
    assert np.min(np.sum(ours * theirs, axis=1)) > 0.99999


@pytest.mark.parametrize("frame", ["What papers did {} publish?", "Papers by {}"])
def test_an_author_is_a_question_in_the_chat(sample_data_dir, sample_papers, embedder, frame):
    """An author and no topic: every paper of theirs, counted as `rag list --author` counts them."""
    from collections import Counter

    from rag.answer import Engine
    from tests.conftest import FakeLLM

    name, n = Counter(a for p in sample_papers for a in p.authors or ()).most_common(1)[0]
    eng = Engine(make_settings(data_dir=sample_data_dir), embedder=embedder, llm=FakeLLM())
    ans = eng.ask(frame.format(name))
    assert not ans.refused and ans.shape == "list" and ans.listed >= n
    assert ans.answer.startswith(f"{ans.listed} indexed papers by an author matching “{name}”")
    r = CliRunner().invoke(app, ["list", "--author", name, "--json", "--data-dir", str(sample_data_dir)])
    assert json.loads(r.stdout)["count"] == ans.listed
    assert all(name in h.paper.authors for h in ans.retrieved) or ans.listed > n
