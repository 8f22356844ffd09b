"""The Find-papers tab's handlers: the lister, its pages and exports, and the chat's "See all N"
hand-over into this tab."""

from __future__ import annotations

import gradio as gr

from rag.errors import UserError
from ui import find
from ui.engine_holder import EngineHolder
from ui.session import Session


class FindHandlers:
    """Mixed into `ui.handlers.Handlers`; uses `self.holder` and `self._start_failure()`."""

    holder: EngineHolder

    # ------------------------------------------------------------ the list behind a chat answer
    @staticmethod
    def see_all_button(session: Session):
        """ "See all N in Find papers" under the chat when the latest answer listed only the first N."""
        t = next((t for t in reversed(session.turns) if t.status == "done" and t.answer), None)
        a = t.answer if t else None
        if a is None or not a.listed or a.listed <= len(a.citations):
            return gr.update(visible=False)
        return gr.update(visible=True, value=f"See all {a.listed:,} papers in Find papers")

    @staticmethod
    def see_all(session: Session):
        """The latest list answer's topic and filters, into the Find-papers controls (then `find` runs).
        Outputs: tabs, topic, decision, area, author."""
        t = next(
            (t for t in reversed(session.turns) if t.status == "done" and t.answer and t.answer.listed), None
        )
        if t is None:
            return (gr.skip(),) * 5
        decision, area, author = t.filter_values
        return (
            gr.Tabs(selected="find"),
            t.answer.standalone_question or t.question,
            decision or find.ANY,
            area or find.ANY,
            author or "",
        )

    # ------------------------------------------------------------ Find papers
    def _retriever(self):
        holder = self.holder
        if holder.state == "loading":
            raise UserError("The index is still loading; try again in a moment.")
        if holder.state == "error":
            raise UserError(self._start_failure())
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
            found = find.find(self._retriever(), topic, decision, area, author, check)
        except UserError as e:
            found = find.Found(topic=topic or "", error=str(e))
        f = found.filters
        return (
            found,
            found.topic if found.detected else gr.skip(),
            (f.decision or find.ANY) if "decision" in found.detected else gr.skip(),
            (f.author or "") if "author" in found.detected else gr.skip(),
            *self.find_view(found, page_size),
        )

    @staticmethod
    def find_view(found, page_size: int):
        """summary, table, chart, 3 filter chips, previous, page label, next."""
        chips = find.chip_labels(found)
        pages = found.pages(page_size) if found else 1
        page = found.page if found else 0
        has_rows = bool(found and found.result and found.result.papers)
        return (
            find.render_summary(found),
            find.render_table(found, page_size),
            find.render_chart(found),
            *(gr.update(visible=bool(chips[k]), value=chips[k] or "") for k in find.FIELDS),
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
        return find.export_text(found, kind)
