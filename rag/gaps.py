"""What the sources lack of what the question asks, read word by word against one paper's abstract.

Two questions share this: a "which paper …" / list description that a paper matches only in part
(`missing_aspects`: "graph networks for music recommendation" over a paper on graph networks), and a
follow-up that asks its paper about something the paper never mentions (`not_in_paper`: "Does it also
work on calcium imaging data?"). Rare words are weighted by the index's own idf (rag.text.Idf).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable

import numpy as np

from rag.names import QWORDS, mentions, swapped_task
from rag.text import FUNCTION_WORDS, WORD, Idf, content_words, flatten, slip, stem, stopwords
from rag.types import Hit

# "Does it also handle X?", "did they test it on X?", "how does it deal with X?": a clause about a pronoun
# subject presupposes the subject the chat is on; X is asked of it, however much X sounds like another paper
_PRESUPPOSES = re.compile(
    r"^\W*(?:(?:ok(?:ay)?|so|and|but|also|hmm|btw|then|now|right|wait)\W+)*(?:(?:how|why)\s+)?"
    r"(?:do|does|did|can|could|is|are|was|were|has|have|had|will|would|should)\s+"
    r"(?:it|they|its|their|the\s+(?:method|model|approach|paper|authors?))\b",
    re.I,
)


def presupposes(question: str) -> bool:
    """The question is a yes/no or how/why clause about a pronoun subject ("Does it …?", "How do they
    …?"): it asks something of the subject already under discussion."""
    return bool(_PRESUPPOSES.search(question))


def not_in_paper(
    asked: str, context: str, top: Hit, hits: list[Hit], idf: Idf | None, max_cover: float, min_missing: float
) -> str | None:
    """What a follow-up asks of its paper that the paper never mentions ("Does it also work on calcium
    imaging data?" of an abstract that never says "calcium"), in the user's words; else None.

    Only a clause about the pronoun subject ("Does it …?", "How do they …?", `presupposes`)
    asks a thing *of* the paper. Its own words (not the earlier turn's, `context`) weigh by rarity: the
    paper must use less than `max_cover` of their weight, and the words it lacks but another retrieved
    paper uses (the asked thing is a topic of the index, not a turn of phrase) must weigh `min_missing`."""
    if not presupposes(asked):
        return None
    words = content_words(asked) - content_words(context)
    if not words:
        return None
    weight = {w: (idf(w) if idf else 1.0) for w in words}
    have = top.paper.words
    others = set().union(*(h.paper.words for h in hits if h is not top))
    cover = sum(v for w, v in weight.items() if w in have) / (sum(weight.values()) or 1.0)
    lacking = {w for w in words if w not in have and w in others}
    if cover >= max_cover or sum(weight[w] for w in lacking) < min_missing:
        return None
    said = dict.fromkeys(t for t in WORD.findall(asked) if stem(t) in lacking)
    return " ".join(said)


# what a description says any paper does ("which paper studies …", "work applying X to Y"), not its topic
FRAME_VERBS = frozenset(
    "study studies studied studying propose proposes proposed proposing present presents presented introduce "
    "introduces introduced investigate investigates investigated explore explores explored examine examines "
    "address addresses tackle tackles use uses used using apply applies applied applying develop develops "
    "focus focuses look looks ask asks asked asking".split()
)


def bare(token: str) -> str:
    """A whitespace token of a topic without the punctuation around it."""
    return token.strip(".,;:!?()\"'“”‘’")


def _absent_runs(topic: str, text: str, known: Callable[[str], bool] | None = None) -> list[tuple[str, str]]:
    """(phrase, the topic without it) for each run of consecutive content words of the topic that
    `text` never uses (as written, singular/plural, or spelled-out acronym); stopwords inside a run
    ("weather and climate") join it. Each run is also given with the word before it that the text does
    use, as a modifier goes with its head: "machine unlearning" is lacking from a text that says "machine
    learning" (and "generate" of "generate knitting patterns" is no modifier: both are tried)."""
    toks = topic.split()
    flat, have = flatten(text), content_words(text)
    skip = _skip()
    status = []  # None: a stopword; True: the text uses it; False: it doesn't
    for t in toks:
        w = bare(t)
        if len(w) < 2 or w.lower() in skip:
            status.append(None)
        elif known is not None and slip(w) and not known(w):  # "wheter": a slip, unknown to the index
            status.append(None)
        else:
            status.append(bool(stem(w) in have or mentions(flat, flatten(w))))
    heads = {i for i, st in enumerate(status[:-1]) if st and status[i + 1] is False}
    joined = [False if i in heads else st for i, st in enumerate(status)]
    runs = list(dict.fromkeys(tuple(r) for r in (*_runs(status), *_runs(joined))))
    return [
        (
            " ".join(bare(toks[j]) for j in r),
            " ".join(t for j, t in enumerate(toks) if j not in r),
        )
        for r in runs
    ]


def absent_words(topic: str, text: str, known: Callable[[str], bool] | None = None) -> set[str]:
    """The topic's words in the runs `text` never uses (_absent_runs): everything `missing_aspects` can
    find lacking in that text."""
    return words_of([phrase for phrase, _ in _absent_runs(topic, text, known)])


def words_of(phrases: list[str]) -> set[str]:
    """The words of lacking phrases (lowercase), the skipped words joined inside a run ("and") aside."""
    return {w.lower() for phrase in phrases for w in phrase.split()} - _skip()


_PLAIN = re.compile(r"[A-Za-z][A-Za-z'\-]*[A-Za-z]")  # a word of letters, hyphens inside
# "what's", "they're", "network's": the word without its ending; "can't", "doesn't": a function word
_CONTRACTION = re.compile(r"'(?:s|re|ve|ll|d|m)$", re.I)
_NEGATED = re.compile(r"n't$", re.I)


def unknown_words(topic: str, known: Callable[[str], bool]) -> list[str]:
    """Words of the topic that no indexed abstract uses (`known`: the index's vocabulary, stemmed), so no
    paper can cover them: "knitting" of "knitting patterns". Skipped words (stopwords, frame verbs) and a
    mistyped function word aside."""
    out = []
    for t in topic.replace("’", "'").split():
        w = _CONTRACTION.sub("", bare(t))
        if not _PLAIN.fullmatch(w) or w.lower() in _skip() or _NEGATED.search(w):  # "C++": symbols dropped
            continue
        if not known(w) and not known(_american(w)) and not slip(w):  # "wheter": no part of the topic
            out.append(w)
    return out


def _american(word: str) -> str:
    """The American spelling the abstracts mostly use: "optimisation" -> "optimization", "behaviour" ->
    "behavior", "analyse" -> "analyze", "centre" -> "center"."""
    w = re.sub(r"(?<=[a-z])is(e|ed|es|ing|ation|ations|er|ers)$", r"iz\1", word.lower())
    w = re.sub(r"(?<=[a-z])ys(e|ed|es|ing)$", r"yz\1", w)
    w = re.sub(r"(?<=[a-z]{2})our(s|ed|ing|al)?$", r"or\1", w)
    return re.sub(r"(?<=[a-z]{2})tre(s)?$", r"ter\1", w)


@functools.cache
def _skip() -> frozenset[str]:
    """Words of a description that are never part of its topic."""
    return stopwords() | FUNCTION_WORDS | QWORDS | FRAME_VERBS


def _runs(status: list[bool | None]) -> list[list[int]]:
    """Positions of each run of absent words (False), the skipped words (None) between them included."""
    runs, cur, gap = [], [], []
    for i, st in enumerate(status):
        if st is None:
            gap.append(i)
        elif st:
            if cur:
                runs.append(cur)
            cur, gap = [], []
        else:
            cur = cur + gap + [i] if cur else [i]
            gap = []
    if cur:
        runs.append(cur)
    return runs


def missing_aspects(
    topic: str,
    papers: list[tuple[str, np.ndarray]],
    vectors: Callable[[list[str]], np.ndarray],
    gain: float,
    known: Callable[[str], bool] | None = None,
) -> list[list[str]]:
    """For each paper (its text, and its vectors as rows), the parts of the topic it lacks: runs of
    words it never uses whose removal from the topic brings the topic closer to the paper by at least
    `gain` in cosine. A described combination ("X for weather forecasting") that the paper only half
    matches leaves "weather forecasting" here; a paraphrase or a generic verb moves the vector little.
    A run asking a task the paper doesn't do while it does another (rag.names.swapped_task) lacks always.
    `known(word)`: whether any indexed abstract uses the word; a mistyped stopword no abstract uses
    ("wheter", rag.text.slip) is no part of the topic."""
    if not papers:
        return []
    runs = [_absent_runs(topic, text, known) for text, _ in papers]
    variants = list(dict.fromkeys([topic] + [rest for r in runs for _, rest in r]))
    vv = vectors(variants)
    at = {v: i for i, v in enumerate(variants)}
    out = []
    for (text, mat), r in zip(papers, runs):
        if not r:
            out.append([])
            continue
        best = (np.asarray(mat, dtype=np.float32).reshape(-1, vv.shape[1]) @ vv.T).max(axis=0)
        # a task swapped for another moves the vector little ("segmentation" / "detection"): it is lacking
        lacking = [
            phrase for phrase, rest in r if best[at[rest]] - best[0] >= gain or swapped_task(phrase, text)
        ]
        # a run and the same run with its modifier: the shorter says it
        out.append([p for p in lacking if not any(q != p and p.endswith(" " + q) for q in lacking)])
    return out
