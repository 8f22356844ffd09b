"""Pure HTML/Markdown rendering for the web UI.

Everything that reaches the page from the corpus or the model passes through `esc()` here
before it is placed in HTML. Nothing in this module emits Markdown for a renderer, so a
Markdown image such as ``![x](http://host/a.png)`` stays literal text. The only tags in the
output are the ones written below, and the only URLs are OpenReview links that pass
`safe_url()`.

Offsets (`Citation.spans`, `quote_start/quote_end`) are character offsets into the raw
abstract; `highlight()` cuts the raw text first and escapes each piece, so entities never
shift an offset.
"""
from __future__ import annotations

import html
import re
from dataclasses import dataclass, field
from typing import Iterable, Sequence

from rag.types import Answer, Citation, Hit, Paper

# [1]  [1, 2]  [1,2]  (also matches each of [1][2])
MARKER_RE = re.compile(r"\[(\d{1,3}(?:\s*[,;]\s*\d{1,3})*)\]")
_TRAILING_MARKERS_RE = re.compile(r"(?:[ \t]*\[\d{1,3}(?:\s*[,;]\s*\d{1,3})*\])+")
_SAFE_URL_RE = re.compile(r"^https?://[A-Za-z0-9.\-]+(?::\d+)?(?:/[A-Za-z0-9._~\-/%?=&#+]*)?$")

NOT_FOUND = "not found in the sources"
REFUSAL = "The indexed abstracts don't answer this question."


def esc(text: object) -> str:
    """HTML-escape text for element content and double-quoted attributes."""
    return html.escape("" if text is None else str(text), quote=True)


def safe_url(url: str | None) -> str | None:
    """Return `url` if it is a plain http(s) URL, else None (no javascript:, data:, quotes)."""
    if not url or not _SAFE_URL_RE.match(url):
        return None
    return url


# --------------------------------------------------------------------------- turns


@dataclass
class Turn:
    """One question and what came back, as the UI keeps it per session."""

    question: str
    task: str = "answer"
    text: str = ""  # streamed text so far (raw model output)
    answer: Answer | None = None  # the final verified answer
    error: str | None = None  # a plain-words message for the user
    status: str = "streaming"  # streaming | done | error
    note: str | None = None  # e.g. "Loading model smollm2…"
    show_scores: bool = False
    extra: dict = field(default_factory=dict)


# --------------------------------------------------------------------------- spans


def merge_spans(spans: Iterable[Sequence[int]], length: int) -> list[tuple[int, int]]:
    """Clamp spans to [0, length], drop empty/invalid ones, sort and merge overlaps."""
    clean: list[tuple[int, int]] = []
    for span in spans:
        try:
            s, e = int(span[0]), int(span[1])
        except (TypeError, ValueError, IndexError):
            continue
        s, e = max(0, s), min(length, e)
        if e > s:
            clean.append((s, e))
    clean.sort()
    merged: list[tuple[int, int]] = []
    for s, e in clean:
        if merged and s <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], e))
        else:
            merged.append((s, e))
    return merged


def citation_spans(citation: Citation, text: str) -> list[tuple[int, int]]:
    """The supporting character ranges of `citation` inside the abstract `text`.

    Uses `spans`, else `quote_start/quote_end`, else finds `quote` in the text.
    """
    spans = list(citation.spans or [])
    if not spans and 0 <= citation.quote_start < citation.quote_end:
        spans = [(citation.quote_start, citation.quote_end)]
    if not spans and citation.quote:
        pos = text.find(citation.quote)
        if pos >= 0:
            spans = [(pos, pos + len(citation.quote))]
    return merge_spans(spans, len(text))


def highlight(text: str, spans: Iterable[Sequence[int]], *, css_class: str = "evidence") -> str:
    """Escape `text`, wrapping each span in <mark class=css_class>."""
    out: list[str] = []
    pos = 0
    for s, e in merge_spans(spans, len(text)):
        out.append(esc(text[pos:s]))
        out.append(f'<mark class="{esc(css_class)}">{esc(text[s:e])}</mark>')
        pos = e
    out.append(esc(text[pos:]))
    return "".join(out)


# --------------------------------------------------------------------------- inline text


def _marker_numbers(group: str) -> list[int]:
    return [int(x) for x in re.split(r"\s*[,;]\s*", group.strip()) if x]


def chip(n: int, turn: int, *, valid: bool = True, label: str | None = None) -> str:
    """A citation chip. Valid chips link to their source card (`#src-<turn>-<n>`)."""
    title = esc(label or f"Source {n}")
    if not valid:
        return f'<span class="cite-chip pending" title="{title}">{n}</span>'
    return (
        f'<a class="cite-chip" href="#src-{turn}-{n}" data-turn="{turn}" data-n="{n}" '
        f'role="button" title="{title}">{n}</a>'
    )


