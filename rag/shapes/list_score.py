"""How `rag list` scores a candidate paper for a topic, with nothing embedded per paper at list time.

Every signal reads the paper's stored vector (mean of its chunk vectors), its words, or its rank in
the fused retrieval; the topic and its parts ("X for Y" -> "X", "Y") are embedded once each.

- `blend`: the topic's cosine blended with the share of its content words the paper uses (the
  "paper" scoring, and the pick of the pseudo-relevant top papers below);
- `features`: the signals the "model" scoring weighs (settings.lists.lister_model, fitted by
  `rag eval-lists --fit` on the calibration topics): besides cosine and words, how often the paper
  uses the topic's words (BM25's saturation), how central they are (share of its sentences with a
  rare one), whether its stated contribution (title and "we propose …" sentences) uses them, whether
  it matches *every* part of a combined topic, and how close it is to the topic's five best papers;
- `probability`: the logistic model over those features.
"""

from __future__ import annotations

import math
import re
from collections import Counter

import numpy as np

from rag.grounding.cite import blend as cite_blend
from rag.text import CONTRIBUTION, INJECTION, WORD, Idf, content_words, stem
from rag.types import Hit

FEATURES = (
    "cos",
    "in_title",
    "rel_cos",
    "idf_lex",
    "bm_n",
    "cent",
    "macos",
    "malex",
    "cen5",
    "lrank",
    "stated",
)

# "X for Y", "X in Y", "X with Y": each part is something a listed paper must be about
_PARTS = re.compile(r"\s+(?:for|in|on|with|via|using|under)\s+", re.I)
_GLOSS = re.compile(r"\([^)]*\)")  # "(KANs)", "(long sequences, audio)": a gloss, not a part
_BM25_K1, _BM25_B = 1.2, 0.75
# full index, idf shares: "unlearning" of "machine unlearning" 0.61, "speculative" of "speculative decoding"
# 0.62, "diffusion" of "diffusion models" 0.86 (enough to show the topic); "model" 0.14, "graph" of "graph
# neural networks" 0.40 (not enough)
_STATED_SHARE = 0.55
_PSEUDO_TOP = 5


def states(sentence: str) -> bool:
    """A sentence stating what the paper contributes: a paper *about* the topic says so here or in its title,
    a near miss mentions it among its tasks or motivation."""
    # with the verbs the lister's model was fitted on: "we develop" lists more near misses
    return any(m["fitted"] for m in CONTRIBUTION.finditer(sentence))


def topic_parts(topic: str) -> list[str]:
    """The parts a combined topic joins: "diffusion models for reinforcement learning" -> both halves."""
    return [p.strip() for p in _PARTS.split(_GLOSS.sub(" ", topic)) if p.strip()]


def quote(paper, words: set[str], weight=None) -> str:
    """The abstract sentence that shows the paper is about the topic: one stating its contribution ("we
    propose …") that holds at least `_STATED_SHARE` of what the sentence sharing most of the topic's words
    holds (words weighted by `weight`, idf; default 1), else that sentence (the first on ties; never an
    injection). A background sentence often names the topic best ("machine unlearning has attracted great
    interest"); what the paper does shows it is *about* it ("we propose a certified unlearning method")."""
    weight = weight or (lambda w: 1.0)

    def held(have: set[str]) -> float:
        return sum(weight(w) for w in words & have)

    sents = [(paper.text[a:b], held(have)) for a, b, have in paper.sentences]
    sents = [(t, k) for t, k in sents if not INJECTION.search(t)]
    if not sents:
        return ""
    most = max(k for _, k in sents)
    stated = [t for t, k in sents if k > 0 and k >= _STATED_SHARE * most and states(t)]
    return stated[0] if stated else next(t for t, k in sents if k == most)


def stated_words(paper, title: set[str]) -> set[str]:
    """The words of the paper's title (`title`, its content words) and of the abstract sentences that state
    its contribution ("we propose", "this paper introduces", "our … presented")."""
    said = [have for a, b, have in paper.sentences if states(paper.text[a:b])]
    return set().union(title, *said)


def blend(cos: float, lex: float, in_title: float, cos_weight: float, title_weight: float) -> float:
    """The judge's blend of cosine and word share (rag.grounding.cite.blend), plus the title's share."""
    return cite_blend(cos, lex, cos_weight) + title_weight * in_title


