"""Paper records -> CSV, Markdown and BibTeX. General: they take papers (with an optional quote each), so
`rag list`, `rag ask` and the UI share them. Corpus text is escaped: exports are safe to open or render."""

from __future__ import annotations

import csv
import html
import io
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from rag.prompts import NOT_FOUND, REFUSAL
from rag.retrieval.filters import decision_class
from rag.types import Paper


@dataclass
class Row:
    paper: Paper
    quote: str = ""
    score: float | None = None


def rows_of(items: Iterable) -> list[Row]:
    """Papers, Listed items (`.paper`, `.quote`, `.score`) or Hits (`.paper`, `.score`) -> rows."""
    out = []
    for x in items:
        if isinstance(x, Paper):
            out.append(Row(x))
        else:
            out.append(Row(x.paper, getattr(x, "quote", "") or "", getattr(x, "score", None)))
    return out


def _area(p: Paper) -> str:
    return html.unescape(p.primary_area or "")


ALPHABETICAL = "alphabetical in the source"


def alphabetical(p: Any) -> bool:
    """The bundled source lists most papers' authors sorted by first name, not in byline order
    (seeds/ICLR2025_SOURCE.md; no public byline list was found): three or more names in exactly sorted
    order are taken as the source's order, and every export and page says so."""
    names = [plain(a) for a in (getattr(p, "authors", None) or []) if plain(a)]
    return len(names) >= 3 and names == sorted(names)


# ---------------------------------------------------------------- CSV
CSV_FIELDS = (
    "paper_id",
    "title",
    "decision",
    "primary_area",
    "authors",
    "authors_order",
    "url",
    "quote",
    "score",
)


def _cell(value: str) -> str:
    """Spreadsheets run a cell starting with = + - @ as a formula: such cells get a leading quote."""
    return "'" + value if value[:1] in ("=", "+", "-", "@", "\t", "\r") else value


def to_csv(items: Iterable) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(CSV_FIELDS)
    for r in rows_of(items):
        p = r.paper
        w.writerow(
            [
                _cell(str(v))
                for v in (
                    p.paper_id,
                    p.title or "",
                    p.decision or "",
                    _area(p),
                    "; ".join(p.authors or []),
                    ALPHABETICAL if alphabetical(p) else "",
                    p.url or "",
                    r.quote,
                    "" if r.score is None else f"{r.score:.4f}",
                )
            ]
        )
    return buf.getvalue()


# ---------------------------------------------------------------- Markdown
_MD_SPECIAL = re.compile(r"([\\`*_\[\]#|])")


def md_escape(text: str) -> str:
    """Corpus text for Markdown: HTML escaped (a `<script>` title stays text), Markdown syntax defused, a bare
    URL shown as code (GFM would make it a link)."""
    text = " ".join((text or "").split())
    return _code_urls(text, lambda t: _MD_SPECIAL.sub(r"\\\1", html.escape(t, quote=False)))


_BARE_URL = re.compile(r"(?:\b(?:https?|ftp)://|\bwww\.)[^\s<>`]+", re.I)


def _code_urls(text: str, rest) -> str:
    """`rest(piece)` of the text between bare URLs; each URL as a code span: shown, never a link or a fetch."""
    out, pos = [], 0
    for m in _BARE_URL.finditer(text):
        url = m.group().rstrip(".,;:!?)]")
        out += [rest(text[pos : m.start()]), f"`{url}`"]
        pos = m.start() + len(url)
    return "".join(out) + rest(text[pos:])


def inert_links(text: str, own_urls: Iterable[str] = ()) -> str:
    """Markdown written from corpus or model text, its links and images made inert: `[t](u)`, `![a](u)` and
    reference definitions print as written, a bare URL as code; only a link to one of `own_urls` (the cited
    papers' http(s) pages) stays a link. Citation markers ("[1]") are untouched."""
    own = "|".join(re.escape(u) for u in own_urls if u and _SAFE_URL_RE.match(u)) or "(?!)"
    text = re.sub(r"(?m)^(\s{0,3}\[[^\]\n]*\]):", r"\1\\:", text.replace("![", "!\\["))
    parts = re.split(rf"(?<![\\!])(\[[^\[\]\n]*\]\((?:{own})\))", text)  # odd positions: links kept
    return "".join(
        p if i % 2 else _code_urls(p, lambda t: t.replace("](", "]\\(")) for i, p in enumerate(parts)
    )


