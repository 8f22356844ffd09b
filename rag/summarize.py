"""Topic -> relevant papers (recall-oriented retrieval + relevance cut) -> cited sentences per paper."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import TYPE_CHECKING

from rag import prompts
from rag.answer import check_question
from rag.cite import bind, extractive, relevance, render
from rag.types import Answer, Citation, Hit, Sentence

if TYPE_CHECKING:
    from rag.answer import Engine


def select_papers(engine: Engine, topic: str, top_k: int | None, mode) -> tuple[list[Hit], list[Hit]]:
    """(selected, all candidates): papers whose best sentence clears the cut, best first."""
    s = engine.settings
    cands = engine.retriever.retrieve(topic, max(top_k or 0, s.summary_candidates), mode or s.mode)
    scored = [(relevance(topic, [h], engine.judge), h) for h in cands]
    best = max((r for r, _ in scored), default=0.0)
    keep = [h for r, h in scored if r >= s.summary_min_relevance and r >= s.summary_cut * best]
    return keep[: s.summary_max_papers], cands


def summarize_stream(
    engine: Engine, topic: str, *, top_k: int | None = None, mode=None
) -> Iterator[str | Answer]:
    s = engine.settings
    topic = check_question(topic, s)
    engine._require_index()
    t0 = time.perf_counter()
    selected, cands = select_papers(engine, topic, top_k, mode)
    timings = {"retrieve_s": time.perf_counter() - t0}
    if not selected:
        timings.update(generate_s=0.0, total_s=time.perf_counter() - t0)
        yield Answer(
            topic,
            prompts.SUMMARY_EMPTY,
            [],
            [],
            cands,
            refused=True,
            standalone_question=topic,
            timings=timings,
        )
        return

    sentences: list[Sentence] = []
    citations: list[Citation] = []
    paragraphs: list[str] = []
    fallback = False
    for h in selected:
        msgs = [
            {"role": "system", "content": prompts.SUMMARY_SYSTEM},
            {
                "role": "user",
                "content": prompts.SUMMARY_USER.format(topic=topic, title=h.paper.label, text=h.paper.text),
            },
        ]
        raw = []
        for delta in engine.llm.stream(msgs, max_new_tokens=80):
            raw.append(delta)
            yield delta
        yield "\n\n"
        _, sents, cites = bind(
            "".join(raw) + " [1]", [h], engine.judge, s.support_threshold, drop_unsupported=True
        )
        sents = [x for x in sents if x.supported][:2]
        if not sents:
            fallback = True
            _, sents, cites = bind(extractive(topic, [h], engine.judge, 1), [h], engine.judge, 0.0)
        if not cites:
            continue
        n = len(citations) + 1
        c = cites[0]
        c.n = n
        citations.append(c)
        for x in sents:
            x.citations = [n]
        sentences.extend(sents)
        paragraphs.append(render(sents))
    timings["generate_s"] = time.perf_counter() - t0 - timings["retrieve_s"]
    timings["total_s"] = time.perf_counter() - t0
    yield Answer(
        topic,
        "\n\n".join(paragraphs),
        citations,
        sentences,
        cands,
        refused=False,
        standalone_question=topic,
        fallback=fallback,
        timings=timings,
    )


def to_markdown(ans: Answer) -> str:
    """The answer followed by a numbered reference list (title, OpenReview URL when known)."""
    lines = [ans.answer, "", "## References", ""]
    for c in ans.citations:
        label = c.title or f"{c.source_file} #{c.index}"
        url = "" if "#" in c.paper_id else f" — https://openreview.net/forum?id={c.paper_id}"
        lines.append(f"{c.n}. {label}{url}")
    return "\n".join(lines).strip() + "\n"
