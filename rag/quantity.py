"""Quantity questions: "how many GPU hours", "what PSNR does X reach", "how much faster".

They want a number an abstract states, next to the thing counted or measured. An abstract that talks
about the subject but states no such number cannot answer, however relevant it reads, so such
questions are refused before generation (rag.question.answerability).
"""

from __future__ import annotations

import functools
import re

from rag.text import flatten, stem, stopwords

# Settings a paper sets to a value ("what epsilon did they use", "which temperature"): asked for, they
# want the value, which an abstract states as a number or not at all
_SETTING = (
    r"epsilon|privacy budgets?|learning rates?|batch sizes?|temperatures?|weight decay|dropout rates?|"
    r"step sizes?|context lengths?|window sizes?"
)
# ... named as the thing asked, not as a modifier ("which temperature scaling method")
_SETTING_END = (
    r"(?=\s*[?,;(/]|$|\s+(?:does|do|did|is|was|are|were|has|have|had|can|could|would|and|or|of|on|in|for|at|"
    r"with|from|over|they|we|it|used?|values?|settings?)\b)"
)
_QUANTITY = re.compile(
    r"\b(how (many|much|long|fast|large|big)|what (is|was|are|were) the (number|size|accuracy|score|speed|rate)|"
    r"as a number|what (accuracy|fid|score|speed-?up|percentage|number|bleu|f1|auc)|"
    rf"(?:what|which) (?:is |was |are |were )?(?:the )?(?:values? (?:of |for )?)?(?:the )?(?:{_SETTING}){_SETTING_END}|"
    r"(learning rate|batch size|parameters|gpu hours|wall-clock))\b",
    re.I,
)
# The thing a quantity question counts or measures ("how many GPU hours", "what learning rate"):
# the evidence sentence that states the number must name it.
_QUANTITY_NOUN = re.compile(
    r"\bhow many ((?:[\w\-]+ ){0,2}?[\w\-]+?)(?= (?:does|do|did|were|was|are|is|have|has|had|can|could|would|"
    r"will|should|must|in|of|for|on|to|per|at|by|with|from|over|under|across|between|among|into|than|as|"
    r"before|after|until|while|when|where|that|which|if|the|it|they|we|you|there|\w{3,}ed)\b|[?,.;]|$)|"
    r"\bwhat (?:is |was |are |were )?(?:the )?(number|size|accuracy|score|speed-?up|"
    r"percentage|fid|bleu|f1|auc|win rate|success rate|error rate|parameters?)\b|"
    rf"\b(?:what|which) (?:is |was |are |were )?(?:the )?(?:values? (?:of |for )?)?(?:the )?({_SETTING}){_SETTING_END}|"
    r"\b(learning rate|batch size|parameters|gpu hours|speed-?up)\b",
    re.I,
)
AUX = r"does|do|did|is|was|are|were|has|have|had|can|could|would"
# "What [exact] PSNR does X reach", "what AP50 gains do they report": a measured value, named by its
# metric (the phrase's last word) and ended by a verb, a preposition or the question's end.
_METRIC = (
    r"accuracy|accuracies|score|psnr|ssim|lpips|fid|perplexity|ratio|speed-?up|gain|improvement|reduction|"
    r"saving|rate|error|f1|bleu|rouge|auc|auroc|recall|precision|throughput|latency|map|ap\d*|percentage|"
    r"compression|speed|fps|runtime|memory"
)
# Words between "what" and the metric that make the metric a verb ("what exactly does it score?")
NOT_MODIFIER = rf"(?!(?:{AUX}|it|they|we|this|that|these|those)\b)"
# ... and words that put the thing in relation to another ("what improvement over the baselines")
NOT_RELATION = r"(?!(?:over|than|against|versus|vs|to|on|in|with|from|across|compared|relative|beyond)\b)"
_VALUE = re.compile(
    rf"\b(?:what|which)\s+((?:{NOT_MODIFIER}[\w@.\-]+\s+){{0,3}}?(?:{_METRIC})s?)\b"
    rf"(?=\s+(?:{AUX}|and|or|of|on|in|for|at|with|from|over)\b|\s*[?,;(]|$)",
    re.I,
)
# Words of a value phrase that qualify it rather than say what is measured
_QUALIFIERS = {
    "exact",
    "precise",
    "specific",
    "overall",
    "average",
    "mean",
    "final",
    "reported",
    "best",
    "headline",
}
# A metric an abstract may state under another word ("+5.3 improvement" for "what gains")
_METRIC_SYNONYMS = {
    "gain": {"improv", "increas", "boost", "outperform"},
    "improv": {"gain", "increas", "boost"},
    "reduct": {"decreas", "save", "lower", "fewer"},
    "save": {"reduct", "decreas", "fewer"},
    "speedup": {"faster", "speed", "acceler"},
}
# A setting an abstract may state under another word or symbol ("ε = 1", "a privacy budget of 8")
_SETTING_SYNONYMS = {"epsilon": {"varepsilon", "budget"}, "budget": {"epsilon", "varepsilon"}}
# "How much faster", "how long", "how big": no noun says what is measured, the adjective does; the
# number must stand next to a word of its dimension. Dimension -> (its name, its words), and the
# adjectives that ask for it.
_DIMENSIONS = {
    "fast": ("speed", "faster speed speedup accelerate times quicker"),
    "long": ("time", "hours days minutes seconds weeks epochs steps time length tokens"),
    "large": ("size", "size scale parameters billion million larger bigger"),
    "small": ("size", "size smaller fewer reduction parameters compression"),
    "better": ("gain", "better improvement gain outperforms higher lower"),
    "cheap": ("cost", "cost cheaper reduction saving fewer"),
}
_DIMENSION_OF = {
    **dict.fromkeys(("faster", "quicker", "slower", "fast", "quick", "quickly"), "fast"),
    "long": "long",
    **dict.fromkeys(("large", "big", "larger", "bigger"), "large"),
    **dict.fromkeys(("small", "smaller", "fewer", "less"), "small"),
    "better": "better",
    "cheaper": "cheap",
}
_DIMENSION = re.compile(
    rf"\bhow (?:much )?({'|'.join(sorted(_DIMENSION_OF, key=len, reverse=True))})\b", re.I
)
# "How big is the X …": the thing whose size is asked (up to a preposition or the end of the clause)
_SIZE_OF = re.compile(
    r"\bhow (?:big|large|small)\s+(?:is|are|was|were)\s+((?:(?!(?:in|on|for|of|to|by|from|at|compared|relative|"
    r"than|when|and|or|with|that|which|who|they|we|it|you|used|between)\b)[\w\-]+\s*){1,4})",
    re.I,
)
# The value is measured on something the question names after its verb ("... reach on KAIST?")
_VALUE_VERB = re.compile(
    r"\b(reach|reaches|achieve|achieves|attain|attains|obtain|obtains|report|reports|get|gets|score|scores)\b",
    re.I,
)
# Sentence tokens: math and O(...) expressions whole, then words with inner punctuation ("Llama3-70B", "+5.3%")
TOKEN = re.compile(r"O\([^)]{1,30}\)|\$[^$]{1,60}\$|[A-Za-z0-9][A-Za-z0-9@.%\-]*[A-Za-z0-9%]|\d")


