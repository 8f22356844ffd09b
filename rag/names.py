"""What a question names, and whether a text mentions it: acronyms, CamelCase and digit-bearing
names, capitalised words, multi-word names; matched as written, singular or plural, hyphen or
not, or an acronym spelled out by its initials."""

from __future__ import annotations

import functools
import re

from rag.text import content_words, flatten, initials_pattern, stem, stopwords

QWORDS = {
    "what",
    "which",
    "how",
    "who",
    "when",
    "where",
    "why",
    "does",
    "do",
    "did",
    "is",
    "are",
    "can",
    "tell",
    "explain",
    "describe",
    "summarize",
    "compare",
    "give",
    "list",
    "and",
    "the",
    "in",
    "on",
    "many",  # "how many", "how much", "what kind of": the question's form, not what it is about
    "much",
    "kind",
    "type",
    "sort",
}
_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9\-\.']*[A-Za-z0-9]|\d")


@functools.cache
def form_words() -> frozenset[str]:
    """Stemmed words that shape a question ("how many", "which kind") rather than say what it asks."""
    return frozenset(stem(w) for w in QWORDS)


# Acronyms of fields and kinds of things (upper-cased), written in capitals but naming no particular one
FIELD_ACRONYMS = frozenset(
    "AI ML DL RL NLP CV LLM VLM MLLM LM GPU CPU TPU API SOTA GNN CNN RNN DNN MLP GAN VAE RAG QA VQA LSTM RLHF "
    "MOE".split()
)


def field_word(token: str) -> bool:
    """ "AI", "LLMs", "llm-based", "GPU-heavy": a field or a kind; "ViT-B" or "GPT-4" name one."""
    head, _, rest = token.partition("-")
    return re.sub(r"s$", "", head).upper() in FIELD_ACRONYMS and (not rest or rest.islower())


def named_terms(question: str) -> set[str]:
    """Terms a source must contain for the question to be about it: acronyms, CamelCase or
    digit-bearing names, numbers with units, and capitalised words inside a sentence."""
    out = set()
    for sent in re.split(r"(?<=[.?!])\s+|[()]", question):
        toks = _TOKEN.findall(sent)
        for i, w in enumerate(toks):
            lw = re.sub(r"'s$", "", w.lower()).strip(".'")
            if lw in QWORDS or lw in stopwords() or len(lw) < 3:  # 2-letter acronyms (AI, RL) are generic
                continue
            if any(c.isdigit() for c in w) or sum(c.isupper() for c in w) >= 2 or (i > 0 and w[0].isupper()):
                # "LLM-generated queries" names a kind (LLM) and describes it: the kind is the term
                out.add(flatten(lw.partition("-")[0] if "-" in lw and field_word(w) else lw))
    return out


def name_runs(question: str) -> list[str]:
    """Names of several words as the question writes them ("LoRA Recycle", "API Pack"): runs of
    consecutive named terms, flattened; a term alone is not a run."""
    terms = named_terms(question)
    runs: list[str] = []
    for sent in re.split(r"(?<=[.?!])\s+|[()]", question):
        run: list[str] = []
        for w in [*_TOKEN.findall(sent), ""]:
            lw = flatten(re.sub(r"'s$", "", w.lower()).strip(".'"))
            if w and lw in terms:
                run.append(lw)
                continue
            if len(run) > 1:
                runs.append(" ".join(run))
            run = []
    return runs


# "PPO-based", "CLIP-like", "task-specific": the name is the part before the affix.
_AFFIX = {
    "based",
    "like",
    "style",
    "driven",
    "aware",
    "free",
    "guided",
    "specific",
    "level",
    "wise",
    "powered",
}


def mentions(text: str, term: str) -> bool:
    """Whether `text` (flattened, lowercase) names `term`: as written, as its singular or plural
    ("llms" / "llm"), or, for an acronym, spelled out by the initials of consecutive words. A hyphen
    may be a space or nothing ("fourier-transform" / "fourier transform"), and an affix after a
    name ("ppo-based") asks only for the name."""
    if "-" in term.strip("-"):
        head, _, last = term.rpartition("-")
        if last in _AFFIX and head and mentions(text, head):
            return True
        for alt in (term.replace("-", " "), term.replace("-", "")):
            if _mentions(text, alt):
                return True
        # a short symbol between the parts: "Schatten-norm" / "schatten p-norms", "llama-70b" / "llama 2 70b"
        if term.count("-") == 1 and head and last:
            parts = (
                rf"{re.escape(head)}\s+(?:[a-z]|\d[\d.]*|\$[^$\s]{{1,6}}\$)[\s\-]{re.escape(last)}(?:e?s)?"
            )
            if re.search(rf"(?<![a-z0-9]){parts}(?![a-z0-9])", text):
                return True
    return _mentions(text, term)


def _mentions(text: str, term: str) -> bool:
    forms = {term}
    if term.endswith("es") and len(term) > 4:
        forms.add(term[:-2])
    if term.endswith("s") and len(term) > 3:
        forms.add(term[:-1])
    else:
        forms.add(term + "s")
    alt = "|".join(re.escape(f) for f in sorted(forms, key=len, reverse=True))
    if re.search(rf"(?<![a-z0-9])(?:{alt})(?![a-z0-9])", text):
        return True
    acronym = initials_pattern(term[:-1] if term.endswith("s") and len(term) > 3 else term)
    return bool(acronym and acronym.search(text))


_COMPOUND = re.compile(r"(?<![\w-])[A-Za-z0-9]+(?:-[A-Za-z0-9]+)+(?![\w-])")


