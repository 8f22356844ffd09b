"""Typed records that flow through the pipeline: corpus -> index -> retrieve -> answer -> cite.

Every caller (CLI, UI, eval) reads the same `Answer`; there is no second code path.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field
from functools import cached_property
from typing import Any, Protocol, runtime_checkable


@dataclass
class Paper:
    paper_id: str  # OpenReview id where known, else "<file stem>#<index>-<abstract hash>" (rag.ingest.corpus)
    text: str  # the full abstract
    source_file: str
    index: int  # 0-based among the abstracts of its file (header excluded)
    title: str | None = None
    decision: str | None = None
    authors: list[str] | None = None
    primary_area: str | None = None
    # Stable identity of the file the paper came from (hash of its resolved path): stale-paper
    # clean-up matches this, so two files with the same name in different folders never collide.
    source_id: str = ""

    @cached_property
    def words(self) -> set[str]:
        """The content words (stems) of its title and abstract, read once per record."""
        from rag.text import content_words

        return content_words(f"{self.title or ''} {self.text}")

    @cached_property
    def flat(self) -> str:
        """Its title and abstract flattened (lowercase, no LaTeX noise) for name matching, once per record."""
        from rag.text import flatten

        return flatten(f"{self.title or ''} {self.text}")

    @cached_property
    def sentences(self) -> list[tuple[int, int, set[str]]]:
        """(start, end, content words) of each abstract sentence, split once per record."""
        from rag.text import content_words, sentence_spans

        return [(a, b, content_words(self.text[a:b])) for a, b in sentence_spans(self.text)]

    @property
    def sentence_texts(self) -> list[str]:
        """The abstract's sentences as text (the whole abstract when none was split)."""
        return [self.text[a:b] for a, b, _ in self.sentences] or [self.text]

    @property
    def label(self) -> str:
        """Human label: the title, else `file #index`."""
        return self.title or f"{self.source_file} #{self.index}"

    @property
    def url(self) -> str | None:
        # OpenReview ids only: any other id (a generated "file#0-…", one from a corpus file with markup in it)
        # makes no link
        pid = self.paper_id
        if not 0 < len(pid) <= 64 or not all(c.isascii() and (c.isalnum() or c in "_-") for c in pid):
            return None
        return f"https://openreview.net/forum?id={self.paper_id}"

    def card(self) -> dict[str, Any]:
        """The paper's record in a JSON list (`rag list --json`, the author view): no abstract."""
        return {
            "paper_id": self.paper_id,
            "title": self.title,
            "decision": self.decision,
            "primary_area": html.unescape(self.primary_area) if self.primary_area else None,
            "authors": list(self.authors or []),
            "url": self.url,
        }


@dataclass
class Chunk:
    chunk_id: str
    paper_id: str
    text: str
    start: int  # character offsets of `text` inside the paper's abstract
    end: int


@dataclass
class Hit:
    """One retrieved paper with its best chunks."""

    paper: Paper
    score: float
    chunks: list[Chunk] = field(default_factory=list)
    cosine: float | None = None  # the question's best chunk cosine, where the dense side found the paper


@dataclass
class Citation:
    n: int
    paper_id: str
    title: str | None
    source_file: str
    index: int
    quote: str  # the abstract sentence that supports the claim
    quote_start: int = -1  # character offsets of `quote` in the abstract
    quote_end: int = -1
    spans: list[tuple[int, int]] = field(default_factory=list)  # all supporting sentences


@dataclass
class Sentence:
    text: str
    citations: list[int]
    supported: bool
    support_score: float
    quoted: bool = False  # copied whole from an abstract sentence (else generated and checked)
    # (source n, start, end) of each abstract sentence that supports it
    spans: list[tuple[int, int, int]] = field(default_factory=list)


@dataclass
class Table:
    """Papers side by side: a row per paper (its source number), each cell a sentence quoted from that
    abstract, or None where the abstract does not state it."""

    columns: list[str]
    rows: list[tuple[int, list[str | None]]]

    def to_json(self) -> dict:
        return {"columns": self.columns, "rows": [{"n": n, "cells": cells} for n, cells in self.rows]}


@dataclass
class Caveat:
    """A part of the question the evidence does not cover, said in one plain line. `code`: term_absent,
    no_number, not_stated, partial_match, not_in_followed (what was asked is missing), typo, language (how
    it was read)."""

    code: str
    text: str
    part: int | None = None  # the question part (rag.reading.reader.Part) it concerns

    @property
    def missing(self) -> bool:
        """Whether it says something asked is not in the evidence (eval: caveats on asked parts)."""
        return self.code in MISSING_CODES


MISSING_CODES = frozenset({"term_absent", "no_number", "not_stated", "partial_match", "not_in_followed"})


@dataclass
class Retrieved:
    """The first event of every answer stream: the sources, before any text, so a UI can show them
    at once. The stream then yields text deltas (str) and ends with exactly one `Answer`."""

    question: str
    standalone_question: str
    shape: str  # explain | list | compare | summary | decision
    retrieved: list[Hit]
    # the filters applied (rag.retrieval.filters.Filters): the caller's, or the question's
    filters: Any = None


