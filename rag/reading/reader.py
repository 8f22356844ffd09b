"""Reading a question once: the user's words -> a typed `Reading` that every later stage takes.

Words decide the shape, the parts and what the question names; for a chat question one retrieval check
decides whether it leans on an earlier turn. Nothing is generated, so a question reads the same on
every CPU. Every word list question reading uses is in the lexicon below.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from itertools import takewhile

from rag.retrieval.filters import Filters, decisions_said, filters_from_question
from rag.retrieval.names import flatten, mentions, named_terms, own_name
from rag.text import COURTESY, Idf, content_words, negated, nltk_stopwords, without_venue
from rag.types import Hit, Paper

# ------------------------------------------------------------------ lexicon
WH = frozenset("what which how who when where why".split())
AUX = frozenset("does do did is are was were can could has have had will would should".split())
PAPER_NOUNS = frozenset(
    "paper papers work works study studies article articles abstract abstracts submission submissions "
    "publication publications research".split()
)
# "what methods did they try?" asks about a paper, not for papers: methods and approaches are not listed here
MANY_NOUNS = frozenset("papers works studies articles abstracts submissions publications".split())
LIST_VERBS = frozenset("list find show name enumerate give".split())
SUMMARY_HEADS = frozenset("summarize summarise summary overview recap".split())
SUMMARY_WORDS = content_words(" ".join(SUMMARY_HEADS))  # their stems: a summary asked with no topic
# what a list's papers have in common: "main takeaways from these?", "the big picture", "tl;dr of these"
OVERVIEW = SUMMARY_HEADS | frozenset(
    "gist tl tldr themes theme threads trends takeaways common picture sum overall overarching characterize".split()
)
COMPARE_WORDS = frozenset("compare compared comparison contrast differ differs difference versus vs".split())
PRONOUNS = frozenset("it its it's they them their theirs itself themselves he she his her".split())
# "the method", "the authors": a weak definite that leans on the subject under discussion
DEFINITE_NOUNS = frozenset(
    "paper method model approach framework work study technique authors author".split()
)
ELLIPSIS = frozenset("and also but or".split())
# chat words before the question ("OK, so …", "Unrelated: …"); the generator would copy them
OPENERS = frozenset("so ok okay now also anyway alright right fine great cool thanks next well hmm".split())
# the user says the subject changes
SWITCH_WORDS = frozenset("unrelated unrelatedly switching moving changing shifting".split())
SWITCH_PHRASES = (
    "new topic", "new question", "new q", "different topic", "different question", "different paper",
    "another paper", "separate question", "change of topic", "change of subject", "let's move", "lets move",
    "let's switch", "let's turn", "on another note", "on a different note",
)  # fmt: skip
ORDINALS = {
    w: i for i, w in enumerate("first second third fourth fifth sixth seventh eighth ninth tenth".split())
}  # a list answer shows 10 lines, a summary 20
# "the first one", "going back to the second paper": an ordinal pointing at a turn or a list entry
POINTER_NOUNS = frozenset(
    "one paper work method model approach question study answer entry result item".split()
)
# how a question asks for a number
NUMBER_HEADS = frozenset("many much long large big fast far often accurate".split())  # after "how"
MEASURES = frozenset(
    "number size accuracy score speed speedup speed-up percentage fraction rate ratio fid psnr ssim bleu "
    "rouge f1 auc auroc perplexity latency throughput gain gains improvement reduction error".split()
)
# what did the papers on X claim? (the verb asks what they said; X is the topic)
SAID_VERBS = frozenset(
    "claim report find found show shown say said conclude argue demonstrate suggest".split()
)

_WORD = re.compile(r"[A-Za-z0-9$][\w$'’.\-]*[\w$]|[A-Za-z0-9]")
# a new clause: "…, and how many …", "…; what …", "…? Which …"
_CLAUSE = re.compile(
    r"[?;]\s+|,?\s+(?:and|also|plus)\s+(?=(?:how|what|which|who|when|where|why|does|do|did|is|are)\b)", re.I
)

# a paper described by what it does: "the work that …", "the re-ID paper —", "that planning approach mixing …"
_DESCRIBED = re.compile(
    r"(?i)\b(?:the|that|this)\s+(?:[\w-]+\s+){0,4}?(?:paper|work|method|approach|study|one|benchmark|framework|model|"
    r"system|setup|analysis|network|solver|detector|dataset)\b\s*(?:that|which|where|who|on|about|for|with|using|in|"
    r"from|of|—|-|,)"
)


def words(text: str) -> list[str]:
    """The text's words, lowercase, curly apostrophes straightened."""
    return [w.lower().replace("’", "'").rstrip(".") for w in _WORD.findall(text)]


def _without_openers(ws: list[str]) -> list[str]:
    i = 0
    while i < len(ws) - 1 and ws[i] in OPENERS:
        i += 1
    return ws[i:]


# ------------------------------------------------------------------ records
@dataclass(frozen=True)
class Part:
    """One thing a question asks ("how many cell lines does it use")."""

    text: str
    number: str | None = None  # what a number is asked of ("cell lines"), when a number is asked
    thing: str = ""  # what the question word asks about ("which benchmark" -> "benchmark"; "" for "how …")


@dataclass
class Reading:
    """A question as read once. `query` is what retrieval and evidence use; stages read the fields, never
    the text again."""

    asked: str  # the user's words, cleaned (the venue and a filter phrase taken out)
    query: str  # standalone: the asked words with the earlier turn they lean on
    shape: str  # explain | which | list | compare | summary | decision
    many: bool = False  # a list asks for several papers
    base: str | None = None  # the earlier turn's standalone query this leans on
    how: str = "alone"  # alone | follow-up | points back | stated switch | over the list | list entry | PICK
    terms: tuple[str, ...] = ()  # what the user's words name ("celcomen", "scannet")
    parts: tuple[Part, ...] = ()
    filters: Filters = field(default_factory=Filters)
    topic: str = ""  # what listed or summarized papers must be about
    gain: float | None = None  # the retrieval check's rare-word margin, when it ran
    left: tuple = ()  # leaning words read alone: (the paper the chat was on, the stems it lacks)
    compared: int = 0  # a comparison: how many of the first sources are the papers it names, one each
    entry: str | None = None  # "the second one" after a list: that listed paper's id
    over: tuple[str, ...] = ()  # "what data do they use?" after a list: the listed papers' ids
    shown: tuple[str, ...] = ()  # the list a follow-up points into (kept for the next follow-up)
    page: int = 0  # "show me the rest" after a list: which page of the list's papers to show
    decision: str = ""  # shape "decision": the decisions asked of the papers `over` ("oral"; "" for any)
    hits: dict[str, list[Hit]] = field(default_factory=dict, repr=False)  # query -> its retrieval

    @property
    def prompt_question(self) -> str:
        """The question the generator is shown: the user's words without chat openers."""
        ws = _WORD.findall(self.asked)
        low = words(self.asked)
        skip = len(low) - len(_without_openers(low))
        if not skip:
            return self.asked
        rest = self.asked[self.asked.find(ws[skip]) :]
        return rest[:1].upper() + rest[1:] if rest[1:2].islower() else rest


