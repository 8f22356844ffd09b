"""The one decision of how a question is answered: an answer, an answer with caveats, or nothing relevant.

`decide` reads the `Reading` and the scored evidence. A hard refusal happens only when no retrieved
evidence is about the question: one fitted bar over a few general signals. A part of the question the
evidence does not cover gets a caveat with a code and one plain line; the rest is answered. The UI, the
CLI and the eval read the codes, never the prose.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from rag.grounding.cite import Evidence, Judge
from rag.grounding.evidence import EvidenceSet
from rag.grounding.gaps import lacking_runs, run_gains, to_cover
from rag.grounding.kinds import naming
from rag.reading.reader import AUX, NUMBER_HEADS, PRONOUNS, WH, Part, Reading
from rag.retrieval.names import alternatives, field_word, mentions, named_terms, own_name
from rag.text import CONTRIBUTION, NUMBER, WORD, Idf, content_words, stem
from rag.types import Caveat, Hit

NOTHING_RELEVANT = "nothing_relevant"
INSTRUCTION = "instruction"

# words that frame what is asked ("what does X use to …", "how does it fare") rather than name it
FRAME = frozenset(
    stem(w)
    for w in (
        "paper papers work study method approach model abstract authors propose proposed introduce use used "
        "using report reported show shown find found present achieve reach get fare perform handle deal work "
        "compare compared main key new exactly specifically kind type sort many much tell explain describe "
        "give mean idea exist anything something way ways help lead result results first second third one "
        "former latter previous earlier also"
    ).split()
) | {stem(w) for w in WH | AUX | PRONOUNS}


@dataclass
class PartAnswer:
    """One part of the question with the evidence sentences that answer it, or its caveat."""

    part: Part
    papers: list[int]  # source positions the part is about
    quotes: list[Evidence] = field(default_factory=list)
    caveat: Caveat | None = None
    signals: dict[str, float] = field(default_factory=dict)  # what the caveat was decided on


@dataclass
class Outcome:
    refused: str | None  # a refusal code, or None: answer
    caveats: list[Caveat]
    parts: list[PartAnswer]
    focus: set[int]  # the sources an answer may cite (1-based)
    signals: dict[str, float]


def logistic(model: dict[str, tuple[float, float, float]], intercept: float, x: dict[str, float]) -> float:
    """P(yes) of a standardised logistic model: feature -> (mean, sd, weight)."""
    z = intercept + sum(w * (x[k] - m) / (sd or 1.0) for k, (m, sd, w) in model.items())
    return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))


def idf_cover(ws: set[str], text_words: set[str], idf: Idf) -> float:
    """The rarity-weighted share of `ws` that `text_words` holds (1.0 for no words)."""
    if not ws:
        return 1.0
    total = sum(idf(w) for w in ws) or 1.0
    return sum(idf(w) for w in ws if w in text_words) / total


def asked_words(text: str, terms: tuple[str, ...] = ()) -> set[str]:
    """The content words of what a part asks about: the frame ("what does … propose") and the names that
    say which paper is meant aside."""
    named = content_words(" ".join(t for t in terms if not field_word(t)))  # "GPUs", "LLMs" are asked about
    return content_words(text) - FRAME - named


def term_caveats(reading: Reading, hits: list[Hit], known) -> list[Caveat]:
    """A name the user's words ask about that no retrieved abstract mentions (one of "A or B" is enough):
    "No indexed abstract mentions “Asch”." Numbers are left to the evidence check."""
    texts = [h.paper.flat for h in hits]
    # a kind ("LLMs") is asked, not named
    terms = {t for t in reading.terms if not t[:1].isdigit() and not field_word(t)}
    out = []
    for group in alternatives(reading.asked, terms):
        if any(mentions(x, t) for x in texts for t in group):
            continue
        for t in sorted(group):
            where = "None of the closest abstracts mentions" if known(t) else "No indexed abstract mentions"
            out.append(Caveat("term_absent", f"{where} “{as_typed(reading.asked, t)}”."))
    return out


def as_typed(text: str, term: str) -> str:
    """A named term (lowercase, flattened) as the user typed it."""
    i = text.lower().find(term)
    return text[i : i + len(term)] if i >= 0 else term


def language_caveat(text: str, known) -> Caveat | None:
    """A question that reads as not English (mostly non-Latin letters, or few English function words and
    most of its words unknown to the index): the embedder and the index read English only, so say so, with the
    words of it the index does know."""
    from rag.models.embedder import english_words
    from rag.reading.reader import words
    from rag.text import nltk_stopwords

    letters = [c for c in text if c.isalpha()]
    foreign = sum(not c.isascii() for c in letters) > 0.3 * len(letters) if letters else False
    ws = [w.lower().replace("’", "'").split("'")[0] for w in words(text)]  # "what's" is "what"
    ws = [w for w in ws if w.isalpha()]
    stop = nltk_stopwords()
    said = sum(w in stop for w in ws)
    if not foreign and (len(ws) < 3 or said >= max(1 if len(ws) <= 5 else 2, len(ws) / 5)):
        return None  # English function words: "was" alone is also German
    plain = [w for w in dict.fromkeys(ws) if w.isascii() and len(w) > 2]
    kept = [w for w in plain if known(w)]
    # a bare topic over a small index ("knitting pattern generation") is English too: the embedder's words count
    english = english_words()
    if not foreign and sum(w in kept or w in english for w in plain) * 2 >= len(ws):
        return None
    found = f" Words of it the index knows: {', '.join(kept)}." if kept else ""
    return Caveat(
        "language", f"This question does not seem to be in English; the index reads English only.{found}"
    )


def focus(reading: Reading, evset: EvidenceSet, n_papers: int, broad_ratio: float) -> set[int]:
    """The sources (1-based) the question is about. A name some sources use and others don't singles out
    those naming most of the names (for a comparison or a list, the best source per name); otherwise a
    question about one paper is about the top-ranked source, and one about several takes every source
    within `broad_ratio` of the most relevant."""
    hits = evset.hits[:n_papers]
    if not hits:
        return set()
    several = reading.shape in ("compare", "list")
    named = singled_out(reading.terms, hits, per_term=several)
    if named:
        return named
    if not several:
        return {1}
    best = max((evset.best.get(n, 0.0) for n in range(1, len(hits) + 1)), default=0.0)
    return {1} | {n for n in range(1, len(hits) + 1) if best and evset.best.get(n, 0.0) >= broad_ratio * best}


def singled_out(terms, hits: list[Hit], per_term: bool) -> set[int]:
    """Sources naming the names some sources use and others don't: the best-ranked naming the most of them,
    or (`per_term`) the best-ranked naming each. Field words ("LLMs", "GPU") single out nothing."""
    texts = [h.paper.flat for h in hits]
    terms = [t for t in terms if not field_word(t) and 0 < sum(mentions(x, t) for x in texts) < len(texts)]
    if not terms:
        return set()
    count = [sum(mentions(x, t) for t in terms) for x in texts]
    if per_term and len(terms) > 1:
        return {
            max((i for i, x in enumerate(texts) if mentions(x, t)), key=lambda i: (count[i], -i)) + 1
            for t in terms
        }
    return {count.index(max(count)) + 1}


def part_papers(part: Part, hits: list[Hit], allowed: set[int]) -> list[int]:
    """The sources a part is about: those the papers' own names in it single out ("…, and how many tasks does
    B use?"), else the question's. A metric, dataset or model it names ("AUROC", "GPT-4o") brings in no paper."""
    own = [t for t in named_terms(part.text) if any(own_name(h.paper, t) for h in hits)]
    return sorted(singled_out(own, hits, per_term=True) or allowed)


