"""The page's event wiring: which handler each control calls, with what, and how it queues.

`wire_events` wires it all, in one fixed order: Gradio numbers the events (and suffixes repeated
API names) in the order they are made.
"""

from __future__ import annotations

from dataclasses import dataclass

import gradio as gr

from ui.assets import COPY_JS, download_js
from ui.chat.handlers import ChatHandlers
from ui.chat.tab import ChatTab
from ui.filters import ANY
from ui.find.handlers import FindHandlers
from ui.find.tab import FindTab
from ui.handlers import Handlers, StatusHandlers

# Page-only events: not in the API, never wait for a worker, no progress overlay.
QUIET = dict(api_visibility="private", concurrency_limit=None, show_progress="hidden")


@dataclass
class Page:
    """Everything the events join: the session, the banner, both tabs and the hidden API parts."""

    session: gr.State
    status: gr.HTML
    indexed: gr.HTML
    tabs: gr.Tabs
    chat: ChatTab
    find: FindTab
    answer_json: gr.JSON
    api_ask: gr.Button
    timer: gr.Timer


def wire_events(demo: gr.Blocks, on: Handlers, page: Page, *, llm_concurrency: int, page_size: int) -> None:
    llm = dict(concurrency_limit=llm_concurrency, concurrency_id="llm")  # the one LLM, shared by all
    _wire_status_polling(demo, on.status, page)
    streams = _wire_asking(on.chat, page, llm)
    _wire_chat_controls(on.chat, page, streams, llm)
    _wire_chat_exports(on.chat, page)
    _wire_find(on.find, on.chat, page, page_size)
    _wire_model_switch(on.status, page)


def _wire_status_polling(demo: gr.Blocks, on: StatusHandlers, p: Page) -> None:
    """The banner, Ask, the examples and the area lists follow the engine until it is ready."""
    c = p.chat
    outputs = [p.status, c.send, p.timer, c.examples_box, *c.ex_buttons, p.indexed, p.find.area, c.chat_area]
    demo.load(on.poll_status, [p.session], outputs, api_visibility="private", queue=False)
    p.timer.tick(on.poll_status, [p.session], outputs, **QUIET)


def _wire_asking(on: ChatHandlers, p: Page, llm: dict) -> list:
    """Enter, Ask and each example question: show the question, stream its answer, then offer
    "See all N" if it was a list. Returns the streaming events (Stop and New chat cancel them)."""
    c = p.chat
    step1_out = [c.chat, c.sources, p.session, c.question, c.hint, c.examples_box, c.copy_box, c.send, c.stop]
    step2_in = [
        p.session,
        c.top_k,
        c.mode,
        c.profile,
        c.show_scores,
        c.chat_decision,
        c.chat_area,
        c.chat_author,
    ]
    step2_out = [c.chat, c.sources, p.session, p.answer_json, c.question, c.send, c.stop]
    streams = []
    for trigger, inp in [(c.question.submit, c.question), (c.send.click, c.question)] + [
        (b.click, b) for b in c.ex_buttons
    ]:
        # "multiple": a question typed while another streams gets the "press Stop" hint
        ev = trigger(
            on.submit_question,
            [inp, p.session, c.task, c.show_scores],
            step1_out,
            api_visibility="private",
            concurrency_limit=None,
            show_progress="hidden",
            trigger_mode="multiple",
        )
        streams.append(
            ev.then(
                on.stream_answer,
                step2_in,
                step2_out,
                api_visibility="undocumented",
                show_progress="hidden",
                trigger_mode="multiple",
                **llm,
            )
        )
        streams[-1].then(on.see_all_button, [p.session], [c.see_all_btn], **QUIET)
    return streams


