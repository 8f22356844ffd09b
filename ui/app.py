"""The web UI: a Gradio Blocks app over `rag.answer.Engine`.

Public entry points
- `build_app(engine, **options) -> gr.Blocks`: the page, around an engine or an `EngineHolder`.
- `start(demo, host, port, auth, quiet) -> url`: serve it in the background (tests, embedding).
- `launch(engine, host, port, auth)`: serve and block (an engine that is already loaded).
- `serve(settings, host, port, ingest_seeds=True, auth=None)`: what `rag serve` calls: the
  server comes up at once, the engine loads in a background thread (ingesting the seeds into an
  empty index first) and the page says so until it is ready. `main` is an alias.

The engine is used only through `stream()`, `with_llm()` and `example_questions()`.
"""
from __future__ import annotations

import os

os.environ["GRADIO_ANALYTICS_ENABLED"] = "False"  # no calls to api.gradio.app / huggingface.co

import logging  # noqa: E402
import sys  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402
from typing import Any, Callable, Iterator  # noqa: E402

import gradio as gr  # noqa: E402

import rag.settings  # noqa: E402,F401  (offline env vars for HF libraries)
from rag.errors import UserError  # noqa: E402
from rag.types import Answer  # noqa: E402
from ui import render  # noqa: E402
from ui.assets import COPY_JS, CSS, JS, SYSTEM_MONO, SYSTEM_SANS  # noqa: E402
from ui.render import Turn  # noqa: E402

log = logging.getLogger("ui")

MODES = ["hybrid", "dense", "bm25"]
TASKS = {"Answer": "answer", "Summarize": "summarize"}
N_EXAMPLES = 5
LOOPBACK = {"127.0.0.1", "localhost", "::1"}
STREAM_EVERY_S = 0.05  # coalesce token updates sent to the browser
MODEL_FAILURE = (
    "Sorry, the model failed while answering this question. Please try again; if it keeps "
    "happening, try another model in Settings. (The server log has the details.)"
)

try:
    from rag.models import PROFILES as _PROFILES
except Exception:  # pragma: no cover - rag.models is optional for the UI
    _PROFILES = ("qwen0.5b", "smollm2")
PROFILES = list(_PROFILES)


# --------------------------------------------------------------------------- engine holder


class EngineHolder:
    """Holds the engine: loads it once (optionally in a background thread), then hands out
    per-profile engines via `engine.with_llm(name)`, loading each profile once."""

    def __init__(self, engine: Any = None, *, loader: Callable[[], Any] | None = None,
                 default_profile: str | None = None):
        if engine is None and loader is None:
            raise ValueError("EngineHolder needs an engine or a loader")
        self._engine = engine
        self._loader = loader
        self._ready = threading.Event()
        self._error: str | None = None
        self._thread: threading.Thread | None = None
        self._profiles: dict[str, Any] = {}
        self._profile_locks: dict[str, threading.Lock] = {}
        self._lock = threading.Lock()
        self._examples: list[str] | None = None
        self._default_profile = default_profile
        self.progress: str | None = None
        if engine is not None:
            self._on_loaded(engine)

    def _on_loaded(self, engine: Any) -> None:
        self._engine = engine
        name = self._default_profile or _engine_profile(engine)
        self._default_profile = name
        self._profiles[name] = engine
        self._ready.set()

    def set_progress(self, message: str) -> None:
        """Loaders call this to say what they are doing; the page shows it."""
        self.progress = message

    def start(self) -> "EngineHolder":
        """Start loading in a background thread (no-op when already loaded or loading)."""
        with self._lock:
            if self._ready.is_set() or self._thread is not None:
                return self
            self._thread = threading.Thread(target=self._load, name="engine-loader", daemon=True)
            self._thread.start()
        return self

    def _load(self) -> None:
        t0 = time.perf_counter()
        try:
            engine = self._loader()
        except UserError as e:
            self._error = str(e)
            log.error("engine failed to load: %s", e)
        except Exception as e:  # noqa: BLE001
            log.exception("engine failed to load")
            first = (str(e).strip().splitlines() or [type(e).__name__])[0][:300]
            self._error = f"{type(e).__name__}: {first}"
        else:
            self._on_loaded(engine)
            log.info("engine ready in %.1f s", time.perf_counter() - t0)
        finally:
            self._ready.set()

    @property
    def state(self) -> str:
        if self._error:
            return "error"
        return "ready" if self._ready.is_set() and self._engine is not None else "loading"

    @property
    def error(self) -> str | None:
        return self._error

    @property
    def default_profile(self) -> str:
        return self._default_profile or (PROFILES[0] if PROFILES else "default")

    def wait(self, timeout: float | None = None) -> bool:
        self._ready.wait(timeout)
        return self.state == "ready"

    @property
    def engine(self) -> Any:
        if self.state != "ready":
            raise RuntimeError("engine not ready")
        return self._engine

    def profile_loaded(self, name: str | None) -> bool:
        return not name or name in self._profiles

    def for_profile(self, name: str | None) -> Any:
        """The engine for LLM profile `name`, loading it on first use (once)."""
        base = self.engine
        if not name or name == self.default_profile:
            return base
        if name in self._profiles:
            return self._profiles[name]
        with self._lock:
            plock = self._profile_locks.setdefault(name, threading.Lock())
        with plock:
            if name not in self._profiles:
                self._profiles[name] = base.with_llm(name)
        return self._profiles[name]

    def examples(self, n: int = N_EXAMPLES) -> list[str]:
        if self.state != "ready":
            return []
        if self._examples is None:
            try:
                qs = [q for q in self.engine.example_questions(n=n) if isinstance(q, str) and q.strip()]
            except Exception:  # noqa: BLE001
                log.exception("example_questions failed")
                qs = []
            self._examples = [q.strip() for q in qs][:n]
        return list(self._examples)


