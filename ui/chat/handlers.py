"""The Ask tab's handlers: asking, Stop, New chat, the sources panel, copy and export, and the
"See all N" hand-over of a list answer to Find papers.

Asking takes two steps: `submit_question` shows the question at once (not serialized), then
`stream_answer` streams its answer (serialized on the one LLM). `ask` is both, for the API.
The engine loop both of them drive is an `ui.chat.answer_stream.AnswerStream`.
"""

from __future__ import annotations

import time

import gradio as gr

from rag import export
from rag.reading.hygiene import clean_question
from ui.chat import render
from ui.chat.answer_stream import WAITING, AnswerStream, chat_html, sources_html, stop_abandoned
from ui.chat.session import Session, Turn
from ui.engine_holder import EngineHolder
from ui.filters import ANY

MODES = ["hybrid", "dense", "bm25"]
TASKS = {"Answer": "answer", "Summarize": "summarize"}  # label on the page -> engine task
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
    "summarize": "Summarize mode: name a topic, or say “them” after a list",
}


def _task(name: str) -> str:
    """The engine task for a page label ("Summarize") or a task name ("summarize")."""
    return TASKS.get(name) or (name if name in TASKS.values() else "answer")


def controls(busy: bool) -> tuple:
    """(Ask, Stop) while an answer streams (Ask off, Stop shown) and after."""
    return gr.update(interactive=not busy), gr.update(visible=busy)


class ChatHandlers:
    """The Ask tab's handlers over the engine `holder` holds; `n_examples` example questions are offered
    on an empty chat; `answers` streams the answers (by default an AnswerStream over `holder`)."""

    def __init__(self, holder: EngineHolder, n_examples: int, answers: AnswerStream | None = None):
        self.holder = holder
        self.n_examples = n_examples
        self.answers = answers or AnswerStream(holder)

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
        stop_abandoned(session)
        self._queue(session, text, task_label)
        return (
            chat_html(session),
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
        for out in self.answers.run_pending(session, top_k, mode, profile, show_scores):
            yield *out, skip, skip
        yield skip, skip, skip, skip, skip, *controls(session.busy)

    def stop(self, session: Session, show_scores: bool):
        """Stop: the streaming (or queued) answer ends here, marked as stopped, not kept in the
        history the engine sees. Outputs: chat, sources, session, hint, Ask, Stop."""
        for t in session.turns:
            if t.status in ("queued", "streaming"):
                t.status, t.note = "stopped", None
        return chat_html(session), self.rerender_sources(session, show_scores), session, "", *controls(False)

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
            yield chat_html(session), gr.skip(), session, None
            return
        stop_abandoned(session)
        self._queue(session, text, task)
        for chat, sources, sess, data, _restore in self.answers.run_pending(
            session, top_k, mode if mode in MODES else None, profile, False
        ):
            yield chat, sources, sess, data

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
        return chat_html(session), ChatHandlers.rerender_sources(session, show_scores)

    @staticmethod
    def rerender_sources(session: Session, show_scores: bool) -> str:
        return sources_html(session, show_scores)

    # ------------------------------------------------------------ copy and export
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
        """The latest list answer's topic and filters, into the Find-papers controls (then Find papers runs:
        ui/events.py). Outputs: tabs, topic, decision, area, author."""
        t = next(
            (t for t in reversed(session.turns) if t.status == "done" and t.answer and t.answer.listed), None
        )
        if t is None:
            return (gr.skip(),) * 5
        topic, decision, area, author = t.answer.listed_query or (
            t.answer.standalone_question or t.question,
            *t.filter_values,
        )
        return (
            gr.Tabs(selected="find"),
            topic,
            decision or ANY,
            area or ANY,
            author or "",
        )