def to_markdown(items: Iterable, heading: str | None = None) -> str:
    lines = [f"# {md_escape(heading)}", ""] if heading else []
    for n, r in enumerate(rows_of(items), start=1):
        p = r.paper
        title = md_escape(p.label)
        head = f"[{title}]({_url(p)})" if _url(p) else title
        meta = " · ".join(md_escape(x) for x in (p.decision or "", _area(p)) if x)
        lines.append(f"{n}. **{head}**" + (f" — {meta}" if meta else ""))
        if p.authors:
            note = f"Authors ({ALPHABETICAL}): " if alphabetical(p) else ""
            lines.append(f"   {note}{md_escape(', '.join(p.authors))}")
        if r.quote:
            lines.append(f"   > {md_escape(r.quote)}")
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


# ---------------------------------------------------------------- BibTeX
_BIB_SPECIAL = {"&": r"\&", "%": r"\%", "#": r"\#", "_": r"\_", "~": r"\~{}", "^": r"\^{}"}


def _bib(text: object) -> str:
    """Corpus text as a BibTeX field value: no HTML; its LaTeX kept where it is well formed ("$\\epsilon$-VAE",
    "\\emph{De Novo}"), braces kept only when they balance (else dropped, so every entry stays balanced),
    a backslash outside math only before a command with an argument; specials escaped outside $…$ math."""
    s = plain(text)
    if not _balanced(s):
        s = s.replace("{", "").replace("}", "")
    out = []
    for part in re.split(r"(\$[^$]*\$)", s):
        if part.startswith("$") and part.endswith("$") and len(part) > 1:
            out.append(part)
        else:
            # outside math a backslash starts only a text-style command ("\\emph{…}"); of any other
            # command the argument is kept ("\\title{X}" -> "{X}"), a lone "\\" dropped ("\\OF" would not
            # compile; "50\\%" is escaped again below), a line break "\\\\" is a space
            part = part.replace("\\\\", " ")
            part = re.sub(r"\\(?!(?:" + _TEXT_COMMANDS + r")\{)[A-Za-z]*(?=\{)|\\(?![A-Za-z]+\{)", "", part)
            out.append("".join(_BIB_SPECIAL.get(ch, ch) for ch in part.replace("$", r"\$")))
    return " ".join("".join(out).split())


_TEXT_COMMANDS = "emph|textit|textbf|textsc|texttt|textrm|textsf|underline|mathrm|mathbf|mathcal"


def _balanced(text: str) -> bool:
    depth = 0
    for ch in text:
        depth += {"{": 1, "}": -1}.get(ch, 0)
        if depth < 0:
            return False
    return depth == 0


def bib_key(p: Paper) -> str:
    """The OpenReview id where the paper has one, else its id made BibTeX-safe."""
    return re.sub(r"[^A-Za-z0-9_\-:]", "_", str(p.paper_id)) or "paper"


def to_bibtex(items: Iterable) -> str:
    """`@inproceedings` (booktitle ICLR 2025) for accepted papers, `@misc` with a note for the others
    (rejected, withdrawn or unknown); keyed by OpenReview id. Fields carry no HTML and balanced braces."""
    entries, used = [], set()
    for r in rows_of(items):
        p = r.paper
        key, k = bib_key(p), 2
        while key in used:
            key, k = f"{bib_key(p)}_{k}", k + 1
        used.add(key)
        accepted = decision_class(p.decision) in ("oral", "spotlight", "poster")
        fields = [("title", "{" + _bib(p.label) + "}")]  # braced: styles keep its capitals ("ThunderKittens")
        authors = " and ".join(_bib(a) for a in (p.authors or []) if plain(a))
        if authors:
            fields.append(("author", authors))
        if accepted:
            fields.append(("booktitle", "ICLR 2025"))
        fields.append(("year", "2025"))
        if _url(p):
            fields.append(("url", _url(p)))
        decision = _bib(p.decision or "")
        note = decision if accepted else f"ICLR 2025 submission ({decision or 'decision unknown'})"
        if alphabetical(p):  # the source's order, not the byline (SOURCE.md)
            note += (
                "; authors in alphabetical order as the data source lists them, which may not be the paper's"
            )
        fields.append(("note", note))
        body = ",\n".join(f"  {name} = {{{value}}}" for name, value in fields)
        entries.append(f"@{'inproceedings' if accepted else 'misc'}{{{key},\n{body}\n}}")
    return "\n\n".join(entries) + ("\n" if entries else "")