def _engine_profile(engine: Any) -> str:
    for attr in ("llm_profile", "llm_name", "profile"):
        v = getattr(engine, attr, None)
        if isinstance(v, str) and v:
            return v
    s = getattr(engine, "settings", None)
    v = getattr(s, "llm", None)
    if isinstance(v, str) and v:
        return v
    return PROFILES[0] if PROFILES else "default"


def _engine_setting(holder: EngineHolder, name: str, default: Any) -> Any:
    eng = holder._engine if holder._engine is not None else None
    s = getattr(eng, "settings", None)
    return getattr(s, name, default)


# --------------------------------------------------------------------------- session


@dataclass
class Session:
    """Everything one browser session owns. gr.State deep-copies it per session."""

    turns: list[Turn] = field(default_factory=list)
    history: list[dict] = field(default_factory=list)  # [{"role", "content"}] sent to the engine
    epoch: int = 0  # bumped by New chat, so an answer still in flight can't write into the new chat

    def reset(self) -> None:
        self.turns.clear()
        self.history.clear()
        self.epoch += 1


def _latest_answer(session: Session) -> Answer | None:
    for t in reversed(session.turns):
        if t.answer is not None and t.status == "done":
            return t.answer
    return None


def _display_question(q: str, limit: int = 1200) -> str:
    return q if len(q) <= limit else q[:limit] + f"… ({len(q):,} characters)"


# --------------------------------------------------------------------------- app


