"""Topic -> relevant papers (recall-oriented retrieval + relevance cut) -> one quoted line per paper.

Every line names its paper (its title) and quotes whole evidence sentences, so nothing streamed is
replaced later and nothing is a pronoun-led fragment.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import TYPE_CHECKING

from rag import prompts
from rag.evidence import EvidenceSet, quoted_answer, quoted_lines
from rag.question import check_question
from rag.types import Answer, Hit, Retrieved

if TYPE_CHECKING:
    from rag.answer import Engine


def select_papers(
    engine: Engine, topic: str, top_k: int | None, mode, filters=None
) -> tuple[list[int], EvidenceSet]:
    """(positions of the selected papers, best first; the evidence over all candidates)."""
    s = engine.settings
    cands = engine.retriever.retrieve(
        topic, max(top_k or 0, s.summary_candidates), mode or s.mode, filters=filters
    )
    evset = engine.evidence(topic, cands)
    best = evset.max_score
    keep = [
        n
        for n in evset.papers()
        if evset.best[n] >= s.summary_min_relevance and evset.best[n] >= s.summary_cut * best
    ]
    return keep[: s.summary_max_papers], evset


def summarize_stream(
    engine: Engine,
    topic: str,
    *,
    top_k: int | None = None,
    mode=None,
    question: str | None = None,
    filters=None,
) -> Iterator[str | Retrieved | Answer]:
    s = engine.settings
    topic = check_question(topic, s.max_question_chars)
    question = question or topic
    engine._require_index()
    t0 = time.perf_counter()
    selected, evset = select_papers(engine, topic, top_k, mode, filters)
    hits: list[Hit] = evset.hits
    yield Retrieved(question, topic, "summary", hits)
    timings = {"retrieve_s": time.perf_counter() - t0, "generate_s": 0.0}
    if not selected:
        timings["total_s"] = time.perf_counter() - t0
        why, mended = engine.typo_hint(question, prompts.NO_MATCH_REASON)
        yield Answer(
            question,
            prompts.SUMMARY_EMPTY + (f" ({why}.)" if mended else ""),
            [],
            [],
            hits,
            refused=True,
            standalone_question=topic,
            timings=timings,
            refusal_reason=why,
            shape="summary",
            suggested_question=mended,
        )
        return
    lines, used = quoted_lines(evset, selected, per_paper=s.summary_sentences)
    header = prompts.SUMMARY_HEADER.format(count=len(lines))
    yield header + "\n"
    for line in lines:
        yield line + "\n"
    timings["total_s"] = time.perf_counter() - t0
    yield quoted_answer(
        question, header, lines, used, hits, standalone_question=topic, timings=timings, shape="summary"
    )


def to_markdown(ans: Answer) -> str:
    """The answer followed by its numbered references (authors, decision, OpenReview URL)."""
    from rag.export import answer_markdown

    return answer_markdown([ans], chat=False)
