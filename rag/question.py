"""What a question asks and which sources it is about: named terms, answerability (refusal), focus.

Everything here compares the question with the retrieved sources; nothing is generated. Rare words
are weighted by the corpus's own inverse document frequency (the BM25 side's statistics).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable

import numpy as np

from rag.answer_type import asks_code, choice_options, states_code, unnamed_entity, without_guesses
from rag.cite import Judge
from rag.gaps import not_in_paper
from rag.hygiene import validate_question
from rag.names import (
    QWORDS,
    alternatives,
    domain_words,
    domains,
    joined,
    mentions,
    name_runs,
    named_terms,
    swapped_variant,
)
from rag.prompts import NEVER_MENTIONED, NO_CODE, NO_NUMBER, NOT_IN_ONE, SWAPPED, UNNAMED, not_in_paper_reason
from rag.quantity import (
    asks_quantity,
    measured_on,
    names_measure,
    quantity_heads,
    quantity_phrase,
    states_quantity,
)
from rag.text import Idf, content_words, flatten, stem
from rag.types import Hit

COMPARE = re.compile(
    r"\b(both|compare[ds]?|comparison|contrast|differ|difference|versus|vs\.?|between|each)\b", re.I
)
WHICH = re.compile(
    r"^\s*(which|what) (paper|work|study|article|abstract)s?\b( in (this|the) collection)?|"
    r"^\s*(is there|are there|does any|do any) (a |any )?(paper|work|study|abstract)s?\b",
    re.I,
)
# Where a question with several parts starts the next ("..., and how many ...", "...; what ...")
_CLAUSE = re.compile(
    r",?\s+and\s+(?=(?:how|what|which|who|when|where|why|do|does|did|is|are|was|were|on|in)\b)|[;?]\s+", re.I
)
# Questions about several papers ("summarize the papers", "what do the RL works propose") may cite
# every source close to the best; "which one" questions want the single best.
_BROAD = re.compile(r"\b(papers|works|studies|summari[sz]e|overview|collection)\b", re.I)
# "Compare A and B", "How do A and B compare?" ask for several papers; "how did they compare with
# vision-only models?" and "a metric to compare methods" are about one.
_BROAD_COMPARE = re.compile(
    r"(?:^|[.?!:;]\s+)\W*(?:please\s+)?(?:compare|contrast)\b|"
    r"\bhow\s+do\s+(?!(?:they|their|these|those|the\s+authors)\b)[^?.]*\bcompare\b",
    re.I,
)
SINGLE = re.compile(r"\bwhich (one|of)\b", re.I)


def check_question(question: str, max_chars: int) -> str:
    """The question cleaned of terminal escapes and control characters, whitespace collapsed, or a
    UserError saying what to fix."""
    return " ".join(validate_question(question, max_chars).split())


def _source_texts(hits: list[Hit]) -> list[str]:
    return [flatten(f"{h.paper.title or ''} {h.paper.text}") for h in hits]


def idf_coverage(words: set[str], hits: list[Hit], idf: Idf | None) -> float:
    """The best single source's share of the question's words, each weighted by its rarity."""
    if not words:
        return 1.0
    weight = {w: (idf(w) if idf else 1.0) for w in words}
    total = sum(weight.values()) or 1.0
    return max(sum(weight[w] for w in words & h.paper.words) / total for h in hits)


def answerability(
    question: str,
    hits: list[Hit],
    judge: Judge,
    idf: Idf | None = None,
    asked: str | None = None,
    window: int = 5,
    variant_share: float | None = None,
    asked_gap: tuple[float, float] | None = None,
    cover_margin: float = 1.0,
) -> tuple[float, str]:
    """(score, reason). Zero when the sources lack a name the question asks about (all in one
    paper unless the question compares papers), or a kind of data it names (rag.names.DOMAINS); when
    the paper asked about is on a swapped variant of what the question names (rag.names.swapped_variant;
    `variant_share`, None: not checked), or a follow-up asks the paper about something it never mentions
    (`asked_gap`, see `not_in_paper`), or code is asked for and that paper states no release; for
    "which paper" questions, the IDF-weighted share of the described words the best abstract covers;
    for quantity questions, the best evidence sentence that states a new number next to the thing asked (rag.quantity); zero for questions
    after a kind of named thing (a simulator, an LLM) that the sentences about it never name; else
    the best sentence-level relevance.

    The paper asked about is the one a name singles out, else the one `best_covered` picks for a question
    read alone (`cover_margin`, as `focus` reads it; 1.0: the top-ranked).

    `question` is the standalone question (relevance); `asked`, the user's own words (default: the
    same): names, quantities and "which" are read from those, so an earlier turn pulled in for
    context never adds a name the sources must contain."""
    if not hits:
        return 0.0, "nothing retrieved"
    texts = _source_texts(hits)
    question = without_guesses(question)
    own = without_guesses(asked) if asked else question
    terms = named_terms(own)
    groups = alternatives(own, terms)  # "A or B": one of them named is enough
    named = {t for t in terms if any(mentions(x, t) for x in texts)}
    missing = sorted(t for g in groups if not g & named for t in g)
    if missing:
        return 0.0, NEVER_MENTIONED + ", ".join(missing)
    # several names are one paper's unless the question compares papers; a number is stated by one
    # abstract, so "what accuracy does X reach compared with DeiT-S, and on which datasets?" compares
    # only when it says "Compare A and B" or joins two of the names
    several = (
        _BROAD_COMPARE.search(own) or joined(own, terms, groups)
        if asks_quantity(own)
        else COMPARE.search(own) or " and " in own
    )
    # … with one option of each "A or B" in that paper
    if (
        len(groups) > 1
        and not several
        and not any(all(any(mentions(x, t) for t in g) for g in groups) for x in texts)
    ):
        return 0.0, NOT_IN_ONE + ", ".join(sorted(terms))
    # "…, visium or xenium?": an answer picks an option some source names
    options = choice_options(own)  # an option counts as named when a source names any of its words
    if options and not any(mentions(x, flatten(w)) for x in texts for o in options for w in o):
        return 0.0, NEVER_MENTIONED + " or ".join(" ".join(o) for o in options)
    about = term_focus(question, hits)
    if not about and question == own:  # the paper asked about is the one an answer cites (`focus`)
        k = best_covered(question, hits, cover_margin)
        about = {k} if k != 1 else about
    which = WHICH.search(own)  # "which paper …": a paper is asked for, not a number or a name
    top = hits[min(about) - 1] if about else hits[0]
    swapped = variant_share is not None and swapped_variant(
        own, f"{top.paper.title or ''} {top.paper.text}", variant_share
    )
    if swapped and not any(mentions(x, swapped[0].lower()) for x in texts):
        return 0.0, f"{SWAPPED}{swapped[1]}, not {swapped[0]}"
    # a kind of data the question names ("for speech recognition") that no source says a word of
    asked_kinds = domain_words(own)
    if asked_kinds:
        have = set().union(*(domains(x) for x in texts))
        absent = sorted(w for k, w in asked_kinds.items() if k not in have)
        if absent:
            return 0.0, NEVER_MENTIONED + ", ".join(absent)
    if asked_gap and question != own and not which:
        gap = not_in_paper(own, question[len(own) :], top, hits, idf, *asked_gap)
        if gap:
            return 0.0, not_in_paper_reason(top.paper.label, gap)
    # the text-only checks above come before scoring every sentence
    evidence = judge.evidence(hits)
    sc = judge.scores(question, evidence)
    if (
        asks_code(own)
        and not which
        and not any(states_code(e.text) for e in evidence if e.paper_n in (about or {1}))
    ):
        return 0.0, NO_CODE
    if asks_quantity(own) and not which:
        heads = quantity_heads(own)
        if names_measure(heads):  # "what gains … on KAIST?": the number stated next to KAIST
            heads |= {stem(t) for t in named_terms(measured_on(own))}
        # "How much data was it trained on, and do its likelihoods track binding?": the number answers
        # its own clause, which the whole question's relevance dilutes
        context = question[len(own) :] if question.startswith(own) else ""
        part = [c for c in _CLAUSE.split(own) if asks_quantity(c)]
        alone = judge.scores(part[0] + context, evidence) if part and part[0] != own else sc
        numeric = [
            max(x, y)
            for x, y, e in zip(sc, alone, evidence)
            if (not about or e.paper_n in about) and states_quantity(e.text, heads, own, window)
        ]
        if not numeric:
            return 0.0, NO_NUMBER + (quantity_phrase(own) or "what is asked")
        return max(numeric), "quantity asked: best evidence stating a quantity of what was asked"
    best = float(sc.max()) if len(sc) else 0.0
    if which:
        words = content_words(WHICH.sub("", own)) - QWORDS
        return min(best, idf_coverage(words, hits, idf)), "which-paper question: rarity-weighted coverage"
    # names are looked for in the paper the question is about (the top one unless its terms say)
    talk = [(e.text, hits[e.paper_n - 1].paper.title or "") for e in evidence if e.paper_n in (about or {1})]
    head = unnamed_entity(own, talk)
    if head:
        return 0.0, UNNAMED + head
    return best, "best sentence relevance"


def asks_which(question: str) -> bool:
    """ "Which paper …?" / "Is there work on …?": the user wants a paper identified, not a fact."""
    return bool(WHICH.search(question))


def term_focus(question: str, hits: list[Hit], best_ranked: bool = False) -> set[int]:
    """Sources (1-based) singled out by the question's named terms: those naming the most of the
    terms that some sources name and others don't (for comparisons of two or more such names, the
    best source per name). `best_ranked`: of several sources naming the most, only the first."""
    texts = _source_texts(hits)
    terms = [t for t in named_terms(question) if 0 < sum(mentions(x, t) for x in texts) < len(texts)]
    if not terms:
        return set()
    count = [sum(mentions(x, t) for t in terms) for x in texts]
    if len(terms) > 1 and (COMPARE.search(question) or " and " in question):
        out = set()
        # a name of several words ("Adaptive Angular Replay") is one subject: the best-ranked source
        # naming most of its words, not every source that shares one word with it ("batch")
        # "Compare DPO, PPO and GRPO": a comma ends a name
        runs = [r.split() for part in re.split(r"[,;:]", question) for r in name_runs(part)]
        runs = [r for r in runs if set(r) & set(terms)]
        in_run = {w for r in runs for w in r}
        for run in runs:
            per = [sum(mentions(x, t) for t in run) for x in texts]
            out.add(per.index(max(per)) + 1)
        for t in terms:
            if t in in_run:
                continue
            having = [i for i, x in enumerate(texts) if mentions(x, t)]
            best = max(count[i] for i in having)
            out |= {i + 1 for i in having if count[i] == best}
        return out
    top = [i + 1 for i, c in enumerate(count) if c == max(count)]
    return set(top[:1] if best_ranked else top)


def best_covered(question: str, hits: list[Hit], margin: float) -> int:
    """1-based position of the source a one-paper question is about: the top-ranked one, unless a
    lower one uses a share of the question's content words larger by more than `margin` (a described
    paper's near neighbour can rank first on fused scores while it lacks half the description), and by
    two words at least."""
    words = content_words(question)
    if not words or not hits:
        return 1
    have = [len(words & h.paper.words) for h in hits]
    best = max(range(len(hits)), key=lambda i: (have[i], -i))
    # two words at least: in a short question one common word ("handle") is no description
    return best + 1 if have[best] - have[0] > max(margin * len(words), 1) else 1


def focus(
    question: str,
    hits: list[Hit],
    judge: Judge,
    broad_ratio: float,
    rel: np.ndarray | None = None,
    cover_margin: float = 1.0,
) -> set[int]:
    """1-based positions of the sources the question is about; only these may be cited.

    Named terms decide when some sources name them and others don't: the sources naming the most
    of them (for comparisons of two or more names, the best source for each), and of several such
    sources the best ranked when one paper is asked about (7 calibration questions: each had cited
    a second source only because it used the same name). Otherwise a question about one paper
    is about the top-ranked source (the fused ranking picks the right paper more often than the
    best single sentence does; calibration half, explain answers: 92 vs 88 of 96), unless another
    covers clearly more of its words (`best_covered`, `cover_margin`; 1.0: never). A question about
    several papers ("papers", "summarize", "Compare A and B", "How do A and B compare?") also gets every
    source within `broad_ratio` of the most relevant (`rel`: each source's best sentence score,
    computed here when not given). Comparison words alone ("between", "each", "differ", "how did they
    compare with …") don't widen it: without names they mostly describe one paper (7 such full-scale
    calibration questions: citation precision 5.0 of 7 on the top source, 2.7 with the broad ratio;
    "how did they compare with vision-only models?": 1.0 vs 0.25)."""
    if not hits:
        return set()
    named = term_focus(question, hits, best_ranked=True)
    if named:
        return named
    if SINGLE.search(question) or not (_BROAD.search(question) or _BROAD_COMPARE.search(question)):
        return {best_covered(question, hits, cover_margin)}
    if rel is None:
        evidence = judge.evidence(hits)
        rel = np.zeros(len(hits))
        for sc, e in zip(judge.scores(question, evidence), evidence):
            rel[e.paper_n - 1] = max(rel[e.paper_n - 1], sc)
    return {1} | {i + 1 for i, r in enumerate(rel) if r > 0 and r >= broad_ratio * rel.max()}


def idf_from_counts(df: Callable[[str], int], n_docs: int) -> Idf:
    """BM25's idf; words the corpus never uses weigh most (their absence is the strongest signal)."""

    def idf(word: str) -> float:
        parts = [p for p in word.split("-") if p] or [word]
        d = min(df(p) for p in parts)
        return math.log(1 + (n_docs - d + 0.5) / (d + 0.5))

    return idf