HEADS = frozenset(stem(w) for w in NUMBER_HEADS)  # "how big": no thing counted
# numbers written as words: "five domains", "a single set", "fivefold faster", "hundreds of tasks"
NUMBER_WORDS = frozenset(
    "one two three four five six seven eight nine ten eleven twelve twenty thirty fifty hundred hundreds "
    "thousand thousands million millions billion billions dozen dozens single twice half double triple "
    "twofold threefold fourfold fivefold tenfold".split()
)


def states_number(text: str, question: str, near: set[str] | None, window: int) -> bool:
    """A number the question doesn't give (in digits or words), within `window` words of one of `near`
    (stems, or their start from four letters on: "data" is near "dataset"; None: anywhere), in the text."""
    given = set(NUMBER.findall(question)) | {w.lower() for w in WORD.findall(question)} & NUMBER_WORDS
    toks = [(t, stem(t)) for t in WORD.findall(text)]
    at = [
        i
        for i, (_, st) in enumerate(toks)
        if near is None or st in near or any(len(n) >= 4 and st.startswith(n) for n in near)
    ]
    return any(
        (NUMBER.fullmatch(t.rstrip("%")) or t.lower() in NUMBER_WORDS)
        and t.rstrip("%").lower() not in given
        and any(abs(i - j) <= window for j in at)
        for i, (t, _) in enumerate(toks)
    )