# ------------------------------------------------------------------ shape
# The words that frame a request for papers around its topic ("Can you list papers on …", "I'm looking for work
# that …", "Is there any paper on …", "… - what papers are there?"): none of them is what the papers are about.
REQUEST = frozenset("you i i'm im am looking searching seeking please anything something list them".split())
# what asks for whatever the index has on a topic: "anything on X", "what's out there on X", "X - what do you have?"
TOPIC_ASKS = frozenset("anything stuff out have got been published done exists exist interested".split())
FRAME = (
    WH
    | AUX
    | PAPER_NOUNS
    | MANY_NOUNS
    | LIST_VERBS
    | SUMMARY_HEADS
    | OPENERS
    | COURTESY
    | REQUEST
    | TOPIC_ASKS
    | {
        *"there any me some the a an recent all many of on about that for in this these collection here where".split(),
        *"overview summary".split(),
    }
)
_ASKS = LIST_VERBS | {
    "looking",
    "searching",
    "seeking",
    "any",
    "anything",
}  # asks for papers (a summary doesn't)
_MASS = frozenset(
    "work works research".split()
)  # "any work on X", "looking for work on X": however many papers
_PLAIN_MANY = MANY_NOUNS - {"works", "studies"}  # plural nouns that are never a verb ("the paper studies X")
_SELECT = frozenset("one ones among both either two three".split())  # one of some papers is asked for
_RELATIVE = frozenset("that which who where".split())
_AFTER_NOUN = frozenset("on about regarding".split()) | _RELATIVE  # "papers on X", "papers that …"
_PARTICLES = frozenset("with on to at into about upon".split())  # "deal with", "focus on", "look into"
# a preposition before the paper noun: the noun is part of the topic ("methods that improve over papers on X")
_PREPOSITIONS = _PARTICLES | frozenset("over from in than by for against like across".split())
# what closes a question about the indexed papers rather than saying what they are about
TAIL = PAPER_NOUNS | {"in", "this", "these", "the", "collection", "here"}


def segments(text: str) -> list[str]:
    """The message's sentences and dash-set asides ("X - which papers?", "… RL? Give me a list.")."""
    out, start = [], 0
    for i, ch in enumerate(text):
        after = text[i + 1 : i + 3]
        sentence_end = ch == "." and (not after or (after[0] == " " and after[1:2].isupper()))  # not "e.g. x"
        dash = ch == "-" and text[i - 1 : i] == " " and after[:1] in (" ", "-")  # " - " or " -- "
        if ch in "?!;—–" or sentence_end or dash:
            out.append(text[start:i])
            start = i + 1
    out.append(text[start:])
    return [x for x in out if _WORD.search(x)]


def _lead(ws: list[str]) -> int:
    """How many of the words frame the request ("can you list papers on")."""
    i = 0
    while i < len(ws) and (ws[i] in FRAME or ws[i].split("'")[0] in WH):  # "what's out there on"
        i += 1
    return i


def _phrasal(low: list[str], i: int) -> bool:
    """Right after "papers (that)" or "any work" comes a verb; one with a particle ("… that deal with X", "…
    focusing on X") frames the topic. Another verb is kept: "papers that decode speech from brain activity"."""
    if i < 1 or len(low) - i <= 2:
        return False
    noun = i - 2 if i > 1 and low[i - 1] in _RELATIVE else i - 1
    return (
        low[noun] in MANY_NOUNS | _MASS
        and (noun == 0 or low[noun - 1] not in PAPER_NOUNS)  # "the paper studies X": "studies" is the verb
        and low[i + 1] in _PARTICLES
    )


def _request_words(low: list[str], lead: int) -> int | None:
    """Where the topic starts after a request's own words and its paper noun ("could you pull up papers on X",
    "I need a list of papers on X"), or None: a few words with no preposition, then "papers on/that/…" or
    "papers VERB on"; else after "a list of" near the start."""
    at = next((j for j in range(lead, min(lead + 5, len(low) - 2)) if low[j] in _PLAIN_MANY), None)
    if (
        at is not None and not set(low[lead:at]) & _PREPOSITIONS
    ):  # "methods for detecting AI-written papers on"
        if low[at + 1] in _AFTER_NOUN:
            return at + 2
        if _phrasal(low, at + 1):  # "papers working on X"
            return at + 3
    at = next((j for j in range(min(5, len(low) - 2)) if low[j : j + 2] == ["list", "of"]), None)
    return at + 2 if at is not None and at + 2 > lead else None  # "I'd like a list of SNN papers"


def shape(text: str) -> tuple[str, bool]:
    """(shape, many): "summary", "list" (papers identified, `many` when several are asked for), "which"
    (one paper asked for), "compare" or "explain"."""
    ws = _without_openers(words(text))
    joined = " ".join(ws)
    if ws and (ws[0] in SUMMARY_HEADS or " overview of " in f" {joined} " or " summary of " in f" {joined} "):
        return "summary", True
    head = ws[:8]
    for i, w in enumerate(head):
        near = head[i + 1 : i + 5]
        noun = next((x for x in near if x in PAPER_NOUNS or x in MANY_NOUNS), None)
        if w in ("which", "what") and i == 0 and noun and not set(near[: near.index(noun)]) & AUX:
            many = noun in MANY_NOUNS or w == "what" and noun in _MASS  # "what work exists on X?"
            return ("list", True) if many else ("which", False)
        if w == "there" and i > 0 and head[i - 1] in ("is", "are", "was") and noun:
            many = noun in MANY_NOUNS or "any" in near
            return ("list", True) if many else ("which", False)
        if (w in LIST_VERBS and i == 0 or w == "any") and noun in MANY_NOUNS:
            return "list", True
        if w == "many" and i > 0 and head[i - 1] == "how" and noun in MANY_NOUNS:
            return "list", True
        if w == "who" and i == 0 and near[:1] and near[0] in ("proposed", "introduced", "wrote", "studied"):
            return "which", False
        if w == "which" and i == 0 and near[:1] in (["one"], ["ones"]):  # "which one uses RL?": a paper
            return "which", False
    if ws[:1] and ws[0] in MANY_NOUNS and ws[1:2] and ws[1] in ("on", "about", "that", "using", "by"):
        return "list", True
    # a request framed around the topic: "can you find papers …", "I'm looking for the paper …", "any work on …"
    lead = ws[: _lead(ws)]
    at = next((j for j, x in enumerate(lead) if x in PAPER_NOUNS), None)
    if at is not None and set(lead) & _ASKS and not set(lead) & SUMMARY_HEADS:
        noun, one = lead[at], at and lead[at - 1] in ("the", "a", "this", "that")  # "the work that …": one
        return ("list", True) if noun in MANY_NOUNS or noun in _MASS and not one else ("which", False)
    if at is None and lead[-1:] in (["on"], ["about"]) and set(lead) & TOPIC_ASKS:  # "anything on X", "what's
        return "list", True  # out there on X", "what do you have on X"
    if set(ws) & COMPARE_WORDS or ("between" in ws and "and" in ws):
        return "compare", False
    # papers asked for elsewhere ("X papers?", "could you pull up papers on X", "X - which papers cover it?"),
    # unless a paper is the subject ("does the paper cite papers on X") or one of some is asked for ("which of
    # the RL papers …", "among them, which one …")
    asks = [low for low in map(words, segments(text)) if _lead(low) == len(low)]  # "X - what's out there?"
    listed = any("list" in low or set(low) & TOPIC_ASKS for low in asks) and len(asks) < len(segments(text))
    one = "paper" in ws or set(ws) & _SELECT or ws[:2] == ["which", "of"]
    if (set(ws) & _PLAIN_MANY or listed) and not one:
        return "list", True
    return "explain", False


