"""Topic -> relevant papers (recall-oriented retrieval + relevance cut) -> one quoted line per paper.

Every line names its paper (its title) and quotes whole evidence sentences, so nothing streamed is
replaced later and nothing is a pronoun-led fragment.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator

import numpy as np

from rag import prompts
from rag.grounding.evidence import EvidenceSet, quote_sentences
from rag.grounding.outcome import NOTHING_RELEVANT
from rag.grounding.turn import Turn
from rag.text import CONTRIBUTION, WORD, content_words, stem, stopwords
from rag.types import Answer, Retrieved


def select_papers(turn: Turn, topic: str, top_k: int | None, mode) -> list[int]:
    """The positions of the selected papers, best first; the turn's evidence covers every candidate."""
    s = turn.settings
    cands = turn.retriever.retrieve(
        topic,
        max(top_k or 0, s.generation.summary_candidates),
        mode or s.retrieval.mode,
        filters=turn.reading.filters,
    )
    evset = turn.select(topic, cands)
    best = evset.max_score
    keep = [
        n
        for n in evset.papers()
        if evset.best[n] >= s.generation.summary_min_relevance
        and evset.best[n] >= s.generation.summary_cut * best
    ]
    return keep[: s.generation.summary_max_papers]


def summarize_stream(
    turn: Turn, *, top_k: int | None = None, mode=None
) -> Iterator[str | Retrieved | Answer]:
    g = turn.settings.generation
    topic = turn.reading.topic or turn.reading.asked
    selected = select_papers(turn, topic, top_k, mode)
    evset = turn.evidence
    turn.clock.lap("retrieve_s")
    yield Retrieved(turn.question, topic, "summary", evset.hits)
    if not selected:
        ans = turn.refusal(NOTHING_RELEVANT, [])
        ans.answer = prompts.SUMMARY_EMPTY
        yield ans
        return
    quotes = [contribution(evset, n) for n in selected]
    groups = themes(evset, selected, topic, turn.retriever.bm25().idf, g.summary_theme_size)
    header = prompts.SUMMARY_HEADER.format(count=len(selected))
    lines, sentences = [header + (f", in {len(groups)} themes:" if len(groups) > 1 else ":")], []
    for words, members in groups:
        if len(groups) > 1:
            lines.append(f"Theme: {', '.join(words)}")
        own = quote_sentences([quotes[selected.index(n)] for n in members], evset, titled=True)
        sentences += own
        lines += [f"{x.text} [{x.citations[0]}]" for x in own]
    text = "\n".join(lines)
    yield text
    yield turn.answer(sentences, text=text)


def contribution(evset: EvidenceSet, n: int):
    """A paper's sentence saying what it contributes ("we propose …") among its relevant ones, else its best."""
    own = sorted((e for e in evset.every if e.paper_n == n), key=lambda e: -e.score)
    best = own[0].score
    return next((e for e in own if CONTRIBUTION.search(e.text) and e.score >= 0.5 * best), own[0])


def themes(
    evset: EvidenceSet, positions: list[int], topic: str, idf, per_theme: int
) -> list[tuple[list[str], list[int]]]:
    """The papers grouped by their vectors (k-means, about `per_theme` papers a theme), each group named by
    the words beyond the topic's that most of its papers' titles and abstracts share, weighted by rarity."""
    k = min(4, len(positions) // per_theme)
    if k < 2:
        return [([], positions)]
    from sklearn.cluster import KMeans

    vecs = np.stack([np.mean([e.vec for e in evset.every if e.paper_n == n], axis=0) for n in positions])
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    labels = KMeans(n_clusters=k, n_init=10, random_state=0).fit_predict(vecs)
    asked, stop = content_words(topic), stopwords()

    def terms(n: int) -> set[str]:
        """The paper's title words and the two-word phrases of its title and abstract, beyond the topic."""
        p = evset.hits[n - 1].paper
        out = {
            w.lower()
            for w in WORD.findall(p.title or "")
            if w.isalpha() and w.lower() not in stop and len(w) > 2 and stem(w) not in asked
        }
        for text in (p.title or "", p.text):
            for run in re.split(r"[^A-Za-z\- ]+", text):
                toks = [w.lower() for w in run.split()]
                for a, b in zip(toks, toks[1:]):
                    if a not in stop and b not in stop and len(a) > 2 and len(b) > 2:
                        if not {stem(a), stem(b)} <= asked:
                            out.add(f"{a} {b}")
        return out

    has = {n: terms(n) for n in positions}

    def rarity(t: str) -> float:
        return sum(idf(stem(w)) for w in t.split()) / len(t.split())

    out = []
    for label in dict.fromkeys(labels):
        members = [n for n, lab in zip(positions, labels) if lab == label]
        rest = [n for n in positions if n not in members]
        counts = Counter(t for n in members for t in has[n])
        # what sets the group apart: the share of its papers using a term beyond the other groups' share
        score = {
            t: (c / len(members) - sum(t in has[n] for n in rest) / max(1, len(rest))) * rarity(t)
            for t, c in counts.items()
        }
        need = 2 if len(members) > 1 else 1
        named = sorted((t for t, c in counts.items() if c >= need), key=lambda t: -score[t])
        # nothing shared: the title words of its papers
        named = named or sorted((t for t in counts if " " not in t), key=lambda t: -score[t])
        chosen: list[str] = []
        for t in named:  # no term repeating a word of one already chosen
            if not set(t.split()) & {w for c in chosen for w in c.split()}:
                chosen.append(t)
        out.append((chosen[:3], members))
    return out