def answer_part(
    part: Part,
    reading: Reading,
    evset: EvidenceSet,
    papers: list[int],
    judge: Judge,
    idf: Idf,
    s,
    known=None,
) -> PartAnswer:
    """The part's best evidence sentences, from each of its papers, or a caveat saying what they don't state
    (a fitted bar on how much of what the part asks its papers' words hold, and how well its best sentence
    matches it; for a number asked, the best sentence stating a number the question doesn't give)."""
    pool = [e for e in evset.every if e.paper_n in papers]
    out = PartAnswer(part, papers)
    if not pool:
        return out
    text = f"{part.text} ({reading.base})" if reading.base else part.text
    scores = raw = judge.scores(text, pool)
    match = float(scores.max())
    words = asked_words(part.text, reading.terms)
    # the turn leaned on chose the paper; the follow-up's own words choose its quotes
    if reading.base and words:
        scores = raw = judge.scores(part.text, pool)
    have = set().union(*(evset.hits[n - 1].paper.words for n in papers))
    numbered = 1.0
    thing = content_words(part.thing) - FRAME - HEADS  # "how large is it?" counts no thing
    if part.number:  # only a sentence stating a number near what is counted can answer it
        # "how many models": the counted noun, frame word or not ("how big is it": the part's words)
        near = content_words(part.number) - HEADS or words
        stated = np.array(
            [states_number(e.text, reading.asked, near, s.grounding.number_window) for e in pool]
        )
        # the part's best match states a number in words of its own ("how fast?": "a 10-18x speed-up")
        best = int(np.argmax(raw))
        stated[best] = stated[best] or states_number(pool[best].text, reading.asked, None, 0)
        numbered = float(stated.any())
        scores = scores * stated if stated.any() else scores
    kinds, named = naming("" if part.number else part.thing, [e.text for e in pool])
    if named.any():  # "which datasets" of a paper naming CIFAR-10: it states them, in those sentences only
        have, scores = have | kinds, np.where(named, scores + s.grounding.instance_bonus, 0.0)
    if not words:  # "What does X do?": what the paper says it contributes answers it
        scores = scores + s.grounding.contribution_bonus * np.array(
            [bool(CONTRIBUTION.search(e.text)) for e in pool]
        )
    order = sorted(range(len(pool)), key=lambda i: -scores[i])
    shown = evset.hits[: s.generation.context_papers]
    others = set().union(*(h.paper.words for n, h in enumerate(shown, 1) if n not in papers))
    x = {
        "cover": idf_cover(words, have, idf),
        "thing": idf_cover(thing, have, idf),
        "score": match,
        "missing": min(sum(idf(w) for w in words if w not in have), 20.0),
        "elsewhere": min(sum(idf(w) for w in words if w not in have and w in others), 20.0),
        "no_number": 1.0 - numbered,
        "which": float(reading.shape == "which"),
        "aspect": 0.0,
        "gain": 0.0,
    }
    # what of the part its paper never says, read by meaning: how much closer the part comes to the paper
    # without the words the paper lacks ("on unpaired image-to-image translation" of a molecule paper)
    own = [e for e in pool if e.paper_n == papers[0]]
    paper = evset.hits[papers[0] - 1].paper
    text = f"{paper.title or ''} {paper.text}"
    vecs = np.stack([e.vec for e in own] + list(judge.vectors([paper.label])))
    asked = to_cover(reading.topic if reading.shape == "which" else part.text)
    (gains,) = run_gains(asked, [(text, vecs)], judge.vectors, known)
    x["gain"] = max([0.0] + [g for _, g in gains])
    if reading.shape == "which":  # a part of the description its closest paper lacks (rag.grounding.gaps)
        x["aspect"] = float(bool(lacking_runs(gains, text, s.grounding.list_aspect_gain)))
    out.signals = x
    g, m = s.grounding, "which_caveat" if reading.shape == "which" else "caveat"  # a description has its own
    if logistic(getattr(g, f"{m}_model"), getattr(g, f"{m}_intercept"), x) >= getattr(g, f"{m}_bar"):
        label = evset.hits[pool[order[0]].paper_n - 1].paper.label
        how = part.number in NUMBER_HEADS  # "how big is it?" asks "how big", not of a "big"
        what = (
            (f"“how {part.number}”" if how else part.number)
            or lacking(part.text, words - have)
            or "what is asked"
        )
        if reading.shape == "which":
            out.caveat = Caveat("partial_match", f"The closest abstract, “{label}”, does not mention {what}.")
        elif part.number:
            out.caveat = Caveat("no_number", f"The abstract of “{label}” gives no number for {what}.")
        else:
            out.caveat = Caveat("not_stated", f"The abstract of “{label}” does not say {what}.")
        if reading.shape != "which":
            return out
    for n in papers:  # each paper's best sentences for the part
        own = [i for i in order if pool[i].paper_n == n]
        if own and scores[own[0]] <= 0:  # none of its sentences states the number: its best match
            own.sort(key=lambda i: -raw[i])
            scores = np.where([pool[i].paper_n == n for i in range(len(pool))], raw, scores)
        if not own or scores[own[0]] <= 0:
            continue
        best = scores[own[0]]
        out.quotes += [
            pool[i] for i in own[: s.grounding.part_sentences] if scores[i] >= s.grounding.part_share * best
        ]
    out.quotes.sort(key=lambda e: (e.paper_n, e.start))
    return out