ASK_VERBS = frozenset("tell explain describe summarize summarise compare define".split())


def topic_only(text: str) -> bool:
    """A short phrase that names a topic and asks nothing of it ("OOD detection", "find jailbreak attacks on
    LLMs", "quantum ML?"), as typed into a search box. A description of one paper is longer."""
    ws = [w for w in _without_openers(words(text)) if w not in COURTESY]
    while ws[:1] and ws[0] in LIST_VERBS | {"me"}:  # "find …", "show me …"
        ws = ws[1:]
    said = {w.split("'")[0] for w in ws}  # a measure asks a value of something ("Lean-STaR pass@64 number?")
    asks = WH | AUX | PRONOUNS | ASK_VERBS | COMPARE_WORDS | SUMMARY_HEADS | MEASURES
    return 0 < len(ws) <= 10 and not said & asks


def topic(text: str) -> str:
    """What a list, "which paper" or summary question describes: its words after the frame ("Which recent
    papers", "Is there any work", "Can you list papers that deal with"), without a closing verb of what papers
    said. A later sentence that only frames the request or asks a question of its own ("Give me a list.",
    "What's out there?", "What data do they use?") is no part of it; one that glosses it is ("(Kolmogorov-Arnold
    networks)")."""
    out = []
    for seg in segments(text):
        low = words(seg)
        if _lead(low) == len(low) or out and low[0].split("'")[0] in WH | AUX | {"any"}:
            continue
        ws, start = _WORD.findall(seg), _lead(low)
        if out:
            start = 0  # a later sentence keeps its words: "KAN papers? (Kolmogorov-Arnold networks)"
        elif (after := _request_words(low, start)) is not None:
            start = after
        elif _phrasal(low, start):
            start += 2
        end = len(low)
        if end - start > 1 and low[-1] in SAID_VERBS and set(low[:start]) & AUX:
            end -= 1
        # "… diffusion models in this collection", "… papers here"
        while end - start > 1 and low[end - 1] in TAIL:
            end -= 1
        out.append(" ".join(ws[start:end]))
    if out:
        return " ".join(out)
    last = _WORD.findall(text)  # only the request's words ("List the papers" of "… by NAME"): its last word
    return last[-1] if last else ""


# ------------------------------------------------------------------ parts
def number_asked(text: str) -> str | None:
    """What a clause asks a number of ("how many cell lines" -> "cell lines", "what accuracy" ->
    "accuracy"), or None when it asks no number."""
    ws = words(text)
    for i, w in enumerate(ws):
        if w == "how" and ws[i + 1 : i + 2] and ws[i + 1] in NUMBER_HEADS:
            rest = [x for x in ws[i + 2 : i + 5] if x not in AUX and x not in PRONOUNS]
            thing = takewhile(lambda x: x not in ("the", "of", "in", "on", "for", "to"), rest)
            return " ".join(thing) or ws[i + 1]
        if w in ("what", "which") and i + 1 < len(ws):
            for j, x in enumerate(ws[i + 1 : i + 5]):
                if x in MEASURES:  # "what inference speed" -> "inference speed"
                    return " ".join(y for y in ws[i + 1 : i + 2 + j] if y not in AUX and y != "the")
                if x in AUX and x not in ("is", "are", "was", "were"):
                    break
    return None


def asked_thing(text: str) -> str:
    """The words a question word asks about: "what inference speed does X report" -> "inference speed",
    "which benchmark is that on" -> "benchmark"; "" when it asks how, why or whether."""
    ws = words(text)
    for i, w in enumerate(ws):
        if w not in ("what", "which"):
            continue
        if ws[i + 1 : i + 2] and ws[i + 1] in AUX and ws[i + 1] not in ("is", "are", "was", "were"):
            return ""  # "what does X do?": the question word asks about no noun
        thing = []
        for x in ws[i + 1 : i + 6]:
            if (
                x in AUX
                and thing
                or x in PRONOUNS
                or x in ("of", "in", "on", "for", "to", "from", "with", "by")
            ):
                break
            if x not in AUX and x not in ("the", "a", "an", "kind", "type", "exact", "specific"):
                thing.append(x)
        return " ".join(thing)
    return ""


def compared(text: str) -> list[str]:
    """What a comparison names, one item each: "Compare A and B", "How does A differ from B?", "A vs. B"
    -> ["A", "B"]; [] when fewer than two items are named."""
    ws = text.strip(" ?.!")
    ws = re.sub(
        r"^(?:please\s+)?(?:compare|contrast)\s+|^(?:how|what)\s+(?:does|do|is|are)\s+", "", ws, flags=re.I
    )
    ws = re.sub(r"\s+(?:differ|compare|contrast)\w*\s+(?:from|to|with)\s+", " and ", ws, flags=re.I)
    ws = re.sub(r"^(?:the\s+)?differences?\s+between\s+", "", ws, flags=re.I)
    items = [x.strip(" ,") for x in re.split(r",?\s+(?:and|vs\.?|versus|with)\s+|,\s+", ws) if x.strip(" ,")]
    items = [x for x in items if content_words(x)]
    return items if 2 <= len(items) <= 5 else []