def bibtex(papers: Iterable) -> str:
    """BibTeX of papers (the UI's cited papers; `rag list --bibtex`): one renderer."""
    return to_bibtex(papers)


# ---------------------------------------------------------------- a chat as Markdown
_TAG_RE = re.compile(r"<[^>]{0,2000}>")
NUMBERS = r"\d{1,3}(?:\s*[,;]\s*\d{1,3})*"
MARKER_RE = re.compile(rf"\[({NUMBERS})\]")  # [1]  [1, 2]  [1,2]  (also each of [1][2])


def marker_numbers(group: str) -> list[int]:
    """The citation numbers inside one marker's brackets."""
    return [int(x) for x in re.split(r"\s*[,;]\s*", group.strip()) if x]


_SAFE_URL_RE = re.compile(r"^https?://[A-Za-z0-9.\-]+(?::\d+)?(?:/[A-Za-z0-9._~\-/%?=&#+]*)?$")


def plain(text: object) -> str:
    """Corpus or model text on one line, with HTML tags removed and entities decoded."""
    s = html.unescape(_TAG_RE.sub("", "" if text is None else str(text)))
    return " ".join(s.split())


def readable(text: str) -> str:
    """Corpus text as it reads outside a typesetter: LaTeX text-style commands and Markdown bold as their words
    ("\\textsc{DySpec}" -> "DySpec", "**P**arallel" -> "Parallel"), and "58.1\\%" as "58.1%"."""
    s = re.sub(r"\\(?:" + _TEXT_COMMANDS + r")\{([^{}]*)\}", r"\1", text)
    return re.sub(r"\*\*(?=\S)([^*\n]{1,120}?)\*\*", r"\1", s).replace("\\%", "%")


def _md(text: object) -> str:
    """Plain text that Markdown shows as written: no HTML, no links or images."""
    s = readable(plain(text))
    s = s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return re.sub(r"([\\`*_\[\]!])", r"\\\1", s)


def _url(paper: Any) -> str | None:
    url = getattr(paper, "url", None)
    return url if url and _SAFE_URL_RE.match(url) else None


def _label(paper: Any) -> str:
    title = getattr(paper, "title", None)
    return title or f"{getattr(paper, 'source_file', '?')} #{getattr(paper, 'index', '?')}"


def retrieved_papers(answer: Any) -> dict[str, Any]:
    """Paper id -> the paper, for the papers the answer retrieved."""
    return {h.paper.paper_id: h.paper for h in getattr(answer, "retrieved", None) or []}


def cited_paper(citation: Any, papers: dict[str, Any]) -> Any:
    """The retrieved paper a citation points at (`papers`: retrieved_papers); else (the engine cited a
    paper that is not among the hits) one rebuilt from what the citation carries."""
    return papers.get(citation.paper_id) or Paper(
        citation.paper_id, citation.quote or "", citation.source_file, citation.index, title=citation.title
    )


def _cited(answer: Any, citation: Any) -> Any:
    return cited_paper(citation, retrieved_papers(answer))


def cited_papers(answers: Iterable[Any]) -> list[Any]:
    """The papers cited across `answers`, in order of first citation, each once."""
    seen: dict[str, Any] = {}
    for a in answers:
        for c in sorted(getattr(a, "citations", None) or [], key=lambda c: c.n):
            if c.paper_id not in seen:
                seen[c.paper_id] = _cited(a, c)
    return list(seen.values())


def _authors_text(paper: Any, sep: str = ", ") -> str:
    return sep.join(plain(a) for a in (getattr(paper, "authors", None) or []) if plain(a))


def marked(answer: Any, mark: str = "({})", text: str | None = None) -> str:
    """The answer text (or `text`, a form of it) with each sentence the check could not support followed by
    `mark` around NOT_FOUND ("_({})_" in Markdown), so no unsupported claim reads like a cited one."""
    text = (answer.answer or "").strip() if text is None else text
    for s in getattr(answer, "sentences", None) or []:
        st = (s.text or "").strip()
        if st and not s.supported and st in text:
            text = text.replace(st, f"{st} {mark.format(NOT_FOUND)}", 1)
    return text