def build_app(
    engine: Any,
    *,
    title: str = "ICLR 2025 · Ask the abstracts",
    default_top_k: int | None = None,
    default_mode: str | None = None,
    n_examples: int = N_EXAMPLES,
    llm_concurrency: int = 1,
    poll_every: float = 0.5,
) -> gr.Blocks:
    """The Blocks app. `engine` is an Engine (or FakeEngine) or an `EngineHolder`."""
    holder = engine if isinstance(engine, EngineHolder) else EngineHolder(engine)
    top_k0 = int(default_top_k or _engine_setting(holder, "top_k", 5))
    mode0 = default_mode or _engine_setting(holder, "mode", "hybrid")
    profiles = list(PROFILES)
    if holder.default_profile not in profiles:
        profiles.insert(0, holder.default_profile)

    def status_html() -> str:
        st = holder.state
        if st == "loading":
            return render.render_status("loading", (holder.progress or "Loading the models…")
                                        + " You can type your question meanwhile.")
        if st == "error":
            return render.render_status("error", f"The engine could not start: {holder.error}")
        return render.render_status("ready", f"Ready · model {holder.default_profile}")

    # ------------------------------------------------------------------ handlers
    def poll_status(session: Session):
        """Status banner, submit button, example questions; stops polling once settled."""
        st = holder.state
        exs = holder.examples(n_examples) if st == "ready" else []
        show_ex = st == "ready" and bool(exs) and not session.turns
        btns = [gr.update(value=exs[i], visible=True) if i < len(exs) else gr.update(visible=False)
                for i in range(n_examples)]
        return (
            status_html(),
            gr.update(interactive=st == "ready"),
            gr.Timer(active=st == "loading"),
            gr.update(visible=show_ex),
            *btns,
        )

    def submit_question(message: str, session: Session, task_label: str, show_scores: bool):
        """Step 1 (fast, not serialized): show the question at once and queue it."""
        text = (message or "").strip()
        if not text:
            return (gr.skip(), gr.skip(), session, gr.skip(),
                    '<div class="hint">Type a question first, or pick one of the examples.</div>',
                    gr.skip(), gr.skip())
        turn = Turn(question=message.strip(), task=TASKS.get(task_label, "answer"), status="queued",
                    note=None if holder.state == "ready" else "Waiting for the models to load…")
        session.turns.append(turn)
        return (
            render.render_chat(_view_turns(session)),
            render.render_sources(session.turns, show_scores=show_scores),
            session,
            "",  # clear the textbox
            "",  # clear the hint
            gr.update(visible=False),  # examples
            gr.update(visible=False, value=""),  # copy box
        )

    def stream_answer(session: Session, top_k: float, mode: str, profile: str, show_scores: bool):
        """Step 2 (serialized on the LLM): stream the pending question's answer."""
        produced = False
        for out in _run_pending(session, top_k, mode, profile, show_scores):
            produced = True
            yield out
        if not produced:  # an earlier run already answered it: change nothing
            yield gr.skip(), gr.skip(), gr.skip(), gr.skip(), gr.skip()

    def _run_pending(session, top_k, mode, profile, show_scores) -> Iterator[tuple]:
        """Answer this session's queued questions, oldest first (a second question may be typed
        while one streams). Yields (chat_html, sources_html, session, answer_json, restore)."""
        while True:
            turn = next((t for t in session.turns if t.status == "queued"), None)
            if turn is None:
                return
            yield from _answer_turn(session, turn, top_k, mode, profile, show_scores)

    def _answer_turn(session, turn, top_k, mode, profile, show_scores) -> Iterator[tuple]:
        epoch = session.epoch
        turn.status = "streaming"
        turn.show_scores = bool(show_scores)

        def chat():
            return render.render_chat(_view_turns(session))

        # The engine may still be loading (the page lets people type meanwhile).
        while holder.state == "loading":
            turn.note = "Waiting for the models to load…"
            yield chat(), gr.skip(), session, gr.skip(), gr.skip()
            holder.wait(1.0)
        if holder.state == "error":
            turn.status, turn.error = "error", f"The engine could not start: {holder.error}"
            yield chat(), render.render_sources(session.turns, show_scores=show_scores), session, None, gr.skip()
            return
        turn.note = None
        restore = gr.skip()
        stream = None
        try:
            if not holder.profile_loaded(profile):
                turn.note = f"Loading model {profile} (first use; this takes a while)…"
                yield chat(), gr.skip(), session, gr.skip(), gr.skip()
            eng = holder.for_profile(profile)
            turn.note = None
            history = [dict(m) for m in session.history]
            stream = eng.stream(turn.question, history, top_k=int(top_k) if top_k else None,
                                mode=mode or None, task=turn.task)
            last = 0.0
            for item in stream:
                if isinstance(item, Answer):
                    turn.answer = item
                    break
                turn.text += str(item)
                now = time.monotonic()
                if now - last >= STREAM_EVERY_S:
                    last = now
                    yield chat(), gr.skip(), session, gr.skip(), gr.skip()
            if turn.answer is None:
                raise RuntimeError("the engine finished without an answer")
            turn.status = "done"
            if session.epoch == epoch:
                session.history += [
                    {"role": "user", "content": turn.question},
                    {"role": "assistant", "content": turn.answer.answer},
                ]
        except UserError as e:
            turn.status, turn.error = "error", str(e) or "That question can't be answered as typed."
            restore = turn.question  # give the text back so it can be fixed
        except Exception:  # noqa: BLE001 - any model failure becomes a friendly message
            log.exception("answering failed")
            turn.status, turn.error = "error", MODEL_FAILURE
        finally:
            if stream is not None and hasattr(stream, "close"):
                try:
                    stream.close()
                except Exception:  # noqa: BLE001
                    pass
        data = turn.answer.to_json() if turn.answer is not None else None
        if data is not None:
            data["markdown"] = render.answer_markdown(turn.answer)
        yield (chat(), render.render_sources(session.turns, show_scores=show_scores), session, data, restore)

    def ask(question: str, task: str, top_k: float, mode: str, profile: str, session: Session):
        """API: ask a question in this session (follow-ups see the session's history).

        Streams (chat_html, sources_html, answer_json); answer_json is Answer.to_json() plus
        "markdown" once the answer is final, else null.
        """
        text = (question or "").strip()
        if not text:
            yield render.render_chat(_view_turns(session)), gr.skip(), session, None
            return
        task_label = task if task in TASKS else {v: k for k, v in TASKS.items()}.get(task, "Answer")
        session.turns.append(Turn(question=text, task=TASKS[task_label], status="queued"))
        for chat_html, sources_html, sess, data, _restore in _run_pending(
            session, top_k, mode if mode in MODES else None, profile, False
        ):
            yield chat_html, sources_html, sess, data

    def new_chat(session: Session):
        """Forget this session's conversation."""
        session.reset()
        exs = holder.examples(n_examples)
        return (session, render.render_chat([]), render.render_sources([]), "",
                gr.update(visible=bool(exs)), gr.update(visible=False, value=""), None)

    def rerender_sources(session: Session, show_scores: bool):
        return render.render_sources(session.turns, show_scores=show_scores)

    def copy_answer(session: Session):
        """The latest answer as Markdown with a numbered reference list."""
        a = _latest_answer(session)
        if a is None:
            return gr.update(visible=True, value="(No answer yet: ask a question first.)")
        return gr.update(visible=True, value=render.answer_markdown(a))

    def switch_model(profile: str):
        """Load an LLM profile on demand (cached), reporting progress in the banner."""
        if holder.state != "ready":
            yield status_html()
            return
        if holder.profile_loaded(profile):
            yield render.render_status("ready", f"Ready · model {profile}")
            return
        yield render.render_status("loading", f"Loading model {profile}… (first use; later questions won't wait)")
        try:
            holder.for_profile(profile)
        except Exception:  # noqa: BLE001
            log.exception("loading profile %s failed", profile)
            yield render.render_status("error", f"Model {profile} could not be loaded; "
                                                f"keep using {holder.default_profile}.")
            return
        yield render.render_status("ready", f"Ready · model {profile}")

    # ------------------------------------------------------------------ layout
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
            with gr.Column(scale=2, min_width=260, elem_id="status-row"):
                status = gr.HTML(status_html(), elem_id="status", apply_default_css=False)
        with gr.Row(equal_height=False, elem_id="main-row"):
            with gr.Column(scale=3, min_width=420, elem_id="chat-col"):
                chat = gr.HTML(render.render_chat([]), elem_id="chat", apply_default_css=False)
                with gr.Column(visible=False, elem_id="examples") as examples_box:
                    gr.HTML('<div id="examples-label">Try one of these:</div>', apply_default_css=False)
                    ex_buttons = [
                        gr.Button("", visible=False, size="sm", variant="secondary", elem_classes=["example-q"])
                        for _ in range(n_examples)
                    ]
                with gr.Group(elem_id="composer"):
                    question = gr.Textbox(
                        placeholder="Ask about ICLR 2025 papers, e.g. “What does Celcomen do?”",
                        show_label=False, lines=1, max_lines=8, autofocus=True, elem_id="question",
                    )
                with gr.Row(elem_id="controls"):
                    task = gr.Radio(list(TASKS), value="Answer", show_label=False, container=False,
                                    elem_id="task", scale=2)
                    send = gr.Button("Ask", variant="primary", interactive=holder.state == "ready",
                                     elem_id="send", scale=1, min_width=90)
                    clear = gr.Button("New chat", variant="secondary", elem_id="new-chat", scale=1, min_width=90)
                hint = gr.HTML("", elem_id="hint", apply_default_css=False)
                with gr.Row(elem_id="copy-row"):
                    copy_btn = gr.Button("Copy answer with references", size="sm", variant="secondary",
                                         elem_id="copy-btn", scale=0, min_width=240)
                copy_box = gr.Textbox(label="Answer with references (Markdown)", visible=False, lines=8,
                                      max_lines=20, interactive=False, buttons=["copy"], elem_id="copy-box")
                with gr.Accordion("Settings", open=False, elem_id="settings"):
                    top_k = gr.Slider(1, 20, value=top_k0, step=1, label="Papers to retrieve (top-k)",
                                      elem_id="top-k")
                    mode = gr.Radio(MODES, value=mode0 if mode0 in MODES else "hybrid",
                                    label="Retrieval mode", info="hybrid = dense + BM25 keywords",
                                    elem_id="mode")
                    profile = gr.Dropdown(profiles, value=holder.default_profile, label="Model",
                                          info="Other models load on first use.", elem_id="profile")
                    show_scores = gr.Checkbox(False, label="Show retrieval scores", elem_id="show-scores")
            with gr.Column(scale=2, min_width=340, elem_id="sources-col"):
                sources = gr.HTML(render.render_sources([]), elem_id="sources", apply_default_css=False)
        answer_json = gr.JSON(visible=False, label="answer")
        api_ask = gr.Button(visible=False, elem_id="api-ask")
        timer = gr.Timer(poll_every, active=True)

        # ------------------------------------------------------------------ events
        poll_outputs = [status, send, timer, examples_box, *ex_buttons]
        demo.load(poll_status, [session], poll_outputs, api_visibility="private", queue=False)
        timer.tick(poll_status, [session], poll_outputs, api_visibility="private",
                   concurrency_limit=None, show_progress="hidden")

        step1_out = [chat, sources, session, question, hint, examples_box, copy_box]
        step2_in = [session, top_k, mode, profile, show_scores]
        step2_out = [chat, sources, session, answer_json, question]
        llm = dict(concurrency_limit=llm_concurrency, concurrency_id="llm")

        streams = []
        for trigger, inp in [(question.submit, question), (send.click, question)] + [
            (b.click, b) for b in ex_buttons
        ]:
            # "multiple": a question typed while another streams is queued, not dropped
            ev = trigger(submit_question, [inp, session, task, show_scores], step1_out, api_visibility="private",
                         concurrency_limit=None, show_progress="hidden", trigger_mode="multiple")
            streams.append(ev.then(stream_answer, step2_in, step2_out, api_visibility="undocumented",
                                   show_progress="hidden", trigger_mode="multiple", **llm))

        api_ev = api_ask.click(ask, [question, task, top_k, mode, profile, session],
                               [chat, sources, session, answer_json], api_name="ask", **llm)
        clear.click(new_chat, [session], [session, chat, sources, hint, examples_box, copy_box, answer_json],
                    api_name="new_chat", cancels=streams + [api_ev], concurrency_limit=None)
        show_scores.change(rerender_sources, [session, show_scores], [sources], api_visibility="private",
                           concurrency_limit=None, show_progress="hidden")
        copy_btn.click(copy_answer, [session], [copy_box], api_name="copy_answer", concurrency_limit=None) \
            .then(None, [copy_box], None, js=COPY_JS)
        profile.change(switch_model, [profile], [status], api_visibility="private",
                       concurrency_limit=1, concurrency_id="model-load")

    demo.queue(default_concurrency_limit=8, max_size=128)
    demo._iclr_holder = holder  # for tests / main()
    return demo


