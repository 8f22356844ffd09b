"""Paper filters: decision, primary area, author. One small type shared by retrieval, lists and the CLI.

- decision: `oral | spotlight | poster | accepted | rejected | withdrawn | desk_rejected`, or the exact
  corpus string ("Accept (Oral)", "Reject", ...), case-insensitive; `accepted` is any "Accept (...)".
- area: a primary area, case-insensitive exact match (HTML entities such as `&amp;` read as `&`).
- author: a substring of one author's name, case- and accent-insensitive (Unicode NFKD).
"""

from __future__ import annotations

import functools
import html
import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from rag.errors import UserError
from rag.text import without_venue
from rag.types import Paper

DECISION_CLASSES = ("oral", "spotlight", "poster", "rejected", "withdrawn", "desk_rejected")
DECISION_WORDS = ("oral", "spotlight", "poster", "accepted", "rejected", "withdrawn", "desk_rejected")


def decision_class(decision: str | None) -> str:
    """'Accept (Oral)' -> 'oral', 'Reject' -> 'rejected', 'Desk Rejected' -> 'desk_rejected'; '' if unknown."""
    if not decision:
        return ""
    d = " ".join(decision.lower().split())
    m = re.fullmatch(r"accept(?:ed)?\s*\((\w+)\)", d)
    if m:
        return m.group(1)
    if d in ("reject", "rejected"):
        return "rejected"
    return re.sub(r"\W+", "_", d).strip("_")


def fold(text: str) -> str:
    """Case- and accent-insensitive form: NFKD, combining marks dropped, casefolded, spaces collapsed."""
    decomposed = unicodedata.normalize("NFKD", text)
    bare = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    return " ".join(bare.casefold().split())


_UMLAUT = {"ä": "ae", "ö": "oe", "ü": "ue", "Ä": "Ae", "Ö": "Oe", "Ü": "Ue"}


def _spelled_out(text: str) -> str:
    """Folded, with umlauts written out: "Schölkopf" -> "schoelkopf"."""
    return fold("".join(_UMLAUT.get(c, c) for c in text))


@functools.lru_cache(maxsize=65536)
def _name_words(name: str, umlauts: bool = False) -> tuple[frozenset[str], ...]:
    """A name's words, folded, "Last, First" read as "First Last"; each word with its spellings: an author's
    "Schölkopf" is also "Schoelkopf" (`umlauts`; a typed name is taken as typed)."""
    if name.count(",") == 1:
        last, first = name.split(",")
        name = f"{first} {last}"
    words = re.findall(r"\w+", name)
    return tuple(frozenset({fold(w), _spelled_out(w)} if umlauts else {fold(w)}) for w in words)


def _same_name(typed: str, author: str) -> bool:
    """Each word of the typed name is a different word of the author's, or (one letter) the initial of a
    different one, in any order; one of them is more than an initial ("B. Schölkopf", "Schölkopf, Bernhard",
    "Bernhard Schoelkopf"; "W. Wang" is not "Xiao Wang")."""
    want = [next(iter(w)) for w in _name_words(typed)]
    have = list(_name_words(author, umlauts=True))
    if not any(len(w) > 1 for w in want):
        return False
    for w in sorted(want, key=len, reverse=True):  # whole words first, so an initial takes what is left
        hit = next(
            (i for i, h in enumerate(have) if w in h or (len(w) == 1 and any(x[:1] == w for x in h))), None
        )
        if hit is None:
            return False
        have.pop(hit)
    return True


def area_key(area: str | None) -> str:
    return fold(html.unescape(area or ""))


ACCEPTED = ("oral", "spotlight", "poster")
_LABELS = {
    "oral": "orals",
    "spotlight": "spotlights",
    "poster": "posters",
    "accepted": "accepted papers",
    "rejected": "rejected papers",
    "withdrawn": "withdrawn papers",
    "desk_rejected": "desk-rejected papers",
}


def _decision_values(value: str) -> list[str]:
    """ "oral, spotlight", "oral or spotlight", "oral/spotlight": either decision."""
    return [v for v in re.split(r"\s*(?:,|/|\+|\bor\b|\band\b)\s*", value) if v.strip()]


def _decision_key(value: str) -> str:
    v = fold(value).replace("-", " ").replace("_", " ")
    aliases = {
        "orals": "oral",
        "spotlights": "spotlight",
        "posters": "poster",
        "accept": "accepted",
        "reject": "rejected",
        "rejections": "rejected",
        "withdrew": "withdrawn",
        "desk rejected": "desk_rejected",
        "desk reject": "desk_rejected",
    }
    return aliases.get(v, v)


