"""The status banner above the tabs: loading (with the indexing progress), ready, or failed."""

from __future__ import annotations

from ui.html.safe import esc


def render_status(kind: str, message: str, progress: tuple[int, int] | None = None) -> str:
    """A status banner: kind in {loading, ready, error}; `progress` (done, total chunks) while indexing."""
    spinner = '<span class="spinner"></span>' if kind == "loading" else ""
    bar = ""
    if progress and progress[1] > 0:
        done, total = min(progress[0], progress[1]), progress[1]
        label = f"Indexing: {done:,} / {total:,} chunks ({100 * done / total:.0f}%)"
        bar = (
            f'<div class="index-progress"><progress max="{total}" value="{done}" aria-label="Indexing progress">'
            f"</progress><span>{esc(label)}</span></div>"
        )
    return f'<div class="status-banner {esc(kind)}" role="status">{spinner}{esc(message)}{bar}</div>'
