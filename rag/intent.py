"""What the user is asking for: the answer's shape, and whether the question leans on the chat.

Both are read from the question's words alone (no model), so they are the same on every CPU.
"""

from __future__ import annotations

import re

from rag.names import field_word, mentions, named_terms
from rag.question import COMPARE, SINGLE, WHICH
from rag.text import content_words, flatten, stopwords

# ------------------------------------------------------------------ what shape of answer is asked for

# "So, …", "OK …": a chat opener before the question's frame.
_OPENER = r"^\s*(?:(?:so|ok|okay|now|and|also),?\s+)?"
# Nouns that make a question about papers rather than about a fact.
_PAPER_NOUN = r"(?:papers?|works?|stud(?:y|ies)|articles?|abstracts?|submissions?|research|publications?|approaches|methods)"
_LIST_HEAD = re.compile(
    rf"{_OPENER}(?:"
    rf"(?:which|what)\s+(?:(?:\w+|\w+-\w+)\s+){{0,2}}?{_PAPER_NOUN}\b|"  # which (ICLR) papers / what recent works
    # is there any work / are there papers / is there a text-to-video generation paper
    rf"(?:is|are)\s+there\s+(?:[\w-]+\s+){{0,3}}?{_PAPER_NOUN}\b|"
    r"how\s+many\s+(?:\w+\s+){0,2}?(?:papers|works|studies|articles|abstracts|submissions|publications)\b|"
    rf"(?:does|do)\s+any\s+(?:\w+\s+){{0,1}}?{_PAPER_NOUN}\b|"
    rf"any\s+{_PAPER_NOUN}\b|"
    rf"(?:list|find|show|name|enumerate|give)\s+(?:me\s+)?(?:\w+\s+){{0,3}}?{_PAPER_NOUN}\b|"
    rf"{_PAPER_NOUN}\s+(?:on|about|that|which|proposing|studying|addressing|using)\b|"
    rf"who\s+(?:proposed|proposes|introduced|introduces|studied|studies|wrote)\b)",
    re.I,
)
_PLURAL_LIST = re.compile(
    r"\b(?:papers|works|studies|articles|abstracts|submissions|publications|approaches|methods|any)\b", re.I
)
# "Which paper studies …", "Is there a paper …": one paper asked for, whatever plural follows (a verb,
# "methods" of the description).
_ONE_PAPER = re.compile(
    rf"{_OPENER}(?:(?:which|what)|(?:is|was)\s+there\s+(?:a|one))\s+"
    r"(?:paper|work|study|article|abstract|submission)\b(?!s)",
    re.I,
)
_SUMMARY = re.compile(
    r"^\s*(?:please\s+)?(?:summari[sz]e|give\s+(?:me\s+)?(?:an?\s+)?(?:overview|summary|rundown|recap)|"
    r"overview|recap|(?:what|how)\s+(?:is|are)\s+the\s+(?:state|landscape)|"
    r"what\s+(?:do|does)\s+(?:the\s+)?(?:\w+\s+){0,3}(?:papers|works|collection)\s+(?:say|find|show)\s+about)\b"
    r"|\b(?:an?\s+)?(?:overview|summary)\s+of\b",
    re.I,
)


def shape(question: str) -> str:
    """The answer's shape: "list" (papers identified, one line each), "compare" (papers side by
    side), "summary" (one cited line per paper) or "explain" (a short generated answer)."""
    if _SUMMARY.search(question):
        return "summary"
    if COMPARE.search(question) and not _LIST_HEAD.search(question):
        return "compare"
    if _LIST_HEAD.search(question):
        return "list"
    return "explain"


def wants_many(question: str) -> bool:
    """A list question asking for several papers ("which papers", "any work") rather than one."""
    return (
        bool(_PLURAL_LIST.search(question))
        and not SINGLE.search(question)
        and not _ONE_PAPER.search(question)
    )


