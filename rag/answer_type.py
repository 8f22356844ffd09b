"""What kind of answer a question needs, beyond a number (rag.quantity), and whether the sources supply it.

"Which simulator", "which LLM": a name the question does not already give. "Is the code released?":
a sentence that says so. "…, visium or xenium?": an option some source names. An abstract that talks
about the subject but never gives the name cannot answer, however relevant it reads, so such
questions are refused before generation instead of drafting around the gap.
"""

from __future__ import annotations

import functools
import re

from rag.names import FIELD_ACRONYMS, field_word
from rag.quantity import AUX, NOT_MODIFIER, NOT_RELATION, TOKEN
from rag.text import flatten, initials_pattern, stem, stopwords

_KINDS = (
    r"simulators?|datasets?|benchmarks?|baselines?|llms?|(?:language |vision-language |base |foundation |pre-?trained )?models?|"
    r"gpus?|hardware|platforms?|librar(?:y|ies)|toolkits?|robots?|engines?|backbones?|optimizers?|solvers?"
)
# Things that are referred to by their proper names: "which simulator" wants "CARLA", not "a simulator"
_ENTITY = re.compile(
    rf"\b(?:which|what)\s+(?:{NOT_MODIFIER}{NOT_RELATION}[\w\-]+\s+){{0,5}}?"  # "which of the six … models"
    rf"({_KINDS})\b"
    r"(?!\s+(?:papers?|works?|stud(?:y|ies)|articles?|submissions?|abstracts?)\b)"  # "benchmark papers": a paper
    rf"(?=\s+(?:{AUX}|and|or|in|on|for|to|with|from|of|\w+s|\w+ed)\b|\s*[?,;(]|$)",  # "models benchmarked"
    re.I,
)
# Words before a generic kind that only stress it ("which exact model"), not say which models are meant
_STRESS = frozenset("exact specific particular precise actual underlying main other".split())
# "… on three Cell Painting datasets. Which three are they?": the kind is named before the question
_WHICH_ONES = re.compile(
    r"\bwhich\s+(?:ones?|two|three|four|five|six|seven|eight|nine|ten|\d+)\s+(?:are|were)\s+(?:they|these|those|them)\b",
    re.I,
)
_KIND = re.compile(rf"\b({_KINDS})\b", re.I)
# ... unless the paper made it: a new dataset is described ("aerial images of buildings"), not named
_INTRODUCED = re.compile(
    r"\b(new|novel|release[sd]?|introduc\w*|propos\w*|buil[dt]s?(?!\s+(?:on|upon)\b)|creat\w*|collect\w*|curat\w*)\b(?!-)",
    re.I,
)  # "novel-class samples" describes the samples, it introduces nothing; "built on X" uses X

# "…, visium or xenium?": the options a question asks the sources to choose between (1-3 words each,
# after a comma, colon, parenthesis or spaced dash, ending the question)
_CHOICE = re.compile(
    r"(?:[,:;(]|\s[\-–—])\s*((?:[\w.+\-]+\s){0,2}[\w.+\-]+)\s+or\s+((?:[\w.+\-]+\s){0,2}[\w.+\-]+)\s*\)?\s*\?\s*$",
    re.I,
)
# Offers that are no closed choice of names: "or not", "yes or no", "true or false", "or both"
_NO_OPTION = frozenset(
    "not both neither either none otherwise something else other others yes no true false correct incorrect "
    "right wrong".split()
)
# Examples ("e.g. Adam or SGD", "like A or B"): any answer may name something else
_EXAMPLES = re.compile(r"^(?:e\.?g|i\.?e|such as|like|for example|for instance|say)\b", re.I)
_ITEM_BEFORE = re.compile(r"([\w.+\-]+)\s*,\s*$")


def choice_options(question: str) -> list[list[str]]:
    """The options a question ends by offering, each as its words without function words
    ("…, visium or xenium?" -> [["visium"], ["xenium"]]); in "GPT-4, Claude or Gemini?" the item before
    the comma is one too. None for a non-option ("or not", "yes or no"), examples, or numbers."""
    m = _CHOICE.search(question)
    if not m:
        return []
    groups = list(m.groups())
    before = _ITEM_BEFORE.search(question[: m.start(1)])
    if before:  # "beat GPT-4, Claude or Gemini": a list; "the data from, visium or …": no option
        groups.insert(0, before.group(1))
    opts = []
    for g in groups:
        if _EXAMPLES.search(g):
            return []
        words = [w.strip(".-") for w in g.split()]
        if any(w.lower() in _NO_OPTION for w in words):
            return []
        words = [w for w in words if w and w.lower() not in stopwords()]
        if words and words[0][0].isdigit():
            return []  # "2x or 10x?": any stated number answers
        if words:
            opts.append(words)
    return opts if len(opts) >= 2 else []


