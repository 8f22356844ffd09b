"""An independent check of cited sentences, written apart from the product's judge (rag.grounding.cite): what a
reader would see as broken in a sentence shown with a citation.

A cited sentence is defective when it is
- a fragment: it starts in the middle of a clause (a lowercase word, a closing bracket or punctuation),
  or ends on a function word or without closing its brackets, quotes or math;
- repetitive: a run of five words, two of them content words, appears twice in it, more often than in what
  it cites (a title leading it is a label);
- not contained in what it cites: a number, or a word in capitals or with a digit, that the cited
  abstract sentences (and the paper's title) don't contain, or more than a fifth of its content words
  absent from them.
Only numpy-free standard library here; stopwords are NLTK's list, as in eval/metrics.py.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

from eval.metrics import nltk_stopwords

_TOKEN = re.compile(r"[^\W_]+(?:[.\-][^\W_]+)*", re.UNICODE)
_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_MARKER = re.compile(r"\s*\[\d+(?:\s*[,;]\s*\d+)*\]")
_ENDS_ON = frozenset("the a an of and or with which that than by".split())
_ENUM = re.compile(
    r"(?<![\w(.])(?:\d{1,2}|[ivx]{1,4}|[a-h])\)"
)  # "1) …, 2) …": an enumeration, not a bracket
_MATH = re.compile(r"(?<!\\)\$[^$]*\$")
_PAIRS = (("(", ")"), ("[", "]"), ("{", "}"))


def _stem(w: str) -> str:
    """A crude, independent stem: lowercase, common English endings off."""
    w = w.lower()
    for end in ("ations", "ation", "ings", "ing", "ies", "ed", "es", "s", "ly"):
        if len(w) > len(end) + 3 and w.endswith(end):
            return w[: -len(end)]
    return w


def _words(text: str) -> list[str]:
    return [t for t in _TOKEN.findall(text)]


def fragment(sentence: str, labels: Sequence[str] = ()) -> str | None:
    """Why the sentence reads as a fragment, or None. `labels`: paper titles that may lead it ("Title: …")."""
    s = _MARKER.sub("", sentence).strip()
    for label in labels:
        if label and s.startswith(f"{label}: "):
            s = s[len(label) + 2 :]
    if not s:
        return "empty"
    first = s[0]
    if first.islower() and not re.match(r"[a-z]+[A-Z0-9]", s):  # "mRNA", "xLSTM" start lowercase by name
        return "starts mid-clause"
    if first in ",.;:)]}" or s.startswith(("and ", "or ", "but ")):
        return "starts mid-clause"
    words = [w.lower() for w in _words(s)]
    if len(words) < 3:
        return "too short"
    if words[-1] in _ENDS_ON and not s.endswith(("?", "!")):
        return "cut off"
    bare = _MATH.sub(" ", s)
    listed = _ENUM.sub(" ", bare)  # "1) …, 2) …" is an enumeration; "(…, Pass@64)" a balanced bracket
    for a, b in _PAIRS:
        if bare.count(a) != bare.count(b) and listed.count(a) != listed.count(b):
            return "unbalanced brackets"
    if len(re.findall(r"(?<!\\)\$", s)) % 2:
        return "unclosed math"
    return None


def _grams(text: str, n: int) -> list[tuple[str, ...]]:
    """The text's runs of `n` words with two content words or more."""
    stop = nltk_stopwords()
    words = [w.lower() for w in _words(_MATH.sub(" ", _MARKER.sub("", text)))]
    grams = [tuple(words[i : i + n]) for i in range(len(words) - n + 1)]
    return [g for g in grams if sum(w not in stop and not w.isdigit() for w in g) >= 2]


def repeated(sentence: str, n: int = 5, source: str = "", labels: Sequence[str] = ()) -> bool:
    """A run of `n` words, two of them content words, that appears twice, more often than in `source` (an
    abstract that repeats itself is quoted as written). A title leading the sentence is a label, not a repeat."""
    s = _MARKER.sub("", sentence).strip()
    for label in labels:
        if label and s.startswith(f"{label}: "):
            s = s[len(label) + 2 :]
    grams, had = Counter(_grams(s, n)), Counter(_grams(source, n))
    return any(k > 1 and k > had[g] for g, k in grams.items())


def uncontained(sentence: str, cited: Sequence[str]) -> str | None:
    """What of the sentence the cited text lacks (a number, a name, too many words), or None."""
    s = _MARKER.sub("", sentence)
    source = " ".join(cited)
    nums = set(_NUMBER.findall(source))
    for n in _NUMBER.findall(s):
        if n not in nums:
            return f"number {n}"
    have_raw = {w.lower() for w in _words(source)}
    have = {_stem(w) for w in have_raw}
    for w in _words(s):
        named = sum(c.isupper() for c in w) >= 2 or (
            any(c.isdigit() for c in w) and any(c.isalpha() for c in w)
        )
        if named and w.lower() not in have_raw and _stem(w) not in have:
            return f"name {w}"
    stop = nltk_stopwords()
    content = {_stem(w) for w in _words(s) if w.lower() not in stop and not w.isdigit() and len(w) > 2}
    if content and len(content - have) / len(content) > 0.2:
        return "words not in the source"
    return None


def defects(sentence: str, cited: Sequence[str], labels: Sequence[str] = ()) -> list[str]:
    """Every defect of one cited sentence ([] when clean); `labels`: titles that may lead it."""
    out = []
    why = fragment(sentence, labels)
    if why:
        out.append(f"fragment: {why}")
    if repeated(sentence, source=" ".join(cited), labels=labels):
        out.append("repeated run")
    why = uncontained(sentence, cited)
    if why:
        out.append(f"not in source: {why}")
    return out


def answer_defects(row: dict) -> list[dict]:
    """The defective cited sentences of one eval row ({"text", "defects"}). A sentence's source is the
    abstract sentences its spans point at, and its cited papers' titles (`row["sources"]`)."""
    sources = {int(k): v for k, v in (row.get("sources") or {}).items()}
    out = []
    for s in row.get("sentences") or []:
        if not s.get("citations"):
            continue
        cited = [sources[n]["title"] or "" for n in s["citations"] if n in sources]
        cited += [sources[n]["text"][a:b] for n, a, b in s.get("spans") or [] if n in sources]
        if not s.get("spans"):  # no sentence named: the whole cited abstract
            cited += [sources[n]["text"] for n in s["citations"] if n in sources]
        titles = [sources[n]["title"] or "" for n in s["citations"] if n in sources]
        found = defects(s["text"], cited, titles)
        if found:
            out.append({"text": s["text"], "defects": found})
    return out