# Words of a list frame that describe no paper ("which recent ICLR papers", "find me five good works"),
# beside the stopwords
_FRAME_WORDS = frozenset(
    "list find show name enumerate give many recent good relevant existing iclr 2025 ok okay several "
    "one two three four five six seven eight nine ten".split()
)


# "(e.g., audio-image and image-text)": the user's examples, which a matching paper need not name
EXAMPLES = re.compile(r"\s*\((?:e\.g\.?|for example|for instance|such as|like)\b[^()]*\)", re.I)


def to_cover(question: str) -> str:
    """What a listed paper must cover of a description: `described`, the user's examples aside."""
    return described(EXAMPLES.sub("", question))


def described(question: str) -> str:
    """What a "which paper …" / "papers on …" question describes: the question without its frame,
    keeping the frame's modifiers ("is there a text-to-video paper that …" describes text-to-video)."""
    text = WHICH.sub("", question)
    m = _LIST_HEAD.search(text)
    kept = ""
    if m:
        words = re.findall(r"[\w-]+", m.group())
        if re.fullmatch(_PAPER_NOUN, words[-1], re.I):  # "… paper": the words before it may describe it
            skip = _FRAME_WORDS | stopwords()
            mods = [w for w in words[:-1] if w.lower() not in skip and not re.fullmatch(_PAPER_NOUN, w, re.I)]
            kept = " ".join(mods) + " " if mods else ""
        text = text[: m.start()] + text[m.end() :]
    text = re.sub(r"^\s*(in (this|the) collection|here)\b", "", text.strip(), flags=re.I)
    text = text.strip(" ?.!")
    if _ASKS_SAID.search(question):  # "what did the papers on X claim?": what they said is asked, X described
        text = _SAID_END.sub("", text)
    return (kept + text.strip()).strip(" ?.!")


# "what did / do … claim?", "how much do they report?": the verb asks for what the papers said
_ASKS_SAID = re.compile(r"\b(?:what|which|how)\b.*\b(?:did|do|does|have|has)\b", re.I)
_SAID_END = re.compile(
    r"\s*\b(?:claim|report|find|found|show|shown|say|said|conclude|argue|demonstrate|propose|suggest)(?:s|ed)?$",
    re.I,
)


# ------------------------------------------------------------------ conversation: does it lean on history?