def render_inline(
    text: str,
    turn: int,
    valid: set[int] | None = None,
    labels: dict[int, str] | None = None,
) -> str:
    """Escape model text and turn [n] markers into chips.

    `valid` None means "not known yet" (streaming): chips are shown but inert.
    Markers whose number is not a citation of this answer stay as escaped text.
    Newlines become <br>.
    """
    labels = labels or {}
    out: list[str] = []
    pos = 0
    for m in MARKER_RE.finditer(text):
        nums = _marker_numbers(m.group(1))
        if valid is not None and not all(n in valid for n in nums):
            continue  # left as literal text below
        out.append(esc(text[pos : m.start()]))
        chips = "".join(
            chip(n, turn, valid=valid is not None, label=labels.get(n)) for n in nums
        )
        out.append(f'<span class="chips">{chips}</span>')
        pos = m.end()
    out.append(esc(text[pos:]))
    return "".join(out).replace("\n", "<br>")


# --------------------------------------------------------------------------- answers


def _segments(answer: Answer) -> list[tuple[str, bool | None, list[int]]]:
    """Split answer.answer into (text, supported, citations) pieces, keeping its layout.

    Each Sentence is located in the answer text in order; text between sentences is kept
    with supported=None. Sentences that can't be located are appended after the text.
    """
    text = answer.answer or ""
    segs: list[tuple[str, bool | None, list[int]]] = []
    pos = 0
    missing = []
    for sent in answer.sentences or []:
        st = (sent.text or "").strip()
        if not st:
            continue
        i = text.find(st, pos)
        if i < 0:
            missing.append(sent)
            continue
        if i > pos:
            segs.append((text[pos:i], None, []))
        end = i + len(st)
        # markers written just after the sentence ("… data. [1]") belong to it
        trail = _TRAILING_MARKERS_RE.match(text, end)
        if trail:
            end = trail.end()
        segs.append((text[i:end], bool(sent.supported), list(sent.citations or [])))
        pos = end
    if pos < len(text):
        segs.append((text[pos:], None, []))
    for sent in missing:
        segs.append((" " + sent.text.strip(), bool(sent.supported), list(sent.citations or [])))
    return segs


def citation_labels(answer: Answer) -> dict[int, str]:
    papers = {h.paper.paper_id: h.paper for h in answer.retrieved}
    labels = {}
    for c in answer.citations:
        p = papers.get(c.paper_id)
        labels[c.n] = f"[{c.n}] " + (p.label if p else (c.title or f"{c.source_file} #{c.index}"))
    return labels


def render_answer_body(answer: Answer, turn: int) -> str:
    """The assistant message for a final Answer: chips, dimmed unsupported sentences."""
    valid = {c.n for c in answer.citations}
    labels = citation_labels(answer)
    parts: list[str] = []
    if answer.refused:
        parts.append(f'<div class="refusal"><strong>{esc(REFUSAL)}</strong>')
        if answer.retrieved:
            parts.append(
                '<div class="refusal-related">The closest papers are listed under '
                "<em>Related papers</em> in the sources panel:</div><ul>"
            )
            for i, h in enumerate(answer.retrieved[:5], 1):
                parts.append(
                    f'<li><a class="related-link" href="#rel-{turn}-{i}" data-turn="{turn}" '
                    f'data-rel="{i}">{esc(h.paper.label)}</a></li>'
                )
            parts.append("</ul>")
        parts.append("</div>")
        extra = (answer.answer or "").strip()
        if extra and extra != REFUSAL:
            parts.append(f'<div class="answer-text muted">{render_inline(extra, turn, valid, labels)}</div>')
        return "".join(parts)

    body: list[str] = []
    for seg_text, supported, cites in _segments(answer):
        html_text = render_inline(seg_text, turn, valid, labels)
        if supported is False:
            body.append(
                f'<span class="unsupported" title="This sentence was {esc(NOT_FOUND)}">{html_text}'
                f'<span class="nf-mark">{esc(NOT_FOUND)}</span></span>'
            )
        else:
            # Sentences whose text carries no marker but that have citations get chips appended.
            if cites and not MARKER_RE.search(seg_text):
                valid_cites = [n for n in cites if n in valid]
                if valid_cites:
                    html_text += '<span class="chips">' + "".join(
                        chip(n, turn, label=labels.get(n)) for n in valid_cites
                    ) + "</span>"
            body.append(html_text)
    parts.append(f'<div class="answer-text">{"".join(body)}</div>')
    badges = []
    if answer.fallback:
        badges.append(
            '<span class="badge" title="The model output could not be verified against the '
            'abstracts, so this answer quotes them directly.">extractive answer</span>'
        )
    if answer.citations:
        badges.append(f'<span class="badge subtle">{len(answer.citations)} cited '
                      f'{"paper" if len(answer.citations) == 1 else "papers"}</span>')
    if badges:
        parts.append(f'<div class="badges">{"".join(badges)}</div>')
    return "".join(parts)


