"""One question's context, handed to every answer shape: the reading, the sources and their evidence, the
outcome, the settings, the judge, the generator (loaded on first use) and the clock. It builds the one
`Answer` a stream ends with, an answer or a refusal with its code."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from rag import prompts
from rag.grounding.cite import Judge
from rag.grounding.evidence import EvidenceSet, citations_of, select
from rag.grounding.gaps import unknown_words
from rag.grounding.outcome import Outcome
from rag.reading.reader import Reading
from rag.text import retyped
from rag.types import Answer, Caveat, Hit, Sentence


@dataclass
class Clock:
    """Seconds per step of one answer, counted from when the question arrived."""

    t0: float = field(default_factory=time.perf_counter)
    timings: dict[str, float] = field(default_factory=dict)
    _last: float | None = None

    def lap(self, name: str) -> None:
        """The seconds since the last lap (or the start) as `name`."""
        now = time.perf_counter()
        self.timings[name] = now - (self._last if self._last is not None else self.t0)
        self._last = now

    def stop(self) -> dict[str, float]:
        self.timings.setdefault("generate_s", 0.0)
        self.timings["total_s"] = time.perf_counter() - self.t0
        return self.timings


@dataclass
class Turn:
    """Everything an answer shape reads for one question, and the `Answer` it ends with."""

    question: str
    reading: Reading
    settings: object  # rag.settings.Settings: each shape reads its own group
    judge: Judge
    retriever: object  # rag.retrieval.retrieve.Retriever: the corpus the lister and the tables read
    load_llm: Callable[[], object]  # the generator, loaded only when a shape generates
    clock: Clock = field(default_factory=Clock)
    hits: list[Hit] = field(default_factory=list)
    evidence: EvidenceSet | None = None
    outcome: Outcome | None = None

    def select(self, query: str, hits: list[Hit]) -> EvidenceSet:
        """The evidence sentences of these sources for the query (rag.grounding.evidence.select)."""
        g = self.settings.grounding
        self.hits = hits
        self.evidence = select(query, hits, self.judge, g.evidence_per_paper, g.evidence_share)
        return self.evidence

    def generate(self, messages: list[dict]) -> str:
        """The generator's reply, timed into the clock with its first-token time and speed."""
        t = time.perf_counter()
        llm = self.load_llm()
        raw = llm.generate(messages, max_new_tokens=self.settings.generation.max_new_tokens)
        self.clock.timings["generate_s"] = self.clock.timings.get("generate_s", 0.0) + time.perf_counter() - t
        stats = getattr(llm, "stats", None)
        if stats is not None:
            self.clock.timings["first_token_s"] = stats.first_token_s
            self.clock.timings["tokens_per_s"] = stats.tokens_per_s
        return raw

    def typo_hint(self) -> tuple[list[Caveat], str | None]:
        """A caveat for each word of the question no abstract uses that is one typo from one they do
        ("speculatve"), and the question with them mended (never asked unasked: it may be another name)."""
        question = self.reading.asked
        lexical = self.retriever.bm25()
        typos = lexical.typos(unknown_words(question, lexical.known), question)
        if not typos:
            return [], None
        mended = retyped(question, typos)
        caveats = [Caveat("typo", prompts.typo_line(w, right)) for w, right in typos.items()]
        return caveats, mended if mended != question else None

    def refusal(self, code: str, caveats: list[Caveat], signals: dict | None = None) -> Answer:
        typos, mended = self.typo_hint()
        caveats = [*caveats, *typos]
        reason = " ".join(c.text for c in caveats) or prompts.REASONS.get(code, "")
        return Answer(
            self.question,
            prompts.REFUSAL,
            [],
            [],
            self.hits,
            refused=True,
            standalone_question=self.reading.query,
            timings=self.clock.stop(),
            refusal_reason=reason,
            shape=self.reading.shape,
            suggested_question=mended,
            caveats=caveats,
            refusal_code=code,
            signals=signals or {},
            leaned_on=self.reading.base,
        )

    def answer(self, sentences: list[Sentence], hits: list[Hit] | None = None, **kw) -> Answer:
        """The answer of these sentences over `hits` (default: the evidence's sources), with the outcome's
        caveats, signals and parts."""
        hits = self.evidence.hits if hits is None else hits
        outcome = self.outcome
        text = kw.pop("text", None) or "\n".join(
            x.text + "".join(f" [{n}]" for n in x.citations) for x in sentences
        )
        typos, mended = self.typo_hint()  # an answer to a mistyped word may be about something else
        return Answer(
            self.question,
            text,
            citations_of(sentences, hits),
            sentences,
            hits,
            standalone_question=self.reading.query,
            timings=self.clock.stop(),
            shape=self.reading.shape,
            caveats=[*(outcome.caveats if outcome else []), *typos],
            suggested_question=mended,
            signals=outcome.signals if outcome else {},
            leaned_on=self.reading.base,
            parts=[
                {
                    "text": pa.part.text,
                    "number": pa.part.number,
                    "papers": pa.papers,
                    "caveat": pa.caveat.code if pa.caveat else None,
                    "signals": {k: round(v, 4) for k, v in pa.signals.items()},
                }
                for pa in (outcome.parts if outcome else [])
            ],
            **{"follows_list": list(self.reading.shown), **kw},
        )
