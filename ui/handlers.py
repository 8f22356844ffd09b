"""The page's event handlers: Gradio calls the bound methods of one `Handlers` per app.

Asking takes two steps: `submit_question` shows the question at once (not serialized), then
`stream_answer` streams its answer (serialized on the one LLM). `ask` is both, for the API.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Iterator

import gradio as gr

from rag import export
from rag.errors import UserError
from rag.filters import filters_from_question
from rag.hygiene import clean_question
from rag.types import Answer, Hit
from ui import find, render
from ui.engine_holder import EngineHolder
from ui.session import Session, Turn

log = logging.getLogger("ui")

MODES = ["hybrid", "dense", "bm25"]
TASKS = {"Answer": "answer", "Summarize": "summarize"}  # label on the page -> engine task
STREAM_EVERY_S = 0.05  # coalesce token updates sent to the browser
WAITING = "Waiting for the models to load…"
EMPTY_HINT = '<div class="hint" role="alert">Type a question first.</div>'
EMPTY_HINT_EXAMPLES = (
    '<div class="hint" role="alert">Type a question first, or pick one of the examples above.</div>'
)
BUSY_HINT = (
    '<div class="hint" role="alert">An answer is still being written: press Stop (or Esc) first, '
    "or wait for it. Your question stays in the box.</div>"
)
PLACEHOLDERS = {
    "answer": "Answer mode: ask about ICLR 2025 papers",
    "summarize": "Summarize mode: name a topic to summarize",
}
MODEL_FAILURE = (
    "Sorry, the model failed while answering this question. Please try again; if it keeps "
    "happening, try another model in Settings. (The server log has the details.)"
)


def _task(name: str) -> str:
    """The engine task for a page label ("Summarize") or a task name ("summarize")."""
    return TASKS.get(name) or (name if name in TASKS.values() else "answer")


def _chat(session: Session) -> str:
    return render.render_chat(session.shown_turns())


def _partial(session: Session) -> tuple:
    """A streaming update: the chat only (chat, sources, session, answer_json, question)."""
    return _chat(session), gr.skip(), session, gr.skip(), gr.skip()


def _announced_hits(item: object) -> list[Hit] | None:
    """Hits an engine may stream before its text: a list of Hit, or an object with .retrieved."""
    if isinstance(item, list) and all(isinstance(h, Hit) for h in item):
        return item
    hits = getattr(item, "retrieved", None)
    if isinstance(hits, list) and all(isinstance(h, Hit) for h in hits):
        return hits
    return None


def controls(busy: bool) -> tuple:
    """(Ask, Stop) while an answer streams (Ask off, Stop shown) and after."""
    return gr.update(interactive=not busy), gr.update(visible=busy)


class Handlers:
    def __init__(self, holder: EngineHolder, n_examples: int):
        self.holder = holder
        self.n_examples = n_examples

    def _start_failure(self) -> str:
        return f"The engine could not start: {self.holder.error}"

    def status_html(self, profile: str | None = None) -> str:
        """The status banner: loading, failed, or ready with `profile` (default: the engine's)."""
        holder = self.holder
        if holder.state == "loading":
            return render.render_status(
                "loading",
                (holder.progress or "Loading the models…") + " You can type your question meanwhile.",
                holder.index_progress,
            )
        if holder.state == "error":
            return render.render_status("error", self._start_failure())
        return render.render_status("ready", f"Ready · model {profile or holder.default_profile}")

    def indexed_html(self) -> str:
        """The line under the title: what is searched ("38 seed abstracts")."""
        what = self.holder.indexed().get("what")
        if not what:
            return '<p id="indexed-line" class="indexed">Loading the index…</p>'
        return f'<p id="indexed-line" class="indexed">Searching <strong>{render.esc(what)}</strong>.</p>'

    def area_choices(self):
        """The primary-area dropdowns: "any" and every area of the indexed papers."""
        return gr.update(choices=[find.ANY, *self.holder.indexed().get("areas", [])])

    def poll_status(self, session: Session):
        """Status banner, submit button, example questions, what is indexed and the area dropdowns;
        stops polling once settled."""
        st = self.holder.state
        exs = self.holder.examples(self.n_examples) if st == "ready" else []
        show_ex = st == "ready" and bool(exs) and not session.turns
        btns = [
            gr.update(value=exs[i], visible=True) if i < len(exs) else gr.update(visible=False)
            for i in range(self.n_examples)
        ]
        return (
            self.status_html(),
            gr.update(interactive=st == "ready"),
            gr.Timer(active=st == "loading"),
            gr.update(visible=show_ex),
            *btns,
            self.indexed_html(),
            self.area_choices(),
            self.area_choices(),
        )

    def _queue(self, session: Session, text: str, task: str) -> None:
        note = None if self.holder.state == "ready" else WAITING
        session.turns.append(Turn(question=text, task=_task(task), status="queued", note=note))

    def submit_question(self, message: str, session: Session, task_label: str, show_scores: bool):
        """Step 1 (fast, not serialized): show the question at once and queue it.

        One answer at a time per session: while one streams, Ask is disabled and Enter only
        says so (the question stays in the box), so a question never gets another's context.
        Outputs: chat, sources, session, question, hint, examples, copy box, Ask, Stop.
        """
        text = clean_question(message or "").strip()
        skip = gr.skip()
        if session.busy:
            return skip, skip, session, skip, BUSY_HINT, skip, skip, skip, skip
        if not text:
            hint = (
                EMPTY_HINT
                if session.turns or not self.holder.examples(self.n_examples)
                else EMPTY_HINT_EXAMPLES
            )
            return skip, skip, session, skip, hint, skip, skip, skip, skip
        self._stop_abandoned(session)
        self._queue(session, text, task_label)
        return (
            _chat(session),
            self.rerender_sources(session, show_scores),
            session,
            "",  # clear the textbox
            "",  # clear the hint
            gr.update(visible=False),  # examples
            gr.update(visible=False, value=""),  # copy box
            *controls(True),
        )

    def stream_answer(
        self,
        session: Session,
        top_k: float,
        mode: str,
        profile: str,
        show_scores: bool,
        decision: str | None = None,
        area: str | None = None,
        author: str | None = None,
    ):
        """Step 2 (serialized on the LLM): stream the pending question's answer, retrieving only papers
        that pass the filter controls (else a decision or author named in the question).
        Outputs: chat, sources, session, answer_json, question, Ask, Stop."""
        skip = gr.skip()
        session.filters = (decision, area, author)
        for out in self._run_pending(session, top_k, mode, profile, show_scores):
            yield *out, skip, skip
        yield skip, skip, skip, skip, skip, *controls(session.busy)

    def stop(self, session: Session, show_scores: bool):
        """Stop: the streaming (or queued) answer ends here, marked as stopped, not kept in the
        history the engine sees. Outputs: chat, sources, session, hint, Ask, Stop."""
        for t in session.turns:
            if t.status in ("queued", "streaming"):
                t.status, t.note = "stopped", None
        return _chat(session), self.rerender_sources(session, show_scores), session, "", *controls(False)

    @staticmethod
    def placeholder(task_label: str):
        """The question box says which mode is on."""
        return gr.update(placeholder=PLACEHOLDERS[_task(task_label)])

    def ask(self, question: str, task: str, top_k: float, mode: str, profile: str, session: Session):
        """API: ask a question in this session (follow-ups see the session's history).

        Streams (chat_html, sources_html, answer_json); answer_json is Answer.to_json() plus
        "markdown" once the answer is final, else null.
        """
        text = clean_question(question or "").strip()
        if not text:
            yield _chat(session), gr.skip(), session, None
            return
        self._stop_abandoned(session)
        self._queue(session, text, task)
        for chat_html, sources_html, sess, data, _restore in self._run_pending(
            session, top_k, mode if mode in MODES else None, profile, False
        ):
            yield chat_html, sources_html, sess, data

    def _run_pending(self, session, top_k, mode, profile, show_scores) -> Iterator[tuple]:
        """Answer this session's queued questions, oldest first (a second question may be typed
        while one streams). Yields (chat_html, sources_html, session, answer_json, restore)."""
        while True:
            turn = next((t for t in session.turns if t.status == "queued"), None)
            if turn is None:
                return
            yield from self._answer_turn(session, turn, top_k, mode, profile, show_scores)

    def _answer_turn(self, session, turn, top_k, mode, profile, show_scores) -> Iterator[tuple]:
        session.streaming += 1
        try:
            yield from self._answer_turn_inner(session, turn, top_k, mode, profile, show_scores)
        finally:
            session.streaming -= 1
            if turn.status in ("queued", "streaming"):  # closed mid-answer: cancelled, or the client left
                turn.status, turn.note = "stopped", None

    @staticmethod
    def _stop_abandoned(session: Session) -> None:
        """Turns left streaming by a cancelled request whose generator was never closed end as stopped."""
        if not session.streaming:
            for t in session.turns:
                if t.status == "streaming":
                    t.status, t.note = "stopped", None

    def _answer_turn_inner(self, session, turn, top_k, mode, profile, show_scores) -> Iterator[tuple]:
        holder, epoch = self.holder, session.epoch
        turn.status = "streaming"
        # The engine may still be loading (the page lets people type meanwhile).
        while holder.state == "loading":
            if session.epoch != epoch:
                return
            turn.note = WAITING
            yield _partial(session)
            holder.wait(1.0)
        turn.note = None
        restore = gr.skip()
        if holder.state == "error":
            turn.status, turn.error = "error", self._start_failure()
        else:
            try:
                if not holder.profile_loaded(profile):
                    turn.note = f"Loading model {profile} (first use; this takes a while)…"
                    yield _partial(session)
                eng = holder.for_profile(profile)
                turn.note = None
                history = [dict(m) for m in session.history]
                question, filters = turn.question, find.filters_of(*session.filters)
                if not filters:  # "orals about X", "papers by NAME": the question filters
                    found, cleaned = filters_from_question(question)
                    if found:
                        question, filters = cleaned, found
                turn.filters = filters.describe()
                turn.filter_values = (filters.decision, filters.area, filters.author)
                extra = {"filters": filters} if filters else {}  # per request: the engine's default stays
                stream = eng.stream(
                    question,
                    history,
                    top_k=int(top_k) if top_k else None,
                    mode=mode or None,
                    task=turn.task,
                    **extra,
                )
                with contextlib.closing(stream):  # runs the engine's cleanup once its Answer is in
                    last = 0.0
                    for item in stream:
                        if session.epoch != epoch or turn.status == "stopped":
                            return  # New chat or Stop: this answer has nowhere to go
                        if isinstance(item, Answer):
                            turn.answer = item
                            break
                        hits = None if isinstance(item, str) else _announced_hits(item)
                        if hits is not None:  # retrieval is done: fill the sources panel now
                            turn.retrieved = list(hits)
                            yield (
                                _chat(session),
                                self.rerender_sources(session, show_scores),
                                session,
                                gr.skip(),
                                gr.skip(),
                            )
                            continue
                        if not isinstance(item, str):
                            continue  # an event this UI does not know: ignore it
                        turn.text += item
                        now = time.monotonic()
                        if now - last >= STREAM_EVERY_S:
                            last = now
                            yield _partial(session)
                if turn.status == "stopped" or session.epoch != epoch:
                    return
                if turn.answer is None:
                    raise RuntimeError("the engine finished without an answer")
                turn.status = "done"
                turn.indexed = holder.indexed().get("what")
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
        if session.epoch != epoch:
            return
        data = turn.answer.to_json() if turn.answer is not None else None
        if data is not None:
            data["markdown"] = render.answer_markdown(turn.answer, turn.indexed)
        yield _chat(session), self.rerender_sources(session, show_scores), session, data, restore

    def new_chat(self, session: Session):
        """Forget this session's conversation."""
        session.reset()
        exs = self.holder.examples(self.n_examples)
        return (
            session,
            render.render_chat([]),
            render.render_sources([]),
            "",
            gr.update(visible=bool(exs)),
            gr.update(visible=False, value=""),
            None,
            *controls(False),
        )

    @staticmethod
    def settle(session: Session, show_scores: bool, wait_s: float = 5.0):
        """After New chat: once the cancelled answer has stopped, draw the chat again, so that a
        streamed update already on its way to the page can't leave the old turn showing."""
        deadline = time.monotonic() + wait_s
        while session.streaming and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.3)
        return _chat(session), Handlers.rerender_sources(session, show_scores)

    @staticmethod
    def rerender_sources(session: Session, show_scores: bool) -> str:
        return render.render_sources(session.turns, show_scores=show_scores)

    @staticmethod
    def copy_answer(session: Session):
        """The latest answer as Markdown with a numbered reference list."""
        a = session.latest_answer()
        if a is None:
            return gr.update(visible=True, value="(No answer yet: ask a question first.)")
        return gr.update(
            visible=True, value=render.answer_markdown(a), label="Answer with references (Markdown)"
        )

    @staticmethod
    def export_chat(session: Session):
        """The whole chat as Markdown (standalone questions, answers, one reference list)."""
        answers = session.answers()
        if not answers:
            return gr.update(visible=True, value="(No answer yet: ask a question first.)")
        return gr.update(
            visible=True, value=export.answer_markdown(answers), label="The whole chat (Markdown)"
        )

    @staticmethod
    def export_bibtex(session: Session):
        """BibTeX of every paper cited in this chat."""
        papers = export.cited_papers(session.answers())
        if not papers:
            return gr.update(visible=True, value="(No cited papers yet.)")
        return gr.update(visible=True, value=export.bibtex(papers), label="Cited papers (BibTeX)")

    def switch_model(self, profile: str):
        """Load an LLM profile on demand (cached), reporting progress in the banner."""
        holder = self.holder
        if holder.state == "ready" and not holder.profile_loaded(profile):
            yield render.render_status(
                "loading", f"Loading model {profile}… (first use; later questions won't wait)"
            )
            try:
                holder.for_profile(profile)
            except Exception:  # noqa: BLE001 - the current model keeps working
                log.exception("loading profile %s failed", profile)
                yield render.render_status(
                    "error", f"Model {profile} could not be loaded; keep using {holder.default_profile}."
                )
                return
        yield self.status_html(profile)

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

    def find_papers(self, topic: str, decision: str, area: str, author: str, page_size: int):
        """Find papers: run the lister. Outputs: state, topic, decision, author, then `find_view`'s."""
        try:
            found = find.find(self._retriever(), topic, decision, area, author)
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
            *(gr.update(interactive=has_rows) for _ in range(3)),
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
