"""What a paper lacks of a listed topic, read word by word against its abstract: `missing_aspects`
("graph networks for music recommendation" over a paper on graph networks), and the topic's words no
indexed abstract uses (`unknown_words`), for the lister's empty lists and typo hints.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable

import numpy as np

from rag.reading.reader import topic as described
from rag.retrieval.names import QWORDS, mentions
from rag.text import FUNCTION_WORDS, content_words, flatten, slip, stem, stopwords

# what a description says any paper does ("which paper studies …", "work applying X to Y"), not its topic
FRAME_VERBS = frozenset(
    "study studies studied studying propose proposes proposed proposing present presents presented introduce "
    "introduces introduced investigate investigates investigated explore explores explored examine examines "
    "address addresses tackle tackles use uses used using apply applies applied applying develop develops "
    "focus focuses look looks ask asks asked asking".split()
)


# "(e.g., audio-image and image-text)": the user's examples, which a matching paper need not name
EXAMPLES = re.compile(r"\s*\((?:e\.g\.?|for example|for instance|such as|like)\b[^()]*\)", re.I)


def to_cover(topic: str) -> str:
    """What a listed paper must cover of a topic: the topic without the user's examples."""
    return described(EXAMPLES.sub("", topic))


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
_CONTRACTIONS = ("'s", "'re", "'ve", "'ll", "'d", "'m")


def unknown_words(topic: str, known: Callable[[str], bool]) -> list[str]:
    """Words of the topic that no indexed abstract uses (`known`: the index's vocabulary, stemmed), so no
    paper can cover them: "knitting" of "knitting patterns". Skipped words (stopwords, frame verbs) and a
    mistyped function word aside."""
    out = []
    for t in topic.replace("’", "'").split():
        w = bare(t)
        w = next((w[: -len(c)] for c in _CONTRACTIONS if w.lower().endswith(c)), w)
        if (
            not _PLAIN.fullmatch(w) or w.lower() in _skip() or w.lower().endswith("n't")
        ):  # "C++": symbols dropped
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


def run_gains(
    topic: str,
    papers: list[tuple[str, np.ndarray]],
    vectors: Callable[[list[str]], np.ndarray],
    known: Callable[[str], bool] | None = None,
) -> list[list[tuple[str, float]]]:
    """For each paper (its text, and its vectors as rows), each run of the topic's words it never uses
    (_absent_runs) with how much closer the topic comes to the paper without it (best cosine)."""
    runs = [_absent_runs(topic, text, known) for text, _ in papers]
    if not any(runs):
        return [[] for _ in papers]
    variants = list(dict.fromkeys([topic] + [rest for r in runs for _, rest in r]))
    vv = vectors(variants)
    at = {v: i for i, v in enumerate(variants)}
    out = []
    for (_, mat), r in zip(papers, runs):
        best = (np.asarray(mat, dtype=np.float32).reshape(-1, vv.shape[1]) @ vv.T).max(axis=0) if r else None
        out.append([(phrase, float(best[at[rest]] - best[0])) for phrase, rest in r])
    return out


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
    A run asking a task the paper doesn't do while it does another (rag.retrieval.names.swapped_task) lacks always.
    `known(word)`: whether any indexed abstract uses the word; a mistyped stopword no abstract uses
    ("wheter", rag.text.slip) is no part of the topic."""
    out = []
    for (text, _), r in zip(papers, run_gains(topic, papers, vectors, known)):
        found = lacking_runs(r, text, gain)
        # a run and the same run with its modifier: the shorter says it
        out.append([p for p in found if not any(q != p and p.endswith(" " + q) for q in found)])
    return out


def lacking_runs(gains: list[tuple[str, float]], text: str, gain: float) -> list[str]:
    """The runs (`run_gains` of one paper) that move the topic by `gain` or more, or ask a task the paper
    swaps for another: that moves the vector little ("segmentation" / "detection"), but it is lacking."""
    return [phrase for phrase, g in gains if g >= gain or swapped_task(phrase, text)]


# Tasks, each with the words that name it: a description asking one task of a paper that does another
# ("… for semantic segmentation" of a detection paper) describes a paper that isn't there.
TASKS = {
    "segmentation": "segmentation segment segmenting",
    "detection": "detection detect detecting detector detectors",
    "classification": "classification classify classifier classifiers recognition categorization",
    "generation": "generation generate generating generative synthesis synthesize synthesizing",
    "forecasting": "forecasting forecast forecasts",
    "tracking": "tracking tracker",
    "captioning": "captioning caption captions",
    "retrieval": "retrieval retrieve retrieving",
    "translation": "translation translate translating",
    "summarization": "summarization summarize summarizing summaries",
    "reconstruction": "reconstruction reconstruct reconstructing",
    "editing": "editing edit edits",
}
_TASK_OF = {stem(w): task for task, words in TASKS.items() for w in words.split()}


def tasks(text: str) -> set[str]:
    """The tasks (TASKS) a text names."""
    return {_TASK_OF[w] for w in content_words(text) if w in _TASK_OF}


def swapped_task(phrase: str, text: str) -> bool:
    """Whether a phrase the text never uses asks a task (TASKS) the text doesn't do while the text does
    another: a described paper doing something else, not a paraphrase of this one."""
    asked = tasks(phrase)
    done = tasks(text)
    return bool(asked) and not asked & done and bool(done)