def features(
    hits: list[Hit], topic: str, vectors, paper_vec, idf: Idf, cos_weight: float, title_weight: float
) -> dict[str, np.ndarray]:
    """Name -> one value per hit (in retrieval order). `vectors(texts)` embeds; `paper_vec(paper_id)`
    is the stored paper vector (None when missing)."""
    n = len(hits)
    parts = topic_parts(topic) or [topic]
    qv = np.asarray(vectors([topic] + parts), dtype=np.float32)
    dim = qv.shape[1]
    pv = np.stack([_vec(paper_vec(h.paper.paper_id), dim) for h in hits]) if hits else np.zeros((0, dim))
    words = content_words(topic)
    part_words = [content_words(p) for p in parts]
    weight = {w: idf(w) for w in set().union(words, *part_words)}

    def share(ws: set[str], have: set[str]) -> float:
        total = sum(weight[w] for w in ws)
        return sum(weight[w] for w in ws & have) / total if total else 0.0

    ranked = sorted(words, key=lambda w: weight[w])
    rare = set(ranked[len(ranked) // 2 :])
    cos = pv @ qv[0]
    f = {k: np.zeros(n) for k in FEATURES}
    f["cos"] = cos.astype(float)
    f["rel_cos"] = cos - (cos.max() if n else 0.0)
    lens, tfs, lex = [], [], np.zeros(n)
    for i, h in enumerate(hits):
        p = h.paper
        have = p.words
        lex[i] = len(words & have) / len(words) if words else 0.0
        title = content_words(p.title or "")
        f["in_title"][i] = len(words & title) / len(words) if words else 0.0
        f["idf_lex"][i] = share(words, have)
        f["malex"][i] = min(share(a, have) if a else 1.0 for a in part_words)
        tokens = WORD.findall(p.text)
        tfs.append(Counter(w for w in map(stem, WORD.findall(p.title or "") + tokens) if w in words))
        lens.append(len(tokens))
        sents = p.sentences
        f["cent"][i] = sum(1 for *_, ws in sents if ws & rare) / len(sents) if sents else 0.0
        f["stated"][i] = share(words, stated_words(p, title))
    avg = float(np.mean(lens)) if lens else 1.0
    bm = np.array(
        [
            sum(
                weight[w] * c * (_BM25_K1 + 1) / (c + _BM25_K1 * (1 - _BM25_B + _BM25_B * dl / (avg or 1.0)))
                for w, c in tf.items()
            )
            for tf, dl in zip(tfs, lens)
        ]
    )
    f["bm_n"] = bm / bm.max() if n and bm.max() > 0 else bm
    pcos = pv @ qv[1:].T  # hits x parts
    top = pcos.max(axis=0) if n else np.zeros(len(parts))
    f["macos"] = (
        (np.where(top > 0, pcos / np.where(top > 0, top, 1.0), 0.0)).min(axis=1) if n else np.zeros(0)
    )
    base = np.array([blend(c, x, t, cos_weight, title_weight) for c, x, t in zip(cos, lex, f["in_title"])])
    if n:
        centre = pv[np.argsort(-base, kind="stable")[:_PSEUDO_TOP]].mean(axis=0)
        norm = float(np.linalg.norm(centre))
        f["cen5"] = pv @ (centre / norm) if norm else np.zeros(n)
    f["lrank"] = np.log1p(np.arange(n, dtype=float))
    f["blend"] = base
    return f


def model_of(mean, sd, weights) -> dict[str, tuple[float, float, float]]:
    """Feature -> (mean, sd, weight), as settings.lists.lister_model holds it (arrays in FEATURES order)."""
    return {k: (float(a), float(d), float(w)) for k, a, d, w in zip(FEATURES, mean, sd, weights)}


def probability(f: dict[str, np.ndarray], model: dict[str, tuple[float, float, float]], intercept: float):
    """The logistic model: each feature standardized by its (mean, sd) on the fitting data, weighted."""
    z = np.full(len(f["cos"]), intercept, dtype=float)
    for name, (mean, sd, w) in model.items():
        z += w * (f[name] - mean) / (sd or 1.0)
    return 1.0 / (1.0 + np.exp(-z))


def fit_logistic(x: np.ndarray, y: np.ndarray, c: float = 1.0, steps: int = 30) -> tuple[np.ndarray, float]:
    """L2-regularized logistic regression by Newton's method (as scikit-learn's with C=c; the intercept is
    not penalized): (weights, intercept) for standardized features."""
    xb = np.c_[x, np.ones(len(x))]
    w = np.zeros(xb.shape[1])
    reg = np.r_[np.ones(x.shape[1]) / c, 0.0]
    for _ in range(steps):
        p = 1.0 / (1.0 + np.exp(-(xb @ w)))
        grad = xb.T @ (p - y) + reg * w
        hess = (xb * (p * (1 - p))[:, None]).T @ xb + np.diag(reg)
        step = np.linalg.solve(hess, grad)
        w -= step
        if math.sqrt(float(step @ step)) < 1e-9:
            break
    return w[:-1], float(w[-1])


def _vec(v, dim: int) -> np.ndarray:
    return np.zeros(dim, dtype=np.float32) if v is None else np.asarray(v, dtype=np.float32)
