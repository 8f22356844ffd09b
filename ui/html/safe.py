"""The only ways corpus and model text enter the page's HTML: escaping, URL vetting and
evidence highlighting; and the links that ask again (a mended question, "More like this").

Offsets (`Citation.spans`, `quote_start/quote_end`) are character offsets into the raw
abstract; `highlight()` cuts the raw text first and escapes each piece, so entities never
shift an offset.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Sequence

from rag.retrieval.similar import like_topic
from rag.types import Citation

_SAFE_URL_RE = re.compile(r"^https?://[A-Za-z0-9.\-]+(?::\d+)?(?:/[A-Za-z0-9._~\-/%?=&#+]*)?$")


def esc(text: object) -> str:
    """HTML-escape text for element content and double-quoted attributes."""
    return html.escape("" if text is None else str(text), quote=True)


def safe_url(url: str | None) -> str | None:
    """Return `url` if it is a plain http(s) URL, else None (no javascript:, data:, quotes)."""
    if not url or not _SAFE_URL_RE.match(url):
        return None
    return url


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


def highlight(text: str, spans: Iterable[Sequence[int]]) -> str:
    """Escape `text`, wrapping each span in <mark class="evidence">."""
    out: list[str] = []
    pos = 0
    for s, e in merge_spans(spans, len(text)):
        out.append(esc(text[pos:s]))
        out.append(f'<mark class="evidence">{esc(text[s:e])}</mark>')
        pos = e
    out.append(esc(text[pos:]))
    return "".join(out)


def retry_link(text: str, box: str, send: str) -> str:
    """A link that puts `text` in the input matched by the CSS selector `box` and clicks the button with id
    `send` (ui/static/app.js): a mended question or topic, asked again in one click."""
    return (
        f'<a class="retry-link" role="button" href="#" data-q="{esc(text)}" data-box="{esc(box)}" '
        f'data-send="{esc(send)}">{esc(text)}</a>'
    )


def like_link(paper) -> str:
    """ "More like this": Find papers lists the paper's nearest papers (the lister's `like:ID` topic), its tab
    brought forward first (ui/static/app.js, as the retry links)."""
    return (
        f'<a class="retry-link like-link" role="button" href="#" data-q="{esc(like_topic(paper.paper_id))}" '
        'data-box="#find-topic textarea" data-send="find-btn" data-tab="tab-find-button">'
        f'More like this<span class="sr-only-live">: papers nearest to “{esc(paper.label)}”</span></a>'
    )