def _view_turns(session: Session) -> list[Turn]:
    """Turns as displayed: very long questions are shortened in the bubble."""
    out = []
    for t in session.turns:
        if len(t.question) > 1200:
            t = Turn(**{**t.__dict__, "question": _display_question(t.question)})
        out.append(t)
    return out


# --------------------------------------------------------------------------- serving


def theme() -> gr.themes.Base:
    """Default theme with system fonts only (no Google Fonts, no font files)."""
    return gr.themes.Default(
        primary_hue="indigo",
        neutral_hue="slate",
        font=[gr.themes.Font(f) if " " in f else f for f in SYSTEM_SANS],
        font_mono=[gr.themes.Font(f) if " " in f else f for f in SYSTEM_MONO],
    )


def launch_kwargs() -> dict[str, Any]:
    """The look of the page: Gradio 6 takes theme/css/head at launch(), not in Blocks()."""
    return dict(
        theme=theme(),
        css=CSS,
        head=f"<script>{JS}</script>",
        footer_links=["api"],
        run_history=False,
        show_error=False,
        ssr_mode=False,
    )


def parse_auth(auth: str | tuple[str, str] | None) -> tuple[str, str] | None:
    """'USER:PASS' (or RAG_AUTH when `auth` is None) -> (user, pass); '' disables auth."""
    if auth is None:
        auth = os.environ.get("RAG_AUTH") or None
    if not auth:
        return None
    if isinstance(auth, tuple):
        return auth
    user, sep, password = str(auth).partition(":")
    if not sep or not user or not password:
        raise UserError("Auth must look like USER:PASS (both parts non-empty).")
    return user, password