_COUNTS_PAPERS = re.compile(
    r"\bhow many (?:\w+ ){0,2}?(?:papers|works|studies|submissions|abstracts)\b", re.I
)


def asks_quantity(question: str) -> bool:
    """The question wants a number an abstract states: a count, a size, or a measured value (not a
    count of papers, which the lister gives)."""
    if _COUNTS_PAPERS.search(question):
        return False
    return bool(_QUANTITY.search(question) or _VALUE.search(question))


def _phrase_head(phrase: str) -> set[str]:
    """Stems of a counted phrase's last content word: "GPU hours" -> {"hour"}; an acronym's plural also
    as its singular ("GPUs" -> "gpus", "gpu": the stemmer leaves it alone, and "a single GPU" counts GPUs)."""
    words = [w for w in re.findall(r"[A-Za-z][A-Za-z\-]*", phrase) if w.lower() not in stopwords()]
    if not words:
        return set()
    word = words[-1]
    out = {stem(word)}
    if len(word) > 2 and word[-1] == "s" and word[:-1].isupper():
        out.add(stem(word[:-1]))
    return out


def quantity_heads(question: str) -> set[str]:
    """Stemmed words naming what a quantity question counts or measures: "how many GPU hours" ->
    {"hour"}; "what AP50 gains ...?" -> the metric's words and their synonyms."""
    heads = set()
    for m in _QUANTITY_NOUN.finditer(question):
        phrase = next(g for g in m.groups() if g)
        heads |= _phrase_head(phrase)
    heads |= {w for h in heads for w in _SETTING_SYNONYMS.get(h, ())}
    for m in _VALUE.finditer(question):
        for w in re.findall(r"[\w@.\-]+", m.group(1)):
            if w.lower() not in _QUALIFIERS and w.lower() not in stopwords():
                heads |= {stem(w)} | _METRIC_SYNONYMS.get(stem(w), set())
    if not heads:
        for m in _DIMENSION.finditer(question):
            heads |= {stem(w) for w in _DIMENSIONS[_DIMENSION_OF[m.group(1).lower()]][1].split()}
        # "How big is the ConPair dataset?": its size is a count of what it holds ("15k pairs"), stated
        # next to its name or kind
        for m in _SIZE_OF.finditer(question):
            heads |= {
                stem(w) for w in re.findall(r"[A-Za-z][\w\-]*", m.group(1)) if w.lower() not in stopwords()
            }
    return heads


