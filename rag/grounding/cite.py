"""Grounding: split sentences -> support judge -> bind/verify [n] -> citations with offsets.

The judge is model-free apart from the packaged embedder: cosine similarity blended with lexical
overlap of content words, and a hard rule that numbers and named methods in a claim must appear
in the evidence. Thresholds live in Settings and are calibrated on eval/data/questions.jsonl.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from rag.text import INJECTION, NUMBER, content_words, flatten, key_terms, negated, sentence_spans, stem
from rag.types import Citation, Hit, Sentence

_TRAILING_MARKERS = re.compile(r"([.!?])((?:\s*\[\d+(?:\s*[,;]\s*\d+)*\])+)")


def markers_inside(text: str) -> str:
    """'Claim. [1] Next.' -> 'Claim [1]. Next.': a marker written after the stop belongs to the sentence
    before it, and a sentence splitter would hand it to the next one."""
    return _TRAILING_MARKERS.sub(r"\2\1", text)


_ECHOED_TAGS = re.compile(r"</?abstract[^>]*>")
_MARKER = re.compile(r"\s*\[(\d+(?:\s*[,;]\s*\d+)*)\]")


def split_markers(sentence: str) -> tuple[str, list[int]]:
    """'Foo bar [1][3].' -> ('Foo bar.', [1, 3])."""
    nums = [int(n) for m in _MARKER.finditer(sentence) for n in re.split(r"[,;]\s*", m.group(1))]
    clean = _MARKER.sub("", sentence).strip()
    clean = re.sub(r"\s+([.,;:!?])", r"\1", clean)
    return clean, nums


@dataclass
class Evidence:
    paper_n: int  # 1-based position of the paper among the sources
    hit: Hit
    start: int
    end: int
    text: str
    words: set[str]
    vec: np.ndarray
    score: float = 0.0  # relevance to the question, set by rag.grounding.evidence.select
    names: frozenset[str] = field(init=False)  # what a claim's numbers and named methods may match

    def __post_init__(self):  # as written, stemmed, and with LaTeX flattened ("$(L_0,L_1)$" names L0, L1)
        flat = re.findall(r"[a-z0-9][a-z0-9\-]*", flatten(self.text))
        self.names = frozenset(
            {stem(w) for w in self.words}
            | {w.lower() for w in self.words}
            | set(NUMBER.findall(self.text))
            | set(flat)
        )


def blend(cos: float, lex: float, cos_weight: float) -> float:
    """The judge's score: embedding cosine (negatives as 0) blended with content-word overlap."""
    return cos_weight * max(0.0, cos) + (1 - cos_weight) * lex


class Judge:
    """Scores how well an evidence sentence supports a claim, in [0, 1]."""

    def __init__(self, embedder, cos_weight: float = 0.5, penalty: float = 0.5):
        self.embedder = embedder
        self.cos_weight = cos_weight  # the rest of the score is content-word overlap
        self.penalty = penalty  # factor for a missing number/name or an opposite negation
        self._cache: dict[str, np.ndarray] = {}

    def vectors(self, texts: list[str]) -> np.ndarray:
        missing = [t for t in dict.fromkeys(texts) if t not in self._cache]
        if missing:
            for t, v in zip(missing, self.embedder.encode(missing)):
                self._cache[t] = np.asarray(v, dtype=np.float32)
            if len(self._cache) > 50_000:
                self._cache.clear()
        return np.stack([self._cache[t] for t in texts]) if texts else np.zeros((0, 1), np.float32)

    def evidence(self, hits: list[Hit]) -> list[Evidence]:
        items = []
        for n, h in enumerate(hits, start=1):
            for a, b in sentence_spans(h.paper.text):
                if not INJECTION.search(h.paper.text[a:b]):
                    items.append((n, h, a, b, h.paper.text[a:b]))
        vecs = self.vectors([t for *_, t in items])
        # a sentence is read in the context of its paper: "it" in the abstract is the titled method
        titles = {n: content_words(h.paper.title or "") for n, h in enumerate(hits, start=1)}
        return [
            Evidence(n, h, a, b, t, content_words(t) | titles[n], v)
            for (n, h, a, b, t), v in zip(items, vecs)
        ]

    def scores(self, claim: str, evidence: list[Evidence], polarity: bool = False) -> np.ndarray:
        """Support score of `claim` against every evidence sentence. `polarity`: for answer
        sentences, a claim whose negation differs from the evidence's is not supported by it
        (questions are not claims: "Does X need labels?" is answered by "X does not")."""
        if not evidence:
            return np.zeros(0)
        cvec = self.vectors([claim])[0]
        cos = np.stack([e.vec for e in evidence]) @ cvec
        words = content_words(claim)
        terms = key_terms(claim)
        neg = polarity and negated(claim)
        out = np.empty(len(evidence))
        for i, e in enumerate(evidence):
            lex = len(words & e.words) / len(words) if words else 0.0
            s = blend(float(cos[i]), lex, self.cos_weight)
            if terms and not terms <= e.names:
                s *= self.penalty  # a number or named method the evidence lacks: not this sentence's claim
            if polarity and neg != negated(e.text):
                s *= self.penalty  # one of them denies what the other states: shared words, opposite claims
            out[i] = s
        return out