def parts(text: str) -> tuple[Part, ...]:
    """The clauses a question asks, each with the thing it wants a number of, if any. "How does X compare,
    and how many cell lines does it use?" -> two parts."""
    pieces = [p.strip(" ,?") for p in _CLAUSE.split(text) if p and p.strip(" ,?")]
    pieces = [p for p in pieces if len(content_words(p)) >= 1] or [text.strip()]
    out = []
    for p in pieces:
        number = number_asked(p)
        out.append(Part(p, number, number or asked_thing(p)))
    return tuple(out)


# ------------------------------------------------------------------ chat: does it lean on a turn?
def user_turns(history: list[dict] | None) -> list[str]:
    """The user's earlier questions, read as a question is (without the venue)."""
    return [
        without_venue(str(m["content"]))
        for m in (history or [])
        if m.get("role") == "user" and str(m.get("content", "")).strip()
    ]


def pointer(text: str, turns: list[str]) -> int | None:
    """The earlier turn an ordinal ("the first one", "back to the second paper", "the former") or
    "that/this paper" points to, else None."""
    if not turns:
        return None
    for clause in text.translate(_CLAUSE_MARKS).split("|"):
        back = _pointer(words(clause), turns)
        if back is not None:
            return back
    return None


_CLAUSE_MARKS = str.maketrans({c: "|" for c in ":;,?!—–"})


def ordinal(text: str) -> int | None:
    """The position an ordinal points to ("the second one", "the 3rd paper", "#2", "paper 2": 1; "the last one":
    -1), else None."""
    for clause in text.replace("#", " number ").translate(_CLAUSE_MARKS).split("|"):
        ws = words(clause)
        for i in range(len(ws)):
            at = _position(ws, i)
            if at is not None:
                return at
    return None


NUMBERED = frozenset("number paper entry item result position".split())  # "number 2", "paper 3"
_BETWEEN = frozenset("and or vs versus against with compare between from".split())  # "3 and 9", "2 vs 3"
CARDINALS = "one two three four five six seven eight nine ten".split()


def positions(text: str) -> list[int]:
    """Every list position a message names, loosely ("compare 1 and 2", "the 4th and 7th", "#6 against #8", "the
    first three", "the first and last"): two or more make a comparison of those entries."""
    ws = words(text.replace("#", " number "))
    near = bool(set(ws) & COMPARE_WORDS)  # "how does 2 differ from 5?"
    out: list[int] = []
    for i, w in enumerate(ws):
        before, after = ws[i - 1 : i], ws[i + 1 : i + 2]
        count = after and (after[0] in CARDINALS[1:] or after[0].isdigit() and 1 < int(after[0]) <= 10)
        if w in ("first", "top") and count:  # "the first three", "top 2"
            out += range(CARDINALS.index(after[0]) + 1 if after[0] in CARDINALS else int(after[0]))
        elif _nth(w) is not None:
            out.append(_nth(w))
        elif (
            w.isdigit()
            and 0 < int(w) <= 20
            and (near or set(before + after) & _BETWEEN or before[:1] in ([], ["number"], ["paper"]))
        ):
            out.append(int(w) - 1)
        elif w in CARDINALS and before == ["number"]:
            out.append(CARDINALS.index(w))
    return list(dict.fromkeys(out))


def _nth(w: str) -> int | None:
    """The 0-based position an ordinal word names ("second", "2nd"; "last", "final": -1), else None."""
    if w in ("last", "final"):
        return -1
    if w[:-2].isdigit() and w[-2:] in ("st", "nd", "rd", "th"):
        return int(w[:-2]) - 1
    return ORDINALS.get(w)


def _position(ws: list[str], i: int) -> int | None:
    """The 0-based position ws[i] points at (-1: the last), or None."""
    w, after = ws[i], [x.split("'")[0] for x in ws[i + 1 : i + 2]]  # "the 2nd paper's"
    if i > 0 and ws[i - 1] in NUMBERED and (w in CARDINALS or w.isdigit() and 0 < int(w) <= 20):
        return CARDINALS.index(w) if w in CARDINALS else int(w) - 1
    if i > 0 and ws[i - 1] in ("does", "did", "is", "was", "about") and w.isdigit() and 0 < int(w) <= 20:
        return int(w) - 1  # "what does 6 do?", "tell me about 9"
    if set(ws[i + 1 : i + 3]) & {"to", "that", "which", "who", "ever"}:
        return None  # "the first method to …": a superlative describing a paper, not a pointer
    the = i > 0 and ws[i - 1] in ("the", "that")
    if not (not after and the or after and after[0] in POINTER_NOUNS):
        return None
    if w in ("last", "final", "bottom") and (the or after):  # "the last one", "last paper in the list"
        return -1
    if w == "top" and after:  # "top one"
        return 0
    n = _nth(w)
    if n is not None and w not in ORDINALS and 0 <= n < 20:  # "the 2nd one", "4th paper"
        return n
    return ORDINALS.get(w) if the else None


# a message of thanks or assent only: nothing to look up
COURTESY_ONLY = (
    COURTESY
    | OPENERS
    | {
        *"you u ty very much a lot so that's perfect nice got appreciate appreciated helpful useful exactly needed".split(),
        *"plenty enough awesome excellent super k".split(),
    }
)


THANKS = frozenset("thanks thank thx ty cheers merci appreciate appreciated".split())


def courtesy_only(text: str) -> bool:
    """ "thanks!", "ok great", "This is helpful, thanks a lot": no word beyond thanks, assent and function words
    (a question mark asks something unless every word is courtesy)."""
    ws = words(text)
    stop = nltk_stopwords()
    asks = [w for w in ws if w not in COURTESY_ONLY and (w.split("'")[0] not in stop - WH - MORE)]
    said = set(ws) & COURTESY_ONLY - OPENERS or all(w in OPENERS for w in ws)  # "ok", "got it", "thanks"
    if said and not asks and ("?" not in text or all(w in COURTESY_ONLY for w in ws)):
        return True
    # "Thanks, I'll go through them.", "Great list, appreciate it.": thanks in a sentence that asks for nothing
    asking = set(ws) & (
        WH | MANY_NOUNS | SUMMARY_HEADS | COMPARE_WORDS | {"tell", "explain", "show", "find", "give", "and"}
    )
    thanked = set(ws) & THANKS and "?" not in text and not asking and not named_terms(text)
    return bool(thanked) and ordinal(text) is None and not more_asked(text)


def _own_words(text: str) -> list[str]:
    """The words of a message that are neither the frame of a request nor pronouns for a list ("only the
    papers please", "how many of those were papers?" have none)."""
    return [w for w in words(text) if w not in FRAME and content_words(w)]