def lacking(text: str, missing) -> str:
    """The words of `text` whose stems are in `missing`, as typed, neighbours kept together and quoted:
    "“vehicle routing problems”", "“membership inference attacks”, “image”"; "" when none."""
    runs: list[list[str]] = [[]]
    for w in WORD.findall(text):
        if stem(w) in missing and w not in (x for r in runs for x in r):
            runs[-1].append(w)
        elif runs[-1]:
            runs.append([])
    return ", ".join(f"“{' '.join(r)}”" for r in runs if r)


def signals(reading: Reading, evset: EvidenceSet, idf: Idf, n_papers: int) -> dict[str, float]:
    """General signals of whether the retrieved evidence is about the question at all."""
    hits = evset.hits[:n_papers]
    words = asked_words(reading.query, reading.terms) | content_words(" ".join(reading.terms))
    cover = max((idf_cover(words, h.paper.words, idf) for h in hits), default=0.0)
    cos = [h.cosine for h in hits if h.cosine is not None]
    return {"relevance": evset.max_score, "cosine": float(max(cos)) if cos else None, "cover": cover}


def decide(reading: Reading, evset: EvidenceSet, judge: Judge, idf: Idf, known, s) -> Outcome:
    """Refuse only when nothing retrieved is about the question; otherwise answer each part from its best
    evidence, with a caveat for a name no abstract mentions and for a part its papers don't state."""
    hits = evset.hits[: s.generation.context_papers]
    lang = language_caveat(reading.asked, known)
    caveats = [lang] if lang else term_caveats(reading, hits, known)  # another language's words are no names
    allowed = focus(reading, evset, s.generation.context_papers, s.grounding.focus_broad_ratio)
    answered = []
    if hits and reading.shape in ("explain", "compare", "which"):
        for i, part in enumerate(reading.parts):
            pa = answer_part(part, reading, evset, part_papers(part, hits, allowed), judge, idf, s, known)
            if pa.caveat:
                pa.caveat.part = i
            answered.append(pa)
    sig = signals(reading, evset, idf, s.generation.context_papers)
    # no paper found by the dense side: its cosine is unknown, not 0 (the model's mean adds nothing)
    if sig["cosine"] is None:
        sig["cosine"] = s.grounding.refuse_model.get("cosine", (0.0,))[0]
    # a many-part question is about the indexed papers when one of its parts is
    sig["relevance"] = max([sig["relevance"], *(pa.signals.get("score", 0.0) for pa in answered)])
    sig["p_nothing"] = logistic(s.grounding.refuse_model, s.grounding.refuse_intercept, sig) if hits else 1.0
    if not hits or sig["p_nothing"] >= s.grounding.refuse_bar:
        return Outcome(NOTHING_RELEVANT, caveats, answered, allowed, sig)
    caveats += [pa.caveat for pa in answered if pa.caveat]
    if reading.left:  # "does it also …" about what the paper followed never mentions
        paper, lacks = reading.left
        said = lacking(reading.asked, set(lacks)) or "this"
        caveats.insert(
            0,
            Caveat(
                "not_in_followed",
                f"The abstract of {paper.label} never mentions {said}; "
                "this answer is from the abstracts that do.",
            ),
        )
    return Outcome(None, caveats, answered, allowed, sig)