@dataclass
class Answer:
    question: str
    answer: str
    citations: list[Citation]
    sentences: list[Sentence]
    retrieved: list[Hit]
    refused: bool = False
    standalone_question: str | None = None
    fallback: bool = False  # True when the answer was built extractively
    # explain | which | list | compare | summary | per_paper | decision (rag.reading.reader.shape)
    shape: str = "explain"
    refusal_reason: str = (
        ""  # why it was refused (answerability signal, or weak evidence after an unsupported draft)
    )
    timings: dict[str, float] = field(default_factory=dict)
    listed: int | None = None  # list answers from the lister: how many papers match in all
    listed_from: int = 0  # "show me the rest": how many of the list earlier pages showed
    # what the lister listed: (topic, decision, area, author), so Find papers shows the same list
    listed_query: tuple[str, str | None, str | None, str | None] | None = None
    # a refused question with each word no abstract uses replaced by the one a typo meant: ask this instead
    suggested_question: str | None = None
    caveats: list[Caveat] = field(default_factory=list)
    refusal_code: str | None = None  # nothing_relevant | instruction (None: answered)
    signals: dict[str, float] = field(default_factory=dict)  # what the outcome was decided on
    leaned_on: str | None = None  # the earlier turn (standalone) a follow-up was read with
    # each part of the question: {"text", "number", "papers", "caveat", "signals"}
    parts: list[dict] = field(default_factory=list)
    table: Table | None = None  # compare answers and questions asked of a list's papers
    follows_list: list[str] = field(default_factory=list)  # a follow-up into a list: that list's paper ids

    def as_turns(self) -> list[dict]:
        """The chat messages this answer adds to a history; a list's papers go with it, so "the second one"
        and "what do they use?" can point at them."""
        turn = {"role": "assistant", "content": self.answer, "shape": self.shape}
        # the papers it was about: "were both accepted?", "and the reid one?" choose among them
        about = [h.paper.paper_id for h in self.retrieved] if self.shape == "decision" else []
        turn["cited"] = list(dict.fromkeys(about or [c.paper_id for c in self.citations]))
        if self.follows_list:  # "the second one", "what do they use?": the list stays the one pointed at
            turn["papers"] = list(self.follows_list)
        elif self.shape in ("list", "summary", "compare") and not self.refused:
            rows = [n for n, _ in self.table.rows] if self.table else sorted(c.n for c in self.citations)
            turn["papers"] = [
                self.retrieved[n - 1].paper.paper_id for n in rows if 0 < n <= len(self.retrieved)
            ]
        return [{"role": "user", "content": self.question}, turn]

    def to_json(self) -> dict[str, Any]:
        return {
            "question": self.question,
            "answer": self.answer,
            "citations": [
                {k: getattr(c, k) for k in ("n", "paper_id", "title", "source_file", "index", "quote")}
                for c in self.citations
            ],
            "refused": self.refused,
            "refusal_code": self.refusal_code,
            "refusal_reason": self.refusal_reason,
            "caveats": [asdict(c) for c in self.caveats],
            "leaned_on": self.leaned_on,
            "parts": self.parts,
            "table": self.table.to_json() if self.table else None,
            "shape": self.shape,
            "standalone_question": self.standalone_question,
            "listed": self.listed,
            "suggested_question": self.suggested_question,
            "retrieved": [
                {
                    "paper_id": h.paper.paper_id,
                    "title": h.paper.title,
                    "source_file": h.paper.source_file,
                    "index": h.paper.index,
                    "score": round(h.score, 6),
                }
                for h in self.retrieved
            ],
            "sentences": [asdict(s) for s in self.sentences],
            "signals": {k: round(v, 4) for k, v in self.signals.items()},
            "timings": {
                k: round(self.timings.get(k, 0.0), 4) for k in ("retrieve_s", "generate_s", "total_s")
            },
        }


class AnswerStream:
    """What `Engine.stream` returns: iterate it for the events (a `Retrieved`, caveats and text deltas, then
    one `Answer`), or call `.answer()` to drain it. `.retrieved` is set once retrieval is done."""

    def __init__(self, events: Iterator):
        self._events = events
        self.retrieved: Retrieved | None = None
        self._answer: Answer | None = None

    @classmethod
    def of(cls, events) -> AnswerStream:
        """`events` as a stream (an engine that yields its events as a plain generator works too)."""
        return events if isinstance(events, cls) else cls(iter(events))

    def __iter__(self) -> Iterator:
        for item in self._events:
            if isinstance(item, Retrieved):
                self.retrieved = item
            elif isinstance(item, Answer):
                self._answer = item
            yield item

    def answer(self) -> Answer:
        """The final Answer, after the events not read yet."""
        for _ in self:
            pass
        if self._answer is None:
            raise RuntimeError("the answer stream ended without an Answer")
        return self._answer

    def close(self) -> None:  # a reader that stops early (the UI's Stop) runs the engine's cleanup
        close = getattr(self._events, "close", None)
        if close is not None:
            close()


@runtime_checkable
class Generator(Protocol):
    """What the engine asks of a language model (rag.models.generator.LLM, and the tests' fakes)."""

    name: str

    def stream(self, messages: list[dict], max_new_tokens: int | None = None) -> Iterator[str]: ...

    def generate(self, messages: list[dict], max_new_tokens: int | None = None) -> str: ...


@runtime_checkable
class Embedder(Protocol):
    """What retrieval and the judge ask of an embedder (rag.models.embedder, and the tests' fakes)."""

    def encode(self, texts: list[str], progress: bool = False, bulk: bool = False) -> list[list[float]]: ...


@runtime_checkable
class AnswerEngine(Protocol):
    """What the UI, the CLI and eval ask of an engine (rag.answer.Engine, and the UI tests' FakeEngine)."""

    settings: Any

    @property
    def llm_profile(self) -> str: ...

    def stream(self, question: str, history: list[dict] | None = None, **kw) -> Iterable: ...

    def question_filters(self, question: str, listed: bool = False) -> tuple[Any, str]: ...

    def example_questions(self, n: int = 5) -> list[str]: ...

    def with_llm(self, name: str) -> AnswerEngine: ...

    def warm_up(self) -> None: ...

    def ingest_if_empty(self, paths=None): ...
