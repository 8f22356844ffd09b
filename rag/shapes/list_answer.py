"""List-shaped answers ("which papers …", "is there work on …"): one quoted line per paper, from the lister
that Find and `rag list` use, so the same topic and filters give the same count. Nothing is generated.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

from rag import prompts
from rag.grounding.evidence import EvidenceSet, quote_sentences
from rag.grounding.turn import Turn
from rag.retrieval.filters import decision_class
from rag.shapes.lister import Listed, PaperList, find
from rag.text import unbraced
from rag.types import Caveat, Hit, Sentence


def list_answer(turn: Turn, res: PaperList | None = None) -> Iterator:
    """The lister's list (rag.shapes.lister.find: the same list and count as Find and `rag list`; `res` when
    already found); when no paper is about every part of the topic, a caveat saying which words none has, and the
    closest retrieved papers."""
    reading, evset, outcome, g = turn.reading, turn.evidence, turn.outcome, turn.settings.grounding
    res = res or find(turn.retriever, turn.settings, reading.topic, reading.filters)
    if res.papers:
        yield from _listed(res, turn, g.list_max, reading.page)
        return
    # why: the words none of the closest covers (unless a caveat already says no abstract mentions them), else
    # the lister's own reason (a filter, no word to look for)
    said = " ".join(c.text for c in outcome.caveats if c.code == "term_absent").lower()
    lacking = [w for w in res.lacking if f"“{w.lower()}”" not in said]
    what = f" ({reading.filters.describe()})" if reading.filters else ""
    if lacking or not res.lacking:
        why = prompts.no_list_line(reading.topic, lacking) if lacking else res.why_empty(what)
        outcome.caveats.append(Caveat("partial_match", why))
    yield from outcome.caveats
    if res.reason:  # no word to look for ("and", "*"): no paper is close to nothing
        yield turn.answer([], [], text=outcome.caveats[-1].text)
        return
    # the closest, numbered 1, 2, 3 as shown
    shown = [n for n in evset.papers() if evset.top(n)][: g.list_closest]
    at = {n: i for i, n in enumerate(shown, start=1)}
    hits = [evset.hits[n - 1] for n in shown] + [h for i, h in enumerate(evset.hits, 1) if i not in at]
    quotes = [replace(evset.top(n), paper_n=at[n]) for n in shown]
    sentences = quote_sentences(quotes, EvidenceSet(evset.question, hits), titled=True)
    header = prompts.NO_LIST_HEADER
    yield header + "\n" + "\n".join(f"{x.text} [{x.citations[0]}]" for x in sentences)
    # "what does 2 do?" next means the second paper shown here
    shown_ids = [h.paper.paper_id for h in hits[: len(shown)]]
    yield turn.answer(sentences, hits, text=_text(header, sentences), follows_list=shown_ids)


def _listed(res, turn: Turn, limit: int, page: int = 0) -> Iterator:
    """The lister's list: how many match, and the `page`th `limit` of them quoted."""
    first = res.papers[page * limit : (page + 1) * limit]
    author = res.author.name if res.author is not None else None
    if not first:  # "show me the rest" of a list already shown in full
        yield turn.answer([], [], text=prompts.all_listed(len(res.papers)))
        return
    header = prompts.count_header(len(res.papers), len(first), res.complete, author, page * limit)
    # a later page is numbered on from the pages before ("#14" is the list's 14th), which stay its sources
    hits = [Hit(x.paper, x.score) for x in res.papers[: page * limit + len(first)]]
    sentences = [listed_sentence(x, n, decided(x.paper)) for n, x in enumerate(first, start=page * limit + 1)]
    yield from turn.outcome.caveats
    yield header + "\n" + "\n".join(f"{x.text} [{x.citations[0]}]" for x in sentences)
    yield turn.answer(  # the list shown is these papers ("the second one" points here), not one before
        sentences,
        hits,
        text=_text(header, sentences),
        listed=len(res.papers),
        listed_from=page * limit,
        listed_query=res.query,
        follows_list=[h.paper.paper_id for h in hits] if page else [],
    )


def decided(paper) -> str:
    """ "Title (Oral)": a listed paper's label with its decision, so a list says which were accepted."""
    word = decision_class(paper.decision).replace("_", "-").capitalize()
    return f"{paper.label} ({word})" if word else paper.label


def listed_sentence(x: Listed, n: int, label: str | None = None) -> Sentence:
    """A listed paper's quote as answer sentence `n` ("Title: quote" with `label`), cited at its offsets."""
    a = x.paper.text.find(x.quote)
    span = [(n, a, a + len(x.quote))] if a >= 0 else []
    text = unbraced(x.quote.strip())
    return Sentence(f"{label}: {text}" if label else text, [n], True, round(x.score, 4), True, span)


def _text(header: str, sentences: list[Sentence]) -> str:
    return "\n".join([header, *(f"{x.text} [{x.citations[0]}]" for x in sentences)])