def entity_heads(question: str) -> list[str]:
    """The kinds of named thing the question asks for ("which simulator", "which LLMs"); none when
    the question is about something the paper introduces."""
    return [head for head, _ in _asked_kinds(question)]


def _asked_kinds(question: str) -> list[tuple[str, list[str]]]:
    """(kind, the words between "which"/"what" and it) for each kind of named thing asked for; "what
    fraction of the dataset" asks for a share of it, not its name ("which of the six models" does)."""
    if _INTRODUCED.search(question):
        return []
    out = []
    for m in _ENTITY.finditer(question):
        between = question[m.start() : m.start(1)].split()[1:]
        if "of" not in (w.lower() for w in between[1:]):
            out.append((m.group(1).lower(), between))
    ones = _WHICH_ONES.search(question)
    kinds = _KIND.findall(question[: ones.start()]) if ones and not out else []
    return out or [(k, []) for k in kinds[-1:]]


def without_guesses(question: str) -> str:
    """The question without the answers it guesses right after the kind it asks for ("which LLMs (GPT-4?
    Llama?) were evaluated" -> "which LLMs were evaluated"): guesses are not the subject, and the paper
    asked about need not name them."""
    for m in reversed(list(_ENTITY.finditer(question))):
        g = re.match(r"\s*\(([^()]{1,80})\)", question[m.end() :])
        if g and ("?" in g.group(1) or _EXAMPLES.search(g.group(1).strip())):
            question = question[: m.end()] + question[m.end() + g.end() :]
    return question


def _head_stems(head: str) -> set[str]:
    words = re.findall(r"[a-z]+", head)
    stems = {stem(words[-1])}
    if "language" in words or words[-1].startswith("llm"):
        stems |= {stem("llm"), stem("language")}
    return stems


def _spelled_fields(sentence: str) -> frozenset[str]:
    """Words of the sentence that spell out a field acronym given after them ("Large Language Models
    (LLMs)"); capitalised, they still name no particular thing."""
    low = sentence.lower()
    out = set()
    for m in re.finditer(r"\(\s*([a-z]{2,6}?)s?\s*\)", low):
        acronym = m.group(1)
        pattern = acronym.upper() in FIELD_ACRONYMS and initials_pattern(acronym)
        spelled = pattern and [
            x for x in pattern.finditer(low, 0, m.start()) if not low[x.end() : m.start()].strip()
        ]
        if spelled:
            out |= set(re.findall(r"[a-z]+", spelled[-1].group()))
    return frozenset(out)


def _names(
    sentence: str, known: set[str], spelled: str = "", family: frozenset[str] = frozenset()
) -> list[str]:
    """Proper names in a sentence (acronyms, CamelCase, letter+digit names, capitalised words after
    its first) that are not in `known` (flattened words and stems of the question and title), nor
    an acronym of words `spelled` out (flattened: "DL" for a question saying "deep learning"), nor of
    the paper's own `family` (name heads of its title: "FairMT-10K" beside "FairMT-Bench")."""
    out = []
    spelled_fields = _spelled_fields(sentence)
    for i, t in enumerate(TOKEN.findall(sentence)):
        if len(t) < 2 or not re.search(r"[A-Za-z]", t) or t.startswith(("O(", "$")):
            continue
        if t.lower() in spelled_fields or re.fullmatch(r"[A-Za-z]+@(?:\d+|k)", t):
            continue  # "Large Language Models (LLMs)": a field spelled out; "Pass@64": a metric's cut-off
        upper = sum(c.isupper() for c in t)
        named = upper >= 2 or (upper and any(c.isdigit() for c in t)) or (i > 0 and t[0].isupper())
        if named and (field_word(t) or (upper == 1 and t.lower() in stopwords())):
            continue  # "embodied AI", "LLMs": a field or a kind; "…, We": a capitalised function word
        if named and "-" in t and flatten(t.partition("-")[0]) in family:
            continue  # a sibling of the paper's own artifact, not one it names from elsewhere
        if named and flatten(t) not in known and stem(t.rstrip("s")) not in known:
            acronym = initials_pattern(t.rstrip("s").lower()) if t.rstrip("s").isupper() else None
            if not (acronym and acronym.search(spelled)):
                out.append(t)
    return out