# Words of a value question that ask how much better, not what is measured
_GENERIC_METRICS = frozenset({"gain", "improv", "reduct", "save", "increas", "boost"})


def names_measure(heads: set[str]) -> bool:
    """Whether a value question leaves it to the place it names to say what was measured: it names no
    metric, or asks for a gain ("AP50 gains … on ScanNet V2" -> "ScanNet V2 (+5.3)"); a metric alone
    ("inference speed", "L2 error") needs a number of its own."""
    return not heads or bool(heads & _GENERIC_METRICS)


def measured_on(question: str) -> str:
    """The part of a value question naming where the value is measured ("… reach on the KAIST
    dataset?" -> "on the KAIST dataset?"): its names count as heads too ("ScanNet V2 (+5.3)")."""
    m = _VALUE.search(question)
    verb = _VALUE_VERB.search(question, m.end()) if m else None
    return question[verb.end() :] if verb else ""


def quantity_phrase(question: str) -> str | None:
    """The words naming what a quantity question measures, as the user wrote them ("GPU hours"), or
    the adjective's dimension ("how much faster" -> "speed")."""
    found = [m for m in (_QUANTITY_NOUN.search(question), _VALUE.search(question)) if m]
    dim = _DIMENSION.search(question)
    if dim and not any(next(g for g in m.groups() if g).lower() not in _DIMENSION_OF for m in found):
        return _DIMENSIONS[_DIMENSION_OF[dim.group(1).lower()]][0]
    if not found:
        return None
    m = min(found, key=lambda m: (m.start(), -m.end()))  # the first, and of those the longest
    words = [w for w in next(g for g in m.groups() if g).split() if w.lower() not in _QUALIFIERS]
    return " ".join(words) or None


