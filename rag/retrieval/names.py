"""What a question names, and whether a text mentions it: acronyms, CamelCase and digit-bearing
names, capitalised words, multi-word names; matched as written, singular or plural, hyphen or
not, or an acronym spelled out by its initials."""

from __future__ import annotations

import re

from rag.text import CONTRIBUTION, flatten, initials_pattern, stopwords

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
                term = lw.partition("-")[0] if "-" in lw and field_word(w) else lw
                version = toks[i + 1] if i + 1 < len(toks) else ""
                if re.fullmatch(r"\d{1,2}(?:\.\d)?", version) and re.search(
                    rf"{re.escape(w)}\s+{re.escape(version)}\b", sent
                ):
                    term = f"{term}-{toks[i + 1]}"  # "SAM 2", "Llama 3": a version is part of the name
                out.add(flatten(term))
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
    may be a space or nothing ("fourier-transform" / "fourier transform", "timemoe" / "time-moe"), and an
    affix after a name ("ppo-based") asks only for the name."""
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
    # the text may hyphenate what the term runs together: "TimeMOE" / "Time-MoE"
    alt = "|".join("-?".join(map(re.escape, f)) for f in sorted(forms, key=len, reverse=True))
    if re.search(rf"(?<![a-z0-9])(?:{alt})(?![a-z0-9])", text):
        return True
    acronym = initials_pattern(term[:-1] if term.endswith("s") and len(term) > 3 else term)
    return bool(acronym and acronym.search(text))


def own_name(paper, term: str, reach: int = 80) -> bool:
    """Whether the paper names `term` as its own: in its title, or just after it says what it contributes
    ("We introduce Celcomen, …", in that sentence), not as a baseline or a dataset it uses."""
    if mentions(flatten(paper.title or ""), term):
        return True
    after = (paper.text[m.end() : m.end() + reach].split(". ")[0] for m in CONTRIBUTION.finditer(paper.text))
    return any(mentions(flatten(x), term) for x in after)


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
