"""The web UI's entry points: a Gradio Blocks page over `rag.answer.Engine`.

- `build_app(engine, **options) -> gr.Blocks`: the page, around an engine or an `EngineHolder`:
  the tabs' layout in ui/chat/tab.py and ui/find/tab.py, their events in ui/events.py, the
  handlers those call in ui/handlers.py (one object per part of the page, each given the holder).
- `start(demo, host, port, auth, quiet) -> url`: serve it in the background (tests, embedding).
- `launch(engine, host, port, auth)`: serve and block (an engine that is already loaded).
- `serve(settings, host, port, ingest_seeds=True, auth=None)`: what `rag serve` calls: the
  server comes up at once, the engine loads in a background thread (ingesting the seeds into an
  empty index first) and the page says so until it is ready. `main` is an alias.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from typing import TYPE_CHECKING

import gradio as gr

from rag.models.generator import available_profiles
from rag.settings import Settings
from ui.chat.session import Session
from ui.chat.tab import build_chat_tab
from ui.engine_holder import N_EXAMPLES, EngineHolder
from ui.events import Page, wire_events
from ui.find.tab import build_find_tab
from ui.handlers import Handlers, StatusHandlers
from ui.serve.launch_options import check_host, guard_kwargs, launch_kwargs, parse_auth

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
    top_k0 = int(default_top_k or (settings.retrieval.top_k if settings else 5))
    mode0 = default_mode or (settings.retrieval.mode if settings else "hybrid")
    limits = settings or Settings()  # page and queue sizes (a loading engine has no settings yet)
    page_size = int(page_size or limits.serving.find_page_size)
    llm_concurrency = llm_concurrency or limits.serving.concurrency
    profiles = available_profiles()  # qwen1.5b only after `make install-1.5b`
    if holder.default_profile not in profiles:
        profiles.insert(0, holder.default_profile)

    # Components are made in page order: Gradio numbers them (and the events) as they come.
    with gr.Blocks(title=title, fill_width=False) as demo:
        session = gr.State(Session())
        indexed, status = _build_header(on.status)
        with gr.Tabs(selected="chat", elem_id="tabs") as tabs:
            chat = build_chat_tab(
                ready=holder.state == "ready",
                n_examples=n_examples,
                top_k=top_k0,
                mode=mode0,
                profiles=profiles,
                profile=holder.default_profile,
            )
            finder = build_find_tab()
        answer_json = gr.JSON(visible=False, label="answer")
        api_ask = gr.Button(visible=False, elem_id="api-ask")  # the trigger behind the /ask API
        timer = gr.Timer(poll_every, active=True)
        page = Page(session, status, indexed, tabs, chat, finder, answer_json, api_ask, timer)
        wire_events(demo, on, page, llm_concurrency=llm_concurrency, page_size=page_size)

    demo.queue(
        default_concurrency_limit=limits.serving.handler_concurrency, max_size=limits.serving.queue_size
    )
    demo._iclr_holder = holder  # for tests / main()
    return demo


def _build_header(on: StatusHandlers) -> tuple[gr.HTML, gr.HTML]:
    """The title, what is indexed (under it) and the status banner (beside it)."""
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
    return indexed, status


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
    settings = settings or Settings()
    # uvicorn trusts X-Forwarded-For from loopback unless told otherwise: only from a configured proxy
    os.environ["FORWARDED_ALLOW_IPS"] = settings.serving.forwarded_allow_ips
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
        **guard_kwargs(settings.serving),
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
        from rag.ingest.catalog import holds_conference, ingest_conference

        if not holds_conference(engine.index):
            report("Indexing the 11,672 ICLR 2025 submissions (first start only; later starts skip them)…")
            rep = ingest_conference(engine.index, engine.embedder, progress=True, on_progress=on_progress)
            engine.retriever.refresh()
            log.info("%s papers indexed (%s chunks embedded) in %.0fs", rep.papers, rep.added, rep.seconds)
    if ingest_seeds and engine.index.count() == 0:  # checked here too, to say so on the page
        report("Indexing the seed abstracts (first start only)…")
        engine.ingest_if_empty()
    report(f"Loading the language model {settings.generation.llm}… the first start can take a minute.")
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

    Auth comes from `auth`, else `settings.serving.auth` (RAG_SERVING__AUTH), as USER:PASS.
    """
    if settings is None:
        settings = Settings()
    auth = auth if auth is not None else settings.serving.auth
    check_host(host, parse_auth(auth or ""), insecure_no_auth)  # before anything loads
    holder = EngineHolder(
        default_profile=settings.generation.llm,
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
        holder,
        default_top_k=settings.retrieval.top_k,
        default_mode=settings.retrieval.mode,
        page_size=settings.serving.find_page_size,
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
