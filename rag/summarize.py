"""Topic -> relevant papers (recall-oriented retrieval + relevance cut) -> one quoted line per paper.

Every line names its paper (its title) and quotes whole evidence sentences, so nothing streamed is
replaced later and nothing is a pronoun-led fragment.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import TYPE_CHECKING

from rag import prompts
from rag.evidence import EvidenceSet, quote_sentences
from rag.types import Answer, Retrieved

if TYPE_CHECKING:
    from rag.answer import Engine
    from rag.reading import Reading


def select_papers(engine: Engine, topic: str, top_k: int | None, mode, filters=None) -> tuple[list[int], EvidenceSet]:
    """(positions of the selected papers, best first; the evidence over all candidates)."""
    s = engine.settings
    cands = engine.retriever.retrieve(topic, max(top_k or 0, s.summary_candidates), mode or s.mode, filters=filters)
    evset = engine.evidence(topic, cands)
    best = evset.max_score
    keep = [
        n
        for n in evset.papers()
        if evset.best[n] >= s.summary_min_relevance and evset.best[n] >= s.summary_cut * best
    ]
    return keep[: s.summary_max_papers], evset


def summarize_stream(
    engine: Engine, reading: Reading, *, top_k: int | None = None, mode=None, question: str | None = None
) -> Iterator[str | Retrieved | Answer]:
    from rag.answer import Done
    from rag.outcome import NOTHING_RELEVANT

    s = engine.settings
    t0 = time.perf_counter()
    topic = reading.topic or reading.asked
    selected, evset = select_papers(engine, topic, top_k, mode, reading.filters)
    yield Retrieved(question or reading.asked, topic, "summary", evset.hits)
    done = Done(engine, question or reading.asked, reading, evset.hits, {"retrieve_s": time.perf_counter() - t0}, t0)
    if not selected:
        ans = done.refusal(NOTHING_RELEVANT, [])
        ans.answer = prompts.SUMMARY_EMPTY
        yield ans
        return
    sentences = quote_sentences(
        [e for n in selected for e in sorted(evset.of(n), key=lambda e: -e.score)[: s.summary_sentences]],
        evset,
        titled=True,
    )
    header = prompts.SUMMARY_HEADER.format(count=len(selected))
    body = "\n".join(f"{x.text} [{x.citations[0]}]" for x in sentences)
    yield header + "\n" + body
    yield done.answer(sentences, evset.hits, None, text=f"{header}\n{body}")


def to_markdown(ans: Answer) -> str:
    """The answer followed by its numbered references (authors, decision, OpenReview URL)."""
    from rag.export import answer_markdown

    return answer_markdown([ans], chat=False)