NARROW = frozenset("only just narrow restrict limit filter keep".split())
# what a decision is said with beyond its filter word: "which were oral or spotlight?"
DECIDED = frozenset(
    "oral orals spotlight spotlights poster posters accepted rejected presented ended got "
    "remove exclude drop hide without except want".split()  # "remove the rejected ones, i want only accepted"
)
# what asks for a paper's decision without naming one ("what decision did it get?"), and the other words such a
# question may hold ("did it get an oral?", "which of the two was accepted?")
DECISION_ASKS = frozenset("decision decisions decided outcome status verdict acceptance".split())
_DECISION_FRAME = frozenset("get got make made receive received one two both either".split())


def decision_asked(text: str) -> tuple[str, set[str]] | None:
    """A question asking papers' decisions: (the decisions asked, "" for any; the words left, a paper's name in
    "was MorphoDiff an oral?"), or None when it asks anything else."""
    said, _ = decisions_said(text, bare=True)
    ws = {w for w in _own_words(text) if _nth(w) is None}  # "was the second one accepted?"
    if not (said or ws & DECISION_ASKS):
        return None
    return said or "", ws - DECIDED - DECISION_ASKS - _DECISION_FRAME


_NARROW_SKIP = frozenset(
    "it them those these down to ones one the about on for in with that which are is".split()
)


def narrowed_to(text: str) -> str:
    """X of "only the ones about X", "narrow it down to X", "just those dealing with X", "only X ones" after a list:
    a part the list's papers must also be about ("" when the message narrows nothing)."""
    low = words(text)
    ws = _without_openers(low)
    i = _lead(ws)  # "can you"
    if i >= len(ws) or ws[i] not in NARROW and not (i and ws[i - 1] in NARROW):
        return ""
    i += ws[i] in NARROW
    if ws[i - 1] == "keep" and ws[i : i + 1] and ws[i] in MORE:  # "keep going"
        return ""
    while i < len(ws) and (ws[i] in _NARROW_SKIP or ws[i] in FRAME):
        i += 1
    if ws[i + 1 : i + 2] and ws[i + 1] in _PARTICLES:  # "dealing with X", "applied to X"
        i += 2
    end = len(ws)
    while end > i and ws[end - 1] in TAIL | {"ones", "one", "please", "pls", "plz"}:
        end -= 1
    if end <= i or set(ws[:i]) & (WH | AUX) - {"can", "could"}:
        return ""
    return " ".join(_WORD.findall(text)[len(low) - len(ws) + i : len(low) - len(ws) + end])


# the next page of a list: "show me the rest", "next 10 please", "any others?", "keep going", "more results"
MORE = frozenset(
    "more rest next others other ones else remaining further additional keep going coming continue page batch "
    "results see beyond after comes matches matched matching ten same search too also".split()
)


def _of_topic(word: str, about: str) -> bool:
    """A word of the topic, or its words' initials ("RL" of "reinforcement learning")."""
    return bool(content_words(word)) and (
        content_words(word) <= content_words(about) or mentions(flatten(about), word)
    )


def more_asked(text: str, about: str = "") -> bool:
    """ "show me the rest", "next 10 please", "any others?", "keep going", "more SAE papers" (of a list on SAEs):
    the next papers of the list about `about`, no new topic."""
    ws = [w for w in words(text) if (w not in FRAME or w in MORE) and not w.isdigit()]
    ws = [w for w in ws if not _of_topic(w, about)]
    own = {w for w in ws if content_words(w) or w in MORE}
    return bool(own & MORE) and own <= MORE and not set(ws) & PRONOUNS - {"them"}  # "what else do they use?"


PICK = "picked from the list"  # "which of them is about biology (, and what data do they use)?"
_RANKING = frozenset("most best least more better worse fewer".split())  # "which of them is best": no pick


def _pick_lead(ws: list[str]) -> tuple[int, bool] | None:
    """Where the criterion of a pick starts, and whether a verb comes first: "which one(s) uses", "which of them",
    "any of these", "do any (of them) use", "are any", "which use X" (no "do they": "which datasets do they use?" asks
    every paper); None when the message asks no pick."""
    if ws[:1] == ["which"]:
        if ws[1:2] in (["one"], ["ones"]):
            return 2, True
        if ws[1:2] == ["of"]:
            return 1, True
        plain_verb = len(ws) >= 4 and ws[1] not in FRAME and not set(ws) & (AUX | PRONOUNS)
        return (1, True) if plain_verb else None
    if ws[:1] == ["any"] or ws[:1] in (["do"], ["does"], ["are"], ["is"]) and ws[1:2] == ["any"]:
        i = ws.index("any") + 1
        # "any papers on X?" asks for a new list
        return None if ws[i : i + 1] and ws[i] in PAPER_NOUNS else (i, ws[0] in ("do", "does"))
    return None


def picked_by(text: str) -> str | None:
    """X of "which (one) of them/these (papers) is about X", "… deal with X", "which one uses X" or "do any of them
    use X": what keeps a listed paper. None for another question of the list: "which of them has the highest
    accuracy?" ranks them."""
    low = words(text)
    ws = _without_openers(low)
    lead = _pick_lead(ws)
    if lead is None:
        return None
    i, verb = lead
    if ws[i : i + 1] == ["of"]:
        i += 2  # "of them"
    if verb and i < len(ws) and ws[i] not in FRAME:
        i += 2 if ws[i + 1 : i + 2] and ws[i + 1] in _PARTICLES else 1  # "which one uses / deals with X"
    if set(ws[i:]) & _RANKING or any(w.endswith("est") and len(w) > 5 for w in ws[i:]):
        return None
    while i < len(ws) and ws[i] in FRAME:  # "papers", "is", "about"
        i += 1
    if ws[i + 1 : i + 2] and ws[i + 1] in _PARTICLES:  # "deal with", "focus on"
        i += 2
    rest = ws[i:]
    if not rest or negated(" ".join(ws)):  # "which of them don't need a draft model": every paper's row
        return None
    return " ".join(_WORD.findall(text)[len(low) - len(rest) :])  # in the user's case: "RL", not "rl"


EACH = frozenset("each every per".split())
PLURAL = frozenset("these those each all".split())  # "these papers", "each of them": the list, not one paper
SINGULAR = frozenset("it its it's itself".split())  # one paper
LIST_PRONOUNS = frozenset("they them their these those".split())  # "summarize them", not "all papers on X"
_SEVERAL = PLURAL | LIST_PRONOUNS | frozenset("both either neither two which".split())  # "which one", "both"


def refers_to_list(text: str) -> bool:
    """A question about several things already shown: "they", "these papers", "each of them", "which ones …"."""
    ws = words(text)
    if (
        _pick_lead(_without_openers(ws)) is not None or set(ws) & EACH
    ):  # "which backbone does each use (ViT, …)?"
        return True
    return bool(set(ws) & (LIST_PRONOUNS | PLURAL)) and not named_terms(text)


