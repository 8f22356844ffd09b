"""Decision answers ("was it accepted?", "which of the two was an oral?"): said from the decisions the index
holds for the papers asked about, never from their abstracts, so no sentence is cited.
"""

from __future__ import annotations

from collections.abc import Iterator

from rag.grounding.turn import Turn
from rag.reading.reader import AUX, words
from rag.retrieval.filters import Filters, decision_class
from rag.types import Hit, Sentence

_AS = {"oral": "an oral", "spotlight": "a spotlight", "poster": "a poster"}
SOURCE = "(Decisions as the index records them from OpenReview, not from the abstracts.)"


def decision_line(paper) -> str:
    """ "“Title” was accepted … as an oral.", "“Title” was rejected.": what the index holds of one paper."""
    c = decision_class(paper.decision)
    title = f"“{paper.label}”"
    if c in _AS:
        return f"{title} was accepted at ICLR 2025 as {_AS[c]}."
    if c in ("rejected", "withdrawn"):
        return f"{title} was {c}" + (" before a decision." if c == "withdrawn" else ".")
    if c:
        return f"{title}: {paper.decision}."
    return f"The index holds no decision for {title}."


def decision_answer(turn: Turn, hits: list[Hit]) -> Iterator:
    """One line per paper asked about; a yes/no question about one paper ("was it an oral?") starts with its
    answer, and one about several with the papers that match."""
    asked = turn.reading.decision
    # one decision asked ("was it an oral?") gets a yes or no; "accepted or rejected?" just the decisions
    match = Filters(asked).decision_matches if asked and "," not in asked else None
    papers = [h.paper for h in hits]
    lines = [decision_line(p) for p in papers]
    lead = ""
    if match and len(papers) == 1 and set(words(turn.reading.asked)[:1]) & AUX:  # "was it …?", "did it …?"
        lead = "Yes: " if match(papers[0].decision) else "No: "
    elif match and len(papers) > 1:
        hit = [f"“{p.label}”" for p in papers if match(p.decision)]
        k = f"{len(hit)} of the {len(papers)} papers" if hit else f"None of the {len(papers)} papers"
        verb = "match" if len(hit) > 1 else "matches"
        lead = f"{k} {verb} “{asked}”" + (": " + "; ".join(hit) if hit else "") + ".\n"
    text = lead + "\n".join(lines) + "\n" + SOURCE
    yield text
    yield turn.answer([Sentence(x, [], True, 1.0) for x in lines], hits, text=text)