def _wire_chat_controls(on: ChatHandlers, p: Page, streams: list, llm: dict) -> None:
    """Stop, the mode's placeholder, the /ask and /new_chat API, and the scores toggle."""
    c = p.chat
    c.stop.click(
        on.stop,
        [p.session, c.show_scores],
        [c.chat, c.sources, p.session, c.hint, c.send, c.stop],
        api_visibility="private",
        cancels=streams,
        concurrency_limit=None,
        queue=False,
    ).then(on.settle, [p.session, c.show_scores], [c.chat, c.sources], **QUIET)
    c.task.change(
        on.placeholder, [c.task], [c.question], api_visibility="private", queue=False, show_progress="hidden"
    )
    api_ev = p.api_ask.click(
        on.ask,
        [c.question, c.task, c.top_k, c.mode, c.profile, p.session],
        [c.chat, c.sources, p.session, p.answer_json],
        api_name="ask",
        **llm,
    )
    c.clear.click(
        on.new_chat,
        [p.session],
        [p.session, c.chat, c.sources, c.hint, c.examples_box, c.copy_box, p.answer_json, c.send, c.stop],
        api_name="new_chat",
        cancels=streams + [api_ev],
        concurrency_limit=None,
    ).then(on.settle, [p.session, c.show_scores], [c.chat, c.sources], **QUIET)
    c.show_scores.change(on.rerender_sources, [p.session, c.show_scores], [c.sources], **QUIET)


def _wire_chat_exports(on: ChatHandlers, p: Page) -> None:
    """Copy puts the answer on the clipboard; the exports save a file (both through the copy box)."""
    c = p.chat
    c.copy_btn.click(
        on.copy_answer, [p.session], [c.copy_box], api_name="copy_answer", concurrency_limit=None
    ).then(None, [c.copy_box], None, js=COPY_JS)
    for btn, fn, fname in [
        (c.export_md_btn, on.export_chat, "iclr-rag-chat.md"),
        (c.export_bib_btn, on.export_bibtex, "iclr-rag-cited.bib"),
    ]:
        btn.click(fn, [p.session], [c.copy_box], api_visibility="private", concurrency_limit=None).then(
            None, [c.copy_box], None, js=download_js(fname)
        )


def _wire_find(on: FindHandlers, chat: ChatHandlers, p: Page, page_size: int) -> None:
    """Find, the chips, the pager, the exports, and the chat's "See all N" into this tab."""
    tab = p.find
    size = gr.State(page_size)
    find_in = [tab.topic, tab.decision, tab.area, tab.author, size]
    find_out = [tab.found, tab.topic, tab.decision, tab.author, *tab.view]
    run = dict(api_visibility="private", concurrency_limit=2, concurrency_id="find")
    tab.find_btn.click(on.find_papers, find_in, find_out, **run)
    tab.topic.submit(on.find_papers, find_in, find_out, **run)
    # "Saved iclr-papers.csv." belongs to the list it was saved from
    clear = "() => { const s = document.querySelector('#find-export-status .copy-msg'); if (s) s.textContent = ''; }"
    for trigger in (
        tab.find_btn.click,
        tab.topic.submit,
        p.chat.see_all_btn.click,
        *(c.click for c in tab.chips),
    ):
        trigger(None, None, None, js=clear, queue=False, **QUIET)
    # a chip clears its filter, then the list runs again
    for chip, control, empty in zip(tab.chips, [tab.decision, tab.area, tab.author], [ANY, ANY, ""]):
        chip.click(lambda v=empty: v, None, [control], queue=False, **QUIET).then(
            on.find_papers, find_in, find_out, **run
        )
    for btn, delta in ((tab.prev_btn, -1), (tab.next_btn, 1)):
        btn.click(
            lambda f, n, d=delta: on.find_page(f, d, n), [tab.found, size], [tab.found, *tab.view], **QUIET
        )
    for btn, kind, fname in zip(
        tab.exports, ("csv", "md", "bib"), ("iclr-papers.csv", "iclr-papers.md", "iclr-papers.bib")
    ):
        btn.click(lambda f, k=kind: on.find_export(f, k), [tab.found], [tab.export_box], **QUIET).then(
            None, [tab.export_box], None, js=download_js(fname, "#find-export-status .copy-msg")
        )
    p.chat.see_all_btn.click(
        chat.see_all, [p.session], [p.tabs, tab.topic, tab.decision, tab.area, tab.author], **QUIET
    ).then(on.find_all_papers, find_in, find_out, **run)


def _wire_model_switch(on: StatusHandlers, p: Page) -> None:
    """Another model loads once, one at a time; the banner says so meanwhile."""
    p.chat.profile.change(
        on.switch_model,
        [p.chat.profile],
        [p.status],
        api_visibility="private",
        concurrency_limit=1,
        concurrency_id="model-load",
    )
