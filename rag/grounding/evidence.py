"""Evidence before generation: every sentence of the retrieved papers scored against the question.

One evidence model serves every stage: the generator sees only the selected sentences (numbered and
grouped by paper), the support judge verifies claims against the same sentences, refusal reads their
scores, and citations point at them (with character offsets into the abstract).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from rag.grounding.cite import Evidence, Judge
from rag.text import unbraced
from rag.types import Citation, Hit, Sentence

# A sentence that leans on the one before it ("It reaches …", "These results …") needs it as context.
_ANAPHOR = re.compile(
    r"^(it|its|this|these|they|their|such|those|that|the (proposed|resulting|latter))\b", re.I
)


@dataclass
class EvidenceSet:
    """The evidence for one question: selected sentences of the papers at 1-based positions `n`."""

    question: str
    hits: list[Hit]
    items: list[Evidence] = field(default_factory=list)  # selected, grouped by paper, reading order
    best: dict[int, float] = field(default_factory=dict)  # paper position -> its best sentence's score
    every: list[Evidence] = field(default_factory=list)  # every sentence scored, selected or not

    def papers(self) -> list[int]:
        """Positions of the papers with evidence, most relevant first."""
        return sorted({e.paper_n for e in self.items}, key=lambda n: -self.best.get(n, 0.0))

    def of(self, n: int) -> list[Evidence]:
        return [e for e in self.items if e.paper_n == n]

    def top(self, n: int) -> Evidence | None:
        """The paper's highest-scoring selected sentence."""
        own = self.of(n)
        return max(own, key=lambda e: e.score) if own else None

    def restrict(self, positions: set[int]) -> EvidenceSet:
        keep = [e for e in self.items if e.paper_n in positions]
        return EvidenceSet(
            self.question,
            self.hits,
            keep,
            {n: s for n, s in self.best.items() if n in positions},
            [e for e in self.every if e.paper_n in positions],
        )

    @property
    def max_score(self) -> float:
        return max(self.best.values(), default=0.0)


def select(
    question: str,
    hits: list[Hit],
    judge: Judge,
    per_paper: int = 3,
    share: float = 0.7,
    neighbours: bool = True,
) -> EvidenceSet:
    """Score every sentence of `hits` against the question; keep per paper the best `per_paper`
    sentences within `share` of that paper's best, plus the sentence before one that starts with an
    anaphor ("It …", "These …")."""
    every = judge.evidence(hits)
    out = EvidenceSet(question, hits, every=every)
    if not every:
        return out
    scores = judge.scores(question, every)
    for e, s in zip(every, scores):
        e.score = float(s)
    by_paper: dict[int, list[int]] = {}
    for i, e in enumerate(every):
        by_paper.setdefault(e.paper_n, []).append(i)
    chosen: set[int] = set()
    for n, idx in by_paper.items():
        ranked = sorted(idx, key=lambda i: -scores[i])
        best = float(scores[ranked[0]])
        out.best[n] = best
        picked = [i for i in ranked[:per_paper] if scores[i] >= share * best] or ranked[:1]
        chosen.update(picked)
        if neighbours:
            for i in picked:
                if _ANAPHOR.match(every[i].text) and i - 1 in idx:
                    chosen.add(i - 1)
    out.items = [every[i] for i in sorted(chosen, key=lambda i: (every[i].paper_n, every[i].start))]
    return out


def paper_scores(evset: EvidenceSet) -> np.ndarray:
    """Best evidence score per paper position (0 for papers without evidence), position order."""
    return np.array([evset.best.get(n, 0.0) for n in range(1, len(evset.hits) + 1)])


def blocks(evset: EvidenceSet, positions: list[int] | None = None) -> str:
    """The evidence as the generator sees it: numbered by source position, grouped by paper."""
    parts = []
    for n in positions or evset.papers():
        own = evset.of(n)
        if not own:
            continue
        title = (evset.hits[n - 1].paper.title or evset.hits[n - 1].paper.label).replace("\n", " ")
        lines = "\n".join(f"- {e.text}" for e in own)
        parts.append(f"[{n}] {title}\n{lines}")
    return "\n\n".join(parts)


def quoted(e: Evidence, label: str | None = None) -> Sentence:
    """An evidence sentence as an answer sentence: cited by its source, quoted whole (braces its abstract left
    unmatched dropped), led by `label` when given ("Title: sentence")."""
    text = unbraced(e.text.strip())
    return Sentence(
        f"{label}: {text}" if label else text,
        [e.paper_n],
        True,
        round(e.score, 4),
        quoted=True,
        spans=[(e.paper_n, e.start, e.end)],
    )


def quote_sentences(quotes: list[Evidence], evset: EvidenceSet, titled: bool = False) -> list[Sentence]:
    """Evidence sentences as answer sentences, grouped by paper in ranking order; `titled`: a paper's first
    sentence is led by its title ("Title: sentence")."""
    out, seen = [], set()
    for e in sorted(quotes, key=lambda e: (e.paper_n, e.start)):
        lead = titled and e.paper_n not in seen
        out.append(quoted(e, evset.hits[e.paper_n - 1].paper.label if lead else None))
        seen.add(e.paper_n)
    return out


def citations_of(sentences: list[Sentence], hits: list[Hit]) -> list[Citation]:
    """One citation per source the sentences cite, in order of first use: the paper, its first supporting
    sentence (the quote a click highlights) and every sentence of it the answer rests on."""
    spans: dict[int, list[tuple[int, int]]] = {}
    for x in sentences:
        for n, a, b in x.spans:
            if n in x.citations and (a, b) not in spans.setdefault(n, []):
                spans[n].append((a, b))
    out = []
    for n, own in spans.items():
        p = hits[n - 1].paper
        a, b = own[0]
        out.append(Citation(n, p.paper_id, p.title, p.source_file, p.index, p.text[a:b], a, b, sorted(own)))
    return out