_ORDINAL = {"first": 0, "second": 1, "third": 2}
# "the first one", "the latter", "does the second handle video?"; not an ordinal of something else
# ("for the first time", "the first stage", "the previous state of the art", "the other baselines")
_NOT_A_TURN = (
    r"time|times|stage|stages|step|steps|state|layer|layers|half|place|round|rounds|phase|phases|epoch|epochs|"
    r"iteration|iterations|token|tokens|term|terms|order|few|hand|way|ways|case|cases|baseline|baselines|"
    r"sota|best|version|versions|year|years|attempt|attempts|part|parts|block|blocks|component|components|"
    r"author|authors|generation|kind|type|types|end|side|direction|level|levels|task|tasks"
)
_TURN_NOUN = r"(?:one|paper|work|method|model|approach|question|study|answer)\b"
_REFERS_BACK = re.compile(
    r"\b(?:the|that)\s+(first|second|third|last|former|latter|previous|other|earlier)\b"
    rf"(?!\s+(?:{_NOT_A_TURN})\b)"
    # "the first (method) to/that …" is a superlative that describes a paper, not a pointer to a turn
    rf"(?!(?:\s+{_TURN_NOUN})?\s+(?:to|that|which|who|ever)\b)(?:\s+{_TURN_NOUN})?",
    re.I,
)
# "the one before that", "the paper before the last one": the turn before the last
_BEFORE_LAST = re.compile(
    rf"\bthe\s+{_TURN_NOUN}\s+before\s+(?:(?:that|this)(?:\s+one)?|it|the\s+last(?:\s+{_TURN_NOUN})?)(?!\s+\w)",
    re.I,
)
# "that paper", "this method", "those thoughts": an explicit pointer to an earlier turn ("these"/"those"
# before any word; "this"/"that" only before a paper-like noun, as "that" also joins clauses).
_DEMONSTRATIVE = re.compile(
    r"(?:\b(?:this|that|the\s+same)\s+(?:paper|papers|method|methods|model|models|approach|framework|"
    r"work|study|technique|benchmark|dataset|system|algorithm|architecture|one|ones|authors?)\b|"
    r"\b(?:these|those)\s+(?!(?:that|which|who|where|of|in|on|are|were|with)\b)[a-z][\w-]*)"
    r"(?!\s+(?:that|which|who|where|called|named|proposed|introduced)\b)",
    re.I,
)
# Pronouns and weak definite references; "the method that …" describes, it doesn't refer back.
_ANAPHORA = re.compile(
    r"\b(?:it|its|it's|they|them|their|theirs|he|she|his|her|itself|themselves)\b|"
    r"\bthe\s+(?:paper|method|model|approach|framework|work|study|technique|authors?)\b"
    r"(?!\s+(?:that|which|who|where|called|named|proposed|introduced|for|of|on|in|about|with)\b)|"
    r"\bthe\s+same\b",
    re.I,
)
_ELLIPSIS = re.compile(
    r"^\s*(?:and|but|also|what about|how about|and what about|what else|why|how so|or)\b", re.I
)
# "Let's move to …", "Now, about …": the user says the subject changes.
_SWITCH = re.compile(
    r"^\W*(?:ok(?:ay)?\W+|now\W+|next\W+)?(?:let'?s\s+(?:move|switch|turn|go)\s+(?:on\s+)?to|switching\s+to|"
    r"moving\s+on|on\s+(?:a|another)\s+(?:different\s+)?(?:note|topic)|different\s+(?:topic|question)|"
    r"new\s+(?:topic|question|q)|change\s+of\s+(?:topic|subject)|unrelated(?:ly)?|"
    r"(?:switching|changing|shifting)\s+(?:gears|topics?|subjects?)|(?:a\s+)?(?:different|another|separate)\s+paper)\b",
    re.I,
)
# "What about …", "OK, and how about …"
_WHAT_ABOUT = r"^\W*(?:(?:ok(?:ay)?|alright|now|and|then|fine)\W+)*(?:what|how)\s+about\s+"
_SETTING = r"on|in|for|with|at|under"  # "What about on SUN RGB-D?": the same asked of another setting
_DETAIL = re.compile(rf"{_WHAT_ABOUT}(?:{_SETTING}|when)\b", re.I)
_CLAUSE = re.compile(
    r"\b(?:what|which|how|why|who|where|when|does|do|did|is|are|was|were|can|could|has|have)\b", re.I
)


_PAPER_KIND = r"(?:paper|work|study|one|method|approach|model|framework|benchmark|analysis)"
# "the results on X, …", "the experiments with Y: …": a part of the paper already talked about
_PART = (
    r"results?|experiments?|evaluations?|ablations?|settings?|tables?|figures?|sections?|appendix|"
    r"baselines?|numbers?|scores?|training|tests?|gains?|improvements?|limitations?|code|data"
)
# A subject the question describes: "the (robotic assembly) paper on X", "the one about X", "what about
# X — <question>", or a topic set off before the question ("the benchmark for bias in chat — what …?",
# "In the neuroscience paper that …, what …?").
_DESCRIBED = re.compile(
    rf"\bthe\s+(?:[\w-]+\s+){{0,3}}?{_PAPER_KIND}s?\s+"
    r"(?:on|about|(?:that|where|which|in\s+which)\s+(?!it\b|they\b|its\b|their\b))\s*(?P<x>[^,:;?—–]+)|"
    # "that planning approach mixing symbolic and neural concepts": described by what it does (three new words)
    rf"\b(?:the|that|this)\s+(?:[\w-]+\s+){{0,3}}?{_PAPER_KIND}s?\s+(?P<p>[a-z]+ing\s[^,:;?—–]+)|"
    rf"^\W*(?:(?:ok(?:ay)?|now|so|and|alright|then)\W+)*(?:(?:in|on|for|regarding|about|as\s+for|with)\s+)?"
    rf"(?P<t>the\s+(?!(?:{_PART})\b)[^,:;?—–]+?)\s*(?:—|–|\s-\s|:|,)\s*(?=\w)|"
    rf"{_WHAT_ABOUT}(?!(?:{_SETTING}|its?|their|the\s+same)\b)"
    r"(?P<y>[^,:;?—–]+)\s*(?:—|–|-\s|:|,)\s*(?=\w)|"
    # "And for the <description>, which …?": a subject of its own before the question (three new words)
    r"^\W*(?:and|now|ok(?:ay)?)\W+(?:as\s+)?(?:for|regarding)\s+(?P<z>[^,:;?—–]+)\s*(?:—|–|-\s|:|,)\s*(?=\w)",
    re.I,
)


