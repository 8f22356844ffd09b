"""The Find-papers tab's handlers: the lister, its pages and exports (and the list behind the chat's
"See all N", whose topic and filters the chat's handlers put into this tab's controls)."""

from __future__ import annotations

import gradio as gr

from rag.errors import UserError
from ui.engine_holder import EngineHolder
from ui.filters import ANY
from ui.find import papers


class FindHandlers:
    """The Find-papers tab's handlers over the retriever of the engine `holder` holds."""

    def __init__(self, holder: EngineHolder):
        self.holder = holder

    def _retriever(self):
        holder = self.holder
        if holder.state == "loading":
            raise UserError("The index is still loading; try again in a moment.")
        if holder.state == "error":
            raise UserError(holder.failure())
        retriever = getattr(holder.engine, "retriever", None)
        if retriever is None:
            raise UserError("This engine cannot list papers.")
        return retriever

    def find_all_papers(self, topic: str, decision: str, area: str, author: str, page_size: int):
        """`find_papers` for the chat's "See all N": the chat checked the topic's coverage, so the list it
        counted is the list shown."""
        return self.find_papers(topic, decision, area, author, page_size, check=False)

    def find_papers(
        self, topic: str, decision: str, area: str, author: str, page_size: int, check: bool = True
    ):
        """Find papers: run the lister. Outputs: state, topic, decision, author, then `find_view`'s."""
        try:
            retriever = self._retriever()
            found = papers.find(retriever, self.holder.engine.settings, topic, decision, area, author, check)
        except UserError as e:
            found = papers.Found(topic=topic or "", error=str(e))
        f = found.filters
        return (
            found,
            found.topic if found.detected else gr.skip(),
            (f.decision or ANY) if "decision" in found.detected else gr.skip(),
            (f.author or "") if "author" in found.detected else gr.skip(),
            *self.find_view(found, page_size),
        )

    @staticmethod
    def find_view(found, page_size: int):
        """summary, table, chart, 3 filter chips, previous, page label, next."""
        chips = papers.chip_labels(found)
        pages = found.pages(page_size) if found else 1
        page = found.page if found else 0
        has_rows = bool(found and found.result and found.result.papers)
        return (
            papers.render_summary(found),
            papers.render_table(found, page_size),
            papers.render_chart(found),
            *(gr.update(visible=bool(chips[k]), value=chips[k] or "") for k in papers.FIELDS),
            gr.update(visible=pages > 1, interactive=page > 0),
            gr.update(visible=pages > 1, value=f"Page {page + 1} of {pages}"),
            gr.update(visible=pages > 1, interactive=page + 1 < pages),
            *(gr.update(visible=has_rows, interactive=has_rows) for _ in range(3)),  # nothing to export: none
        )

    def find_page(self, found, delta: int, page_size: int):
        """Previous / next page. Outputs: state, then `find_view`'s."""
        if found is None:
            return None, *self.find_view(None, page_size)
        found.page = min(max(0, found.page + delta), found.pages(page_size) - 1)
        return found, *self.find_view(found, page_size)

    @staticmethod
    def find_export(found, kind: str):
        """The whole list as CSV, Markdown or BibTeX, for the page to save (built here, locally)."""
        return papers.export_text(found, kind)
