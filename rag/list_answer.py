"""List-shaped answers ("which papers …", "is there work on …"): the retrieved papers whose evidence
clears the bar and lacks no part of what is described, one quoted line each; over a large index, the
lister's complete list. Nothing is generated, so nothing can be invented.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import numpy as np

from rag import prompts
from rag.cite import blend
from rag.evidence import EvidenceSet, quoted_answer, quoted_lines
from rag.gaps import missing_aspects
from rag.intent import described, to_cover, wants_many
from rag.lister import list_papers
from rag.text import content_words
from rag.types import Answer, Citation, Hit, Sentence


def aspect_gaps(engine, question: str, evset: EvidenceSet, positions: list[int]) -> list[list[str]]:
    """Per paper position, the parts of what the question describes (its examples aside) that the paper
    lacks (missing_aspects); its scored sentences and its title stand for the paper."""
    papers = []
    for n in positions:
        p = evset.hits[n - 1].paper
        vecs = [e.vec for e in evset.every if e.paper_n == n] + list(
            engine.judge.vectors([p.title or p.label])
        )
        papers.append((f"{p.title or ''} {p.text}", np.stack(vecs)))
    return missing_aspects(
        to_cover(question),
        papers,
        engine.judge.vectors,
        engine.settings.list_aspect_gain,
        engine.retriever.bm25().known,
    )


def standout(hits: list[Hit], min_cosine: float, min_gap: float) -> int | None:
    """Position (1-based) of the paper that matches the whole description: the question's best chunk
    cosine is at least `min_cosine` and beats every other paper's by `min_gap`. A long description
    ("builds automata over a counting semiring to test what makes languages learnable") spreads over
    several sentences, none of which may clear the evidence bar alone."""
    cos = [(h.cosine, n) for n, h in enumerate(hits, start=1) if h.cosine is not None]
    return leader(cos, min_cosine, min_gap)


def leader(scored: list[tuple[float, int]], min_score: float, min_gap: float) -> int | None:
    """The position of the best (score, position) pair when it scores `min_score` and leads the next
    by `min_gap`; else None."""
    scored = sorted(scored, reverse=True)
    if not scored or scored[0][0] < min_score:
        return None
    return scored[0][1] if len(scored) == 1 or scored[0][0] - scored[1][0] >= min_gap else None


def joined_score(judge, claim: str, evidence: list) -> float:
    """How well several sentences read together support `claim`: the judge's cosine to their joined
    text and its share of the claim's content words they use between them (no one-sentence penalties)."""
    if not evidence:
        return 0.0
    vec, cvec = judge.vectors([" ".join(e.text for e in evidence), claim])
    words = content_words(claim)
    lex = len(words & set().union(*(e.words for e in evidence))) / len(words) if words else 0.0
    return blend(float(vec @ cvec), lex, judge.cos_weight)


def joined_standout(judge, description: str, evset: EvidenceSet, k: int, min_score: float, min_gap: float):
    """Position of the paper whose best `k` sentences, read together in reading order (`joined_score`),
    match the description best, by at least `min_score` and `min_gap` over every other paper; else None.
    A long description ("invents first-order abstractions …, learned online, compared with …") is
    spread over several sentences of its paper, each of which matches only a part of it."""
    tops = {
        n: sorted(
            sorted((e for e in evset.every if e.paper_n == n), key=lambda e: -e.score)[:k],
            key=lambda e: e.start,
        )
        for n in evset.papers()
    }
    judge.vectors([" ".join(e.text for e in top) for top in tops.values()] + [description])  # one batch
    return leader([(joined_score(judge, description, top), n) for n, top in tops.items()], min_score, min_gap)


def shown(covered: list[int], lone: int | None, many: bool, limit: int) -> list[int]:
    """The papers that get a line (positions, best first). Asked for papers: by their best evidence
    sentence. Asked for one: the stand-out paper, else the best ranked, as `rag.question.focus` picks
    the paper a one-paper question is about."""
    return (covered if many else sorted(covered, key=lambda n: (n != lone, n)))[:limit]