def overview_asked(text: str) -> bool:
    """ "main takeaways from these?", "what do these papers have in common", "sum up": a summary of the list
    (naming no topic of its own: "summarize all the papers on X" is a new list)."""
    ws = set(words(text))
    if not ws & OVERVIEW or named_terms(text):
        return False
    pointed = ws & (LIST_PRONOUNS | PLURAL | {"list", "group"}) and not ws & {"on", "about", "regarding"}
    return bool(pointed) or set(_own_words(text)) <= OVERVIEW | BRIEF


# words that ask for an overview without naming a topic ("a quick overview of this body of work")
BRIEF = frozenset(
    "quick short brief briefly main key big general list group body directions approaches".split()
)


def list_questions(history: list[dict] | None) -> list[str]:
    """The user's questions up to the one that brought the list shown ([] when the last answer is no list):
    answers that only pointed into it ("#2 - how big is their dataset?") keep its papers, so are skipped."""
    h = history or []
    said = [i for i, m in enumerate(h) if m.get("role") == "assistant"]
    if not said or not listed(h):
        return []
    at = said[-1]
    for i in reversed(said[:-1]):
        if h[i].get("papers") != h[at].get("papers"):
            break
        at = i
    return user_turns(h[:at])


def _merged(later: Filters, earlier: Filters) -> Filters:
    return Filters(*(getattr(later, k) or getattr(earlier, k) for k in ("decision", "area", "author")))


def listed(history: list[dict] | None) -> list[str]:
    """The papers of the last answer when it listed papers (its message's "papers"), else []."""
    last = next((m for m in reversed(history or []) if m.get("role") == "assistant"), None)
    return [str(p) for p in (last or {}).get("papers") or []]


def _pointer(ws: list[str], turns: list[str]) -> int | None:
    for i, w in enumerate(ws):
        after = ws[i + 1 : i + 2]
        if set(ws[i + 1 : i + 3]) & {"to", "that", "which", "who", "ever"}:
            continue  # "the first method to …": a superlative describing a paper, not a pointer
        the = i > 0 and ws[i - 1] in ("the", "that")
        at = _position(ws, i) if w in ORDINALS and the else None
        if at is not None:
            return min(at, len(turns) - 1)
        if (
            the
            and w in ("former", "latter", "previous", "earlier", "last")
            and (not after or after[0] in POINTER_NOUNS)
        ):
            return len(turns) - 2 if w == "former" and len(turns) > 1 else len(turns) - 1
        if (
            w in ("that", "this", "those", "these")
            and after
            and after[0] in ("paper", "papers", "one", "work")
        ):
            return len(turns) - 1
    return None


def states_switch(text: str) -> bool:
    """The user says the subject changes ("Unrelated: …", "New topic —", "Let's move to …")."""
    ws = words(text)
    joined = " ".join(ws[:6])
    return bool(ws[:3] and set(ws[:3]) & SWITCH_WORDS) or any(
        joined.startswith(p) or f" {p}" in joined for p in SWITCH_PHRASES
    )


def leans(text: str) -> bool:
    """The words lean on the chat: a pronoun, a weak definite ("the method"), an ellipsis ("And on X?",
    "What about …") or too few words to stand alone."""
    ws = words(text)
    if set(ws) & PRONOUNS or ws[:1] and ws[0] in ELLIPSIS:
        return True
    if " ".join(ws[:2]) in ("what about", "how about"):
        return True
    if any(a == "the" and b in DEFINITE_NOUNS for a, b in zip(ws, ws[1:])):
        return True
    return not named_terms(text) and len(ws) <= 4


def before_pronoun(text: str) -> str:
    """The text before its first pronoun (all of it when it has none): what a pronoun can refer back to."""
    for m in _WORD.finditer(text):
        if set(words(m.group())) & PRONOUNS:
            return text[: m.start()]
    return text


def named_after(asked: str, top: Paper, base: str, retrieve) -> tuple:
    """(the paper followed, the words it lacks) when the question names, after its pronoun, what `top` mentions
    and the paper followed never does ("how does it compare to RFdiffusion?"): "it" is still the paper
    followed, and the answer comes from the papers naming it, with a line saying so. () otherwise, and when
    such a name comes before the pronoun ("What about SmODE — how does it …?": "it" is SmODE)."""
    cut = len(before_pronoun(asked))
    has = top.flat
    names = [t for t in named_terms(asked[cut:]) if mentions(has, t)]
    prev = retrieve(base) if names else []
    if not prev or prev[0].paper.paper_id == top.paper_id:
        return ()
    followed = prev[0].paper
    lacks = followed.flat
    if any(mentions(lacks, t) for t in names):
        return ()
    if any(mentions(has, t) and not mentions(lacks, t) for t in named_terms(asked[:cut])):
        return ()
    return followed, tuple(w for w in content_words(asked) if w in top.words and w not in followed.words)


def word_gain(question: str, alone: Paper, follow: Paper, idf: Idf) -> tuple[float, int]:
    """(mass, words): the summed rarity of the question's content words that `alone`'s title and abstract
    use and `follow`'s don't, minus the reverse; and how many words only the first uses."""
    qw = content_words(question)
    only_a = [w for w in qw if w in alone.words and w not in follow.words]
    only_f = [w for w in qw if w in follow.words and w not in alone.words]
    return sum(idf(w) for w in only_a) - sum(idf(w) for w in only_f), len(only_a)


def plain(text: str) -> str:
    """The question without markup tags and courtesy words ("please", "thanks"): they match abstracts'
    boilerplate ("Please visit our webpage"), not what is asked."""
    out = re.sub(r"</?[A-Za-z][^<>]{0,200}>", " ", text)
    out = re.sub(rf"\b(?:{'|'.join(sorted(COURTESY))})\b[,!.]?", " ", out, flags=re.I)
    out = " ".join(out.split())
    return out if content_words(out) else text


Retrieve = Callable[[str, Filters], list[Hit]]  # (query, filters) -> hits


