"""List-shaped answers ("which papers …", "is there work on …"): one quoted line per paper. Over a large
index the lister finds them all, exactly as Find and `rag list` do for the same topic and filters; over
a small one, the retrieved papers whose evidence clears the bar. Nothing is generated.
"""

from __future__ import annotations

from collections.abc import Iterator

from rag import prompts
from rag.evidence import EvidenceSet, quote_sentences
from rag.lister import list_papers
from rag.outcome import Outcome, asked_words, idf_cover
from rag.types import Caveat, Hit, Sentence


def list_answer(engine, reading, evset: EvidenceSet, outcome: Outcome, done) -> Iterator:
    s = engine.settings
    lexical = engine.retriever.bm25()
    if len(lexical.papers) >= s.list_lister_min_papers:
        res = list_papers(engine.retriever, reading.topic, reading.filters)
        if res.papers:
            yield from _listed(res, reading, outcome, done, s.list_max)
            return
        outcome.caveats.append(Caveat("partial_match", prompts.no_list_line(reading.topic, res.lacking)))
    top = evset.max_score
    keep = [
        n for n in evset.papers() if evset.best[n] >= s.list_min_score and evset.best[n] >= s.list_cut * top
    ]
    words = asked_words(reading.topic, reading.terms)
    covered = [
        n for n in keep if idf_cover(words, evset.hits[n - 1].paper.words, lexical.idf) >= s.list_min_cover
    ]
    if keep and not covered and not any(c.code == "partial_match" for c in outcome.caveats):
        outcome.caveats.append(Caveat("partial_match", prompts.no_list_line(reading.topic, [])))
    shown = (covered or keep or evset.papers()[:1])[: s.list_max]
    yield from outcome.caveats
    sentences = quote_sentences([evset.top(n) for n in shown if evset.top(n)], evset, titled=True)
    header = prompts.list_header(len(sentences) if covered else 0)
    yield header + "\n" + "\n".join(f"{x.text} [{x.citations[0]}]" for x in sentences)
    yield done.answer(sentences, evset.hits, outcome, text=_text(header, sentences))


def _listed(res, reading, outcome: Outcome, done, limit: int) -> Iterator:
    """The lister's list: how many match, and the first `limit` quoted."""
    first = res.papers[:limit]
    header = prompts.count_header(len(res.papers), len(first), res.complete)
    hits = [Hit(x.paper, x.score) for x in first]
    sentences = []
    for n, x in enumerate(first, start=1):
        a = x.paper.text.find(x.quote)
        span = [(n, a, a + len(x.quote))] if a >= 0 else []
        sentences.append(
            Sentence(f"{x.paper.label}: {x.quote.strip()}", [n], True, round(x.score, 4), True, span)
        )
    yield from outcome.caveats
    yield header + "\n" + "\n".join(f"{x.text} [{x.citations[0]}]" for x in sentences)
    yield done.answer(sentences, hits, outcome, text=_text(header, sentences), listed=len(res.papers))


def _text(header: str, sentences: list[Sentence]) -> str:
    return "\n".join([header, *(f"{x.text} [{x.citations[0]}]" for x in sentences)])
