"""The one `Answer` a stream ends with: an answer, or a refusal with its code, built in one place."""

from __future__ import annotations

import time

from rag import prompts
from rag.grounding.evidence import citations_of
from rag.grounding.outcome import Outcome
from rag.reading.reader import Reading
from rag.types import Answer, Caveat, Hit, Sentence


class Reply:
    """Builds the one `Answer` a stream ends with (timings, reading and outcome filled in once)."""

    def __init__(self, engine, question: str, reading: Reading, hits: list[Hit], timings: dict, t0: float):
        self.engine, self.question, self.reading, self.hits = engine, question, reading, hits
        self.timings, self.t0 = timings, t0

    def _finish(self) -> dict:
        self.timings.setdefault("generate_s", getattr(self.engine, "_generated_s", 0.0))
        self.engine._generated_s = 0.0
        stats = getattr(self.engine._llm, "stats", None)
        if stats is not None and self.timings["generate_s"]:
            self.timings["first_token_s"] = stats.first_token_s
            self.timings["tokens_per_s"] = stats.tokens_per_s
        self.timings["total_s"] = time.perf_counter() - self.t0
        return self.timings

    def refusal(self, code: str, caveats: list[Caveat], signals: dict | None = None) -> Answer:
        typos, mended = self.engine.typo_hint(self.reading.asked)
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
            timings=self._finish(),
            refusal_reason=reason,
            shape=self.reading.shape,
            suggested_question=mended,
            caveats=caveats,
            refusal_code=code,
            signals=signals or {},
            leaned_on=self.reading.base,
        )

    def answer(self, sentences: list[Sentence], hits: list[Hit], outcome: Outcome | None, **kw) -> Answer:
        text = kw.pop("text", None) or "\n".join(
            x.text + "".join(f" [{n}]" for n in x.citations) for x in sentences
        )
        return Answer(
            self.question,
            text,
            citations_of(sentences, hits),
            sentences,
            hits,
            standalone_question=self.reading.query,
            timings=self._finish(),
            shape=self.reading.shape,
            caveats=outcome.caveats if outcome else [],
            signals=outcome.signals if outcome else {},
            leaned_on=self.reading.base,
            follows_list=list(self.reading.shown),
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
            **kw,
        )