class Reader:
    """Reads each question once; a chat's earlier turns are remembered (a chat re-sends its history).
    `retrieve` runs the engine's retrieval with the caller's depth and filters."""

    def __init__(self, conversation, idf: Callable[[], Idf], question_filters=filters_from_question):
        self.conversation = conversation  # the settings' conversation group
        self._idf = idf  # read when first needed (the BM25 side loads lazily)
        self._filters = question_filters  # (question, listed) -> (its own filters, the question without them)
        self._cache: OrderedDict[tuple, tuple[str | None, str, float | None]] = OrderedDict()

    def clear(self) -> None:
        self._cache.clear()

    def __call__(
        self, question: str, history: list[dict] | None, retrieve: Retrieve, *, filters=None, key: tuple = ()
    ) -> Reading:
        asked = plain(without_venue(question))
        shown, turns = listed(history), user_turns(history)
        if decided := self._decision(asked, history, shown, turns, retrieve, key):
            return decided
        if not filters:  # "orals on X", "papers by NAME": the question's own filter
            filters, asked = self._filters(asked, bool(shown))
        if shown and (followed := self._on_list(asked, filters, history, shown, turns)):
            return followed
        kind, many = shape(asked)
        if kind == "summary" and not content_words(topic(asked)) - SUMMARY_WORDS:
            kind, many = "explain", False  # "summarize it" with no list: the paper the chat is on
        hits: dict[str, list[Hit]] = {}
        low = _without_openers(words(asked))
        about_next = shown and low[:2] in (["what", "about"], ["how", "about"])  # "what about insects?"
        bare = topic_only(" ".join(low[2:]) if about_next else asked)
        if kind == "explain" and (not turns or shown) and bare:
            # "OOD detection", "LLM watermarking?": the papers on it, unless a paper has it as its own name
            # ("MorphoDiff"); a name is a paper's own when few of the papers found use it ("OOD" is a topic)
            names = named_terms(asked)
            if names:  # only a name can be a paper's own: look it up then
                hits[asked] = found = retrieve(asked, filters)
                names = [t for t in names if sum(mentions(h.paper.flat, t) for h in found) <= 2]
            if not any(own_name(h.paper, t) for h in hits.get(asked, [])[:3] for t in names):
                kind, many = "list", True
        key = (*key, filters.describe())
        base, how, gain, left = self._lean(asked, turns, lambda q: retrieve(q, filters), key, hits)
        if filters.author and not content_words(topic(asked)):  # "papers by NAME": that author's papers
            kind, many = "list", True
        return Reading(
            asked=asked,
            query=f"{asked} ({base})" if base else asked,
            shape=kind,
            many=many,
            base=base,
            how=how,
            terms=tuple(sorted(named_terms(asked))),
            parts=parts(asked),
            filters=filters,
            topic=topic(asked),
            gain=gain,
            left=left,
            hits=hits,
        )

    def _decision(self, asked: str, history, shown: list[str], turns, retrieve, key) -> Reading | None:
        """ "Was it accepted?", "which of the two was an oral?", "was MorphoDiff a spotlight?": asked of the papers
        the chat is on (a list's entry, the papers compared, the paper followed) or of the paper named, and
        answered from the index's decisions. After a list, "which were orals?" filters it (`_on_list`)."""
        got = decision_asked(asked)
        if got is None:
            return None
        said, rest = got
        f, base, over, found = Filters(), None, (), []
        names, ws = named_terms(asked), set(words(asked))
        history = history or []
        cited = [p for m in history if m.get("role") == "assistant" for p in m.get("cited") or []]
        last = next((m for m in reversed(history) if m.get("role") == "assistant"), {})
        several = ws & _SEVERAL and not ws & SINGULAR  # "were both accepted?", "which one was the oral?"
        # "was MorphoDiff an oral?": the other words are a name, one paper's own
        if rest and names and rest <= {w for t in names for w in (t, *t.split("-"))}:
            found, how = retrieve(asked, f)[:1], "alone"
            if not any(own_name(h.paper, t) for h in found for t in names):
                return None
        elif rest and "one" in ws and len(rest) <= 3:  # "did the reid one get in?": a paper the chat cited
            found, how = [h for h in retrieve(asked, f) if h.paper.paper_id in cited][:1], "points back"
        if found:  # named or described
            pass
        elif shown and not rest:  # a list's entry, or the papers compared
            k, how = ordinal(asked), "over the list"
            if k is not None and -len(shown) <= k < len(shown):
                over = (shown[k],)
            elif last.get("shape") in ("compare", "decision"):
                over = tuple(shown)
            else:  # "which were orals?" filters the list (`_on_list`)
                return None
        elif turns and not shown and len(rest) <= 2:  # the paper followed, or those the last answer was about
            base = self.query_of(turns[-1], turns[:-1], lambda q: retrieve(q, f), (*key, f.describe()))
            found, how = retrieve(base, f), "follow-up"
            # other words ask about the paper when its abstract has them ("is its decision rule learned?")
            if rest and (not found or content_words(" ".join(rest)) & found[0].paper.words):
                return None
            if several:
                about = last.get("cited") or []
                over = tuple(about) if len(about) > 1 else tuple(h.paper.paper_id for h in found[:2])
            found = found[:1]
        if not over and not found:
            return None
        over = over or (found[0].paper.paper_id,)
        query = f"{asked} ({base})" if base else asked
        return Reading(
            asked, query, "decision", base=base, how=how, over=over, shown=tuple(shown), decision=said
        )

    def _on_list(self, asked: str, filters: Filters, history, shown: list[str], turns) -> Reading | None:
        """A follow-up on the list just shown (`shown`, its paper ids), or None: a filter of it, its next page, a
        narrowing, entries compared, one entry, a summary of it, or a question of every (picked) listed paper."""

        def about_list(kind: str, how: str, **kw) -> Reading:
            kw = {"terms": tuple(sorted(named_terms(asked))), "parts": parts(asked), "filters": filters, **kw}
            return Reading(asked, asked, kind, how=how, shown=tuple(shown), **kw)

        # "only orals", "keep only orals", "narrow it down to the accepted papers", "which were oral or spotlight?"
        said, _ = decisions_said(asked, bare=True)
        if not filters and said and not set(_own_words(asked)) - NARROW - DECIDED:
            filters = Filters(decision=said)
        narrow = narrowed_to(asked)
        if filters and (not set(_own_words(asked)) - NARROW - DECIDED or more_asked(asked) or narrow):
            return self._refilter(asked, filters, history, shown)
        about, before = self._list_request(history) if set(words(asked)) & MORE else ("", Filters())
        if more_asked(asked, about):  # the next page: the list's topic and filters, one page on per "more"
            page = 1 + sum(1 for _ in takewhile(lambda q: more_asked(q, about), reversed(turns)))
            more = Reading(
                asked, about, "list", True, how="more", filters=_merged(filters, before), topic=about
            )
            return replace(more, page=page, shown=tuple(shown))
        if narrow:  # "only the ones about X": the list's topic within X, all its papers
            about, before = self._list_request(history)
            about = f"{narrow} in {about}" if about else narrow
            f = _merged(filters, before)
            return Reading(
                asked, about, "list", True, how="narrowed", filters=f, topic=about, shown=tuple(shown)
            )
        at = positions(asked)
        if len(at) > 1 and all(-len(shown) <= k < len(shown) for k in at):  # "compare the 2nd and the 7th"
            return about_list("compare", "list entries", over=tuple(dict.fromkeys(shown[k] for k in at)))
        k = ordinal(asked)
        # "the second one", then "what GPU did they use for it?": "it" is still that entry ("they" alone asks
        # the list again: "what datasets do they use?")
        ws = set(words(asked))
        if k is None and turns and ws & SINGULAR and not ws & PLURAL and not states_switch(asked):
            k = ordinal(turns[-1])
        if k is not None and k < len(shown):  # "the second one": the list's entry, not the chat's turn
            return about_list("explain", "list entry", topic=topic(asked), entry=shown[k])
        kind, _ = shape(asked)
        bare = kind == "summary" and not content_words(topic(asked)) - SUMMARY_WORDS
        if bare or kind == "summary" and ws & LIST_PRONOUNS or overview_asked(asked):
            # "summarize them": the list just shown, under its question's topic
            about = self._list_request(history)[0] or topic(asked)
            return replace(about_list("summary", "over the list", topic=about, over=tuple(shown)), many=True)
        if (refers_to_list(asked) or picked_by(asked)) and kind != "summary":
            # "what data do they use?": asked of every listed paper; "which of them is about X": those on X
            asked_parts = parts(asked)
            criterion = picked_by(asked_parts[0].text) if asked_parts else None
            if criterion is None:
                return replace(
                    about_list("per_paper", "over the list", topic=topic(asked), over=tuple(shown)), many=True
                )
            rest = asked_parts[1:]
            return replace(
                about_list("per_paper", PICK, parts=rest, topic=criterion, over=tuple(shown)), many=True
            )
        return None

    def _refilter(
        self, asked: str, filters: Filters, history: list[dict] | None, shown: list[str]
    ) -> Reading:
        """ "Only the accepted ones", "how many of those were orals?": the list's question asked again with the
        new filter on top of its own (the one lister gives the count)."""
        about, before = self._list_request(history)
        merged = _merged(filters, before)
        return Reading(
            asked, about, "list", True, how="over the list", filters=merged, topic=about, shown=tuple(shown)
        )

    def _list_request(self, history: list[dict] | None) -> tuple[str, Filters]:
        """The topic and filters of the list just shown: its question's, back over the "more" and filter-only
        follow-ups that re-listed it (their filters on top)."""
        f, narrower = Filters(), []
        for q in reversed(list_questions(history)):
            if len(positions(q)) > 1 or ordinal(q) is not None or courtesy_only(q) or refers_to_list(q):
                continue  # "compare 12 and 15", "what does 6 do?": asked of the list, not a list
            own, what = self._filters(plain(q), True)
            f = _merged(f, own)
            if narrowed_to(what):  # "only the ones about X": X within the list before
                narrower.append(narrowed_to(what))
            elif _own_words(what) and not more_asked(what):
                return " in ".join([*narrower, topic(what)]), f
        return "", f

    def leaning(
        self, reading: Reading, history: list[dict] | None, retrieve: Retrieve, key: tuple = ()
    ) -> Reading:
        """The question read as a follow-up of the chat's last turn, however it was read."""
        turns = user_turns(history)
        f = reading.filters
        base = self.query_of(turns[-1], turns[:-1], lambda q: retrieve(q, f), (*key, f.describe()))
        return replace(
            reading, query=f"{reading.asked} ({base})", base=base, how="follow-up", hits={}, left=()
        )

    def query_of(self, text: str, turns: list[str], retrieve: Retrieve, key: tuple) -> str:
        """The standalone query of an earlier turn (itself read in its chat)."""
        base, _, _, left = self._lean(text, turns, retrieve, key, {})
        # asked of the paper followed and answered from others: a later "it" is still that paper
        if not base and left:
            base = self.query_of(turns[-1], turns[:-1], retrieve, key)
        return f"{text} ({base})" if base else text

    def _lean(self, asked, turns, retrieve, key, hits) -> tuple[str | None, str, float | None, tuple]:
        """(the standalone query of the turn leaned on or None, how it was read, the word gain, and for
        words that lean but are read alone: the paper the chat was on and the words it lacks)."""
        if not turns:
            return None, "alone", None, ()
        ck = (asked, tuple(turns), key)
        if ck in self._cache and not hits:
            self._cache.move_to_end(ck)
            return self._cache[ck]
        out = self._decide(asked, turns, retrieve, key, hits)
        self._cache[ck] = out
        if len(self._cache) > self.conversation.condense_cache:
            self._cache.popitem(last=False)
        return out

    def _decide(self, asked, turns, retrieve, key, hits) -> tuple[str | None, str, float | None, tuple]:
        c = self.conversation
        back = pointer(asked, turns)
        if back is not None:
            return self.query_of(turns[back], turns[:back], retrieve, key), "points back", None, ()
        if states_switch(asked):
            return None, "stated switch", None, ()
        base = self.query_of(turns[-1], turns[:-1], retrieve, key)
        said = leans(asked)
        follow = f"{asked} ({base})"
        if not c.condense_check:
            return (base, "follow-up", None, ()) if said else (None, "alone", None, ())
        hits[asked], hits[follow] = retrieve(asked), retrieve(follow)
        a, f = hits[asked], hits[follow]
        pointed = said and not _DESCRIBED.search(asked)  # "the work that …, do they …": another paper
        asked_of = pointed and a and named_after(asked, a[0].paper, base, retrieve)
        if asked_of:  # "is it compared with SmODE?": the paper followed, asked about another's name
            return None, "alone", None, asked_of
        if not a or not f or a[0].paper.paper_id == f[0].paper.paper_id:
            return (base, "follow-up", None, ()) if said else (None, "alone", None, ())
        gain, n = word_gain(asked, a[0].paper, f[0].paper, self._idf())
        if gain >= c.switch_min_gain and n >= c.switch_min_words:
            # read alone; words that lean ("does it also …") are told that the paper followed lacks these, unless
            # what comes before the pronoun names or describes the other paper ("Topograph - what …", "and the
            # routing one: how big …"): a switch. What follows it is what "it" is asked about ("does it support JAX?")
            lacks = [w for w in content_words(asked) if w in a[0].paper.words and w not in f[0].paper.words]
            first = before_pronoun(asked)
            named = any(own_name(a[0].paper, t) for t in named_terms(first))
            switched = named or word_gain(first, a[0].paper, f[0].paper, self._idf())[0] >= c.switch_min_gain
            return None, "alone", gain, (f[0].paper, tuple(lacks)) if pointed and not switched else ()
        if gain <= -c.follow_min_gain:
            return base, "follow-up", gain, ()
        return (base, "follow-up", gain, ()) if said else (None, "alone", gain, ())