_NUMBER = re.compile(r"\d[\d.,]*(?:-\d[\d.,]*)?(?:%|x|×|k|K|M|B)?")
_CARDINAL_WORDS = (
    r"one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|(?:thir|four|fif|six|seven|eigh|nine)teen|"
    r"(?:twen|thir|for|fif|six|seven|eigh|nine)ty"
)
_NUMBER_WORD = re.compile(
    rf"{_CARDINAL_WORDS}|twice|thrice|half|hundreds?|thousands?|millions?|dozens?|"
    r"\w+fold|single|(?:sub|super)?linear|quadratic|cubic|exponential|logarithmic|polynomial",  # orders of growth
    re.I,
)
_MAGNITUDE = re.compile(r"\d[\d.,]*[KMB]")
# what a count fused to its noun starts with ("12-layer", "7B-parameter", "thirty-two-layer")
_CARDINAL = re.compile(rf"\d[\d.,]*[KMB]?|{_CARDINAL_WORDS}", re.I)


def _is_number(tok: str) -> bool:
    """ "135", "+5.3", "90%", "12-458x", "2.3B", "three", "linear" (a speedup's order), "$O(d^{1/3})$";
    not "Llama3-70B" or "AP50"."""
    return tok.startswith(("O(", "$")) or bool(_NUMBER.fullmatch(tok) or _NUMBER_WORD.fullmatch(tok))


def _counts_fused(tok: str, counted: frozenset[str]) -> bool:
    """ "12-layer", "thirty-two-layer", "7B-parameter": a cardinal fused to a noun a "how many" counts;
    not "single-omics" nor "3-WL"."""
    *count, noun = tok.split("-")
    return bool(count) and all(_CARDINAL.fullmatch(c) for c in count) and stem(noun) in counted


@functools.lru_cache(maxsize=64)
def _given_tokens(question: str) -> frozenset[str]:
    """The question's tokens, flattened: read once per question, not once per evidence sentence."""
    return frozenset(flatten(t) for t in TOKEN.findall(question))


def states_quantity(sentence: str, heads: set[str], given: str, window: int) -> bool:
    """Whether the sentence states a number that the question (`given`) does not already hold, within
    `window` tokens of a word of `heads` (any number when there are no heads)."""
    have = _given_tokens(given)
    toks = TOKEN.findall(sentence.replace("ε", " epsilon ").replace("ϵ", " epsilon "))
    # "single" counts ("a single GPU") but measures nothing: no accuracy or error is "single"
    metric = _asks_metric(given)
    nums = [
        i
        for i, t in enumerate(toks)
        if _is_number(t) and flatten(t) not in have and not (metric and t.lower() == "single")
    ]
    if not heads:
        return bool(nums)
    counted = _counted(given)
    # "with up to 100K nodes", "a 7B model": a count with a magnitude is a size, whatever it counts
    if "size" in heads and any(_MAGNITUDE.fullmatch(toks[i]) for i in nums):
        return True
    # "a 12-layer transformer" counts layers: a number fused to the very noun a "how many" asks about
    if any(_counts_fused(t, counted) and flatten(t) not in have for t in toks):
        return True
    # a word inside a math token names too ("$\\varepsilon=1$")
    parts = [
        [t, *re.split(r"[-@]", t), *(re.findall(r"[A-Za-z]+", t) if t.startswith("$") else ())] for t in toks
    ]
    at = [i for i, ps in enumerate(parts) if any(stem(p) in heads for p in ps)]
    low = [t.lower() for t in toks]

    def counts_other(i: int, j: int) -> bool:
        # "one number per adaptor" counts numbers, not the adaptors a "how many" asks for
        return i < j and "per" in low[i + 1 : j] and stem(toks[j]) in counted

    return any(abs(i - j) <= window and not counts_other(i, j) for i in nums for j in at)


@functools.lru_cache(maxsize=64)
def _asks_metric(question: str) -> bool:
    """The question asks a measured value ("what accuracy …"), read once per question, not per sentence."""
    return bool(_VALUE.search(question))


@functools.lru_cache(maxsize=64)
def _counted(question: str) -> frozenset[str]:
    """The heads a "how many" phrase counts ("how many adaptors per client" -> {"adaptor"})."""
    return frozenset(
        h for m in _QUANTITY_NOUN.finditer(question) if m.group(1) for h in _phrase_head(m.group(1))
    )
