"""The paper-filter controls both tabs share (the chat's filters and Find papers): their values, and
the Filters they stand for."""

from __future__ import annotations

import html

from rag.retrieval.filters import Filters

ANY = "any"
DECISIONS = [ANY, "oral", "spotlight", "poster", "accepted", "rejected", "withdrawn", "desk_rejected"]


def filters_of(decision: str | None, area: str | None, author: str | None) -> Filters:
    """Controls -> Filters ("any" and blanks are no filter)."""
    return Filters.of(
        None if decision in (None, ANY) else decision, None if area in (None, ANY) else area, author
    )


def areas(papers) -> list[str]:
    """The primary areas of the indexed papers, sorted (entities unescaped): the area dropdowns' choices."""
    return sorted({html.unescape(p.primary_area) for p in papers.values() if p.primary_area})
