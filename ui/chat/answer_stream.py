"""Answering a session's queued questions: the engine's stream, turned into page updates.

An `AnswerStream` answers over the engine in the `EngineHolder` it is given; `stream_answer` and `ask`
(ui/chat/handlers.py) drive it. Every update it yields is
(chat_html, sources_html, session, answer_json, restore).
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Iterator

import gradio as gr

from rag.errors import UserError
from rag.types import Answer, Hit
from ui.chat import render
from ui.chat.session import Session
from ui.engine_holder import EngineHolder
from ui.filters import filters_of

log = logging.getLogger("ui")

STREAM_EVERY_S = 0.05  # coalesce token updates sent to the browser
WAITING = "Waiting for the models to load…"
MODEL_FAILURE = (
    "Sorry, the model failed while answering this question. Please try again; if it keeps "
    "happening, try another model in Settings. (The server log has the details.)"
)


def chat_html(session: Session) -> str:
    return render.render_chat(session.shown_turns())


def sources_html(session: Session, show_scores: bool) -> str:
    return render.render_sources(session.turns, show_scores=show_scores)


def _partial(session: Session) -> tuple:
    """A streaming update: the chat only (chat, sources, session, answer_json, question)."""
    return chat_html(session), gr.skip(), session, gr.skip(), gr.skip()


def _announced_hits(item: object) -> list[Hit] | None:
    """Hits an engine may stream before its text: a list of Hit, or an object with .retrieved."""
    if isinstance(item, list) and all(isinstance(h, Hit) for h in item):
        return item
    hits = getattr(item, "retrieved", None)
    if isinstance(hits, list) and all(isinstance(h, Hit) for h in hits):
        return hits
    return None


def _applied(turn, filters) -> None:
    turn.filters = filters.describe()
    turn.filter_values = (filters.decision, filters.area, filters.author)


def stop_abandoned(session: Session) -> None:
    """Turns left streaming by a cancelled request whose generator was never closed end as stopped."""
    if not session.streaming:
        for t in session.turns:
            if t.status == "streaming":
                t.status, t.note = "stopped", None


class AnswerStream:
    """The engine loop behind the Ask tab, over the engine `holder` holds (or is still loading)."""

    def __init__(self, holder: EngineHolder):
        self.holder = holder

    def run_pending(self, session, top_k, mode, profile, show_scores) -> Iterator[tuple]:
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
            turn.status, turn.error = "error", holder.failure()
        else:
            try:
                if not holder.profile_loaded(profile):
                    turn.note = f"Loading model {profile} (first use; this takes a while)…"
                    yield _partial(session)
                eng = holder.for_profile(profile)
                turn.note = None
                history = [dict(m) for m in session.history]
                question, filters = turn.question, filters_of(*session.filters)
                _applied(
                    turn, filters or eng.question_filters(question)[0]
                )  # the engine's reading replaces it
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
                            if not filters and getattr(item, "filters", None) is not None:
                                _applied(turn, item.filters)  # "orals about X": the question's, as read
                            yield (
                                chat_html(session),
                                sources_html(session, show_scores),
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
                        turn.answer.as_turns()[1],  # a list's papers go with it ("the second one")
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
        yield chat_html(session), sources_html(session, show_scores), session, data, restore
