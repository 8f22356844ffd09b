"""More like this: the papers of the conference nearest to one paper, by the cosine of their stored paper
vectors (each the normalized mean of its chunk vectors). `rag similar PAPER_ID`, the "More like this" link on
every paper card and the lister's `like:PAPER_ID` topic read the same function."""

from __future__ import annotations

import re

import numpy as np

from rag.errors import UserError
from rag.retrieval.filters import Filters
from rag.types import Paper

# the lister's topic for "papers like this one": `like:<OpenReview id>`
LIKE = re.compile(r"^\s*like:\s*(\S+)\s*$", re.I)


def like_topic(paper_id: str) -> str:
    return f"like:{paper_id}"


def liked(topic: str) -> str | None:
    """The paper id of a `like:ID` topic, else None."""
    m = LIKE.match(topic or "")
    return m.group(1) if m else None


def similar(
    retriever, paper_id: str, k: int = 10, filters: Filters | None = None
) -> tuple[Paper, list[tuple[Paper, float]]]:
    """(the paper, its `k` nearest indexed papers with their cosines, nearest first); `filters` keep only
    matching neighbours. An id no paper has raises UserError."""
    side = retriever.bm25()
    paper = side.papers.get(paper_id)
    if paper is None:
        raise UserError(
            f"No indexed paper has the id '{paper_id}' (an OpenReview forum id, e.g. from its URL)."
        )
    ids, row, mat = side.paper_matrix
    if paper_id not in row:
        return paper, []
    sims = mat @ mat[row[paper_id]]
    sims[row[paper_id]] = -np.inf
    f = filters or Filters()
    out = []
    for i in np.argsort(-sims, kind="stable"):
        if len(out) >= k or not np.isfinite(sims[i]):
            break
        p = side.papers[ids[i]]
        if not f or f.matches(p):
            out.append((p, float(sims[i])))
    return paper, out