_COMPARE_WORD = re.compile(r"\b(?:compar\w*|than|versus|vs\.?|against|differ\w*|relative\s+to)\b", re.I)


def _names_new_subject(question: str, turns: list[str]) -> bool:
    """The question introduces something no earlier turn did before any pronoun could point back:
    a name in a full clause ("Now SRSA: how does it …", not "And on X?" nor "How does it compare to
    X?"), or a described subject ("the paper on X", "What about X — …") in words of its own."""
    before = flatten(" ".join(turns))
    pronoun = _ANAPHORA.search(question)
    first = pronoun.start() if pronoun else len(question)
    low = flatten(question)
    # "how many LLMs did they test?": a field acronym names no new subject
    terms = [t for t in named_terms(question) if not mentions(before, t) and not field_word(t)]
    # "What about on SUN RGB-D?" asks the same of another setting: an ellipsis, not a clause
    clause = _CLAUSE.search(question) and not _DETAIL.match(question)
    if clause and any(0 <= low.find(t) < first for t in terms):
        return True
    m = _DESCRIBED.search(question)
    # "… did they give, in the work on X?": a described paper after the pronoun is its subject, unless
    # the question compares ("how does it compare to the paper on X?")
    after = bool(m and m.group("x") and re.search(r"(?:^|,)\s*(?:in|for|from)\s+$", question[: m.start()]))
    if not m or (m.start() >= first and (not after or _COMPARE_WORD.search(question))):
        return False
    x = m.group("x") or m.group("y") or m.group("z") or m.group("t") or m.group("p") or ""
    words = content_words(x) - content_words(" ".join(turns))
    # "What about speed — is it …?" asks more of the same paper: a new subject takes two words of its own;
    # "And for CIFAR-10, what …?" asks the same paper of another setting: a subject after "and for", three;
    # a topic set off before the question, two when it names a paper-like thing, else three
    kind = re.search(rf"\b{_PAPER_KIND}\b", x, re.I)
    if m.group("t") and kind:
        words -= content_words(kind.group())  # "the larger model": the kind noun names no subject
    need = 1 if m.group("x") and not after else 2 if m.group("y") or (m.group("t") and kind) else 3
    # a pronoun inside the description's own clause ("the setup where users protect their data") is the
    # description's; one before it ("the paper, what did they …") points back
    head = re.split(r"\b(?:where|that|which|who|whose|when)\b", x, maxsplit=1)[0]
    return len(words) >= need and not _ANAPHORA.search(head)


def points_back(question: str, turns: list[str]) -> int | None:
    """The earlier turn an ordinal ("the first one", "the former") or a demonstrative ("that paper",
    "those results") points to in so many words, else None."""
    if not turns:
        return None
    if len(turns) > 1 and _BEFORE_LAST.search(question):
        return len(turns) - 2
    back = _REFERS_BACK.search(question)
    if back:
        word = back.group(1).lower()
        if word in _ORDINAL:
            return min(_ORDINAL[word], len(turns) - 1)
        if word in ("former", "earlier") and len(turns) > 1:
            return len(turns) - 2
        return len(turns) - 1
    if _DEMONSTRATIVE.search(question):
        return len(turns) - 1
    return None