@functools.lru_cache(maxsize=64)
def _family(title: str) -> frozenset[str]:
    """Heads of the title's hyphenated names ("FairMT" of "FairMT-Bench"): the paper's own artifacts."""
    out = set()
    for t in TOKEN.findall(title):
        head, dash, _ = t.partition("-")
        if dash and (sum(c.isupper() for c in head) >= 2 or any(c.isdigit() for c in head)):
            out.add(flatten(head))
    return frozenset(out)


def unnamed_entity(question: str, sentences: list[tuple[str, str]]) -> str | None:
    """The first kind of named thing the question asks for ("simulator") that the sentences talking
    about it never name; None when each is named or never talked about (other checks decide then).
    `sentences`: (text, its paper's title) from the papers the question is about."""
    asked = {flatten(t) for t in TOKEN.findall(question)} | {stem(t) for t in TOKEN.findall(question)}
    asked |= {flatten(p) for t in TOKEN.findall(question) for p in t.split("-")}  # "Lean" of "Lean-STaR"
    spelled = flatten(question)

    def names(text: str, title: str, known: set[str]) -> list[str]:
        return _names(text, known | {flatten(t) for t in TOKEN.findall(title)}, spelled, _family(title))

    skip = stopwords() | _STRESS
    for head, between in _asked_kinds(question):
        stems = _head_stems(head)
        # "which depth model": a sentence on the paper's own model ("… in our model") is not about it
        within = {stem(w) for w in between if w.lower() not in skip} if "model" in stems else set()
        talk = [
            (text, title)
            for text, title in sentences
            if (words := {stem(p) for t in TOKEN.findall(text) for p in [t, *t.split("-")]}) & stems
            and (not within or words & within)
        ]
        known = asked | stems
        if talk and not any(names(text, title, known) for text, title in talk):
            return head
        # never talked about: an abstract that names nothing at all can't say which one either
        if not talk and sentences and not any(names(text, title, known) for text, title in sentences):
            return head
    return None


# "Is the code released?", "official implementation? link?": whether (and where) code is out, which an
# abstract states ("Code is available at https://…") or doesn't; relevance alone can't tell.
_CODE = r"code(?!\s+(?:generation|completion|llms?|models?|synthesis|editing|repair|search|review|reasoning|tasks?))"
_ASKS_CODE = re.compile(
    rf"\b(?:{_CODE}|implementation|repo(?:sitory)?|github|weights|checkpoints?)\b[^?]{{0,60}}?"
    r"\b(?:available|release[sd]?|public(?:ly)?|open[- ]?source[sd]?|link|download|url)\b|"
    r"\b(?:release[sd]?|publish(?:ed)?|open[- ]?source[sd]?|share[sd]?)\b[^?]{0,30}?\b(?:the |their |its )?"
    rf"(?:{_CODE}|implementation|weights|checkpoints?)\b|"
    rf"\b(?:official|public|open[- ]source)\s+(?:{_CODE}|implementation|repo(?:sitory)?)\b|"
    r"\b(?:where|how)\s+(?:can|do)\s+(?:i|we|you)\s+(?:find|get|download)\s+(?:the\s+)?(?:code|implementation)\b",
    re.I,
)
_STATES_CODE = re.compile(
    r"github|gitlab|huggingface\.co|https?://|\burl\b|\b(?:code|implementation|models?|weights|checkpoints?|"
    r"data(?:sets?)?|benchmarks?|library|package|toolkit|software|framework)\b[^.]{0,60}?\b(?:is |are |will be )?"
    r"(?:available|released?|public(?:ly)?|open[- ]?sourced?)\b|\bopen[- ]?source[sd]?\b",
    re.I,
)


def asks_code(question: str) -> bool:
    """The question asks whether (or where) code, weights or an implementation is released."""
    return bool(_ASKS_CODE.search(question))


def states_code(sentence: str) -> bool:
    """The sentence says something is released: a link, or "code is available", "open-source"."""
    return bool(_STATES_CODE.search(sentence))
