"""The Ask tab's layout: the chat, example questions, the composer, copy and export, the settings
(with the chat's paper filters) and the sources panel. Its events are wired in ui/events.py."""

from __future__ import annotations

from dataclasses import dataclass

import gradio as gr

from ui.chat import render
from ui.chat.handlers import MODES, PLACEHOLDERS, TASKS
from ui.filters import ANY, DECISIONS


@dataclass
class ChatTab:
    chat: gr.HTML
    examples_box: gr.Column
    ex_buttons: list[gr.Button]
    see_all_btn: gr.Button  # "See all N papers in Find papers", under a list answer
    question: gr.Textbox
    hint: gr.HTML
    task: gr.Radio
    send: gr.Button
    stop: gr.Button
    clear: gr.Button
    copy_btn: gr.Button
    export_md_btn: gr.Button
    export_bib_btn: gr.Button
    copy_box: gr.Textbox  # what copy and the exports hand to the page's JS
    top_k: gr.Slider
    mode: gr.Radio
    profile: gr.Dropdown
    show_scores: gr.Checkbox
    chat_decision: gr.Dropdown
    chat_area: gr.Dropdown
    chat_author: gr.Textbox
    sources: gr.HTML


def build_chat_tab(
    *, ready: bool, n_examples: int, top_k: int, mode: str, profiles: list[str], profile: str
) -> ChatTab:
    """The tab, laid out in page order (Gradio numbers components in the order they are made)."""
    with gr.Tab("Ask", id="chat", elem_id="tab-chat"):
        with gr.Row(equal_height=False, elem_id="main-row"):
            with gr.Column(scale=3, min_width=420, elem_id="chat-col"):
                chat = gr.HTML(render.render_chat([]), elem_id="chat", apply_default_css=False)
                examples_box, ex_buttons = _build_examples(n_examples)
                see_all_btn = gr.Button("", visible=False, size="sm", variant="secondary", elem_id="see-all")
                question, hint, task, send, stop, clear = _build_composer(ready)
                copy_btn, export_md_btn, export_bib_btn = _build_copy_row()
                copy_box = gr.Textbox(
                    label="Answer with references (Markdown)",
                    visible=False,
                    lines=8,
                    max_lines=20,
                    interactive=False,
                    buttons=["copy"],
                    elem_id="copy-box",
                )
                settings = _build_settings(top_k, mode, profiles, profile)
            with gr.Column(scale=2, min_width=340, elem_id="sources-col"):
                sources = gr.HTML(render.render_sources([]), elem_id="sources", apply_default_css=False)
    top_k_slider, mode_radio, profile_dd, show_scores, chat_decision, chat_area, chat_author = settings
    return ChatTab(
        chat=chat,
        examples_box=examples_box,
        ex_buttons=ex_buttons,
        see_all_btn=see_all_btn,
        question=question,
        hint=hint,
        task=task,
        send=send,
        stop=stop,
        clear=clear,
        copy_btn=copy_btn,
        export_md_btn=export_md_btn,
        export_bib_btn=export_bib_btn,
        copy_box=copy_box,
        top_k=top_k_slider,
        mode=mode_radio,
        profile=profile_dd,
        show_scores=show_scores,
        chat_decision=chat_decision,
        chat_area=chat_area,
        chat_author=chat_author,
        sources=sources,
    )


def _build_examples(n_examples: int) -> tuple[gr.Column, list[gr.Button]]:
    """Example questions: hidden until the engine is ready and offers some (`poll_status`)."""
    with gr.Column(visible=False, elem_id="examples") as examples_box:
        gr.HTML('<div id="examples-label">Try one of these:</div>', apply_default_css=False)
        ex_buttons = [
            gr.Button("", visible=False, size="sm", variant="secondary", elem_classes=["example-q"])
            for _ in range(n_examples)
        ]
    return examples_box, ex_buttons


def _build_composer(ready: bool) -> tuple:
    """The question box, its hint line and the mode, Ask, Stop and New chat controls."""
    with gr.Column(elem_id="composer-wrap"):  # stays in view on small screens
        with gr.Group(elem_id="composer"):
            question = gr.Textbox(
                placeholder=PLACEHOLDERS["answer"],
                label="Your question",
                show_label=False,
                lines=1,
                max_lines=8,
                autofocus=True,
                elem_id="question",
            )
        hint = gr.HTML("", elem_id="hint", apply_default_css=False)
        with gr.Row(elem_id="controls"):
            task = gr.Radio(
                list(TASKS),
                value="Answer",
                label="Mode",
                show_label=False,
                container=False,
                elem_id="task",
                scale=2,
            )
            send = gr.Button(
                "Ask", variant="primary", interactive=ready, elem_id="send", scale=1, min_width=90
            )
            stop = gr.Button("Stop", variant="stop", visible=False, elem_id="stop", scale=1, min_width=90)
            clear = gr.Button("New chat", variant="secondary", elem_id="new-chat", scale=1, min_width=90)
    return question, hint, task, send, stop, clear


def _build_copy_row() -> tuple[gr.Button, gr.Button, gr.Button]:
    """Copy the answer, export the chat or its cited papers; the status span is for screen readers."""
    with gr.Row(elem_id="copy-row"):
        copy_btn = gr.Button(
            "Copy answer with references",
            size="sm",
            variant="secondary",
            elem_id="copy-btn",
            scale=0,
            min_width=240,
        )
        export_md_btn = gr.Button(
            "Export chat (Markdown)", size="sm", variant="secondary", elem_id="export-md", scale=0
        )
        export_bib_btn = gr.Button(
            "Cited papers (BibTeX)", size="sm", variant="secondary", elem_id="export-bib", scale=0
        )
        gr.HTML(
            '<span class="copy-msg" role="status" aria-live="polite"></span>',
            elem_id="copy-status",
            apply_default_css=False,
        )
    return copy_btn, export_md_btn, export_bib_btn


def _build_settings(top_k: int, mode: str, profiles: list[str], profile: str) -> tuple:
    """The Settings accordion: retrieval, model, scores, and the filters on the papers the chat uses."""
    with gr.Accordion("Settings", open=False, elem_id="settings"):
        top_k_slider = gr.Slider(
            1, 20, value=top_k, step=1, label="Papers to retrieve (top-k)", elem_id="top-k"
        )
        mode_radio = gr.Radio(
            MODES,
            value=mode if mode in MODES else "hybrid",
            label="Retrieval mode",
            info="hybrid = dense + BM25 keywords",
            elem_id="mode",
        )
        profile_dd = gr.Dropdown(
            profiles,
            value=profile,
            label="Model",
            info="Other models load on first use.",
            elem_id="profile",
        )
        show_scores = gr.Checkbox(False, label="Show retrieval scores", elem_id="show-scores")
        chat_decision = gr.Dropdown(
            DECISIONS,
            value=ANY,
            label="Only papers with decision",
            elem_id="chat-decision",
            allow_custom_value=True,  # "oral, spotlight": either
        )
        chat_area = gr.Dropdown([ANY], value=ANY, label="Only papers in primary area", elem_id="chat-area")
        chat_author = gr.Textbox(
            label="Only papers by an author matching", placeholder="any", lines=1, elem_id="chat-author"
        )
    return top_k_slider, mode_radio, profile_dd, show_scores, chat_decision, chat_area, chat_author
