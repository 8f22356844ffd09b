"""What kind of answer a question needs, and whether an abstract sentence supplies it.

"How many GPU hours", "what PSNR does X reach": a number, next to the thing measured. "Which
simulator", "which LLM": a name the question does not already give. An abstract that talks about
the subject but never states the number or the name cannot answer, however relevant it reads, so
such questions are refused before generation instead of drafting around the gap.
"""

from __future__ import annotations

import functools
import re

from rag.cite import _norm, flatten, initials_pattern, stopwords

_QUANTITY = re.compile(
    r"\b(how (many|much|long|fast|large|big)|what (is|was|are|were) the (number|size|accuracy|score|speed|rate)|"
    r"as a number|what (accuracy|fid|score|speed-?up|learning rate|batch size|percentage|number|bleu|f1|auc)|"
    r"(learning rate|batch size|parameters|gpu hours|wall-clock))\b",
    re.I,
)
# The thing a quantity question counts or measures ("how many GPU hours", "what learning rate"):
# the evidence sentence that states the number must name it.
_QUANTITY_NOUN = re.compile(
    r"\bhow many ((?:[\w\-]+ ){0,2}?[\w\-]+?)(?= (?:does|do|did|were|was|are|is|have|has|had|can|could|would|"
    r"will|in|of|for|on|to|per|were|the|it|they)\b|[?,.;]|$)|"
    r"\bwhat (?:is |was |are |were )?(?:the )?(number|size|accuracy|score|speed-?up|learning rate|batch size|"
    r"percentage|fid|bleu|f1|auc|win rate|success rate|error rate|parameters?)\b|"
    r"\b(learning rate|batch size|parameters|gpu hours|speed-?up)\b",
    re.I,
)
_AUX = r"does|do|did|is|was|are|were|has|have|had|can|could|would"
# "What [exact] PSNR does X reach", "what AP50 gains do they report": a measured value, named by its
# metric (the phrase's last word) and ended by a verb, a preposition or the question's end.
_METRIC = (
    r"accuracy|accuracies|score|psnr|ssim|lpips|fid|perplexity|ratio|speed-?up|gain|improvement|reduction|"
    r"saving|rate|error|f1|bleu|rouge|auc|auroc|recall|precision|throughput|latency|map|ap\d*|percentage|"
    r"compression|speed|fps|runtime|memory"
)
# Words between "what" and the metric that make the metric a verb ("what exactly does it score?")
_NOT_MODIFIER = rf"(?!(?:{_AUX}|it|they|we|this|that|these|those)\b)"
# ... and words that put the thing in relation to another ("what improvement over the baselines")
_NOT_RELATION = r"(?!(?:over|than|against|versus|vs|to|on|in|with|from|across|compared|relative|beyond)\b)"
_VALUE = re.compile(
    rf"\b(?:what|which)\s+((?:{_NOT_MODIFIER}[\w@.\-]+\s+){{0,3}}?(?:{_METRIC})s?)\b"
    rf"(?=\s+(?:{_AUX}|and|or|of|on|in|for|at|with|from|over)\b|\s*[?,;(]|$)",
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
# Things that are referred to by their proper names: "which simulator" wants "CARLA", not "a simulator"
_ENTITY = re.compile(
    rf"\b(?:which|what)\s+(?:{_NOT_MODIFIER}{_NOT_RELATION}[\w\-]+\s+){{0,5}}?"  # "which of the six … models"
    r"(simulators?|datasets?|benchmarks?|baselines?|llms?|(?:language |vision-language |base |foundation |pre-?trained )?models?|"
    r"gpus?|hardware|platforms?|librar(?:y|ies)|toolkits?|robots?|engines?|backbones?|optimizers?|solvers?)\b"
    r"(?!\s+(?:papers?|works?|stud(?:y|ies)|articles?|submissions?|abstracts?)\b)"  # "benchmark papers": a paper
    rf"(?=\s+(?:{_AUX}|and|or|in|on|for|to|with|from|of|\w+s|\w+ed)\b|\s*[?,;]|$)",  # "models benchmarked"
    re.I,
)
# ... unless the paper made it: a new dataset is described ("aerial images of buildings"), not named
_INTRODUCED = re.compile(
    r"\b(new|novel|release[sd]?|introduc\w*|propos\w*|buil[dt]s?|creat\w*|collect\w*|curat\w*)\b", re.I
)
# Sentence tokens: math and O(...) expressions whole, then words with inner punctuation ("Llama3-70B", "+5.3%")
_TOKEN = re.compile(r"O\([^)]{1,30}\)|\$[^$]{1,60}\$|[A-Za-z0-9][A-Za-z0-9@.%\-]*[A-Za-z0-9%]|\d")


_COUNTS_PAPERS = re.compile(
    r"\bhow many (?:\w+ ){0,2}?(?:papers|works|studies|submissions|abstracts)\b", re.I
)


_HOW_MANY = re.compile(r"\bhow many\b", re.I)


def asks_quantity(question: str) -> bool:
    """The question wants a number an abstract states: a count, a size, or a measured value (not a
    count of papers, which the lister gives)."""
    if _COUNTS_PAPERS.search(question):
        return False
    return bool(_QUANTITY.search(question) or _VALUE.search(question))


def quantity_heads(question: str) -> set[str]:
    """Stemmed words naming what a quantity question counts or measures: "how many GPU hours" ->
    {"hour"}; "what AP50 gains ...?" -> the metric's words and their synonyms."""
    heads = set()
    for m in _QUANTITY_NOUN.finditer(question):
        phrase = next(g for g in m.groups() if g)
        words = [w for w in re.findall(r"[A-Za-z][A-Za-z\-]*", phrase) if w.lower() not in stopwords()]
        if words:
            heads.add(_norm(words[-1]))
    for m in _VALUE.finditer(question):
        for w in re.findall(r"[\w@.\-]+", m.group(1)):
            if w.lower() not in _QUALIFIERS and w.lower() not in stopwords():
                heads |= {_norm(w)} | _METRIC_SYNONYMS.get(_norm(w), set())
    if not heads:
        for m in _DIMENSION.finditer(question):
            heads |= {_norm(w) for w in _DIMENSIONS[_DIMENSION_OF[m.group(1).lower()]][1].split()}
        # "How big is the ConPair dataset?": its size is a count of what it holds ("15k pairs"), stated
        # next to its name or kind
        for m in _SIZE_OF.finditer(question):
            heads |= {
                _norm(w) for w in re.findall(r"[A-Za-z][\w\-]*", m.group(1)) if w.lower() not in stopwords()
            }
    return heads


# Words of a value question that ask how much better, not what is measured
_GENERIC_METRICS = frozenset({"gain", "improv", "reduct", "save", "increas", "boost", "perform", "result"})


def names_measure(heads: set[str]) -> bool:
    """Whether a value question leaves it to the place it names to say what was measured: it names no
    metric, or asks for a gain ("AP50 gains … on ScanNet V2" -> "ScanNet V2 (+5.3)"); a metric alone
    ("inference speed", "L2 error") needs a number of its own."""
    return not heads or bool(heads & _GENERIC_METRICS)


# "…, visium or xenium?": the options a question asks the sources to choose between (1-3 words each,
# ending the question); "or not", "or both" offer no option of their own
_CHOICE = re.compile(
    r"[,:;(\-–—]\s*(?:is it |was it |the )?((?:[\w.+\-]+\s){0,2}[\w.+\-]+)\s+or\s+(?:the )?"
    r"((?:[\w.+\-]+\s){0,2}[\w.+\-]+)\s*\)?\s*\?\s*$",
    re.I,
)
_NO_OPTION = frozenset("not both neither either none otherwise something else other others".split())


def choice_options(question: str) -> list[str]:
    """The options a question ends by offering ("…, visium or xenium?" -> ["visium", "xenium"]); none
    when either side is only function words or a non-option ("or not")."""
    m = _CHOICE.search(question)
    if not m:
        return []
    opts = [" ".join(g.split()).strip(".-") for g in m.groups()]
    for o in opts:
        words = o.lower().split()
        if not o or all(w in stopwords() or w in _NO_OPTION for w in words) or words[-1] in _NO_OPTION:
            return []
    return opts


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
_NUMBER_WORD = re.compile(
    r"one|two|three|four|five|six|seven|eight|nine|ten|twice|thrice|half|hundreds?|thousands?|millions?|dozens?|"
    r"\w+fold|single|(?:sub|super)?linear|quadratic|cubic|exponential|logarithmic|polynomial",  # orders of growth
    re.I,
)


def _is_number(tok: str) -> bool:
    """ "135", "+5.3", "90%", "12-458x", "2.3B", "three", "linear" (a speedup's order), "$O(d^{1/3})$";
    not "Llama3-70B" or "AP50"."""
    return tok.startswith(("O(", "$")) or bool(_NUMBER.fullmatch(tok) or _NUMBER_WORD.fullmatch(tok))


@functools.lru_cache(maxsize=64)
def _given_tokens(question: str) -> frozenset[str]:
    """The question's tokens, flattened: read once per question, not once per evidence sentence."""
    return frozenset(flatten(t) for t in _TOKEN.findall(question))


def states_quantity(sentence: str, heads: set[str], given: str, window: int) -> bool:
    """Whether the sentence states a number that the question (`given`) does not already hold, within
    `window` tokens of a word of `heads` (any number when there are no heads)."""
    have = _given_tokens(given)
    toks = _TOKEN.findall(sentence)
    nums = [i for i, t in enumerate(toks) if _is_number(t) and flatten(t) not in have]
    if not heads:
        return bool(nums)
    at = [i for i, t in enumerate(toks) if any(_norm(p) in heads for p in [t, *re.split(r"[-@]", t)])]
    if _HOW_MANY.search(given):
        # a count stands before what it counts ("8 LoRA adaptors"), or just after it ("adaptors: 8");
        # "one number per adaptor" counts numbers
        low = [t.lower() for t in toks]
        return any(
            (0 < j - i <= window and "per" not in low[i + 1 : j]) or 0 < i - j <= 2 for i in nums for j in at
        )
    return any(abs(i - j) <= window for i in nums for j in at)


def entity_heads(question: str) -> list[str]:
    """The kinds of named thing the question asks for ("which simulator", "which LLMs"); none when
    the question is about something the paper introduces."""
    if _INTRODUCED.search(question):
        return []
    return [m.group(1).lower() for m in _ENTITY.finditer(question)]


def _head_stems(head: str) -> set[str]:
    words = re.findall(r"[a-z]+", head)
    stems = {_norm(words[-1])}
    if "language" in words or words[-1].startswith("llm"):
        stems |= {_norm("llm"), _norm("language")}
    return stems


# Acronyms of fields and kinds of things, written in capitals but naming no particular one
_FIELD_ACRONYMS = frozenset(
    "AI ML DL RL NLP CV LLM VLM MLLM LM GPU CPU TPU API SOTA GNN CNN RNN DNN MLP GAN VAE RAG QA VQA LSTM RLHF "
    "MoE".split()
)


def _field_word(token: str) -> bool:
    """ "AI", "LLMs", "LLM-based", "GPU-heavy": a field or a kind; "ViT-B" or "GPT-4" name one."""
    head, _, rest = token.partition("-")
    return head.rstrip("s") in _FIELD_ACRONYMS and (not rest or rest.islower())


def _names(
    sentence: str, known: set[str], spelled: str = "", family: frozenset[str] = frozenset()
) -> list[str]:
    """Proper names in a sentence (acronyms, CamelCase, letter+digit names, capitalised words after
    its first) that are not in `known` (flattened words and stems of the question and title), nor
    an acronym of words `spelled` out (flattened: "DL" for a question saying "deep learning"), nor of
    the paper's own `family` (name heads of its title: "FairMT-10K" beside "FairMT-Bench")."""
    out = []
    for i, t in enumerate(_TOKEN.findall(sentence)):
        if len(t) < 2 or not re.search(r"[A-Za-z]", t) or t.startswith(("O(", "$")):
            continue
        upper = sum(c.isupper() for c in t)
        named = upper >= 2 or (upper and any(c.isdigit() for c in t)) or (i > 0 and t[0].isupper())
        if named and (_field_word(t) or (upper == 1 and t.lower() in stopwords())):
            continue  # "embodied AI", "LLMs": a field or a kind; "…, We": a capitalised function word
        if named and "-" in t and flatten(t.partition("-")[0]) in family:
            continue  # a sibling of the paper's own artifact, not one it names from elsewhere
        if named and flatten(t) not in known and _norm(t.rstrip("s")) not in known:
            acronym = initials_pattern(t.rstrip("s").lower()) if t.rstrip("s").isupper() else None
            if not (acronym and acronym.search(spelled)):
                out.append(t)
    return out


@functools.lru_cache(maxsize=64)
def _family(title: str) -> frozenset[str]:
    """Heads of the title's hyphenated names ("FairMT" of "FairMT-Bench"): the paper's own artifacts."""
    out = set()
    for t in _TOKEN.findall(title):
        head, dash, _ = t.partition("-")
        if dash and (sum(c.isupper() for c in head) >= 2 or any(c.isdigit() for c in head)):
            out.add(flatten(head))
    return frozenset(out)


def unnamed_entity(question: str, sentences: list[tuple[str, str]]) -> str | None:
    """The first kind of named thing the question asks for ("simulator") that the sentences talking
    about it never name; None when each is named or never talked about (other checks decide then).
    `sentences`: (text, its paper's title) from the papers the question is about."""
    asked = {flatten(t) for t in _TOKEN.findall(question)} | {_norm(t) for t in _TOKEN.findall(question)}
    for head in entity_heads(question):
        stems = _head_stems(head)
        talk = [
            (text, title)
            for text, title in sentences
            if stems & {_norm(p) for t in _TOKEN.findall(text) for p in [t, *t.split("-")]}
        ]
        known = asked | stems
        if talk and not any(
            _names(
                text, known | {flatten(t) for t in _TOKEN.findall(title)}, flatten(question), _family(title)
            )
            for text, title in talk
        ):
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