# between two options: "A or B", "A, or B", "A or even B", "A/B", "A and/or B" (a bare comma lists, it
# doesn't offer: "For MR.Q, PPO or DPO" keeps MR.Q apart)
_OR = re.compile(r"\s*(?:,\s*)?(?:or|and/or)\s+(?:(?:even|maybe|perhaps|with|the|a|an)\s+)*|\s*/\s*", re.I)


def alternatives(question: str, terms: set[str]) -> list[set[str]]:
    """The named terms grouped by "or": "PickScore or HPSv2", "A or B or C" offer one thing to find, not
    several; every other term is a group of its own."""
    group = {t: {t} for t in terms}
    if len(terms) > 1:
        at = sorted(
            (m.start(), m.end(), t)
            for t in terms
            for m in re.finditer(rf"(?<![\w-]){re.escape(t)}(?![\w-])", question, re.I)
        )
        for (_, end, a), (start, _, b) in zip(at, at[1:]):
            if a != b and _OR.fullmatch(question[end:start]):
                merged = group[a] | group[b]
                for t in merged:
                    group[t] = merged
    return list({id(g): g for g in group.values()}.values())


def joined(question: str, terms: set[str], groups: list[set[str]] | None = None) -> bool:
    """Whether two of the named terms stand joined as two subjects ("A and B", "A vs. B", "A, B"), not
    as options of one ("A or B"); `groups`: the terms' `alternatives`, when the caller has them."""
    if len(terms) < 2:
        return False
    alt = "|".join(re.escape(t) for t in sorted(terms, key=len, reverse=True))
    same = groups if groups is not None else alternatives(question, terms)
    for m in re.finditer(rf"({alt})\W*\s*(,|and|&|vs\.?|versus)\s+(?:the\s+)?(?=({alt}))", question, re.I):
        a, b = m.group(1).lower(), m.group(3).lower()
        if not any(a in g and b in g for g in same):
            return True
    return False


def swapped_variant(question: str, text: str, min_share: float) -> tuple[str, str] | None:
    """(asked, found) when the question, written in the text's own words (at least `min_share` of its
    content words), names a hyphenated compound the text never uses while the text has the same
    compound with one part changed ("text-to-video" where the paper is on "text-to-image"): the
    question asks about a variant the paper is not about. A paraphrase, in words of its own, may swap
    a part for a synonym ("patient-specific" for "subject-specific") and is left alone."""
    words = content_words(question) - QWORDS
    used = content_words(text)
    if not words or len(words & used) / len(words) < min_share:
        return None
    flat = flatten(text)
    have = {tuple(stem(p) for p in m.group().split("-")): m.group() for m in _COMPOUND.finditer(text)}
    for m in _COMPOUND.finditer(question):
        asked = m.group()
        parts = tuple(stem(p) for p in asked.split("-"))
        if parts in have or mentions(flat, asked.lower()):
            continue
        for other, found in have.items():
            changed = [a for a, b in zip(parts, other) if a != b]
            # the changed part a word the text uses elsewhere ("symmetry-quotiented" of a text on quotienting
            # out symmetries): the paper's own words recombined, a paraphrase
            if len(other) == len(parts) and len(changed) == 1 and changed[0] not in used:
                return asked, found[:1].lower() + found[1:] if found[1:2].islower() else found
    return None


# Kinds of data a method is applied to. A question that names one ("… for speech recognition", "on stock
# prices") of which no source says a word asks about work these abstracts don't hold, however well the
# rest of it matches: the named-term rule for lowercase domain nouns. Spellings of one kind are grouped;
# words with a common other sense ("sound", "face", "trade-off", "table", "game", "driving", "brain") are left out.
DOMAINS = {
    "images": "image images visual vision photo photos",
    "video": "video videos",
    "audio": "audio acoustic speech spoken voice music musical asr",
    "graphs": "graph graphs",
    "molecules": "molecule molecules molecular chemical chemistry drug drugs",
    "proteins": "protein proteins peptide peptides antibody antibodies enzyme enzymes",
    "point clouds": "point-cloud lidar",
    "time series": "time-series",
    "finance": "financial finance stock stocks",
    "medicine": "medical clinical patient patients health healthcare disease diseases hospital",
    "vehicles": "vehicle vehicles autonomous-driving traffic",
    "robots": "robot robots robotic robotics",
    "faces": "facial",
    "remote sensing": "satellite aerial remote-sensing",
    "tables": "tabular",
    "games": "atari",
    "weather": "weather climate",
    "brain signals": "eeg meg fmri",
    "genomics": "gene genes genomic genomics dna rna transcriptomics",
}
_DOMAIN_OF = {stem(w): kind for kind, words in DOMAINS.items() for w in words.split()}
_JOINED = {
    "time series": "time-series",
    "point cloud": "point-cloud",
    "remote sensing": "remote-sensing",
    "autonomous driving": "autonomous-driving",
}


def domains(text: str) -> set[str]:
    """The kinds of data (DOMAINS) the text names, a hyphenated word's parts included."""
    return set(domain_words(text))


def domain_words(text: str) -> dict[str, str]:
    """Kind of data (DOMAINS) -> the first word of the text naming it ("audio" -> "music")."""
    flat = flatten(text)
    for words, joined in _JOINED.items():
        flat = flat.replace(words, joined)
    out: dict[str, str] = {}
    for tok in re.findall(r"[a-z0-9][a-z0-9\-]*", flat):
        for part in [tok, *tok.split("-")]:
            kind = _DOMAIN_OF.get(stem(part))
            if kind and kind not in out:
                out[kind] = part.replace("-", " ")
    return out


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
