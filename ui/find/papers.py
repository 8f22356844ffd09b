"""Find papers: a topic and filters -> every matching paper (`rag.shapes.lister.find`, the lister `rag list` and
the chat call) as a paged table; an author and no topic -> the author's papers and co-authors; counts by decision and by area as small bar charts (HTML tables, so the numbers are the text
alternative), the applied filters as removable chips, and CSV / Markdown / BibTeX exports.

Everything taken from the corpus passes `esc()`; the only links are OpenReview URLs that pass
`safe_url()`. Nothing here loads from the network.
"""

from __future__ import annotations

import html
import math
from dataclasses import dataclass, field

from rag import export
from rag.errors import UserError
from rag.prompts import AT_LEAST
from rag.retrieval.filters import Filters
from rag.shapes.lister import FIELDS, PaperList, read_topic
from rag.shapes.lister import find as list_topic
from rag.text import retyped
from ui.filters import ANY, filters_of  # noqa: F401  (ANY: the no-filter value `find` takes)
from ui.html.safe import esc, like_link, retry_link, safe_url

CHART_AREAS = 8  # bars in the area chart; the rest are summed as "other areas"
QUOTE_CHARS = 320
COAUTHORS = 30  # co-authors named in an author's view; the rest are counted


@dataclass
class Found:
    """One search of the Find-papers view (kept per browser session in a gr.State)."""

    topic: str = ""
    filters: Filters = field(default_factory=Filters)
    detected: tuple[str, ...] = ()  # filter fields read from the topic
    result: PaperList | None = None
    error: str | None = None
    page: int = 0

    def pages(self, size: int) -> int:
        n = len(self.result.papers) if self.result else 0
        return max(1, math.ceil(n / max(1, size)))


def find(
    retriever,
    settings,
    topic: str,
    decision: str | None,
    area: str | None,
    author: str | None,
    check: bool = True,
) -> Found:
    """Run the lister; a filter value that matches nothing comes back as `error` (the UserError text).
    `check=False`: the topic's coverage was checked already (the chat's "See all N")."""
    given = filters_of(decision, area, author)
    read, f, detected = read_topic(topic, given)  # what the lister reads, shown even on an error
    out = Found(topic=read, filters=f, detected=detected)
    if not read and not f.author:
        out.error = "Type a topic or an author first, e.g. “diffusion models for protein design”."
        return out
    try:  # exactly `rag list`'s call: the topic as typed and the controls' filters
        out.result = list_topic(retriever, settings, topic, given, check_coverage=check)
    except UserError as e:
        out.error = str(e)
    return out


# ---------------------------------------------------------------- rendering
def _short(text: str, n: int) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= n else text[: n - 1].rstrip() + "…"


def render_summary(found: Found | None) -> str:
    if found is None:
        return (
            '<div class="find-note">Type a topic and press Find: every indexed paper about it is listed, '
            "each with the abstract sentence that shows it.</div>"
        )
    if found.error:
        return f'<div class="find-error" role="alert">{esc(found.error)}</div>'
    res = found.result
    if res.author is not None:
        return render_author(res)
    plain = f" ({found.filters.describe()})" if found.filters else ""
    what = esc(plain)
    n = len(res.papers)
    if res.like is not None:
        many = f"{n:,} {'paper' if n == 1 else 'papers'}"
        return (
            f'<div class="find-note" role="status"><strong>{many}</strong> nearest to “{esc(res.like.label)}”'
            f"{what}, nearest first (cosine of their abstracts' vectors).</div>"
        )
    if not n and (res.lacking or res.reason):
        note = f'<div class="find-note" role="status">{esc(res.why_empty(plain))}</div>'
        if res.suggested:  # one click finds the topic with the typo mended
            link = retry_link(retyped(res.topic, res.suggested), "#find-topic textarea", "find-btn")
            note += f'<div class="retry">Find instead: {link}</div>'
        return note
    if not n:
        return f'<div class="find-note" role="status">{esc(res.why_empty(plain))}</div>'

    many = f"{n:,} {'paper' if n == 1 else 'papers'}" if res.complete else f"At least {n:,} papers"
    more = "" if res.complete else f" {esc(AT_LEAST)}"
    return (
        f'<div class="find-note" role="status"><strong>{many}</strong> on '
        f"“{esc(res.topic)}”{what}, best first.{more}</div>"
    )


def render_author(res: PaperList) -> str:
    """An author's view: how many papers, which names in the corpus matched, and the co-authors."""
    view = res.author
    n = len(res.papers)
    rest = Filters(res.filters.decision, res.filters.area)
    also = f" ({rest.describe()})" if rest else ""
    head = (
        f'<div class="find-note" role="status"><strong>{n:,} {"paper" if n == 1 else "papers"}</strong> by an '
        f"author matching “{esc(view.name)}”{esc(also)}, best decision first."
    )
    if view.matched:
        head += f" Names matched: {esc(', '.join(view.matched))}."
    head += "</div>"
    if not view.coauthors:
        return head
    shown = view.coauthors[:COAUTHORS]
    more = len(view.coauthors) - len(shown)
    items = "".join(f'<li>{esc(name)} <span class="count">({k})</span></li>' for name, k in shown)
    tail = f"<li>and {more:,} more</li>" if more > 0 else ""
    return (
        head
        + f'<details class="coauthors" open><summary>Co-authors in the conference ({len(view.coauthors):,})'
        f'</summary><ul class="coauthor-list">{items}{tail}</ul></details>'
    )


