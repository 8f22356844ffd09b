"""Paper records -> CSV, Markdown and BibTeX. General: they take papers (with an optional quote each), so
`rag list`, `rag ask` and the UI share them. Corpus text is escaped: exports are safe to open or render."""

from __future__ import annotations

import csv
import html
import io
import re
from collections.abc import Iterable
from dataclasses import dataclass

from rag.filters import decision_class
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


# ---------------------------------------------------------------- CSV
CSV_FIELDS = ("paper_id", "title", "decision", "primary_area", "authors", "url", "quote", "score")


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
    """Corpus text for Markdown: HTML escaped (a `<script>` title stays text), Markdown syntax defused."""
    return _MD_SPECIAL.sub(r"\\\1", html.escape(" ".join((text or "").split()), quote=False))


def to_markdown(items: Iterable, heading: str | None = None) -> str:
    lines = [f"# {md_escape(heading)}", ""] if heading else []
    for n, r in enumerate(rows_of(items), start=1):
        p = r.paper
        title = md_escape(p.label)
        head = f"[{title}]({p.url})" if p.url else title
        meta = " · ".join(md_escape(x) for x in (p.decision or "", _area(p)) if x)
        lines.append(f"{n}. **{head}**" + (f" — {meta}" if meta else ""))
        if p.authors:
            lines.append(f"   {md_escape(', '.join(p.authors))}")
        if r.quote:
            lines.append(f"   > {md_escape(r.quote)}")
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


# ---------------------------------------------------------------- BibTeX
_TEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    "{": r"\{",
    "}": r"\}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
}


def tex_escape(text: str) -> str:
    """Braces, backslashes and TeX specials escaped: a field's braces always balance."""
    return "".join(_TEX_SPECIAL.get(ch, ch) for ch in " ".join((text or "").split()))


def bib_key(p: Paper) -> str:
    return re.sub(r"[^A-Za-z0-9_\-:]", "_", p.paper_id)


def to_bibtex(items: Iterable) -> str:
    """`@inproceedings` (booktitle ICLR 2025) for accepted papers, `@misc` with a note for the others;
    keyed by OpenReview id."""
    entries = []
    for r in rows_of(items):
        p = r.paper
        accepted = decision_class(p.decision) in ("oral", "spotlight", "poster")
        fields = [("title", tex_escape(p.label))]
        if p.authors:
            fields.append(("author", " and ".join(tex_escape(a) for a in p.authors)))
        if accepted:
            fields.append(("booktitle", "ICLR 2025"))
        else:
            note = "ICLR 2025 submission" + (f", {tex_escape(p.decision)}" if p.decision else "")
            fields.append(("note", note))
        fields.append(("year", "2025"))
        if p.url:
            fields.append(("url", p.url))
        body = ",\n".join(f"  {k} = {{{v}}}" for k, v in fields)
        entries.append(f"@{'inproceedings' if accepted else 'misc'}{{{bib_key(p)},\n{body}\n}}")
    return "\n\n".join(entries) + ("\n" if entries else "")