@dataclass(frozen=True)
class Filters:
    decision: str | None = None
    area: str | None = None
    author: str | None = None

    @classmethod
    def of(cls, decision: str | None = None, area: str | None = None, author: str | None = None) -> Filters:
        """From user input: blank values are no filter."""

        def clean(v):
            return " ".join(v.split()) if isinstance(v, str) and v.strip() else None

        return cls(clean(decision), clean(area), clean(author))

    def __bool__(self) -> bool:
        return any((self.decision, self.area, self.author))

    # ------------------------------------------------------------ matching
    def decision_matches(self, decision: str | None) -> bool:
        """One of the filter's decisions ("oral, spotlight": either) is the paper's."""
        if not self.decision:
            return True
        for value in _decision_values(self.decision):
            key = _decision_key(value)
            if key == "accepted":
                if decision_class(decision) in ACCEPTED or fold(decision or "").startswith("accept"):
                    return True
            elif key in DECISION_CLASSES:
                if decision_class(decision) == key:
                    return True
            elif fold(decision or "") == fold(value):
                return True
        return False

    def area_matches(self, area: str | None) -> bool:
        return not self.area or area_key(area) == area_key(self.area)

    def author_matches(self, authors: Iterable[str] | None) -> bool:
        """A part of an author's name ("bengio", "NÚÑ"), or a name written another usual way: "Schölkopf,
        Bernhard", "B. Schölkopf", "Bernhard Schoelkopf" all match "Bernhard Schölkopf"."""
        if not self.author:
            return True
        needle = fold(self.author)
        key = max((next(iter(w)) for w in _name_words(self.author)), key=len, default="")
        for a in authors or ():
            folded = fold(a)
            if needle in folded:
                return True
            # the typed name's longest word must be in the author's for any other form to match (fast path)
            umlauted = any(c in _UMLAUT for c in a) and key in _spelled_out(a)
            if (key in folded or umlauted) and _same_name(self.author, a):
                return True
        return False

    def matches(self, paper: Paper) -> bool:
        return (
            self.decision_matches(paper.decision)
            and self.area_matches(paper.primary_area)
            and self.author_matches(paper.authors)
        )

    def allowed(self, papers: Mapping[str, Paper]) -> set[str]:
        """Ids of the papers that pass."""
        return {pid for pid, p in papers.items() if self.matches(p)}

    # ------------------------------------------------------------ showing
    def describe(self) -> str:
        """'orals, in "reinforcement learning", by an author matching "Bengio"'; '' when unfiltered."""
        parts = []
        if self.decision:
            labels = [
                _LABELS.get(_decision_key(v), f'decision "{v}"') for v in _decision_values(self.decision)
            ]
            parts.append(" or ".join(labels))
        if self.area:
            parts.append(f'in "{self.area}"')
        if self.author:
            parts.append(f'by an author matching "{self.author}"')
        return ", ".join(parts)

    def to_json(self) -> dict:
        return {"decision": self.decision, "area": self.area, "author": self.author}

    # ------------------------------------------------------------ checking
    def validate(self, papers: Mapping[str, Paper]) -> set[str]:
        """The allowed paper ids; a value that matches no indexed paper raises UserError saying what would."""
        if not self:
            return set(papers)
        values = list(papers.values())
        for value in _decision_values(self.decision or ""):  # each of "oral, spotlight"
            if any(Filters(value).decision_matches(p.decision) for p in values):
                continue
            corpus = sorted({p.decision for p in values if p.decision})
            raise UserError(
                f"No indexed paper has decision '{value}'. Use one of: {', '.join(DECISION_WORDS)}"
                + (f", or exactly: {', '.join(corpus)}." if corpus else " (the index holds no decisions).")
            )
        if self.area and not any(self.area_matches(p.primary_area) for p in values):
            areas = sorted({html.unescape(p.primary_area) for p in values if p.primary_area})
            raise UserError(
                f"No indexed paper has primary area '{self.area}'. Valid areas: "
                + ("; ".join(areas) + "." if areas else "none (the index holds no primary areas).")
            )
        if self.author and not any(self.author_matches(p.authors) for p in values):
            raise UserError(
                f"No indexed paper has an author matching '{self.author}' (case and accents are ignored)."
            )
        allowed = self.allowed(papers)
        if not allowed:
            raise UserError(f"No indexed paper matches all of these filters together: {self.describe()}.")
        return allowed


