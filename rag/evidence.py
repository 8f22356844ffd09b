"""Evidence before generation: every sentence of the retrieved papers scored against the question.

One evidence model serves every stage: the generator sees only the selected sentences (numbered and
grouped by paper), the support judge verifies claims against the same sentences, refusal reads their
scores, and citations point at them (with character offsets into the abstract).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from rag.cite import Evidence, Judge, markers_inside, split_markers
from rag.names import form_words, named_terms
from rag.text import content_words, sentence_spans
from rag.types import Answer, Citation, Hit, Sentence

# A sentence that leans on the one before it ("It reaches …", "These results …") needs it as context.
_ANAPHOR = re.compile(
    r"^(it|its|this|these|they|their|such|those|that|the (proposed|resulting|latter))\b", re.I
)


@dataclass
class EvidenceSet:
    """The evidence for one question: selected sentences of the papers at 1-based positions `n`."""

    question: str
    hits: list[Hit]
    items: list[Evidence] = field(default_factory=list)  # selected, grouped by paper, reading order
    best: dict[int, float] = field(default_factory=dict)  # paper position -> its best sentence's score
    every: list[Evidence] = field(default_factory=list)  # every sentence scored, selected or not

    def papers(self) -> list[int]:
        """Positions of the papers with evidence, most relevant first."""
        return sorted({e.paper_n for e in self.items}, key=lambda n: -self.best.get(n, 0.0))

    def of(self, n: int) -> list[Evidence]:
        return [e for e in self.items if e.paper_n == n]

    def top(self, n: int) -> Evidence | None:
        """The paper's highest-scoring selected sentence."""
        own = self.of(n)
        return max(own, key=lambda e: e.score) if own else None

    def restrict(self, positions: set[int]) -> EvidenceSet:
        keep = [e for e in self.items if e.paper_n in positions]
        return EvidenceSet(
            self.question,
            self.hits,
            keep,
            {n: s for n, s in self.best.items() if n in positions},
            [e for e in self.every if e.paper_n in positions],
        )

    @property
    def max_score(self) -> float:
        return max(self.best.values(), default=0.0)


def select(
    question: str,
    hits: list[Hit],
    judge: Judge,
    per_paper: int = 3,
    share: float = 0.7,
    neighbours: bool = True,
) -> EvidenceSet:
    """Score every sentence of `hits` against the question; keep per paper the best `per_paper`
    sentences within `share` of that paper's best, plus the sentence before one that starts with an
    anaphor ("It …", "These …")."""
    every = judge.evidence(hits)
    out = EvidenceSet(question, hits, every=every)
    if not every:
        return out
    scores = judge.scores(question, every)
    for e, s in zip(every, scores):
        e.score = float(s)
    by_paper: dict[int, list[int]] = {}
    for i, e in enumerate(every):
        by_paper.setdefault(e.paper_n, []).append(i)
    chosen: set[int] = set()
    for n, idx in by_paper.items():
        ranked = sorted(idx, key=lambda i: -scores[i])
        best = float(scores[ranked[0]])
        out.best[n] = best
        picked = [i for i in ranked[:per_paper] if scores[i] >= share * best] or ranked[:1]
        chosen.update(picked)
        if neighbours:
            for i in picked:
                if _ANAPHOR.match(every[i].text) and i - 1 in idx:
                    chosen.add(i - 1)
    out.items = [every[i] for i in sorted(chosen, key=lambda i: (every[i].paper_n, every[i].start))]
    return out


def paper_scores(evset: EvidenceSet) -> np.ndarray:
    """Best evidence score per paper position (0 for papers without evidence), position order."""
    return np.array([evset.best.get(n, 0.0) for n in range(1, len(evset.hits) + 1)])


def blocks(evset: EvidenceSet, positions: list[int] | None = None) -> str:
    """The evidence as the generator sees it: numbered by source position, grouped by paper."""
    parts = []
    for n in positions or evset.papers():
        own = evset.of(n)
        if not own:
            continue
        title = (evset.hits[n - 1].paper.title or evset.hits[n - 1].paper.label).replace("\n", " ")
        lines = "\n".join(f"- {e.text}" for e in own)
        parts.append(f"[{n}] {title}\n{lines}")
    return "\n\n".join(parts)


def quoted_lines(evset: EvidenceSet, positions: list[int], per_paper: int = 1) -> tuple[list[str], list]:
    """One line per paper: its title and best evidence sentence(s), cited by source number.
    Returns (lines, [(position, [Evidence])])."""
    lines, used = [], []
    for n in positions:
        own = sorted(evset.of(n), key=lambda e: -e.score)[:per_paper]
        if not own:
            continue
        own.sort(key=lambda e: e.start)
        title = evset.hits[n - 1].paper.label
        lines.append(f"{title}: " + " ".join(e.text.strip() for e in own) + f" [{n}]")
        used.append((n, own))
    return lines, used


def quoted_answer(question, header, lines, used, hits, **kw) -> Answer:
    """An Answer made of quoted evidence lines (each supported by construction)."""
    sentences, citations = [], []
    for line, (n, own) in zip(lines, used):
        sentences.append(Sentence(line.rsplit(" [", 1)[0], [n], True, round(max(e.score for e in own), 4)))
        best = max(own, key=lambda e: e.score)
        p = best.hit.paper
        citations.append(
            Citation(
                n,
                p.paper_id,
                p.title,
                p.source_file,
                p.index,
                best.text,
                best.start,
                best.end,
                sorted((e.start, e.end) for e in own),
            )
        )
    text = "\n".join([header, *lines]) if header else "\n".join(lines)
    return Answer(question, text, citations, sentences, hits, **kw)


