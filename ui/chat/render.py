"""The chat column as HTML, and the one import for everything the page renders.

Everything that reaches the page from the corpus or the model passes through `esc()` before
it is placed in HTML. Nothing emits Markdown for a renderer, so a Markdown image such as
``![x](http://host/a.png)`` stays literal text. The only tags in the output are the ones
written in ui/chat/render.py, ui/chat/sources_html.py and ui/html/, and the only URLs are OpenReview links that
pass `safe_url()`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from rag.export import MARKER_RE, marker_numbers
from rag.prompts import NOT_FOUND
from rag.types import Answer
from ui.chat.answer_text import (
    answer_markdown,
    citation_labels,
    refusal_text,
    segments,
)
from ui.chat.session import Turn
from ui.chat.sources_html import render_sources
from ui.html.safe import citation_spans, esc, highlight, merge_spans, retry_link, safe_url
from ui.html.status import render_status

__all__ = [
    "Turn",
    "answer_markdown",
    "citation_spans",
    "esc",
    "highlight",
    "merge_spans",
    "render_answer_body",
    "render_chat",
    "render_inline",
    "render_sources",
    "render_status",
    "safe_url",
]


def _chip(n: int, turn: int, *, live: bool, label: str | None) -> str:
    """A citation chip. Live chips link to their source card (`#src-<turn>-<n>`)."""
    title = esc(label or f"[{n}]")
    if not live:
        return f'<span class="cite-chip pending" title="{title}">{n}</span>'
    return (
        f'<a class="cite-chip" href="#src-{turn}-{n}" data-turn="{turn}" data-n="{n}" '
        f'role="button" title="{title}" aria-label="Source {title}">{n}</a>'
    )


def _chips(nums: Iterable[int], turn: int, labels: dict[int, str], *, live: bool = True) -> str:
    return (
        '<span class="chips">'
        + "".join(_chip(n, turn, live=live, label=labels.get(n)) for n in nums)
        + "</span>"
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
        nums = marker_numbers(m.group(1))
        if valid is not None and not all(n in valid for n in nums):
            continue  # left as literal text below
        out.append(esc(text[pos : m.start()]))
        out.append(_chips(nums, turn, labels, live=valid is not None))
        pos = m.end()
    out.append(esc(text[pos:]))
    return "".join(out).replace("\n", "<br>")


def _refusal_body(
    answer: Answer, turn: int, valid: set[int], labels: dict[int, str], indexed: str | None = None
) -> str:
    parts = [f'<div class="refusal"><strong>{esc(refusal_text(indexed))}</strong>']
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
    parts.append(caveats_html(answer, lead=True) + caveats_html(answer))
    parts.append(did_you_mean(answer))
    return "".join(parts)


def did_you_mean(answer: Answer) -> str:
    """One click asks the question with its typo mended ("" when nothing was mended)."""
    if not answer.suggested_question:
        return ""
    link = retry_link(answer.suggested_question, "#question textarea", "send")
    return f'<div class="retry">Did you mean: {link}</div>'


# read before the answer: it is about other papers than the one asked of
LEAD_CAVEATS = frozenset({"not_in_followed"})


def caveats_html(answer: Answer, lead: bool = False) -> str:
    """What the evidence does not cover, one line per caveat, styled by its code (never read from prose);
    `lead`: those shown above the answer, else the rest."""
    rows = [
        f'<li class="caveat caveat-{esc(c.code)}" data-code="{esc(c.code)}">{esc(c.text)}</li>'
        for c in answer.caveats or []
        if (c.code in LEAD_CAVEATS) == lead
    ]
    return f'<ul class="caveats" aria-label="Caveats">{"".join(rows)}</ul>' if rows else ""


def table_html(answer: Answer, turn: int, labels: dict[int, str]) -> str:
    """Papers side by side: a row per paper, each cell its quoted sentence with a chip, or "not stated"."""
    t = answer.table
    head = "".join(f'<th scope="col">{esc(c)}</th>' for c in ["Paper", *t.columns])
    body = []
    for n, cells in t.rows:
        paper = answer.retrieved[n - 1].paper.label if 0 < n <= len(answer.retrieved) else str(n)
        tds = "".join(
            f"<td>{esc(c)} {_chips([n], turn, labels)}</td>"
            if c
            else '<td class="not-stated">not stated in the abstract</td>'
            for c in cells
        )
        body.append(f'<tr><th scope="row">{esc(paper)}</th>{tds}</tr>')
    return f'<div class="table-wrap"><table class="paper-table"><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table></div>'


def render_answer_body(answer: Answer, turn: int, indexed: str | None = None) -> str:
    """The assistant message for a final Answer: chips, dimmed unsupported sentences. `indexed`
    ("38 seed abstracts") names what a refusal searched."""
    valid = {c.n for c in answer.citations}
    labels = citation_labels(answer)
    if answer.refused:
        return _refusal_body(answer, turn, valid, labels, indexed)

    body: list[str] = []
    for seg_text, supported, cites in segments(answer):
        html_text = render_inline(seg_text, turn, valid, labels)
        if supported is False:
            body.append(
                f'<span class="unsupported" title="This sentence was {esc(NOT_FOUND)}">{html_text}'
                f'<span class="nf-mark">{esc(NOT_FOUND)}</span></span>'
            )
        else:
            # Sentences whose text carries no marker but that have citations get chips appended.
            valid_cites = [n for n in cites if n in valid]
            if valid_cites and not MARKER_RE.search(seg_text):
                html_text += _chips(valid_cites, turn, labels)
            body.append(html_text)
    text = "".join(body)
    if answer.shape in ("list", "summary"):  # a block per line: the count, each theme, each paper
        text = "".join(
            f'<p class="{"theme" if x.startswith("Theme: ") else "line"}">{x}</p>'
            for x in text.split("<br>")
            if x.strip()
        )
    main = table_html(answer, turn, labels) if answer.table else f'<div class="answer-text">{text}</div>'
    parts = [caveats_html(answer, lead=True), main, caveats_html(answer), did_you_mean(answer)]
    badges = []
    if answer.fallback:
        badges.append(
            '<span class="badge" title="The model output could not be verified against the '
            'abstracts, so this answer quotes them directly.">extractive answer</span>'
        )
    if answer.citations:
        cited = {c.paper_id for c in answer.citations}
        unstated = len(answer.table.rows) - len(cited) if answer.table else 0  # a row "not stated"
        badges.append(
            f'<span class="badge subtle">{len(cited)} cited {"paper" if len(cited) == 1 else "papers"}'
            + (f" · {unstated} not stated" if unstated > 0 else "")
            + "</span>"
        )
    if badges:
        parts.append(f'<div class="badges">{"".join(badges)}</div>')
    return "".join(parts)


_PARTIAL_MARKER_RE = re.compile(r"\s*\[[\d,;\s]*$")  # "[1" still being typed at the end


def draft_text(text: str) -> str:
    """The streamed draft without [n] markers: their numbers are only final once the answer is
    verified (the engine renumbers them), so chips appear with the final answer only."""
    text = _PARTIAL_MARKER_RE.sub("", text)
    return re.sub(r"[ \t]*" + MARKER_RE.pattern, "", text)


def _turn(t: Turn, turn: int) -> str:
    """One user message and its assistant reply."""
    mode_tag = '<span class="mode-tag">Summarize</span>' if t.task == "summarize" else ""
    filt = f'<div class="filter-tag">Only {esc(t.filters)}</div>' if t.filters else ""
    user = f'<div class="msg user"><div class="bubble">{mode_tag}{esc(t.question)}</div></div>'
    if t.status == "error":
        bot = f'<div class="bubble error" role="alert">{esc(t.error or "Something went wrong.")}</div>'
    elif t.answer is not None and t.status == "done":
        listed = ""
        a, n = t.answer.listed_from, len(t.answer.citations)
        if t.answer.listed and t.answer.listed > n:
            shown = f"{a + 1}–{a + n}" if a else f"{n}"
            more = " Ask for more to see the next ones, or the" if a + n < t.answer.listed else " The"
            listed = (
                f'<div class="list-more">Showing {shown} of {t.answer.listed:,} matching papers.{more} '
                "<em>See all</em> button under the chat opens every one in Find papers.</div>"
            )
        bot = f'<div class="bubble">{filt}{render_answer_body(t.answer, turn, t.indexed)}{listed}</div>'
    elif t.status == "stopped":
        text = draft_text(t.text).strip()
        body = f'<div class="answer-text stopped-text">{esc(text)}</div>' if text else ""
        bot = (
            f'<div class="bubble stopped">{body}<div class="badges"><span class="badge stopped">'
            "Stopped: this answer was not finished or checked against the sources.</span></div></div>"
        )
    else:
        note = f'<div class="note">{esc(t.note)}</div>' if t.note else ""
        if t.text:
            inner = (
                f'<div class="answer-text streaming">{esc(draft_text(t.text)).replace(chr(10), "<br>")}'
                '<span class="caret"></span></div>'
                '<div class="draft-note">Draft: citations appear once the answer is checked.</div>'
            )
        else:
            inner = '<div class="typing"><span></span><span></span><span></span></div>'
        bot = f'<div class="bubble pending">{note}{inner}</div>'
    return (
        f'<div class="turn" id="turn-{turn}" data-turn="{turn}">{user}<div class="msg bot">{bot}</div></div>'
    )


def render_chat(turns: Sequence[Turn]) -> str:
    """The whole conversation of one session."""
    if not turns:
        return (
            '<div class="chat-log empty"><div class="empty-state">'
            '<div class="empty-title">Ask the ICLR 2025 abstracts</div>'
            '<div class="empty-sub">Ask about any ICLR 2025 paper. Answers cite the abstracts they come from.'
            "</div></div></div>"
        )
    return '<div class="chat-log">' + "".join(_turn(t, i) for i, t in enumerate(turns)) + "</div>"