# ---------------------------------------------------------------- from a question
_SPAN = r"(?:papers?|submissions?|works?|ones|abstracts?)"
_AS = r"(?:(?:were|was|are|is|got|get)\s+)?(?:accepted\s+)?as\s+(?:an?\s+)?"
_GOT = r"(?:got|get|gets|received|won)\s+(?:an?\s+)?"  # "got an oral"
_KIND = r"(oral|spotlight|poster)"
_FATE = r"(withdrawn|withdrew|rejected|rejections|accepted)"  # "rejection sampling" is no decision
# a pattern with no class reads it from the word it matched ("withdrew": withdrawn); desk rejection first, and
# "accepted" alone (`_FATES`) after "accepted as oral"
_DECISION_PATTERNS: list[tuple[str | None, re.Pattern]] = [
    ("desk_rejected", re.compile(rf"\bdesk[- ]?reject(?:ed|ions?)?(?:\s+{_SPAN})?", re.I)),
    (
        None,
        re.compile(
            rf"\b(?:{_KIND}s\b|{_KIND}\s+(?:presentations?\b|{_SPAN})|{_AS}{_KIND}s?|{_GOT}{_KIND})\b", re.I
        ),
    ),
]
_FATES = re.compile(rf"\b{_FATE}(?:\s+{_SPAN})?|\b{_SPAN}\s+that\s+were\s+{_FATE}\b", re.I)
# "not", "remove the", "excluding the", "that aren't": the decision that follows is one the user does not want
_NEGATION = re.compile(
    r"\b(?:not|no|non|without|except|excluding|exclude|remove|drop|skip|minus|hide|ignore|filter\s+out|"
    r"get\s+rid\s+of|other\s+than|leave\s+out|(?:don'?t|do\s+not)\s+(?:want|need|show)(?:\s+to\s+\w+)?|"
    r"(?:did|was|were|are|is)(?:n'?t|\s+not))(?:[\s-]+(?:the|any|all|those|these|of|get|got|be|been))*[\s-]*$",
    re.I,
)
# what "not X" leaves: withdrawn and desk-rejected papers were not decided on
_DECIDED = ("oral", "spotlight", "poster", "rejected")
_BARE = re.compile(rf"\b{_KIND}s?\b", re.I)  # "which were oral or spotlight?" (a list follow-up)
# "papers that were (not) accepted", "papers that aren't posters": "papers"
_THAT_WERE = re.compile(
    r"\s+(?:that|which)(?:\s+(?:were|was|got|are|is|did|have\s+been|had\s+been))?(?:\s+(?:get|be|been))?$",
    re.I,
)
# a decision word joined to one said: "oral or spotlight papers", "posters + orals"
_JOINED = re.compile(
    r"\b(oral|spotlight|poster)s?\s*(?:,|/|\+|&|\bor\b|\band\b)\s*$|"
    r"^\s*(?:,|/|\+|&|\bor\b|\band\b)\s*(oral|spotlight|poster)s?\b",
    re.I,
)


def decisions_said(
    text: str, bare: bool = False, fates: bool = True
) -> tuple[str | None, list[tuple[int, int]]]:
    """The decisions a message asks for, as one filter value ("oral, spotlight"), and where they were said:
    "orals or spotlights" is either; "remove the rejected ones, only accepted" and "papers not accepted" drop
    the decisions said after a negation. `bare` also reads "oral" alone (a filter follow-up on a list); without
    `fates`, "accepted", "rejected" and "withdrawn" are not read ("is the action accepted or rejected?")."""
    spans: list[tuple[int, int]] = []
    want: list[str] = []
    drop: set[str] = set()
    patterns = _DECISION_PATTERNS + [(None, p) for p, on in ((_FATES, fates), (_BARE, bare)) if on]
    for cls, pat in patterns:
        for m in pat.finditer(text):
            if any(a < m.end() and m.start() < b for a, b in spans):  # "desk rejected", "accepted as oral"
                continue
            spans.append((m.start(), m.end()))
            (drop.add if _NEGATION.search(text[: m.start()]) else want.append)(cls or _said_class(m))
    for a, b in spans:  # "oral, spotlight or poster papers": the decisions joined to one said (new ones too)
        for at, m in [(0, _JOINED.search(text[:a])), (b, _JOINED.search(text[b:]))]:
            g = 1 if m and m.group(1) else 2
            if not m or any(c < at + m.end(g) and at + m.start(g) < d for c, d in spans):
                continue
            spans.append((at + m.start(g), at + m.end(g)))
            (drop.add if _NEGATION.search(text[:a]) else want.append)(m.group(g).lower())
    if not spans:
        return None, []
    classes = [c for c in DECISION_CLASSES if c in _classes(want or _DECIDED)]
    keep = [c for c in classes if c not in _classes(drop)]
    if set(ACCEPTED) <= set(keep):  # the three accepted kinds: "accepted"
        keep = ["accepted"] + [c for c in keep if c not in ACCEPTED]
    return (", ".join(keep) or None), sorted(spans)