_LEAD_MARKER = re.compile(r"(?m)^\s*[-*•]?\s*\[(\d+)\]\s*[:.\-–—]?\s*")
_BULLET = re.compile(r"\s+[-–—•]\s+(?=[A-Z0-9$\\(])|\n\s*[-*•]\s+")


def normalize_draft(raw: str, evset: EvidenceSet) -> str:
    """A draft that copies the evidence layout ("[1] Title - sentence - sentence") back into
    cited sentences ("sentence [1]. sentence [1]."), so the judge sees the claims, not the layout.
    Drafts written as prose pass through unchanged."""
    if not _LEAD_MARKER.search(raw):
        return drop_non_claims(raw, evset)
    titles = {n: (evset.hits[n - 1].paper.title or "").strip() for n in range(1, len(evset.hits) + 1)}
    out = []
    pieces = _LEAD_MARKER.split(raw)  # [before, n, text, n, text, ...]
    if pieces[0].strip() and not _LAYOUT_LABEL.match(pieces[0]):
        out.append(pieces[0].strip())
    for num, text in zip(pieces[1::2], pieces[2::2]):
        n, text = int(num), text.strip()
        title = titles.get(n, "")
        if title and text.lower().startswith(title.lower()):
            text = text[len(title) :].lstrip(" :.-–—")
        for part in _BULLET.split(text):
            part = part.strip().rstrip(".")
            if part:
                out.append(f"{part} [{n}].")
    return drop_non_claims(" ".join(out), evset)


_LAYOUT_LABEL = re.compile(r"^\s*(evidence|question|contrast|answer|sources?)\s*:?\s*$", re.I)
_LAYOUT_PREFIX = re.compile(r"^\s*(evidence|question|contrast|answer|sources?)\s*:\s*", re.I)
# A sentence that stops on one of these was cut off ("In this paper, we argue that.").
_DANGLING = re.compile(r"\b(that|the|a|an|of|and|or|to|with|which|whose|than|as|by|is|are)\W*$", re.I)


def _bare(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", " ", text.lower()).strip()


def drop_non_claims(draft: str, evset: EvidenceSet) -> str:
    """The draft without sentences that state nothing: an echoed layout label ("Evidence:"), a paper's
    title on its own (after such a label too), or a sentence cut off on a function word; a sentence cut
    off inside math it opened ("…, and up to $\\text.") keeps its clauses before the cut."""
    titles = {_bare(h.paper.title) for h in evset.hits if h.paper.title}
    kept = []
    draft = markers_inside(draft)  # each marker stays with its sentence, kept or dropped
    for a, b in sentence_spans(draft):
        sent = draft[a:b].strip()
        text, nums = split_markers(sent)
        text = text.strip().rstrip(".")
        dollars = [m.start() for m in re.finditer(r"(?<!\\)\$", text)]
        # an unclosed math span ("$\\text", "$x"; "$600" and "US$ 5" are prices): the copy stopped mid-formula
        after = text[dollars[-1] + 1 : dollars[-1] + 2] if dollars else ""
        if len(dollars) % 2 and (after == "\\" or after.isalpha()):
            head = text[: dollars[-1]]
            cut = max(head.rfind(","), head.rfind(";"))
            text = head[:cut].rstrip() if cut > 0 else ""
            sent = f"{text} " + "".join(f"[{n}]" for n in dict.fromkeys(nums)) + "." if text else ""
        label = _LAYOUT_PREFIX.sub("", text)
        if not text or _LAYOUT_LABEL.match(text) or _bare(label) in titles or _DANGLING.search(text):
            continue
        kept.append(sent.strip())
    return " ".join(kept)


def titles_only(raw: str, evset: EvidenceSet) -> bool:
    """Whether a draft says nothing but source numbers and paper titles ("[1] Title")."""
    rest = _LEAD_MARKER.sub(" ", raw)
    for h in evset.hits:
        if h.paper.title:
            rest = re.sub(re.escape(h.paper.title.strip()), " ", rest, flags=re.I)
    return bool(raw.strip()) and not re.search(r"[A-Za-z0-9]{2,}", re.sub(r"\[\d+\]", " ", rest))


def completion(
    question: str,
    answer: str,
    evset: EvidenceSet,
    cited: set[int],
    share: float,
    max_add: int,
    said_overlap: float = 0.6,
) -> list[Evidence]:
    """Sentences of the cited papers that state what the question asks and the answer left out (the
    second part of a two-part question, a number the draft paraphrased away): up to `max_add`, each
    covering the most question words still missing, among the sentences within `share` of their
    paper's best score and not already said (`said_overlap` of their words in the answer)."""
    said = content_words(answer)
    for n in cited:  # the citation names the paper: its title's words are said
        said |= content_words(evset.hits[n - 1].paper.title or "")
    # names ("Celcomen", "ScanNet") say which paper is meant, which the citation settles; the rest is
    # what is asked about it
    subject = content_words(" ".join(named_terms(question)))
    missing = content_words(question) - said - subject - form_words()
    pool = [
        (e, content_words(e.text))
        for e in evset.every
        if e.paper_n in cited and e.score >= share * evset.best.get(e.paper_n, 0.0)
    ]
    out: list[Evidence] = []
    while missing and len(out) < max_add:
        best, key = None, (0, 0.0)
        for i, (e, own) in enumerate(pool):
            if not own or len(own & said) >= said_overlap * len(own):  # the answer already says it
                continue
            k = (len(own & missing), e.score)
            if k[0] and k > key:
                best, key = i, k
        if best is None:
            break
        e, own = pool.pop(best)
        out.append(e)
        missing -= own
        said |= own
    return sorted(out, key=lambda e: (e.paper_n, e.start))
