"""The standalone question: does it lean on the chat? The words' reading, checked against retrieval.

Words alone can't tell "which CNNs did they compare for classifying kidney stones?" (a new subject, with
a pronoun) from "does it also handle occlusion?" (the same subject, a new word). So unless the question
points back in so many words (an ordinal, a demonstrative) or says the subject changes, both readings are
retrieved: the question on its own, and the question with the turn it would lean on in brackets. When the
two lead to the same paper, the words' reading (rag.intent.referent) stands. When they lead to different
papers, the question's own words decide: the reading whose paper uses more of them, each weighted by its
rarity in the index (words both papers use don't count), wins by a margin (ConversationSettings). A
clause about a pronoun subject ("Does it also handle X?", "How do they deal with X?") presupposes the
subject under discussion, so it is never read as a new one, however much X sounds like another paper.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from rag.gaps import presupposes
from rag.intent import joined, points_back, referent, states_switch
from rag.text import Idf, content_words, without_venue
from rag.types import Hit, Paper

Retrieve = Callable[[str], list[Hit]]


@dataclass
class Condensed:
    """How a question was read, with the retrieval trace the decision rests on."""

    query: str  # what retrieval and evidence use
    reading: str  # "alone" | "follow-up" | "points back" | "stated switch"
    words_reading: str  # what the words alone said: "alone" | "follow-up" | ...
    gain: float | None = None  # rare-word mass the alone reading's paper has over the follow-up's
    alone_top: str | None = None  # top paper id of each reading, when both were retrieved
    follow_top: str | None = None
    hits: dict[str, list[Hit]] = field(default_factory=dict, repr=False)  # query -> its retrieval


def word_gain(question: str, alone: Paper, follow: Paper, idf: Idf) -> tuple[float, int]:
    """(mass, words): the summed rarity of the question's content words that `alone`'s title and abstract
    use and `follow`'s don't, minus the reverse; and how many words the first side has."""
    words = content_words(question)
    a, f = alone.words, follow.words
    only_a = [w for w in words if w in a and w not in f]
    only_f = [w for w in words if w in f and w not in a]
    return sum(idf(w) for w in only_a) - sum(idf(w) for w in only_f), len(only_a)


def user_turns(history: list[dict] | None) -> list[str]:
    """The user's earlier questions, read as the question is (without "ICLR 2025": rag.text.without_venue)."""
    return [
        without_venue(m["content"])
        for m in (history or [])
        if m.get("role") == "user" and str(m.get("content", "")).strip()
    ]


class Condenser:
    """Reads each question of a chat once; a chat's earlier turns are cached (the UI asks again with
    the history growing). `retrieve` runs the engine's retrieval with the caller's depth and filters."""

    def __init__(self, settings, idf: Callable[[], Idf]):
        self.settings = settings
        self._idf = idf  # the index's idf, read when first needed (the BM25 side loads lazily)
        self._cache: OrderedDict[tuple, Condensed] = OrderedDict()

    def clear(self) -> None:
        self._cache.clear()

    def __call__(self, question: str, turns: list[str], retrieve: Retrieve, key: tuple = ()) -> Condensed:
        if not turns:
            return Condensed(question, "alone", "alone")
        ck = (question, tuple(turns), key)
        if ck in self._cache:
            self._cache.move_to_end(ck)
            return self._cache[ck]
        out = self._read(question, turns, retrieve, key)
        self._cache[ck] = replace(out, hits={})  # retrievals are reused only by the call that ran them
        if len(self._cache) > self.settings.condense_cache:
            self._cache.popitem(last=False)
        return out

    def _read(self, question: str, turns: list[str], retrieve: Retrieve, key: tuple) -> Condensed:
        s = self.settings
        back = points_back(question, turns)
        if back is not None:
            base = self(turns[back], turns[:back], retrieve, key).query
            return Condensed(joined(question, base), "points back", "points back")
        if states_switch(question):
            return Condensed(question, "stated switch", "stated switch")
        words_follow = referent(question, turns) is not None
        said = "follow-up" if words_follow else "alone"
        follow = joined(question, self(turns[-1], turns[:-1], retrieve, key).query)
        if not s.condense_check or follow == question:
            return Condensed(follow if words_follow else question, said, said)
        hits = {question: retrieve(question), follow: retrieve(follow)}
        a, f = hits[question], hits[follow]
        out = Condensed(follow if words_follow else question, said, said, hits=hits)
        if not a or not f:
            return out
        out.alone_top, out.follow_top = a[0].paper.paper_id, f[0].paper.paper_id
        if out.alone_top == out.follow_top:
            return out
        gain, n = word_gain(question, a[0].paper, f[0].paper, self._idf())
        out.gain = gain
        # "Does it also handle X?" asks X of the subject: retrieval may not make it a new one
        held = words_follow and presupposes(question)
        if gain >= s.switch_min_gain and n >= s.switch_min_words and not held:
            out.query, out.reading = question, "alone"
        elif gain <= -s.follow_min_gain:
            out.query, out.reading = follow, "follow-up"
        return out
