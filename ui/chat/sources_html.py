"""The sources panel: per answer, the cited abstracts with their evidence highlighted, then
the papers retrieved but not cited."""

from __future__ import annotations

from collections.abc import Sequence

from rag.export import ALPHABETICAL, alphabetical, cited_paper, retrieved_papers
from rag.retrieval.filters import Filters, decision_class
from rag.types import Citation, Hit, Paper
from ui.chat.answer_text import refusal_text
from ui.chat.session import Turn
from ui.html.safe import citation_spans, esc, highlight, like_link, safe_url

SCORE_LEGEND = (
    "Retrieval scores: how strongly the retriever matched each paper to the question "
    "(higher is closer; hybrid mode fuses the dense and keyword rankings). They rank papers "
    "within one answer and are not probabilities."
)
MAX_AUTHORS = 6


def _authors(paper: Paper) -> str:
    names = [a.strip() for a in (paper.authors or []) if a and a.strip()]
    if not names:
        return ""
    shown = ", ".join(names[:MAX_AUTHORS]) + (
        f" and {len(names) - MAX_AUTHORS} more" if len(names) > MAX_AUTHORS else ""
    )
    note = f' <span class="authors-order">({ALPHABETICAL})</span>' if alphabetical(paper) else ""
    return f'<span class="authors">{esc(shown)}{note}</span>'


def _paper_meta(paper: Paper, score: float | None, show_scores: bool) -> str:
    bits = [_authors(paper)] if paper.authors else []
    if paper.decision:
        # not accepted (rejected, withdrawn) is shown apart: green reads as accepted
        accepted = decision_class(paper.decision) in ("oral", "spotlight", "poster")
        bits.append(
            f'<span class="decision{"" if accepted else " not-accepted"}">{esc(paper.decision)}</span>'
        )
    url = safe_url(paper.url)
    if url:
        bits.append(
            f'<a class="openreview" href="{esc(url)}" target="_blank" rel="noopener noreferrer">'
            'OpenReview<span class="sr-only-live"> (opens in a new tab)</span></a>'
        )
    if show_scores and score is not None:
        bits.append(f'<span class="score" title="retrieval score">retrieval score {score:.3f}</span>')
    bits.append(like_link(paper))
    return f'<div class="meta">{"".join(bits)}</div>' if bits else ""


def _source_card(citation: Citation, paper: Paper, turn: int, score: float | None, show_scores: bool) -> str:
    n = citation.n
    abstract = highlight(paper.text, citation_spans(citation, paper.text))
    return (
        f'<article class="source" id="src-{turn}-{n}" data-n="{n}">'
        f'<header><span class="num">{n}</span><h3 class="title">{esc(paper.label)}</h3></header>'
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


def _turn_sources(t: Turn, turn: int, show_scores: bool) -> str:
    """Sources of one answer: cited cards, then the uncited retrieved papers collapsed."""
    a = t.answer
    if a is None:
        if t.status == "error":
            return '<div class="sources-empty">No sources for this message.</div>'
        if t.retrieved:  # the engine announced its hits before the answer: show them at once
            note = (
                "Stopped before the answer was checked."
                if t.status == "stopped"
                else ("Writing the answer; the cited sentences are highlighted once it is checked.")
            )
            return (
                f'<div class="sources-note">{note}</div>'
                f'<h2 class="sec">Retrieved ({len(t.retrieved)})</h2><ul class="retrieved-list open">'
                + "".join(_retrieved_item(h, show_scores) for h in t.retrieved)
                + "</ul>"
            )
        if t.status == "stopped":
            return '<div class="sources-empty">Stopped before any source was checked.</div>'
        return '<div class="sources-empty">Looking through the abstracts…</div>'
    parts: list[str] = []
    if a.refused:
        parts.append(
            f'<div class="sources-note">{esc(refusal_text(t.indexed))} These are the closest papers found.</div>'
            '<h2 class="sec">Related papers</h2><ul class="retrieved-list open">'
        )
        for i, h in enumerate(a.retrieved, 1):
            parts.append(_retrieved_item(h, show_scores, f"rel-{turn}-{i}"))
        parts.append("</ul>")
        return "".join(parts)

    if a.shape == "decision":  # "was it accepted?": the papers asked about, whose decisions the answer says
        parts.append(
            '<div class="sources-note">The decisions come from the index\'s records, not from an abstract.</div>'
            f'<h2 class="sec">Asked about ({len(a.retrieved)})</h2><ul class="retrieved-list open">'
            + "".join(_retrieved_item(h, show_scores) for h in a.retrieved)
            + "</ul>"
        )
        return "".join(parts)
    papers = retrieved_papers(a)
    scores = {h.paper.paper_id: h.score for h in a.retrieved}
    if a.citations:
        parts.append(f'<h2 class="sec">Cited ({len(a.citations)})</h2>')
        for c in sorted(a.citations, key=lambda c: c.n):
            parts.append(_source_card(c, cited_paper(c, papers), turn, scores.get(c.paper_id), show_scores))
    else:
        parts.append('<div class="sources-note">This answer cites no paper.</div>')
    cited_ids = {c.paper_id for c in a.citations}
    others = [h for h in a.retrieved if h.paper.paper_id not in cited_ids]
    if others:
        parts.append(
            f'<details class="also"><summary>Also retrieved ({len(others)}), not cited</summary>'
            '<ul class="retrieved-list">'
            + "".join(_retrieved_item(h, show_scores) for h in others)
            + "</ul></details>"
        )
    return "".join(parts)


def _short(text: str, n: int = 90) -> str:
    return text if len(text) <= n else text[: n - 3] + "…"


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
        q = esc(_short(t.question))
        base = t.answer.leaned_on if t.answer else None
        # how the question was read in its chat, so a misread follow-up (or switch) shows
        read = (
            f'<div class="for-q read-as">Read as a follow-up to: <span>{esc(_short(base))}</span></div>'
            if base
            else ""
        )
        listed = t.answer.listed_query if t.answer else None
        if (
            listed and listed[0]
        ):  # what a list follow-up listed ("more", "only orals", "only the ones about X")
            how = Filters(*listed[1:]).describe()
            read += (
                f'<div class="for-q read-as">Listed: papers on <span>“{esc(_short(listed[0]))}”</span>'
                f"{esc(f' ({how})') if how else ''}</div>"
            )
        sections.append(
            f'<section class="turn-sources" data-turn="{i}"{hidden}>'
            f'<div class="for-q">Sources for: <span>{q}</span></div>{read}'
            f"{_turn_sources(t, i, show_scores)}</section>"
        )
    legend = f'<div class="score-legend">{esc(SCORE_LEGEND)}</div>' if show_scores else ""
    return '<div class="sources-panel">' + legend + "".join(sections) + "</div>"
