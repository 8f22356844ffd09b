"""Exports of answers and papers as text: a chat as Markdown, cited papers as BibTeX.

Shared by the web UI and the CLI. The functions take records shaped like `rag.types.Answer`
and `rag.types.Paper` (duck-typed: only the attributes they read). Corpus text (titles,
authors, decisions) may contain raw HTML: it is stripped, and what remains is escaped for
the target format, so an export never carries a tag into a Markdown renderer or a .bib file.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Sequence
from typing import Any

_TAG_RE = re.compile(r"<[^>]{0,2000}>")
_NUMBERS = r"\d{1,3}(?:\s*[,;]\s*\d{1,3})*"
_MARKER_RE = re.compile(rf"\[({_NUMBERS})\]")
_SAFE_URL_RE = re.compile(r"^https?://[A-Za-z0-9.\-]+(?::\d+)?(?:/[A-Za-z0-9._~\-/%?=&#+]*)?$")
NOT_FOUND = "not found in the sources"
REFUSAL = "The indexed abstracts don't answer this question."


def plain(text: object) -> str:
    """Corpus or model text on one line, with HTML tags removed and entities decoded."""
    s = html.unescape(_TAG_RE.sub("", "" if text is None else str(text)))
    return " ".join(s.split())


def _md(text: object) -> str:
    """Plain text that Markdown shows as written: no HTML, no links or images."""
    s = plain(text)
    s = s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return re.sub(r"([\\`*_\[\]!])", r"\\\1", s)


def _url(paper: Any) -> str | None:
    url = getattr(paper, "url", None)
    return url if url and _SAFE_URL_RE.match(url) else None


def _label(paper: Any) -> str:
    title = getattr(paper, "title", None)
    return title or f"{getattr(paper, 'source_file', '?')} #{getattr(paper, 'index', '?')}"


def _papers_by_id(answer: Any) -> dict[str, Any]:
    return {h.paper.paper_id: h.paper for h in getattr(answer, "retrieved", None) or []}


def _cited(answer: Any, citation: Any) -> Any:
    """The paper a citation points at: the retrieved one, else what the citation carries."""
    paper = _papers_by_id(answer).get(citation.paper_id)
    if paper is not None:
        return paper

    class _FromCitation:
        paper_id = citation.paper_id
        title = citation.title
        source_file = citation.source_file
        index = citation.index
        authors = None
        decision = None
        url = None if "#" in citation.paper_id else f"https://openreview.net/forum?id={citation.paper_id}"

    return _FromCitation()


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


def _answer_body(answer: Any, renumber: dict[int, int]) -> str:
    """The answer text with its markers renumbered to the chat-wide reference list and the
    sentences the check could not support marked as such."""
    text = plain(answer.answer) if "<" in (answer.answer or "") else (answer.answer or "").strip()
    for s in getattr(answer, "sentences", None) or []:
        st = (s.text or "").strip()
        if st and not s.supported and st in text:
            text = text.replace(st, f"{st} _({NOT_FOUND})_", 1)

    def sub(m: re.Match) -> str:
        nums = [int(x) for x in re.split(r"\s*[,;]\s*", m.group(1)) if x]
        return "[" + ", ".join(str(renumber.get(n, n)) for n in nums) + "]"

    text = _MARKER_RE.sub(sub, text)
    return text.replace("<", "&lt;")


def answer_markdown(answers: Sequence[Any]) -> str:
    """A chat (one or more answers) as Markdown: each standalone question and its answer, then
    one numbered reference list (authors, decision, OpenReview URL) shared by all answers."""
    refs: dict[str, tuple[int, Any]] = {}
    lines: list[str] = ["# ICLR 2025 · Ask the abstracts", ""]
    for i, a in enumerate(answers, 1):
        q = getattr(a, "standalone_question", None) or a.question
        lines += [f"## {i}. {_md(q)}", ""]
        renumber: dict[int, int] = {}
        for c in sorted(a.citations or [], key=lambda c: c.n):
            if c.paper_id not in refs:
                refs[c.paper_id] = (len(refs) + 1, _cited(a, c))
            renumber[c.n] = refs[c.paper_id][0]
        if getattr(a, "refused", False):
            lines.append(_md(a.answer) or REFUSAL)
            related = [h.paper for h in (a.retrieved or [])[:5]]
            if related:
                lines += ["", "Closest papers:"]
                lines += [f"- {_md(_label(p))}" + (f" <{_url(p)}>" if _url(p) else "") for p in related]
        else:
            lines.append(_answer_body(a, renumber))
        lines.append("")
    if refs:
        lines += ["## References", ""]
        for n, p in sorted(refs.values(), key=lambda x: x[0]):
            ref = f"[{n}] {_md(_label(p))}."
            authors = _authors_text(p)
            if authors:
                ref += f" {_md(authors)}."
            ref += " ICLR 2025"
            if getattr(p, "decision", None):
                ref += f" ({_md(p.decision)})"
            ref += "."
            if _url(p):
                ref += f" <{_url(p)}>"
            lines += [ref, ""]
    return "\n".join(lines).rstrip() + "\n"


# ----------------------------------------------------------------------------- BibTeX

_BIB_SPECIAL = {"&": r"\&", "%": r"\%", "#": r"\#", "_": r"\_", "~": r"\~{}", "^": r"\^{}"}


def _bib(text: object) -> str:
    """Corpus text as a BibTeX field value: no HTML, no braces (so every entry stays
    balanced), specials escaped outside $…$ math."""
    s = plain(text).replace("{", "").replace("}", "").replace("\\", "")
    parts = re.split(r"(\$[^$]*\$)", s)
    out = []
    for part in parts:
        if part.startswith("$") and part.endswith("$") and len(part) > 1:
            out.append(part)
        else:
            out.append("".join(_BIB_SPECIAL.get(ch, ch) for ch in part.replace("$", r"\$")))
    return "".join(out)


def bibtex_key(paper: Any) -> str:
    """The OpenReview id where the paper has one, else its id made BibTeX-safe."""
    key = re.sub(r"[^A-Za-z0-9_\-:]", "_", str(paper.paper_id))
    return key or "paper"


def bibtex(papers: Iterable[Any]) -> str:
    """BibTeX entries: @inproceedings (ICLR 2025) for accepted papers, @misc with a note for
    the rest (rejected, withdrawn or unknown), keyed by OpenReview id."""
    entries = []
    used: set[str] = set()
    for p in papers:
        key = bibtex_key(p)
        base, k = key, 2
        while key in used:
            key, k = f"{base}_{k}", k + 1
        used.add(key)
        decision = plain(getattr(p, "decision", None) or "")
        accepted = decision.lower().startswith("accept")
        fields = [("title", _bib(_label(p)))]
        authors = " and ".join(_bib(a) for a in (getattr(p, "authors", None) or []) if plain(a))
        if authors:
            fields.append(("author", authors))
        if accepted:
            fields.append(("booktitle", "ICLR 2025"))
        fields.append(("year", "2025"))
        if _url(p):
            fields.append(("url", _url(p)))
        if accepted:
            fields.append(("note", _bib(decision)))
        else:
            fields.append(("note", f"ICLR 2025 submission ({_bib(decision) or 'decision unknown'})"))
        kind = "inproceedings" if accepted else "misc"
        body = ",\n".join(f"  {name} = {{{value}}}" for name, value in fields)
        entries.append(f"@{kind}{{{key},\n{body}\n}}")
    return "\n\n".join(entries) + ("\n" if entries else "")
