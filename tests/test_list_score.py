"""rag.shapes.list_score: the lister's signals on hand-made papers, and the logistic model it is fitted into."""

from __future__ import annotations

import numpy as np
import pytest

from rag.shapes.list_score import FEATURES, features, fit_logistic, probability, quote, topic_parts
from rag.text import content_words
from rag.types import Hit, Paper

VOCAB: dict[str, int] = {}


def bag(texts):
    """Bag-of-stems vectors (unit length): cosine = shared words, so the tests can reason about it."""
    rows = []
    for t in texts:
        v = np.zeros(64, dtype=np.float32)
        for w in content_words(t):
            v[VOCAB.setdefault(w, len(VOCAB) % 64)] += 1.0
        rows.append(v / (np.linalg.norm(v) or 1.0))
    return np.asarray(rows)


def paper(pid: str, title: str, text: str) -> Paper:
    return Paper(pid, text, "t.jsonl", 0, title=title)


PAPERS = [
    paper(
        "both",
        "Diffusion policies for offline reinforcement learning",
        "We train a diffusion model as the policy of an offline reinforcement learning agent. "
        "The diffusion policy improves returns on locomotion benchmarks.",
    ),
    paper(
        "diffusion-only",
        "Faster diffusion sampling for images",
        "We speed up diffusion model sampling for image generation. Diffusion models need fewer steps.",
    ),
    paper(
        "rl-only",
        "Exploration bonuses for reinforcement learning",
        "We propose an exploration bonus for reinforcement learning agents on sparse-reward games.",
    ),
    paper("neither", "Graph coloring heuristics", "We study graph coloring with greedy heuristics."),
]
TOPIC = "diffusion models for reinforcement learning"


@pytest.fixture
def feats():
    hits = [Hit(p, 1.0 / (i + 1)) for i, p in enumerate(PAPERS)]
    vecs = {p.paper_id: bag([f"{p.title} {p.text}"])[0] for p in PAPERS}
    return features(hits, TOPIC, bag, vecs.get, lambda w: 1.0, 0.5, 0.1)


def test_topic_parts_split_a_combination_and_drop_a_gloss():
    assert topic_parts(TOPIC) == ["diffusion models", "reinforcement learning"]
    assert topic_parts("Kolmogorov-Arnold networks (KANs)") == ["Kolmogorov-Arnold networks"]
    assert topic_parts("model merging") == ["model merging"]


def test_every_feature_is_given_for_every_hit(feats):
    for k in FEATURES:
        assert len(feats[k]) == len(PAPERS) and np.all(np.isfinite(feats[k])), k


def test_a_paper_on_only_one_part_of_a_combined_topic_scores_lower_on_the_parts(feats):
    i = {p.paper_id: n for n, p in enumerate(PAPERS)}
    for signal in ("macos", "malex"):
        assert feats[signal][i["both"]] > feats[signal][i["diffusion-only"]], signal
        assert feats[signal][i["both"]] > feats[signal][i["rl-only"]], signal
    assert feats["malex"][i["neither"]] == 0.0


def test_word_frequency_is_relative_to_the_topics_best_paper(feats):
    assert feats["bm_n"].max() == pytest.approx(1.0)
    assert feats["bm_n"][3] == 0.0  # uses no topic word
    assert feats["rel_cos"].max() == pytest.approx(0.0)
    assert list(feats["lrank"]) == sorted(feats["lrank"])


def test_no_hits_gives_empty_features():
    f = features([], TOPIC, bag, lambda pid: None, lambda w: 1.0, 0.5, 0.1)
    assert all(len(f[k]) == 0 for k in FEATURES)


def test_the_quote_is_the_sentence_with_most_topic_words():
    q = quote(PAPERS[0], content_words(TOPIC))
    assert q.startswith("We train a diffusion model") and q in PAPERS[0].text


def test_the_quote_prefers_what_the_paper_does_to_its_background():
    words = content_words("machine unlearning")
    idf = {"machin": 1.0, "unlearn": 2.0}.get  # the rarer word says more of the topic
    p = paper(
        "u",
        "Forgetting fast",
        "Machine unlearning has attracted great interest in the research community. "
        "We propose a certified unlearning method for graphs. It is fast.",
    )
    assert quote(p, words, idf) == "We propose a certified unlearning method for graphs."  # 2/3 of the topic
    common = paper("c", "X", "Machine unlearning has attracted interest. We propose a machine for graphs.")
    assert quote(common, words, idf) == "Machine unlearning has attracted interest."  # 1/3: not enough
    assert quote(p, words) == "Machine unlearning has attracted great interest in the research community."


def test_fit_logistic_reaches_the_regularized_optimum():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(400, 3))
    y = (x @ np.array([2.0, -1.0, 0.0]) + 0.5 + rng.normal(scale=0.5, size=400) > 0).astype(float)
    w, b = fit_logistic(x, y, c=1.0)
    p = 1 / (1 + np.exp(-(x @ w + b)))
    # the gradient of log-loss + |w|^2 / 2 vanishes at the optimum (the intercept is not penalized)
    assert np.allclose(x.T @ (p - y) + w, 0.0, atol=1e-6)
    assert abs(np.sum(p - y)) < 1e-6
    assert w[0] > 1.0 and w[1] < -0.5 and abs(w[2]) < 0.3


def test_probability_standardizes_and_weighs_each_feature():
    f = {"cos": np.array([0.2, 0.5, 0.8]), "bm_n": np.array([1.0, 1.0, 1.0])}
    p = probability(f, {"cos": (0.5, 0.3, 2.0), "bm_n": (1.0, 1.0, -5.0)}, intercept=0.0)
    assert p[1] == pytest.approx(0.5)
    assert p[0] == pytest.approx(1 / (1 + np.exp(2.0)))
    assert p[0] < p[1] < p[2]


def test_stated_reads_the_title_and_the_sentences_that_state_the_contribution():
    about = paper(
        "about",
        "Sparse autoencoders at scale",
        "Robots need dexterity. We propose a knot tying benchmark and study its failures.",
    )
    passing = paper(
        "passing",
        "Sparse autoencoders at scale",
        "Knot tying is one motivation for dexterity. We propose better sparse autoencoders.",
    )
    titled = paper("titled", "Knot tying with two arms", "Success rates rise with tactile feedback.")
    proposing = paper(
        "proposing", "Robot hands", "Hands are hard. This work, proposing knot tying drills, helps."
    )
    hits = [Hit(about, 1.0), Hit(passing, 0.5), Hit(titled, 0.3), Hit(proposing, 0.2)]
    vecs = {p.paper_id: bag([p.text])[0] for p in (about, passing, titled, proposing)}
    f = features(hits, "knot tying", bag, vecs.get, lambda w: 1.0, 0.5, 0.1)
    # the first two abstracts use the word; only the first states it as what the paper does
    assert f["idf_lex"][0] == f["idf_lex"][1] == 1.0
    assert f["stated"][0] == 1.0 and f["stated"][1] == 0.0
    assert f["stated"][2] == 1.0  # a title states the subject too
    assert f["stated"][3] == 1.0  # any form of the verb: "proposing", "introduced", "presents"