def as_evidence(source: list, judge: Judge) -> list[Evidence]:
    """Evidence sentences as given, or every sentence of a list of hits."""
    return judge.evidence(source) if source and isinstance(source[0], Hit) else list(source)


def bind(answer_text: str, source: list, judge: Judge, threshold: float, drop_unsupported: bool = False):
    """Verify each answer sentence against the evidence and bind its citations to the sources that
    support it. Markers keep their source numbers (stable while streaming).

    Returns (answer text with verified markers, sentences, citations).
    """
    evidence = as_evidence(source, judge)
    answer_text = markers_inside(answer_text)
    pieces = [answer_text[a:b] for a, b in sentence_spans(answer_text)]
    numbering: dict[int, int] = {}  # source position -> [n] shown (the same number)
    best_for: dict[int, tuple[float, Evidence]] = {}
    spans_for: dict[int, set[tuple[int, int]]] = {}
    sentences: list[Sentence] = []
    seen: set[str] = set()
    for piece in pieces:
        text, cited = split_markers(_ECHOED_TAGS.sub("", piece))
        if not text or not re.search(r"[A-Za-z]", text) or text.lower() in seen:
            continue  # empty, marker-only, or a repeat from a looping model
        seen.add(text.lower())
        # fewer than three content words is not a checkable claim ("PWNED.", "Yes.")
        sc = (
            judge.scores(text, evidence, polarity=True)
            if len(content_words(text)) >= 3
            else np.zeros(len(evidence))
        )
        per_paper: dict[int, tuple[float, Evidence]] = {}
        for s, e in zip(sc, evidence):
            if s > per_paper.get(e.paper_n, (-1.0, None))[0]:
                per_paper[e.paper_n] = (float(s), e)
        top = max((v[0] for v in per_paper.values()), default=0.0)
        supporting = {n for n, (s, _) in per_paper.items() if s >= threshold}
        keep = [n for n in dict.fromkeys(cited) if n in supporting]
        if supporting and not keep:  # wrong or missing marker: re-attribute to the best source
            keep = [max(supporting, key=lambda n: per_paper[n][0])]
        if not supporting and drop_unsupported:
            continue
        final, spans = [], []
        for n in keep:
            numbering.setdefault(n, n)
            final.append(numbering[n])
            s, e = per_paper[n]
            spans.append((n, e.start, e.end))
            spans_for.setdefault(n, set()).add((e.start, e.end))
            if s > best_for.get(n, (-1.0, None))[0]:
                best_for[n] = (s, e)
        sentences.append(Sentence(text, final, bool(supporting), round(top, 4), spans=spans))

    citations = []
    for n, final_n in sorted(numbering.items(), key=lambda kv: kv[1]):
        _, e = best_for[n]
        p = e.hit.paper
        citations.append(
            Citation(
                final_n,
                p.paper_id,
                p.title,
                p.source_file,
                p.index,
                e.text,
                e.start,
                e.end,
                sorted(spans_for[n]),
            )
        )
    return render(sentences), sentences, citations


def render(sentences: list[Sentence]) -> str:
    return " ".join(s.text + "".join(f" [{n}]" for n in s.citations) for s in sentences).strip()


# words a faithful rewording may add or drop without adding a claim
_CONNECTIVES = frozenset(
    stem(w)
    for w in "paper propose proposes introduce introduces present presents use uses show shows method "
    "approach work study author authors also new based".split()
)
_FUNCTION_END = frozenset("the a an of and or to with which that than as by is are for in on from".split())


def clean_claim(text: str, evidence: list[str]) -> bool:
    """Whether a generated sentence may be shown cited: well formed (a capital or digit first, no word run
    repeated, not cut off on a function word) and contained in its evidence (every number and name, and all
    its content words but a connective or two, are in the sentences it cites)."""
    toks = re.findall(r"[A-Za-z0-9]+", text.lower())
    if not text[:1].isupper() and not text[:1].isdigit() or len(toks) < 4 or toks[-1] in _FUNCTION_END:
        return False
    grams = [tuple(toks[i : i + 3]) for i in range(len(toks) - 2)]
    if len(grams) != len(set(grams)):
        return False
    source = " ".join(evidence)
    have = content_words(source)
    names = set(NUMBER.findall(source)) | {w.lower() for w in re.findall(r"[A-Za-z][A-Za-z0-9\-]+", source)}
    if not key_terms(text) <= names | {stem(w) for w in have}:
        return False
    words = content_words(text) - _CONNECTIVES
    return len(words - have) <= max(0, len(words) // 8)


def relevance(question: str, hits: list[Hit], judge: Judge) -> float:
    """How well the best evidence sentence of these papers matches the question."""
    evidence = judge.evidence(hits)
    return float(judge.scores(question, evidence).max()) if evidence else 0.0
