"""Text utilities every stage shares: the one stopword list, stemming, content words, sentence spans,
named terms a claim must keep, acronym expansions, LaTeX flattening, negation, injected instructions.

The stopword list is NLTK's English list as llama-index bundles it (read from its data file, so eval
and the CLI don't pay llama-index's import), plus the words every abstract uses (`PAPER_WORDS`).
"""

from __future__ import annotations

import functools
import importlib.util
import re
from collections import Counter
from collections.abc import Callable
from pathlib import Path

Idf = Callable[[str], float]  # stemmed word -> inverse document frequency over the indexed chunks

# a sentence ends at [.!?] and spaces before a capital, a digit or math; or with no space between a word and
# a capitalised one ("calculation.This leads": 86 conference abstracts run sentences together so)
_SENT_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[A-Z0-9$\\(\[\"'])|(?<=[a-z]{3}[.!?])(?=[A-Z][a-z])")
_ABBREV = re.compile(r"(?:\b(?:e\.g|i\.e|et al|etc|vs|v\.s|Fig|Eq|Sec|cf|resp|approx|No)\.|\b[A-Z]\.)$")
WORD = re.compile(r"[A-Za-z][A-Za-z0-9\-]*|\d+(?:\.\d+)?%?")  # a token of content_words
NUMBER = re.compile(r"(?<![A-Za-z])\d+(?:\.\d+)?")
_NEGATION = re.compile(r"\b(?:not|no(?!-)|never|cannot|neither|nor|none)\b|n't\b", re.I)
_NOT_NEGATION = re.compile(
    r"\b(?:not only|not just|no more than|no less than|if not|whether or not|no matter|unlike)\b[^,;]*", re.I
)
# Instructions aimed at the model are never evidence (defence in depth against prompt injection).
INJECTION = re.compile(
    r"\b(ignore|disregard|forget)\b.{0,40}\b(instructions?|prompt|rules)\b|\b(reply|respond|answer) only\b|"
    r"\byou are (now )?(an?|the) (ai|assistant|model)\b|\bsystem prompt\b",
    re.I,
)

SURROGATE = re.compile(r"[\ud800-\udfff]")  # half of a UTF-16 pair alone: no character, undecodable
# a sentence stating what the paper contributes ("We propose …", "In this work, we introduce …", "we develop X");
# `fitted`: one of the three verbs the lister's model was fitted on follows the subject
CONTRIBUTION = re.compile(
    r"\b(?:we|this (?:paper|work)|our)\b(?:(?=.{0,40}?\b(?P<fitted>propos|introduc|present))|)"
    r".{0,40}?\b(?:propos|introduc|present|develop|design|build|construct|creat|curat)",
    re.I,
)


def claim_rank(sentence: str) -> int:
    """2 for a sentence stating the paper's contribution ("we propose …"), 1 for one where the authors
    speak ("we establish …"), 0 for background ("X has attracted a lot of interest")."""
    if CONTRIBUTION.search(sentence):
        return 2
    return int(any(w.lower() == "we" for w in WORD.findall(sentence)))


# words every abstract uses, stopwords for matching but content words of names ("finite element method")
PAPER_WORDS = frozenset(
    "paper papers abstract abstracts propose proposes proposed study work method approach also using use used uses new show shows".split()
)


@functools.cache
def nltk_stopwords() -> frozenset[str]:
    """NLTK's English stopwords, from the copy llama-index-core bundles (what its globals_helper reads)."""
    spec = importlib.util.find_spec("llama_index.core")
    root = Path(next(iter(spec.submodule_search_locations)))
    path = root / "_static" / "nltk_cache" / "corpora" / "stopwords" / "english"
    return frozenset(w.strip() for w in path.read_text(encoding="utf-8").splitlines() if w.strip())


@functools.cache
def stopwords() -> frozenset[str]:
    """Words that carry no content for matching: NLTK's list and `PAPER_WORDS`."""
    return nltk_stopwords() | PAPER_WORDS


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """Character spans of the sentences of `text`; abbreviations like "e.g." and "et al." don't split."""
    spans, start = [], 0
    for m in _SENT_END.finditer(text):
        if _ABBREV.search(text[start : m.start()]):
            continue
        if text[start : m.start()].strip():
            spans.append((start, m.start()))
        start = m.end()
    if text[start:].strip():
        spans.append((start, len(text.rstrip())))
    return spans


@functools.cache
def _stemmer():
    import Stemmer  # PyStemmer, already used by the BM25 side

    return Stemmer.Stemmer("english")


@functools.lru_cache(maxsize=1 << 17)
def stem(w: str) -> str:
    """Lowercased Snowball stem; a token with a digit is kept as written ("l0", "7b"). Cached: a list stems
    the words of some 400 abstracts, most of them many times (0.5 s of a cold `rag list` uncached)."""
    w = w.lower()
    return w if any(c.isdigit() for c in w) else _stemmer().stemWord(w)


def content_words(text: str) -> set[str]:
    stop = stopwords()
    return {stem(w) for w in WORD.findall(text) if w.lower() not in stop and len(w) > 1}


def key_terms(text: str) -> set[str]:
    """Numbers and named methods (CamelCase, ALLCAPS, digits inside) that evidence must contain."""
    terms = set(NUMBER.findall(text))
    for w in re.findall(r"[A-Za-z][A-Za-z0-9\-]+", text):
        if (
            sum(ch.isupper() for ch in w) >= 2 or any(ch.isdigit() for ch in w)
        ) and w.lower() not in stopwords():
            terms.add(w.lower())
    return terms


_LINKS = r"(?:[\s\-]+(?:of|from|for|the|and|with|to|in|on|via|a|an|by))*[\s\-]+"


# prepositions NLTK's list lacks; with the stopwords, words no acronym's letter stands for
_PREPOSITIONS = frozenset(
    "beyond across within without towards toward among amongst along upon versus via".split()
)


@functools.lru_cache(maxsize=32)
def _not_function_word(c: str) -> str:
    words = sorted(
        w for w in (nltk_stopwords() - PAPER_WORDS) | _PREPOSITIONS if w.startswith(c) and w.isalpha()
    )
    return rf"(?!(?:{'|'.join(words)})(?![a-z0-9]))" if words else ""


@functools.lru_cache(maxsize=256)
def initials_pattern(term: str) -> re.Pattern | None:
    """An acronym's expansion: "rlhf" matches "reinforcement learning from human feedback"
    (linking words between the initials are skipped)."""
    if not (2 <= len(term) <= 6 and term.isalpha()):
        return None
    # an initial starts a content word: "information beyond the matrix" spells no "IBM"; inside a
    # hyphenated compound every part counts ("chain-of-thought" is "CoT", "out-of-distribution" "OOD"),
    # but the name does not start inside one ("state-of-the-art rlhf" spells no "TAR")
    first, part = "(?<!-)(?=[a-z]+-[a-z])", "(?:(?<=[a-z]-)|(?=[a-z]+-[a-z]))"
    body = _LINKS.join(
        f"(?:{_not_function_word(c)}|{first if i == 0 else part}){c}[a-z]*" for i, c in enumerate(term)
    )
    return re.compile(rf"(?<![a-z0-9]){body}(?![a-z0-9])")


def flatten(text: str) -> str:
    """Lowercase and drop LaTeX noise so `$(L_0,L_1)$` matches "L0, L1"."""
    return re.sub(r"[\\${}_^]", "", re.sub(r"\\[a-zA-Z]+", " ", text)).lower()


def unbraced(text: str) -> str:
    """A quoted sentence without the braces its abstract left unmatched outside math ("SRSA} (…)",
    "\\textblue{, with …"): a closer with no opener goes, and so does an opener never closed, with its command."""
    out, open_at, math = list(text), [], False
    for i, c in enumerate(text):
        if c == "$" and text[i - 1 : i] != "\\":
            math = not math
        elif math or text[i - 1 : i] == "\\":
            continue
        elif c == "{":
            open_at.append(i)
        elif c == "}":
            if open_at:
                open_at.pop()
            else:
                out[i] = ""
    for i in open_at:
        j = i
        while j > 0 and text[j - 1].isalpha():
            j -= 1
        if j > 0 and text[j - 1] == "\\":  # the command's backslash
            j -= 1
        out[j : i + 1] = [""] * (i + 1 - j)
    return " ".join("".join(out).split())


def negated(text: str) -> bool:
    """Whether a sentence states a negation ("does not", "no labels"; not "not only")."""
    return bool(_NEGATION.search(_NOT_NEGATION.sub(" ", text)))


def _one_edit(a: str, b: str) -> bool:
    """Whether a and b differ by one deleted, inserted or replaced letter, or two swapped neighbours."""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        diff = [i for i in range(len(a)) if a[i] != b[i]]
        return len(diff) == 1 or (
            len(diff) == 2
            and diff[1] == diff[0] + 1
            and a[diff[0]] == b[diff[1]]
            and a[diff[1]] == b[diff[0]]
        )
    short, long = sorted((a, b), key=len)
    return any(long[:i] + long[i + 1 :] == short for i in range(len(long)))


# function words NLTK's list lacks, which questions use ("whether LLMs can …")
FUNCTION_WORDS = frozenset("whether would could although though however without within across".split())


@functools.cache
def slip(word: str) -> bool:
    """A mistyped function word ("wheter", "wich", "teh"): one letter from a stopword of 3+ letters."""
    w = word.lower()
    words = stopwords() | FUNCTION_WORDS
    return len(w) >= 3 and w not in words and any(len(s) >= 3 and _one_edit(w, s) for s in words)


POSSESSIVE = re.compile(r"['’]s$")  # "Celcomen's": the name is "Celcomen"
# the conference every indexed paper is from: naming it selects nothing, and its words match only the few
# abstracts that cite a URL or a prior ICLR ("What does ICLR 2025 say about …" retrieved those)
VENUE = re.compile(
    r"(?:\b(?:at|in|from|of|to|for)\s+)?(?:\bthe\s+)?\bICLR(?:\s*['’\-]?\s*(?:20)?25)?(?:['’]s)?(?!\w)(?!\s*['’\-]?\s*\d)(?:\s+conference\b)?",
    re.I,
)


def without_venue(text: str) -> str:
    """The text without its mentions of ICLR 2025 ("Which ICLR 2025 papers …" -> "Which papers …"); the
    text as it was when nothing else is left."""
    out = re.sub(r"\s+([?.,;:!])", r"\1", " ".join(VENUE.sub(" ", text).split()))
    return out if re.search(r"[A-Za-z]{2}", out) else text


# words a question is polite with: a typo in one explains no refusal ("Thnaks")
COURTESY = frozenset("thanks thank thx please pls plz hello hi hey cheers regards kindly".split())


# QWERTY neighbours: a mistyped letter is usually one of the intended letter's
_KEYS = ("qwertyuiop", "asdfghjkl", "zxcvbnm")
_NEIGHBOURS = {
    c: {
        _KEYS[r2][j]
        for r2 in (r - 1, r, r + 1)
        if 0 <= r2 < 3
        for j in (i - 1, i, i + 1)
        if 0 <= j < len(_KEYS[r2]) and _KEYS[r2][j] != c
    }
    for r, row in enumerate(_KEYS)
    for i, c in enumerate(row)
}


def typo_of(typed: str, meant: str) -> bool:
    """Whether `typed` (lowercase) is `meant` (lowercase) with one slip of the fingers: two neighbours swapped,
    a letter left out, a letter doubled or a neighbouring key hit on the way, or a neighbouring key hit
    instead ("speculatve", "Celcomenn", "protien", "grokkng"); not any one edit ("imagen" is no typo of
    "image", "glide" none of "guide")."""
    if not _one_edit(typed, meant):
        return False
    if len(typed) == len(meant):  # two neighbours swapped, or one letter replaced by a neighbouring key
        diff = [i for i in range(len(typed)) if typed[i] != meant[i]]
        return len(diff) == 2 or typed[diff[0]] in _NEIGHBOURS.get(meant[diff[0]], ())
    if len(typed) < len(meant):  # a letter left out, anywhere
        return True
    for i in range(len(typed)):  # a letter added: the one before or after it, or a key next to one of them
        if typed[:i] + typed[i + 1 :] == meant:
            extra, around = typed[i], typed[max(0, i - 1) : i] + typed[i + 1 : i + 2]
            if any(extra == c or extra in _NEIGHBOURS.get(c, ()) for c in around):
                return True
    return False


class Spelling:
    """The words the abstracts write, for guessing what a word they never use was meant to be: how often
    each is used (lowercase), its most common written form ("QLoRA"), and the words by first letter and
    length, since a typo keeps the first letter ("Wizard" is not "Lizard") and the length within one."""

    def __init__(self, written: Counter):
        self.used: Counter = Counter()
        self.form: dict[str, str] = {}
        for f, n in written.most_common():  # most used form first: it is the one kept
            w = f.lower()
            self.used[w] += n
            self.form.setdefault(w, f)
        self._near: dict[tuple[str, int], list[str]] = {}
        for w in self.used:
            self._near.setdefault((w[:1], len(w)), []).append(w)
        self.guess = functools.lru_cache(maxsize=1024)(self._guess)  # this index's own cache

    def _guess(self, word: str) -> str | None:
        """The written form of the most used word `word` is a typo of ("difusion" -> "diffusion"), or None:
        for a short word (too many neighbours to guess), one with a digit (a version, not a typo), a word that
        is written, a guess written once only (in a small index an absent word's neighbour: "sheep", "steep"),
        a guess that adds a digit ("Gaudi" is not "Gaudi2"), a capitalised word whose guess is written with
        another number of capitals ("Quora" is not "QLoRA"), or a lowercase one whose guess is written with
        several ("dolma" is not "DoLa")."""
        w = word.lower()
        if len(w) < 5 or w in self.used or any(c.isdigit() for c in w):
            return None
        near = [
            v
            for n in (len(w) - 1, len(w), len(w) + 1)
            for v in self._near.get((w[0], n), ())
            if self.used[v] > 1 and not any(c.isdigit() for c in v) and typo_of(w, v)
        ]
        caps = sum(c.isupper() for c in word)
        near = [v for v in near if _fits_capitals(caps, sum(c.isupper() for c in self.form[v]))]
        best = max(near, key=lambda v: (self.used[v], v), default=None)
        return self.form[best] if best else None


def _fits_capitals(typed: int, written: int) -> bool:
    """A typed name keeps its number of capitals; a lowercase word is no typo of an acronym-like name."""
    return written == typed if typed else written < 2


def retyped(text: str, typos: dict[str, str]) -> str:
    """The text with each mistyped word (whole words, as typed) replaced by the word it meant."""
    for wrong, right in typos.items():
        text = re.sub(rf"(?<![\w-]){re.escape(wrong)}(?![\w-])", lambda _, r=right: r, text)
    return text
