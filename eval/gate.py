"""`rag eval --gate-only`: the engine's decisions without the model's draft.

A generator stand-in that copies the first evidence sentence of the prompt and cites it, so every
refusal, list, shape and citation decision the engine makes before and around generation runs as
usual, while nothing depends on what a model (or a CPU) would write. Two code versions compared this
way differ only in their rules: the replay behind README Quality's gate figures.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from rag.models.generator import GenStats

_BLOCK = re.compile(r"^\[(\d+)\][^\n]*\n- (.+)$", re.M)  # "[n] Title" then its first "- sentence"


class CopyingLLM:
    """Streams "<first evidence sentence> [n]." for any prompt (a bare "[1]." when it has none)."""

    name = "gate replay (copies the first evidence sentence)"

    def __init__(self) -> None:
        self.stats = GenStats()
        self.calls = 0

    def stream(self, messages: list[dict], max_new_tokens: int | None = None) -> Iterator[str]:
        self.calls += 1
        m = _BLOCK.search(messages[-1]["content"] if messages else "")
        text = f"{m.group(2).rstrip('. ')} [{m.group(1)}]." if m else "[1]."
        words = text.split(" ")
        yield from (w + (" " if i < len(words) - 1 else "") for i, w in enumerate(words))
        self.stats = GenStats(prompt_tokens=0, new_tokens=len(words), first_token_s=0.0, total_s=0.0)

    def generate(self, messages: list[dict], max_new_tokens: int | None = None) -> str:
        return "".join(self.stream(messages, max_new_tokens))
