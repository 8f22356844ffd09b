"""What one browser session holds: its turns and the history sent to the engine."""

from __future__ import annotations

from dataclasses import dataclass, field

from rag.types import Answer, Hit

SHOWN_QUESTION_CHARS = 1200  # longer questions are cut in the chat bubble


@dataclass
class Turn:
    """One question and what came back."""

    question: str
    task: str = "answer"
    text: str = ""  # streamed text so far (raw model output)
    answer: Answer | None = None  # the final verified answer
    error: str | None = None  # a plain-words message for the user
    status: str = "streaming"  # queued | streaming | done | error | stopped
    note: str | None = None  # e.g. "Loading model smollm2…"
    retrieved: list[Hit] | None = None  # hits the engine announced before its answer (if it does)
    indexed: str | None = None  # what was searched, in words ("38 seed abstracts")
    filters: str = ""  # the filters applied, in words ("orals, by an author matching …")
    filter_values: tuple = (None, None, None)  # (decision, area, author) applied


@dataclass
class Session:
    """Everything one browser session owns. gr.State deep-copies it per session."""

    turns: list[Turn] = field(default_factory=list)
    history: list[dict] = field(default_factory=list)  # [{"role", "content"}] sent to the engine
    epoch: int = 0  # bumped by New chat, so an answer still in flight can't write into the new chat
    streaming: int = 0  # answers being generated for this session right now
    filters: tuple = (None, None, None)  # the chat's filter controls (decision, area, author) now

    def reset(self) -> None:
        self.turns.clear()
        self.history.clear()
        self.epoch += 1

    @property
    def busy(self) -> bool:
        """An answer is queued or being written for this session."""
        return any(t.status in ("queued", "streaming") for t in self.turns)

    def answers(self) -> list[Answer]:
        """Every finished answer of this chat, oldest first."""
        return [t.answer for t in self.turns if t.answer is not None and t.status == "done"]

    def latest_answer(self) -> Answer | None:
        for t in reversed(self.turns):
            if t.answer is not None and t.status == "done":
                return t.answer
        return None

    def shown_turns(self) -> list[Turn]:
        """Turns as displayed: very long questions are shortened in the bubble."""
        out = []
        for t in self.turns:
            q = t.question
            if len(q) > SHOWN_QUESTION_CHARS:
                t = Turn(
                    **{**t.__dict__, "question": q[:SHOWN_QUESTION_CHARS] + f"… ({len(q):,} characters)"}
                )
            out.append(t)
        return out