def render_turn(t: Turn, turn: int) -> str:
    """One user message and its assistant reply."""
    mode = "Summarize" if t.task == "summarize" else ""
    mode_tag = f'<span class="mode-tag">{mode}</span>' if mode else ""
    user = f'<div class="msg user"><div class="bubble">{mode_tag}{esc(t.question)}</div></div>'
    if t.status == "error":
        bot = f'<div class="bubble error" role="alert">{esc(t.error or "Something went wrong.")}</div>'
    elif t.answer is not None and t.status == "done":
        bot = f'<div class="bubble">{render_answer_body(t.answer, turn)}</div>'
    else:
        note = f'<div class="note">{esc(t.note)}</div>' if t.note else ""
        if t.text:
            inner = f'<div class="answer-text streaming">{render_inline(t.text, turn, None)}<span class="caret"></span></div>'
        else:
            inner = '<div class="typing"><span></span><span></span><span></span></div>'
        bot = f'<div class="bubble pending">{note}{inner}</div>'
    return (
        f'<div class="turn" id="turn-{turn}" data-turn="{turn}">{user}'
        f'<div class="msg bot">{bot}</div></div>'
    )


def render_chat(turns: Sequence[Turn], *, empty_hint: str | None = None) -> str:
    """The whole conversation of one session."""
    if not turns:
        hint = esc(empty_hint or "Ask about any ICLR 2025 paper. Answers cite the abstracts they come from.")
        return (
            '<div class="chat-log empty"><div class="empty-state">'
            '<div class="empty-title">Ask the ICLR 2025 abstracts</div>'
            f'<div class="empty-sub">{hint}</div></div></div>'
        )
    return '<div class="chat-log">' + "".join(render_turn(t, i) for i, t in enumerate(turns)) + "</div>"


# --------------------------------------------------------------------------- sources


def _paper_meta(paper: Paper, score: float | None, show_scores: bool) -> str:
    bits = []
    if paper.decision:
        bits.append(f'<span class="decision">{esc(paper.decision)}</span>')
    url = safe_url(paper.url)
    if url:
        bits.append(
            f'<a class="openreview" href="{esc(url)}" target="_blank" rel="noopener noreferrer">OpenReview</a>'
        )
    if paper.title:  # without a title the label already is `file #index`
        bits.append(f'<span class="where">{esc(paper.source_file)} #{esc(paper.index)}</span>')
    if show_scores and score is not None:
        bits.append(f'<span class="score" title="retrieval score">score {score:.3f}</span>')
    return f'<div class="meta">{"".join(bits)}</div>' if bits else ""


def render_source_card(
    citation: Citation, paper: Paper | None, turn: int, *, score: float | None, show_scores: bool
) -> str:
    n = citation.n
    if paper is None:  # the engine cited a paper that is not among the hits: show what we have
        paper = Paper(
            paper_id=citation.paper_id,
            text=citation.quote,
            source_file=citation.source_file,
            index=citation.index,
            title=citation.title,
        )
    spans = citation_spans(citation, paper.text)
    abstract = highlight(paper.text, spans)
    return (
        f'<article class="source" id="src-{turn}-{n}" data-n="{n}">'
        f'<header><span class="num">{n}</span><h4 class="title">{esc(paper.label)}</h4></header>'
        f"{_paper_meta(paper, score, show_scores)}"
        f'<p class="abstract">{abstract}</p>'
        "</article>"
    )


def _retrieved_item(hit: Hit, show_scores: bool, item_id: str | None = None) -> str:
    idattr = f' id="{esc(item_id)}"' if item_id else ""
    return (
        f'<li class="retrieved"{idattr}><details><summary><span class="title">{esc(hit.paper.label)}</span>'
        + (f' <span class="score">{hit.score:.3f}</span>' if show_scores else "")
        + "</summary>"
        + _paper_meta(hit.paper, hit.score, False)
        + f'<p class="abstract">{esc(hit.paper.text)}</p></details></li>'
    )