def _said_class(m: re.Match) -> str:
    return _decision_key(next(g for g in m.groups() if g))  # "withdrew": withdrawn


def _classes(said) -> set[str]:
    return {c for d in said for c in (ACCEPTED if d == "accepted" else (d,))}


# "papers by Yoshua Bengio", "work from J. Doe", "authored by Ana Núñez", "Bengio's papers"
_STOP = (
    r"(?:on|about|in|into|that|which|who|with|for|and|or|at|the|to|regarding|using|published|"
    r"accepted|rejected|withdrawn|at|iclr|is|are|was|were|do|does|did|have|has)\b"
)
_WORD = r"[\w][\w.'\-]*"
_NAME = rf"(?!{_STOP}){_WORD}(?:\s+(?!{_STOP}){_WORD}){{0,3}}"
_BY = re.compile(rf"(?:\b({_SPAN})\s+|\b(?:written|authored|co-authored)\s+)(?:by|from)\s+({_NAME})", re.I)
# "what papers did NAME publish", "which work has NAME written"
_DID = re.compile(
    rf"\b({_SPAN})\s+(?:did|has|have|had)\s+({_NAME})\s+(?:publish|write|wrote|written|author|co-author|submit)\w*",
    re.I,
)
_POSSESSIVE = re.compile(rf"\b([A-Z][\w.\-]*(?:\s+[A-Z][\w.\-]*){{0,3}})['’]s\s+((?:\w+\s+)?{_SPAN})\b")
_NOT_NAMES = {"iclr", "the", "this", "these", "what", "which", "how", "my", "our", "their", "all", "any"}
_NOT_NAMES |= set(
    "earlier before above previously last recent here there then now a an".split()
)  # "from earlier"


def _tidy(text: str) -> str:
    text = re.sub(r"\s+([?.!,;:])", r"\1", " ".join(text.split()))
    n = 1
    while n:  # "papers, papers or papers": "papers"
        text, n = re.subn(
            r"\b(papers?)(?:\s*(?:,|/|\+|\bor\b|\band\b|\bbut\b))?\s*\1\b", r"\1", text, flags=re.I
        )
    return text.strip(" ,")


def filters_from_question(question: str, listed: bool = False) -> tuple[Filters, str]:
    """Detect a decision ("orals", "rejected papers", "accepted papers", "withdrawn") and an author
    ("papers by NAME", "NAME's papers") in a question: (the filters, the question with those words
    replaced by "papers"). `listed`: a list is shown, so "rejected only" is said of its papers. The caller
    shows the user which filter was applied (`Filters.describe()`)."""
    author = None
    cleaned = without_venue(question)  # "spotlights from iclr25 about …": no author named "iclr25"
    # "accepted" is said of papers ("accepted papers on X", "papers that weren't accepted"), or of something else
    fates = listed or bool(re.search(rf"\b{_SPAN}\b", cleaned, re.I))
    decision, spans = decisions_said(cleaned, fates=fates)
    for a, b in sorted(spans, reverse=True):
        before = _NEGATION.sub("", cleaned[:a].rstrip()).rstrip()
        before = _THAT_WERE.sub("", before).rstrip()  # "papers that were (not) accepted": "papers"
        repl = "" if re.search(rf"\b{_SPAN}\b", before, re.I) else "papers"  # "papers on X that got an oral"
        if not repl:  # "accepted papers but not posters about X"
            before = re.sub(r"\s*(?:,|\bbut\b|\band\b|\bor\b)$", "", before, flags=re.I)
        cleaned = f"{before} {repl} {cleaned[b:].lstrip()}"
    m = _BY.search(cleaned) or _DID.search(cleaned)
    if m and m.group(2).split()[0].lower() not in _NOT_NAMES:
        author = m.group(2).strip(" .'")
        cleaned = f"{cleaned[: m.start()]} {m.group(1) or ''} {cleaned[m.end() :]}"
    else:
        m = _POSSESSIVE.search(cleaned)
        if m and m.group(1).split()[0].lower() not in _NOT_NAMES:
            author = m.group(1)
            cleaned = f"{cleaned[: m.start()]} {m.group(2)} {cleaned[m.end() :]}"
    if decision is None and author is None:
        return Filters(), question
    return Filters(decision, None, author), _tidy(cleaned)