def _answer_body(answer: Any, renumber: dict[int, int]) -> str:
    """The answer text with its markers renumbered to the chat-wide reference list and the
    sentences the check could not support marked as such."""

    def sub(m: re.Match) -> str:
        return "[" + ", ".join(str(renumber.get(n, n)) for n in marker_numbers(m.group(1))) + "]"

    text = plain(answer.answer) if "<" in (answer.answer or "") else None  # Markdown shows no HTML
    body = MARKER_RE.sub(sub, readable(marked(answer, "_({})_", text))).replace("<", "&lt;")
    body = "\n\n".join(x for x in body.splitlines() if x.strip())  # a line of the answer is a paragraph
    own = {_url(h.paper) for h in getattr(answer, "retrieved", None) or []}
    return inert_links(body, own | {_url(_cited(answer, c)) for c in answer.citations or []})


def table_markdown(answer: Any, renumber: dict[int, int]) -> str:
    """An answer's table as a Markdown table: a row per paper, each cell quoted and cited, or "not stated"."""
    t = answer.table

    def cell(text: str | None, n: int) -> str:
        return f"{_md(text)} [{renumber.get(n, n)}]".replace("|", "\\|") if text else "_not stated_"

    lines = ["| Paper | " + " | ".join(_md(c) for c in t.columns) + " |", "|---" * (len(t.columns) + 1) + "|"]
    for n, cells in t.rows:
        label = _md(_label(answer.retrieved[n - 1].paper)).replace("|", "\\|")
        lines.append(f"| {label} | " + " | ".join(cell(c, n) for c in cells) + " |")
    return "\n".join(lines)


def answer_markdown(answers: Sequence[Any], chat: bool = True) -> str:
    """Answers as Markdown: each standalone question and its answer, then one numbered reference
    list (authors, decision, OpenReview URL) shared by all answers. `chat=False`: one answer on its
    own (copy, `rag summarize --markdown`), without the chat's title and numbering."""
    refs: dict[str, tuple[int, Any]] = {}
    lines: list[str] = ["# ICLR 2025 · Ask the abstracts", ""] if chat else []
    for i, a in enumerate(answers, 1):
        q = getattr(a, "standalone_question", None) or a.question
        lines += [f"## {i}. {_md(q)}" if chat else f"**Q:** {_md(q)}", ""]
        renumber: dict[int, int] = {}
        for c in sorted(a.citations or [], key=lambda c: c.n):
            if c.paper_id not in refs:
                refs[c.paper_id] = (len(refs) + 1, _cited(a, c))
            renumber[c.n] = refs[c.paper_id][0]
        caveats = [f"> Note: {_md(c.text)}" for c in getattr(a, "caveats", None) or []]
        if getattr(a, "refused", False):
            lines.append(_md(a.answer) or REFUSAL)
            lines += ["", *caveats] if caveats else []
            related = [h.paper for h in (a.retrieved or [])[:5]]
            if related:
                lines += ["", "Closest papers:"]
                lines += [f"- {_md(_label(p))}" + (f" <{_url(p)}>" if _url(p) else "") for p in related]
        else:
            lines.append(
                table_markdown(a, renumber) if getattr(a, "table", None) else _answer_body(a, renumber)
            )
            lines += ["", *caveats] if caveats else []
        lines.append("")
    if refs:
        lines += ["## References", ""]
        for n, p in sorted(refs.values(), key=lambda x: x[0]):
            lines += [reference(n, p), ""]
    return "\n".join(lines).rstrip() + "\n"


def reference(n: int, paper: Any) -> str:
    """One numbered reference: title, authors, decision, OpenReview URL."""
    ref = f"[{n}] {_md(_label(paper))}."
    authors = _authors_text(paper)
    if authors:
        ref += f" {_md(authors)}."
    ref += " ICLR 2025"
    if getattr(paper, "decision", None):
        ref += f" ({_md(paper.decision)})"
    ref += "."
    if _url(paper):
        ref += f" <{_url(paper)}>"
    return ref


def own_references(answer: Any) -> list[str]:
    """The references of one answer under the numbers its text uses ("[2]" stays 2), each once."""
    seen: dict[int, str] = {}
    for c in sorted(answer.citations or [], key=lambda c: c.n):
        seen.setdefault(c.n, reference(c.n, _cited(answer, c)))
    return list(seen.values())
