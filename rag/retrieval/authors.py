"""An author as a query in their own right: every indexed paper listing them, with decision and area, and
their co-authors in the corpus. `rag author NAME`, `rag list --author NAME` with no topic, Find papers with
only an author, and the chat (`author_papers`) read the same view.

A name matches the corpus's names that are it (any case, accents or word order: "Wei Chen" is "Chen Wei", not
"Wei-Lin Chen"), else those that have its words ("B. Schölkopf", "Schölkopf, Bernhard" and "Bernhard
Schoelkopf" are "Bernhard Schölkopf"), else as the author filter matches (rag.retrieval.filters: a part of a name). The view says which names in the corpus
matched, so "Tao" shows it is several people.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from rag.retrieval.filters import Filters, _same_name, decision_class, fold
from rag.types import Paper

# oral first, then spotlight, poster, the other accepted, rejected, withdrawn, desk rejected, unknown
_RANK = {"oral": 0, "spotlight": 1, "poster": 2, "rejected": 4, "withdrawn": 5, "desk_rejected": 6}


def _rank(p: Paper) -> tuple[int, str]:
    d = decision_class(p.decision)
    return (
        _RANK.get(d, 3 if (p.decision or "").lower().startswith("accept") else 7),
        (p.title or p.label).lower(),
    )


@dataclass
class AuthorView:
    name: str  # as typed
    papers: list[Paper] = field(default_factory=list)  # best decision first, then by title
    matched: list[str] = field(default_factory=list)  # the corpus's spellings that matched, most papers first
    coauthors: list[tuple[str, int]] = field(default_factory=list)  # (name, shared papers), most first

    def by_decision(self) -> dict[str, int]:
        return dict(Counter(p.decision or "unknown" for p in self.papers).most_common())

    def to_json(self) -> dict:
        return {
            "author": self.name,
            "matched": self.matched,
            "count": len(self.papers),
            "by_decision": self.by_decision(),
            "papers": [p.card() for p in self.papers],
            "coauthors": [{"name": n, "papers": k} for n, k in self.coauthors],
        }


def _key(name: str) -> tuple[str, ...]:
    """A name's words, folded and sorted: "Chen, Wei" and "wei chen" are one key; "Wei-Lin" stays one word."""
    return tuple(sorted(fold(name).replace(",", " ").replace(".", " ").split()))


def _papers(source) -> Mapping[str, Paper]:
    """A retriever's indexed papers, or a mapping / list of papers as given."""
    if hasattr(source, "bm25"):
        return source.bm25().papers
    if isinstance(source, Mapping):
        return source
    return {p.paper_id: p for p in source}


def author_view(source, name: str) -> AuthorView:
    """Every paper of `source` (a retriever, or papers) with an author matching `name`, and the view."""
    f = Filters.of(author=name)
    view = AuthorView(" ".join((name or "").split()))
    if not f.author:
        return view
    everyone = _papers(source).values()
    names = {a for p in everyone for a in (p.authors or []) if a.strip()}
    key = _key(f.author)
    same = {a for a in names if _key(a) == key} or {a for a in names if _same_name(f.author, a)}
    if not same:
        one = Filters(author=f.author)
        same = {a for a in names if one.author_matches([a])}
    papers = [p for p in everyone if same.intersection(p.authors or ())]
    view.papers = sorted(papers, key=_rank)
    spelled = Counter(a for p in papers for a in (p.authors or []) if a in same)
    view.matched = [a for a, _ in sorted(spelled.items(), key=lambda x: (-x[1], x[0]))]
    others = Counter(
        a for p in papers for a in dict.fromkeys(p.authors or []) if a not in spelled and a.strip()
    )
    view.coauthors = sorted(others.items(), key=lambda x: (-x[1], x[0]))
    return view


def author_papers(source, name: str) -> tuple[list[Paper], list[tuple[str, int]]]:
    """(every paper listing the author, best decision first; their co-authors with shared counts, most
    first): the engine call for the chat."""
    v = author_view(source, name)
    return v.papers, v.coauthors


class FullNames:
    """The corpus's authors' full names (two words or more), found as a question writes one in any case or
    accents ("what has sergey levine got on diffusion?"): a name the corpus writes is a name, with no pattern
    for how a question asks."""

    def __init__(self, papers: Iterable[Paper]):
        counts = Counter(a for p in papers for a in dict.fromkeys(p.authors or []) if a.strip())
        self.names: dict[tuple[str, ...], str] = {}
        for name, _ in counts.most_common():  # a spelling shared by several authors: the most published
            key = _words(name)
            if len(key) >= 2 and all(len(w) > 1 for w in key):
                self.names.setdefault(key, name)
        self.longest = max(map(len, self.names), default=0)

    def find(self, text: str) -> str | None:
        """The longest full name of an author the text writes, first found; None if none."""
        ws = [w.removesuffix("'s") for w in _words(text.replace("’", "'"))]
        for n in range(self.longest, 1, -1):
            for i in range(len(ws) - n + 1):
                if name := self.names.get(tuple(ws[i : i + n])):
                    return name
        return None


def _words(text: str) -> tuple[str, ...]:
    """The folded words of a name or a question: letters, digits, "-" and "'" kept together."""
    return tuple("".join(c if c.isalnum() or c in "-'" else " " for c in fold(text)).split())
