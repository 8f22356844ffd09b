"""The Find-papers tab's layout: topic and filter controls, the filter chips, the summary, the
paged table, the chart and the exports. Its events are wired in ui/events.py."""

from __future__ import annotations

from dataclasses import dataclass

import gradio as gr

from ui.filters import ANY, DECISIONS
from ui.find import papers

EXPORT_KINDS = (("csv", "CSV"), ("md", "Markdown"), ("bib", "BibTeX"))  # kind, button label


@dataclass
class FindTab:
    topic: gr.Textbox
    decision: gr.Dropdown
    area: gr.Dropdown
    author: gr.Textbox
    find_btn: gr.Button
    chips: list[gr.Button]  # one per papers.FIELDS: click to drop that filter
    summary: gr.HTML
    table: gr.HTML
    prev_btn: gr.Button
    page_label: gr.Button
    next_btn: gr.Button
    chart: gr.HTML
    exports: list[gr.Button]  # one per EXPORT_KINDS
    export_box: gr.Textbox  # an export's text, for the page's JS to save
    found: gr.State  # the last papers.Found (its rows and the page shown)

    @property
    def view(self) -> list:
        """What `Handlers.find_view` updates, in its order."""
        return [
            self.summary,
            self.table,
            self.chart,
            *self.chips,
            self.prev_btn,
            self.page_label,
            self.next_btn,
            *self.exports,
        ]


def build_find_tab() -> FindTab:
    """The tab, laid out in page order (Gradio numbers components in the order they are made)."""
    with gr.Tab("Find papers", id="find", elem_id="tab-find"):
        topic, decision, area, author, find_btn = _build_find_controls()
        with gr.Row(elem_id="find-chips"):
            chips = [
                gr.Button(
                    "",
                    visible=False,
                    size="sm",
                    variant="secondary",
                    elem_id=f"chip-{k}",
                    elem_classes=["filter-chip"],
                    scale=0,
                )
                for k in papers.FIELDS
            ]
        summary = gr.HTML(papers.render_summary(None), elem_id="find-summary", apply_default_css=False)
        table, prev_btn, page_label, next_btn, chart, exports = _build_results()
        export_box = gr.Textbox(visible="hidden", label="export", elem_id="find-export-box")
        found = gr.State(None)
    return FindTab(
        topic=topic,
        decision=decision,
        area=area,
        author=author,
        find_btn=find_btn,
        chips=chips,
        summary=summary,
        table=table,
        prev_btn=prev_btn,
        page_label=page_label,
        next_btn=next_btn,
        chart=chart,
        exports=exports,
        export_box=export_box,
        found=found,
    )


def _build_find_controls() -> tuple:
    """Topic, decision, primary area (filled once the index is read), author, and Find."""
    with gr.Row(elem_id="find-controls", equal_height=False):
        topic = gr.Textbox(
            label="Topic",
            placeholder="e.g. orals about diffusion models",
            lines=1,
            max_lines=3,
            elem_id="find-topic",
            scale=3,
            min_width=240,
        )
        decision = gr.Dropdown(
            DECISIONS,
            value=ANY,
            label="Decision",
            elem_id="find-decision",
            min_width=150,
            allow_custom_value=True,  # "oral, spotlight": either
        )
        area = gr.Dropdown([ANY], value=ANY, label="Primary area", elem_id="find-area", min_width=200)
        author = gr.Textbox(label="Author", placeholder="any", lines=1, elem_id="find-author", min_width=150)
        find_btn = gr.Button("Find", variant="primary", elem_id="find-btn", scale=0, min_width=90)
    return topic, decision, area, author, find_btn


def _build_results() -> tuple:
    """The paged table on the left; the chart and the export buttons on the right."""
    with gr.Row(elem_id="find-results", equal_height=False):
        with gr.Column(scale=3, min_width=320):
            table = gr.HTML("", elem_id="find-table", apply_default_css=False)
            with gr.Row(elem_id="find-pager"):
                prev_btn = gr.Button("‹ Previous", visible=False, size="sm", elem_id="find-prev", scale=0)
                page_label = gr.Button(
                    "", visible=False, size="sm", interactive=False, elem_id="find-page", scale=0
                )
                next_btn = gr.Button("Next ›", visible=False, size="sm", elem_id="find-next", scale=0)
        with gr.Column(scale=1, min_width=260):
            chart = gr.HTML("", elem_id="find-chart", apply_default_css=False)
            with gr.Row(elem_id="find-exports"):
                exports = [
                    gr.Button(
                        label,
                        size="sm",
                        variant="secondary",
                        interactive=False,
                        visible=False,  # shown with the first list
                        elem_id=f"find-export-{kind}",
                        scale=0,
                    )
                    for kind, label in EXPORT_KINDS
                ]
            gr.HTML(
                '<span class="copy-msg" role="status" aria-live="polite"></span>',
                elem_id="find-export-status",
                apply_default_css=False,
            )
    return table, prev_btn, page_label, next_btn, chart, exports