def list_answer(
    engine, question, query, evset: EvidenceSet, timings, t0, refusal, filters=None, answerable=1.0
) -> Iterator:
    """Every retrieved paper whose evidence clears the bar: its title, the sentence, [n]. Asked for
    papers over a large index (`list_lister_min_papers`), the lister finds them all: the answer says
    how many and quotes the first `list_max` (`Answer.listed` is the count). `answerable`: the
    question's answerability, refused below `list_min_answerability` unless one paper stands out."""
    s = engine.settings
    many = wants_many(question)
    rescued = answerable < s.list_min_answerability  # only the stand-out paper can answer then
    lone = standout(evset.hits, s.list_standout_cosine, s.list_standout_gap)
    if lone is None and s.list_joined_sentences:
        lone = joined_standout(
            engine.judge,
            described(question) or query,
            evset,
            s.list_joined_sentences,
            s.list_joined_score,
            s.list_joined_gap,
        )
    if rescued and lone is None:
        yield refusal(prompts.NO_MATCH_REASON)
        return
    cut = s.list_cut if many else s.list_single_cut
    top = evset.max_score
    keep = [
        n
        for n in evset.papers()
        if n == lone or (not rescued and evset.best[n] >= s.list_min_score and evset.best[n] >= cut * top)
    ]
    # every close paper lacking part of the description is refused, however the list is then made
    gaps = aspect_gaps(engine, question, evset, keep)
    covered = [n for n, g in zip(keep, gaps) if not g]
    if keep and not covered:
        lacking = sorted({w for g in gaps for w in g})
        yield refusal(prompts.uncovered_reason(lacking))
        return
    if many and not rescued and len(engine.retriever.bm25().papers) >= s.list_lister_min_papers:
        yield from complete_list(engine, question, query, timings, t0, refusal, filters)
        return
    keep = shown(covered, lone, many, s.list_max if many else s.list_single_max)
    if not keep:
        yield refusal(prompts.NO_MATCH_REASON)
        return
    # one paper asked for: say more of it
    lines, used = quoted_lines(evset, keep, per_paper=1 if many else s.list_single_sentences)
    header = prompts.list_header(len(lines), many)
    yield header + "\n"
    for line in lines:
        yield line + "\n"
    timings["generate_s"] = 0.0
    timings["total_s"] = time.perf_counter() - t0
    yield quoted_answer(
        question,
        header,
        lines,
        used,
        evset.hits,
        standalone_question=query,
        timings=timings,
        shape="list",
    )


def complete_list(engine, question, query, timings, t0, refusal, filters=None) -> Iterator:
    """Over a large index the lister finds every matching paper: the answer says how many and
    quotes the first `list_max` (`Answer.listed` is the count)."""
    s = engine.settings
    f = engine.retriever.filters if filters is None else filters
    res = list_papers(engine.retriever, query, f, check_coverage=False)  # aspect_gaps checked
    found = res.papers
    if not found:
        yield refusal(prompts.NO_MATCH_REASON)
        return
    first = found[: s.list_max]
    header = prompts.count_header(len(found), len(first), res.complete)
    lines, sentences, citations = [], [], []
    for n, x in enumerate(first, start=1):
        start = x.paper.text.find(x.quote)
        line = f"{x.paper.label}: {x.quote.strip()}"
        lines.append(f"{line} [{n}]")
        sentences.append(Sentence(line, [n], True, round(x.score, 4)))
        span = (start, start + len(x.quote))
        p = x.paper
        citations.append(Citation(n, p.paper_id, p.title, p.source_file, p.index, x.quote, *span, [span]))
    yield header + "\n"
    for line in lines:
        yield line + "\n"
    timings["generate_s"] = 0.0
    timings["total_s"] = time.perf_counter() - t0
    hits = [Hit(x.paper, x.score) for x in first]
    yield Answer(
        question,
        "\n".join([header, *lines]),
        citations,
        sentences,
        hits,
        standalone_question=query,
        timings=timings,
        shape="list",
        listed=len(found),
    )