def _authors_cell(p) -> str:
    names = [a for a in (p.authors or []) if a and a.strip()]
    shown = ", ".join(names[:4]) + (f" and {len(names) - 4} more" if len(names) > 4 else "")
    note = f' <span class="authors-order">({export.ALPHABETICAL})</span>' if export.alphabetical(p) else ""
    return esc(shown) + note


def render_table(found: Found | None, page_size: int) -> str:
    if found is None or found.error or not found.result or not found.result.papers:
        return ""
    rows = found.result.papers
    ranked = found.result.author is None  # an author's papers have no score
    pages = found.pages(page_size)
    page = min(max(0, found.page), pages - 1)
    first = page * page_size
    body = []
    for i, x in enumerate(rows[first : first + page_size], start=first + 1):
        p = x.paper
        url = safe_url(p.url)
        title = esc(p.label)
        if url:
            title = (
                f'<a href="{esc(url)}" target="_blank" rel="noopener noreferrer">{title}'
                '<span class="sr-only-live"> (OpenReview, opens in a new tab)</span></a>'
            )
        score = f"{x.score:.2f}" if ranked else ""
        body.append(
            f'<tr><td class="n">{i}</td><td class="title">{title}<div class="like">{like_link(p)}</div></td>'
            f"<td>{esc(p.decision or '')}</td>"
            f"<td>{esc(html.unescape(p.primary_area or ''))}</td><td>{_authors_cell(p)}</td>"
            f'<td class="quote">“{esc(_short(x.quote, QUOTE_CHARS))}”</td><td class="score">{score}</td></tr>'
        )
    last = min(first + page_size, len(rows))
    return (
        '<div class="find-table-wrap" tabindex="0" role="region" aria-label="Papers found">'
        f'<table class="find-table"><caption>Papers {first + 1}–{last} of {len(rows):,} '
        f"(page {page + 1} of {pages})</caption>"
        '<thead><tr><th scope="col">#</th><th scope="col">Title</th><th scope="col">Decision</th>'
        '<th scope="col">Primary area</th><th scope="col">Authors</th>'
        '<th scope="col">Evidence from the abstract</th><th scope="col">Score</th></tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table></div>"
    )


def _bars(caption: str, counts: list[tuple[str, int]], total: int, cls: str) -> str:
    top = max((c for _, c in counts), default=1) or 1
    rows = "".join(
        f'<tr><th scope="row">{esc(label)}</th><td class="bar-cell"><span class="bar" aria-hidden="true" '
        f'style="width:{max(2, round(100 * c / top))}%"></span></td>'
        f'<td class="count">{c:,}<span class="pct"> ({100 * c / total:.0f}%)</span></td></tr>'
        for label, c in counts
    )
    return (
        f'<table class="bar-chart {cls}"><caption>{esc(caption)}</caption>'
        '<thead><tr><th scope="col">Group</th><th scope="col"><span class="sr-only-live">Bar</span></th>'
        f'<th scope="col">Papers</th></tr></thead><tbody>{rows}</tbody></table>'
    )


def render_chart(found: Found | None) -> str:
    """Counts by decision and by primary area: bars drawn with CSS inside plain tables (the count
    column is the text alternative; screen readers read the table)."""
    if found is None or found.error or not found.result or not found.result.papers:
        return ""
    data = found.result.to_json()
    total = data["count"]
    by_area = list(data["by_area"].items())
    if len(by_area) > CHART_AREAS:
        rest = by_area[CHART_AREAS - 1 :]
        by_area = by_area[: CHART_AREAS - 1] + [(f"{len(rest)} other areas", sum(c for _, c in rest))]
    return (
        '<div class="find-charts">'
        + _bars("By decision", list(data["by_decision"].items()), total, "by-decision")
        + _bars("By primary area", by_area, total, "by-area")
        + "</div>"
    )


def chip_labels(found: Found | None) -> dict[str, str | None]:
    """The label of each filter's remove button (None: no such filter)."""
    out: dict[str, str | None] = dict.fromkeys(FIELDS)
    if found is None:
        return out
    f = found.filters
    for k in FIELDS:
        v = getattr(f, k)
        if not v:
            continue
        shown = Filters(**{k: v}).describe()
        src = " (from your topic)" if k in found.detected else ""
        out[k] = f"✕ Remove filter: {shown}{src}"
    return out


# ---------------------------------------------------------------- exports
def export_text(found: Found | None, kind: str) -> str:
    """CSV, Markdown or BibTeX of every paper found (not just the page shown)."""
    if found is None or not found.result or not found.result.papers:
        return "(Nothing to export: find some papers first.)"
    items = found.result.papers
    if kind == "csv":
        return export.to_csv(items)
    if kind == "bib":
        return export.to_bibtex(items)
    return export.to_markdown(items, heading=found.result.heading())
