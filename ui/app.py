"""The web UI's entry points: a Gradio Blocks page over `rag.answer.Engine`.

- `build_app(engine, **options) -> gr.Blocks`: the page, around an engine or an `EngineHolder`.
- `start(demo, host, port, auth, quiet) -> url`: serve it in the background (tests, embedding).
- `launch(engine, host, port, auth)`: serve and block (an engine that is already loaded).
- `serve(settings, host, port, ingest_seeds=True, auth=None)`: what `rag serve` calls: the
  server comes up at once, the engine loads in a background thread (ingesting the seeds into an
  empty index first) and the page says so until it is ready. `main` is an alias.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

import gradio as gr

from rag.models import available_profiles
from rag.settings import Settings
from ui import find, render
from ui.assets import COPY_JS, download_js
from ui.engine_holder import N_EXAMPLES, EngineHolder
from ui.handlers import MODES, PLACEHOLDERS, TASKS, Handlers
from ui.launch_options import check_host, guard_kwargs, launch_kwargs, parse_auth
from ui.session import Session

log = logging.getLogger("ui")

if TYPE_CHECKING:  # importing the engine takes seconds (llama-index, chroma): only the loader does
    from rag.answer import Engine

__all__ = [
    "EngineHolder",
    "build_app",
    "check_host",
    "launch",
    "launch_kwargs",
    "load_engine",
    "main",
    "parse_auth",
    "serve",
    "start",
]


def build_app(
    engine: Engine | EngineHolder,
    *,
    title: str = "ICLR 2025 · Ask the abstracts",
    default_top_k: int | None = None,
    default_mode: str | None = None,
    n_examples: int = N_EXAMPLES,
    llm_concurrency: int | None = None,
    poll_every: float = 0.5,
    page_size: int | None = None,
) -> gr.Blocks:
    """The Blocks app around an engine (loaded) or an `EngineHolder` (maybe still loading)."""
    holder = engine if isinstance(engine, EngineHolder) else EngineHolder(engine)
    on = Handlers(holder, n_examples)
    settings = holder.engine.settings if holder.state == "ready" else None
    top_k0 = int(default_top_k or (settings.top_k if settings else 5))
    mode0 = default_mode or (settings.mode if settings else "hybrid")
    limits = settings or Settings()  # page and queue sizes (a loading engine has no settings yet)
    page_size = int(page_size or limits.find_page_size)
    llm_concurrency = llm_concurrency or limits.concurrency
    profiles = available_profiles()  # qwen1.5b only after `make install-1.5b`
    if holder.default_profile not in profiles:
        profiles.insert(0, holder.default_profile)

    with gr.Blocks(title=title, fill_width=False) as demo:
        session = gr.State(Session())
        with gr.Row(equal_height=True, elem_id="top-row"):
            with gr.Column(scale=3, min_width=320):
                gr.HTML(
                    '<div id="app-header"><h1>ICLR 2025 · Ask the abstracts</h1>'
                    "<p>Answers come only from the indexed submission abstracts, and every cited "
                    "claim links to the sentence that supports it.</p></div>",
                    apply_default_css=False,
                )
                indexed = gr.HTML(on.indexed_html(), elem_id="indexed", apply_default_css=False)
            with gr.Column(scale=2, min_width=260, elem_id="status-row"):
                status = gr.HTML(on.status_html(), elem_id="status", apply_default_css=False)
        with gr.Tabs(selected="chat", elem_id="tabs") as tabs:
            with gr.Tab("Ask", id="chat", elem_id="tab-chat"):
                with gr.Row(equal_height=False, elem_id="main-row"):
                    with gr.Column(scale=3, min_width=420, elem_id="chat-col"):
                        chat = gr.HTML(render.render_chat([]), elem_id="chat", apply_default_css=False)
                        with gr.Column(visible=False, elem_id="examples") as examples_box:
                            gr.HTML(
                                '<div id="examples-label">Try one of these:</div>', apply_default_css=False
                            )
                            ex_buttons = [
                                gr.Button(
                                    "",
                                    visible=False,
                                    size="sm",
                                    variant="secondary",
                                    elem_classes=["example-q"],
                                )
                                for _ in range(n_examples)
                            ]
                        see_all_btn = gr.Button(
                            "", visible=False, size="sm", variant="secondary", elem_id="see-all"
                        )
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
                                    "Ask",
                                    variant="primary",
                                    interactive=holder.state == "ready",
                                    elem_id="send",
                                    scale=1,
                                    min_width=90,
                                )
                                stop = gr.Button(
                                    "Stop",
                                    variant="stop",
                                    visible=False,
                                    elem_id="stop",
                                    scale=1,
                                    min_width=90,
                                )
                                clear = gr.Button(
                                    "New chat", variant="secondary", elem_id="new-chat", scale=1, min_width=90
                                )
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
                                "Export chat (Markdown)",
                                size="sm",
                                variant="secondary",
                                elem_id="export-md",
                                scale=0,
                            )
                            export_bib_btn = gr.Button(
                                "Cited papers (BibTeX)",
                                size="sm",
                                variant="secondary",
                                elem_id="export-bib",
                                scale=0,
                            )
                            gr.HTML(
                                '<span class="copy-msg" role="status" aria-live="polite"></span>',
                                elem_id="copy-status",
                                apply_default_css=False,
                            )
                        copy_box = gr.Textbox(
                            label="Answer with references (Markdown)",
                            visible=False,
                            lines=8,
                            max_lines=20,
                            interactive=False,
                            buttons=["copy"],
                            elem_id="copy-box",
                        )
                        with gr.Accordion("Settings", open=False, elem_id="settings"):
                            top_k = gr.Slider(
                                1,
                                20,
                                value=top_k0,
                                step=1,
                                label="Papers to retrieve (top-k)",
                                elem_id="top-k",
                            )
                            mode = gr.Radio(
                                MODES,
                                value=mode0 if mode0 in MODES else "hybrid",
                                label="Retrieval mode",
                                info="hybrid = dense + BM25 keywords",
                                elem_id="mode",
                            )
                            profile = gr.Dropdown(
                                profiles,
                                value=holder.default_profile,
                                label="Model",
                                info="Other models load on first use.",
                                elem_id="profile",
                            )
                            show_scores = gr.Checkbox(
                                False, label="Show retrieval scores", elem_id="show-scores"
                            )
                            chat_decision = gr.Dropdown(
                                find.DECISIONS,
                                value=find.ANY,
                                label="Only papers with decision",
                                elem_id="chat-decision",
                            )
                            chat_area = gr.Dropdown(
                                [find.ANY],
                                value=find.ANY,
                                label="Only papers in primary area",
                                elem_id="chat-area",
                            )
                            chat_author = gr.Textbox(
                                label="Only papers by an author matching",
                                placeholder="any",
                                lines=1,
                                elem_id="chat-author",
                            )
                    with gr.Column(scale=2, min_width=340, elem_id="sources-col"):
                        sources = gr.HTML(
                            render.render_sources([]), elem_id="sources", apply_default_css=False
                        )
            with gr.Tab("Find papers", id="find", elem_id="tab-find"):
                with gr.Row(elem_id="find-controls", equal_height=False):
                    find_topic = gr.Textbox(
                        label="Topic",
                        placeholder="e.g. orals about diffusion models",
                        lines=1,
                        max_lines=3,
                        elem_id="find-topic",
                        scale=3,
                        min_width=240,
                    )
                    find_decision = gr.Dropdown(
                        find.DECISIONS,
                        value=find.ANY,
                        label="Decision",
                        elem_id="find-decision",
                        min_width=150,
                    )
                    find_area = gr.Dropdown(
                        [find.ANY], value=find.ANY, label="Primary area", elem_id="find-area", min_width=200
                    )
                    find_author = gr.Textbox(
                        label="Author", placeholder="any", lines=1, elem_id="find-author", min_width=150
                    )
                    find_btn = gr.Button("Find", variant="primary", elem_id="find-btn", scale=0, min_width=90)
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
                        for k in find.FIELDS
                    ]
                find_summary = gr.HTML(
                    find.render_summary(None), elem_id="find-summary", apply_default_css=False
                )
                with gr.Row(elem_id="find-results", equal_height=False):
                    with gr.Column(scale=3, min_width=320):
                        find_table = gr.HTML("", elem_id="find-table", apply_default_css=False)
                        with gr.Row(elem_id="find-pager"):
                            prev_btn = gr.Button(
                                "‹ Previous", visible=False, size="sm", elem_id="find-prev", scale=0
                            )
                            page_label = gr.Button(
                                "", visible=False, size="sm", interactive=False, elem_id="find-page", scale=0
                            )
                            next_btn = gr.Button(
                                "Next ›", visible=False, size="sm", elem_id="find-next", scale=0
                            )
                    with gr.Column(scale=1, min_width=260):
                        find_chart = gr.HTML("", elem_id="find-chart", apply_default_css=False)
                        with gr.Row(elem_id="find-exports"):
                            find_exports = [
                                gr.Button(
                                    label,
                                    size="sm",
                                    variant="secondary",
                                    interactive=False,
                                    elem_id=f"find-export-{kind}",
                                    scale=0,
                                )
                                for kind, label in (("csv", "CSV"), ("md", "Markdown"), ("bib", "BibTeX"))
                            ]
                        gr.HTML(
                            '<span class="copy-msg" role="status" aria-live="polite"></span>',
                            elem_id="find-export-status",
                            apply_default_css=False,
                        )
                find_box = gr.Textbox(visible="hidden", label="export", elem_id="find-export-box")
                found_state = gr.State(None)
        answer_json = gr.JSON(visible=False, label="answer")
        api_ask = gr.Button(visible=False, elem_id="api-ask")
        timer = gr.Timer(poll_every, active=True)

        poll_outputs = [status, send, timer, examples_box, *ex_buttons, indexed, find_area, chat_area]
        demo.load(on.poll_status, [session], poll_outputs, api_visibility="private", queue=False)
        timer.tick(
            on.poll_status,
            [session],
            poll_outputs,
            api_visibility="private",
            concurrency_limit=None,
            show_progress="hidden",
        )

        step1_out = [chat, sources, session, question, hint, examples_box, copy_box, send, stop]
        step2_in = [session, top_k, mode, profile, show_scores, chat_decision, chat_area, chat_author]
        step2_out = [chat, sources, session, answer_json, question, send, stop]
        llm = dict(concurrency_limit=llm_concurrency, concurrency_id="llm")

        streams = []
        for trigger, inp in [(question.submit, question), (send.click, question)] + [
            (b.click, b) for b in ex_buttons
        ]:
            # "multiple": a question typed while another streams gets the "press Stop" hint
            ev = trigger(
                on.submit_question,
                [inp, session, task, show_scores],
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
            streams[-1].then(
                on.see_all_button,
                [session],
                [see_all_btn],
                api_visibility="private",
                concurrency_limit=None,
                show_progress="hidden",
            )

        stop.click(
            on.stop,
            [session, show_scores],
            [chat, sources, session, hint, send, stop],
            api_visibility="private",
            cancels=streams,
            concurrency_limit=None,
            queue=False,
        ).then(
            on.settle,
            [session, show_scores],
            [chat, sources],
            api_visibility="private",
            concurrency_limit=None,
            show_progress="hidden",
        )
        task.change(
            on.placeholder, [task], [question], api_visibility="private", queue=False, show_progress="hidden"
        )

        api_ev = api_ask.click(
            on.ask,
            [question, task, top_k, mode, profile, session],
            [chat, sources, session, answer_json],
            api_name="ask",
            **llm,
        )
        clear.click(
            on.new_chat,
            [session],
            [session, chat, sources, hint, examples_box, copy_box, answer_json, send, stop],
            api_name="new_chat",
            cancels=streams + [api_ev],
            concurrency_limit=None,
        ).then(
            on.settle,
            [session, show_scores],
            [chat, sources],
            api_visibility="private",
            concurrency_limit=None,
            show_progress="hidden",
        )
        show_scores.change(
            on.rerender_sources,
            [session, show_scores],
            [sources],
            api_visibility="private",
            concurrency_limit=None,
            show_progress="hidden",
        )
        copy_btn.click(
            on.copy_answer, [session], [copy_box], api_name="copy_answer", concurrency_limit=None
        ).then(None, [copy_box], None, js=COPY_JS)
        for btn, fn, fname in [
            (export_md_btn, on.export_chat, "iclr-rag-chat.md"),
            (export_bib_btn, on.export_bibtex, "iclr-rag-cited.bib"),
        ]:
            btn.click(fn, [session], [copy_box], api_visibility="private", concurrency_limit=None).then(
                None, [copy_box], None, js=download_js(fname)
            )
        # ---------------------------------------------------------------- Find papers
        size = gr.State(page_size)
        view = [find_summary, find_table, find_chart, *chips, prev_btn, page_label, next_btn, *find_exports]
        quiet = dict(api_visibility="private", concurrency_limit=None, show_progress="hidden")
        find_in = [find_topic, find_decision, find_area, find_author, size]
        find_out = [found_state, find_topic, find_decision, find_author, *view]
        run = dict(api_visibility="private", concurrency_limit=2, concurrency_id="find")
        find_btn.click(on.find_papers, find_in, find_out, **run)
        find_topic.submit(on.find_papers, find_in, find_out, **run)
        for chip, control, empty in zip(
            chips, [find_decision, find_area, find_author], [find.ANY, find.ANY, ""]
        ):
            chip.click(lambda v=empty: v, None, [control], queue=False, **quiet).then(
                on.find_papers, find_in, find_out, **run
            )
        for btn, delta in ((prev_btn, -1), (next_btn, 1)):
            btn.click(
                lambda f, n, d=delta: on.find_page(f, d, n),
                [found_state, size],
                [found_state, *view],
                **quiet,
            )
        for btn, kind, fname in zip(
            find_exports, ("csv", "md", "bib"), ("iclr-papers.csv", "iclr-papers.md", "iclr-papers.bib")
        ):
            btn.click(lambda f, k=kind: on.find_export(f, k), [found_state], [find_box], **quiet).then(
                None, [find_box], None, js=download_js(fname, "#find-export-status .copy-msg")
            )
        see_all_btn.click(
            on.see_all, [session], [tabs, find_topic, find_decision, find_area, find_author], **quiet
        ).then(on.find_papers, find_in, find_out, **run)

        profile.change(
            on.switch_model,
            [profile],
            [status],
            api_visibility="private",
            concurrency_limit=1,
            concurrency_id="model-load",
        )

    demo.queue(default_concurrency_limit=limits.handler_concurrency, max_size=limits.queue_size)
    demo._iclr_holder = holder  # for tests / main()
    return demo


def start(
    demo: gr.Blocks,
    *,
    host: str = "127.0.0.1",
    port: int | None = None,
    auth: str | tuple[str, str] | None = None,
    quiet: bool = False,
    block: bool = False,
    insecure_no_auth: bool = False,
    settings: Settings | None = None,
) -> str:
    """Serve `demo`; returns its local URL (blocks forever when `block`)."""
    creds = parse_auth(auth)
    check_host(host, creds, insecure_no_auth)
    demo.launch(
        server_name=host,
        server_port=port,
        auth=creds,
        auth_message="ICLR 2025 · Ask the abstracts" if creds else None,
        prevent_thread_lock=not block,
        quiet=quiet,
        inbrowser=False,
        share=False,
        **launch_kwargs(),
        **guard_kwargs(settings or Settings()),
    )
    return demo.local_url


def launch(
    engine: Engine | EngineHolder,
    host: str = "127.0.0.1",
    port: int = 7860,
    auth: str | tuple[str, str] | None = None,
    *,
    block: bool = True,
) -> gr.Blocks:
    """Serve the UI for an engine (or an EngineHolder)."""
    demo = build_app(engine)
    start(demo, host=host, port=port, auth=auth, block=block)
    return demo


def load_engine(
    settings: Settings,
    *,
    ingest_seeds: bool = False,
    report: Callable[[str], None] | None = None,
    conference: bool = False,
    on_progress: Callable[[int, int], None] | None = None,
) -> Engine:
    """Build the engine from settings and load its models now (not on the first question).

    With `conference`, the bundled ICLR 2025 submissions are indexed first unless the index holds them
    (`on_progress(done, total)` per block of chunks; the terminal keeps its progress bar). With
    `ingest_seeds`, an empty index is first filled with the seed abstracts.
    """
    report = report or (lambda msg: None)
    from rag.answer import Engine

    report("Loading the embedding model and the index…")
    engine = Engine(settings)
    if conference:
        from rag.catalog import holds_conference, ingest_conference

        if not holds_conference(engine.index):
            report("Indexing the 11,672 ICLR 2025 submissions (first start only; later starts skip them)…")
            rep = ingest_conference(engine.index, engine.embedder, progress=True, on_progress=on_progress)
            engine.retriever.refresh()
            log.info("%s papers indexed (%s chunks embedded) in %.0fs", rep.papers, rep.added, rep.seconds)
    if ingest_seeds and engine.index.count() == 0:  # checked here too, to say so on the page
        report("Indexing the seed abstracts (first start only)…")
        engine.ingest_if_empty()
    report(f"Loading the language model {settings.llm}… the first start can take a minute.")
    engine.warm_up()
    return engine


def serve(
    settings: Settings | None = None,
    host: str = "127.0.0.1",
    port: int = 7860,
    *,
    ingest_seeds: bool = True,
    auth: str | None = None,
    block: bool = True,
    insecure_no_auth: bool = False,
    conference: bool = False,
) -> gr.Blocks:
    """`rag serve`: the page comes up at once and says "loading" while the engine loads (and, with
    `conference`, while the bundled submissions are indexed: the banner counts the chunks).

    Auth comes from `auth`, else `settings.auth` (RAG_AUTH), as USER:PASS.
    """
    if settings is None:
        settings = Settings()
    auth = auth if auth is not None else settings.auth
    check_host(host, parse_auth(auth or ""), insecure_no_auth)  # before anything loads
    holder = EngineHolder(
        default_profile=settings.llm,
        loader=lambda: load_engine(
            settings,
            ingest_seeds=ingest_seeds,
            report=holder.set_progress,
            conference=conference,
            on_progress=holder.set_index_progress,
        ),
    )
    holder.start()
    demo = build_app(
        holder, default_top_k=settings.top_k, default_mode=settings.mode, page_size=settings.find_page_size
    )
    start(
        demo,
        host=host,
        port=port,
        auth=auth,
        block=block,
        insecure_no_auth=insecure_no_auth,
        settings=settings,
    )
    return demo


main = serve  # alias


if __name__ == "__main__":  # pragma: no cover
    serve()
