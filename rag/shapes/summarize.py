"""Topic -> the lister's papers (the same list and count as a list answer, Find and `rag list`) -> themes
(clusters of their vectors) -> each paper's contribution sentence, quoted and cited.

Every line names its paper (its title) and quotes a whole abstract sentence, so nothing streamed is
replaced later and nothing is a pronoun-led fragment. Sources are numbered in the order shown, so "the
second one" is the second paper on the page.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import replace

import numpy as np

from rag import prompts
from rag.grounding.evidence import EvidenceSet, quote_sentences
from rag.grounding.turn import Turn
from rag.shapes.lister import PaperList
from rag.text import WORD, claim_rank, content_words, stem, stopwords
from rag.types import Hit, Retrieved


def summarize_stream(turn: Turn, res: PaperList, *, top_k: int | None = None) -> Iterator:
    """The lister's papers (`res`, not empty) in themes, each quoted by what it contributes."""
    g = turn.settings.generation
    topic = turn.reading.topic or turn.reading.asked
    first = res.papers[: max(top_k or 0, g.summary_max_papers)]  # top_k (the chat's slider) only adds
    evset = turn.select(topic, [Hit(x.paper, x.score) for x in first])
    turn.clock.lap("retrieve_s")
    said = [n for n in range(1, len(first) + 1) if any(e.paper_n == n for e in evset.every)]  # text to quote
    groups = themes(evset, said, topic, turn.retriever.bm25().idf, g)
    # renumbered in the order shown: theme by theme, best first within a theme
    order = [n for _, members in groups for n in members]
    at = {n: i for i, n in enumerate(order, start=1)}
    hits = [evset.hits[n - 1] for n in order]
    shown = EvidenceSet(evset.question, hits)
    yield Retrieved(turn.question, topic, "summary", hits, turn.reading.filters)
    author = res.author.name if res.author is not None else None  # "summarize the papers by NAME"
    head = prompts.count_header(len(res.papers), len(order), res.complete, author).rstrip(":")
    if turn.reading.over:  # the list just shown
        head = f"The {len(order)} {'paper' if len(order) == 1 else 'papers'} listed"
    lines, sentences = [head + (f", in {len(groups)} themes:" if len(groups) > 1 else ":")], []
    for words, members in groups:
        if len(groups) > 1:
            lines.append(f"Theme: {', '.join(words) or 'other'}")
        quotes = [replace(contribution(evset, n), paper_n=at[n]) for n in members]
        own = quote_sentences(quotes, shown, titled=True)
        sentences += own
        lines += [f"{x.text} [{x.citations[0]}]" for x in own]
    text = "\n".join(lines)
    yield text
    yield turn.answer(sentences, hits, text=text, listed=len(res.papers), listed_query=res.query)


def contribution(evset: EvidenceSet, n: int):
    """A paper's sentence saying what it contributes ("we propose …") that is closest to the topic, else its
    closest where the authors speak, else its closest: the lister already found the paper on the topic, so
    its contribution is the line, not the background it starts from."""
    own = sorted((e for e in evset.every if e.paper_n == n), key=lambda e: -e.score)
    return max(own, key=lambda e: claim_rank(e.text))  # the first of the best rank: the closest


def themes(evset: EvidenceSet, positions: list[int], topic: str, idf, g) -> list[tuple[list[str], list[int]]]:
    """The papers grouped by their vectors (k-means, about `summary_theme_size` papers a theme, at most
    `summary_themes`), each group named by the words beyond the topic's that most of its papers' titles and
    abstracts share, weighted by rarity. Groups keep the papers' order; the group of the best paper first."""
    k = min(g.summary_themes, len(positions) // g.summary_theme_size)
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
        named = sorted(
            (t for t, c in counts.items() if c >= need), key=lambda t: (-score[t], t)
        )  # ties: by name
        # nothing shared: the title words of its papers
        named = named or sorted((t for t in counts if " " not in t), key=lambda t: (-score[t], t))
        chosen: list[str] = []
        for t in named:  # no term repeating a word of one already chosen
            if not set(t.split()) & {w for c in chosen for w in c.split()}:
                chosen.append(t)
        out.append((chosen[:3], members))
    return out