def states_switch(question: str) -> bool:
    """The user says the subject changes ("Let's move to …", "Unrelated: …", "different paper")."""
    return bool(_SWITCH.search(question))


def referent(question: str, turns: list[str]) -> int | None:
    """Index of the earlier user turn the question depends on, or None when it stands on its own,
    read from the words alone (rag.condense checks the reading against retrieval).

    In order: an ordinal ("the first one") or a demonstrative ("that paper", "those results") points
    back; a stated switch ("Let's move to …") or a new subject introduced before any pronoun (a name in a
    full question, "the paper on X", "What about X — …") stands alone; a pronoun, a weak definite ("the
    method") or an ellipsis ("And on X?", "What about on X?") leans on the last turn. A question that
    names its own subject is answered on its own: a topic switch never drags the last turn along, and a
    pronoun before a new name ("How does it compare to X?") keeps the subject it points to."""
    if not turns:
        return None
    back = points_back(question, turns)
    if back is not None:
        return back
    if states_switch(question) or _names_new_subject(question, turns):
        return None
    if _ANAPHORA.search(question) or _ELLIPSIS.search(question):
        return len(turns) - 1
    if not named_terms(question) and len(question.split()) <= 4:
        return len(turns) - 1  # too short to stand alone ("Datasets used?")
    return None


def joined(question: str, base: str) -> str:
    """The question with the (standalone) turn it leans on in brackets, unless it already holds it."""
    return question if base.lower() in question.lower() else f"{question} ({base})"


def standalone(question: str, turns: list[str]) -> str:
    """The question made self-contained from its words alone: the turn it depends on (itself
    resolved) in brackets. The engine checks this reading against retrieval (rag.condense)."""
    i = referent(question, turns)
    if i is None:
        return question
    return joined(question, standalone(turns[i], turns[:i]))


# "Unrelated: …", "Fine — …", "OK, so …": chat words before the question, which the small model copies
# into its answer. A hyphen only with spaces around it ("Fine-tuning" stays).
_OPENER_WORD = (
    r"unrelated(?:ly)?|fine|ok(?:ay)?|alright|right|thank\s+you|thanks|great|cool|so|now|next|also|anyway"
)
# An opener word ends in punctuation ("Fine —", "OK,") or, bare, comes before a question word or another
# opener ("So what …", "OK so which …"); "Right whale detection", "So far, …" and "Next token …" keep it.
_CHAT_OPENER = re.compile(
    rf"^\W*(?:(?:{_OPENER_WORD})(?:\s*[:,;.!—–]+\s*|\s+-\s+|\s+(?=(?:{_OPENER_WORD}|what|which|how|why|who|"
    r"where|when|does|do|did|is|are|was|were|can|could|tell|give|and)\b))(?=\w))+",
    re.I,
)


def leaned_on(question: str, query: str) -> str | None:
    """The earlier turn (standalone) that `joined` put in brackets after the question, else None."""
    if query != question and query.startswith(f"{question} (") and query.endswith(")"):
        return query[len(question) + 2 : -1]
    return None


def for_generator(question: str, query: str, how: str = "standalone") -> str:
    """The question the generator is shown: the standalone question or the user's own words ("asked"),
    without chat openers. Retrieval and evidence use the standalone question either way."""
    base = leaned_on(question, query)
    if how != "asked" and base is not None:
        return f"{_without_opener(question)} ({_without_opener(base)})"
    return _without_opener(question if how == "asked" else query)


def _without_opener(text: str) -> str:
    bare = _CHAT_OPENER.sub("", text)
    if bare == text or not bare:
        return text
    return bare[:1].upper() + bare[1:] if bare[:2].islower() else bare  # "mRNA", "xLSTM" stay