def render_turn_sources(t: Turn, turn: int, *, show_scores: bool = False) -> str:
    """Sources of one answer: cited cards, then the uncited retrieved papers collapsed."""
    a = t.answer
    if a is None:
        if t.status == "error":
            return '<div class="sources-empty">No sources for this message.</div>'
        return '<div class="sources-empty">Looking through the abstracts…</div>'
    hits = {h.paper.paper_id: h for h in a.retrieved}
    parts: list[str] = []
    if a.refused:
        parts.append(
            f'<div class="sources-note">{esc(REFUSAL)} These are the closest papers found.</div>'
            '<h3 class="sec">Related papers</h3><ul class="retrieved-list open">'
        )
        for i, h in enumerate(a.retrieved, 1):
            parts.append(_retrieved_item(h, show_scores, f"rel-{turn}-{i}"))
        parts.append("</ul>")
        return "".join(parts)

    cited_ids = set()
    if a.citations:
        parts.append(f'<h3 class="sec">Cited ({len(a.citations)})</h3>')
        for c in sorted(a.citations, key=lambda c: c.n):
            h = hits.get(c.paper_id)
            cited_ids.add(c.paper_id)
            parts.append(
                render_source_card(
                    c, h.paper if h else None, turn, score=h.score if h else None, show_scores=show_scores
                )
            )
    else:
        parts.append('<div class="sources-note">This answer cites no paper.</div>')
    others = [h for h in a.retrieved if h.paper.paper_id not in cited_ids]
    if others:
        parts.append(
            f'<details class="also"><summary>Also retrieved ({len(others)}), not cited</summary>'
            '<ul class="retrieved-list">'
            + "".join(_retrieved_item(h, show_scores) for h in others)
            + "</ul></details>"
        )
    return "".join(parts)


def render_sources(turns: Sequence[Turn], *, show_scores: bool = False) -> str:
    """The sources panel: one section per turn, the latest one visible.

    Clicking a chip from an earlier answer switches the panel to that answer (ui JS).
    """
    if not turns:
        return (
            '<div class="sources-panel"><div class="sources-empty">'
            "Sources for each answer appear here: the cited abstracts, with the supporting "
            "sentences highlighted.</div></div>"
        )
    last = len(turns) - 1
    sections = []
    for i, t in enumerate(turns):
        hidden = "" if i == last else " hidden"
        q = esc(t.question if len(t.question) <= 90 else t.question[:87] + "…")
        sections.append(
            f'<section class="turn-sources" data-turn="{i}"{hidden}>'
            f'<div class="for-q">Sources for: <span>{q}</span></div>'
            f"{render_turn_sources(t, i, show_scores=show_scores)}</section>"
        )
    return '<div class="sources-panel">' + "".join(sections) + "</div>"


# --------------------------------------------------------------------------- copy


def _md_escape_line(text: str) -> str:
    return " ".join(text.split())


def answer_markdown(answer: Answer) -> str:
    """The answer as Markdown with a numbered reference list, for copying elsewhere."""
    lines: list[str] = []
    if answer.question:
        lines.append(f"**Q:** {_md_escape_line(answer.question)}")
        lines.append("")
    if answer.refused:
        lines.append(REFUSAL)
    else:
        out = []
        for seg_text, supported, _ in _segments(answer):
            out.append(seg_text + (f" _({NOT_FOUND})_" if supported is False else ""))
        lines.append("".join(out).strip())
    papers = {h.paper.paper_id: h.paper for h in answer.retrieved}
    if answer.citations:
        lines.append("")
        lines.append("**References**")
        lines.append("")
        for c in sorted(answer.citations, key=lambda c: c.n):
            p = papers.get(c.paper_id)
            label = p.label if p else (c.title or f"{c.source_file} #{c.index}")
            ref = f"[{c.n}] {_md_escape_line(label)}. ICLR 2025"
            if p and p.decision:
                ref += f" ({p.decision})"
            ref += "."
            url = safe_url(p.url) if p else None
            if url:
                ref += f" <{url}>"
            lines.append(ref)
            lines.append("")
    elif answer.refused and answer.retrieved:
        lines.append("")
        lines.append("**Related papers**")
        lines.append("")
        for i, h in enumerate(answer.retrieved, 1):
            url = safe_url(h.paper.url)
            lines.append(f"{i}. {_md_escape_line(h.paper.label)}" + (f" <{url}>" if url else ""))
    return "\n".join(lines).rstrip() + "\n"


def conversation_markdown(turns: Sequence[Turn]) -> str:
    """All finished answers of a session, each with its references."""
    blocks = [answer_markdown(t.answer) for t in turns if t.answer is not None and t.status == "done"]
    return "\n---\n\n".join(blocks)


# --------------------------------------------------------------------------- status


def render_status(kind: str, message: str) -> str:
    """A status banner: kind in {loading, ready, error, info}."""
    spinner = '<span class="spinner"></span>' if kind == "loading" else ""
    return f'<div class="status-banner {esc(kind)}" role="status">{spinner}{esc(message)}</div>'