def check_host(host: str) -> None:
    if host not in LOOPBACK:
        print(
            f"WARNING: serving on {host}: anyone who can reach this machine can use the chat. "
            "Set --auth USER:PASS (or RAG_AUTH) to require a login.",
            file=sys.stderr,
        )


def start(
    demo: gr.Blocks,
    *,
    host: str = "127.0.0.1",
    port: int | None = None,
    auth: str | tuple[str, str] | None = None,
    quiet: bool = False,
    block: bool = False,
) -> str:
    """Serve `demo`; returns its local URL (blocks forever when `block`)."""
    check_host(host)
    creds = parse_auth(auth)
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
    )
    return demo.local_url


def launch(engine: Any, host: str = "127.0.0.1", port: int = 7860,
           auth: str | tuple[str, str] | None = None, *, block: bool = True) -> gr.Blocks:
    """Serve the UI for an engine (or an EngineHolder)."""
    demo = build_app(engine)
    start(demo, host=host, port=port, auth=auth, block=block)
    return demo


def load_engine(settings: Any, *, ingest_seeds: bool = False,
                report: Callable[[str], None] | None = None) -> Any:
    """Build the engine from settings and load its models now (not on the first question).

    With `ingest_seeds`, an empty index is first filled with the seed abstracts.
    """
    report = report or (lambda msg: None)
    from rag.answer import Engine  # lazy: the engine imports torch and friends

    report("Loading the embedding model and the index…")
    engine = Engine(settings)
    if ingest_seeds and engine.index.count() == 0:
        report("Indexing the seed abstracts (first start only)…")
        engine.ingest_if_empty()
    report(f"Loading the language model {getattr(settings, 'llm', '')}… the first start can take a minute.")
    warm = getattr(engine, "warm_up", None)
    if callable(warm):
        warm()
    return engine


def serve(settings: Any = None, host: str = "127.0.0.1", port: int = 7860, *,
          ingest_seeds: bool = True, auth: str | None = None, block: bool = True) -> gr.Blocks:
    """`rag serve`: the page comes up at once and says "loading" while the engine loads.

    Auth comes from `auth`, else `settings.auth` (RAG_AUTH), as USER:PASS.
    """
    if settings is None:
        from rag.settings import Settings

        settings = Settings()
    auth = auth if auth is not None else getattr(settings, "auth", None)
    holder = EngineHolder(default_profile=getattr(settings, "llm", None),
                          loader=lambda: load_engine(settings, ingest_seeds=ingest_seeds,
                                                     report=holder.set_progress))
    holder.start()
    demo = build_app(holder, default_top_k=getattr(settings, "top_k", None),
                     default_mode=getattr(settings, "mode", None))
    start(demo, host=host, port=port, auth=auth, block=block)
    return demo


main = serve  # alias


if __name__ == "__main__":  # pragma: no cover
    serve()
