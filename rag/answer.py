"""The engine: read the question once -> retrieve -> evidence -> the outcome -> the answer in its shape.

UI, CLI and eval all call `Engine.stream`/`Engine.ask`; there is no second code path. A stream yields
one `Retrieved` (the sources), then `Caveat`s and text deltas, then exactly one `Answer`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import replace

from rag import prompts
from rag.errors import UserError
from rag.grounding.cite import Judge, bind, clean_claim
from rag.grounding.evidence import EvidenceSet, blocks, quote_sentences, select
from rag.grounding.outcome import INSTRUCTION, NOTHING_RELEVANT, Outcome, asked_words, decide
from rag.grounding.turn import Clock, Turn
from rag.index.index import Index
from rag.models.embedder import get_embedder
from rag.models.generator import LLM, load_llm
from rag.reading.hygiene import check_question, is_instruction_only
from rag.reading.reader import Reader, Reading, compared, courtesy_only, user_turns, words
from rag.reading.reader import listed as listed_papers
from rag.retrieval.authors import FullNames
from rag.retrieval.filters import Filters, filters_from_question
from rag.retrieval.names import mentions, named_terms, own_name
from rag.retrieval.retrieve import Retriever
from rag.settings import Mode, Settings
from rag.shapes import tables
from rag.shapes.decisions import decision_answer
from rag.shapes.list_answer import list_answer
from rag.shapes.lister import Listed, PaperList, find
from rag.text import content_words, flatten
from rag.types import Answer, AnswerStream, Caveat, Hit, Retrieved, Sentence

# "We introduce Celcomen, a ..." -> "Celcomen": a named method worth asking about.
_INTRODUCES = re.compile(
    r"\b(?:introduce|propose|present)s?\s+(?:\w+\s+){0,1}?([A-Z][A-Za-z0-9.\-]*[A-Z0-9][A-Za-z0-9.\-]*|[A-Z][a-z]+[A-Z]\w*|[A-Z][a-z]{3,}(?=, an? ))[,(]"
)


class Engine:
    def __init__(
        self,
        settings: Settings,
        embedder=None,
        llm: LLM | None = None,
        index: Index | None = None,
        *,
        retriever: Retriever | None = None,
        reader: Reader | None = None,
    ):
        self.settings = settings
        self.embedder = embedder or get_embedder(settings)
        self.index = index or Index(settings.storage)
        self.retriever = retriever or Retriever(
            self.index, self.embedder, settings.retrieval, settings.generation.context_papers
        )
        self.judge = Judge(
            self.embedder, settings.grounding.judge_cos_weight, settings.grounding.judge_mismatch_penalty
        )
        self._llm = llm
        self._siblings: dict[str, Engine] = {}
        self.reader = reader or Reader(
            settings.conversation, lambda: self.retriever.bm25().idf, self.question_filters
        )
        self._names: tuple[object, FullNames] | None = None  # (the papers they were read from, the names)

    # ------------------------------------------------------------ plumbing
    @property
    def llm(self) -> LLM:
        if self._llm is None:
            self._llm = load_llm(self.settings.generation.llm, self.settings)
        return self._llm

    @property
    def llm_profile(self) -> str:
        return self._llm.name if self._llm else self.settings.generation.llm

    def ingest(self, paths=None, progress: bool = False, on_progress=None):
        """Parse every file first (a bad file stops all), then index; BM25 rebuilds on next query."""
        from rag.ingest.corpus import expand_paths, read_file
        from rag.settings import SEEDS_DIR

        papers = [p for f in expand_paths(paths or [SEEDS_DIR]) for p in read_file(f)]
        report = self.index.ingest(papers, self.embedder, progress=progress, on_progress=on_progress)
        self.retriever.refresh()
        self.reader.clear()
        return report

    def ingest_if_empty(self, paths=None):
        """The run command's first start: index the seeds when nothing is indexed yet."""
        return self.ingest(paths) if self.index.count() == 0 else None

    def question_filters(self, question: str, listed: bool = False) -> tuple[Filters, str]:
        """A decision or author the question names ("orals on X", "papers by NAME", or an author's full name
        as the corpus writes it: "what has sergey levine got on diffusion?"), and the question to ask.
        `listed`: asked of a list shown ("rejected only")."""
        found, cleaned = filters_from_question(question, listed)
        if found.author or not self.index.count():
            return found, cleaned
        papers = self.retriever.bm25().papers
        if self._names is None or self._names[0] is not papers:
            self._names = (papers, FullNames(papers.values()))
        name = self._names[1].find(question)
        return (Filters(found.decision, found.area, name), cleaned) if name else (found, cleaned)

    def with_llm(self, name: str) -> Engine:
        """An engine sharing index, embedder and retriever, with another generator (loaded on demand)."""
        if name == self.llm_profile:
            return self
        if name not in self._siblings:
            self._siblings[name] = Engine(
                self.settings.replace(generation={"llm": name}),
                self.embedder,
                index=self.index,
                retriever=self.retriever,
                reader=self.reader,
            )
        return self._siblings[name]

    def warm_up(self) -> None:
        """Load every model and the BM25 side now, so the first question doesn't pay for it."""
        if self.settings.grounding.answer_style != "quote":
            _ = self.llm
        if self.index.count():
            self.retriever.bm25()

    def example_questions(self, n: int = 5) -> list[str]:
        """Questions drawn from the corpus: about a named method an abstract introduces, else its title."""
        got = self.index.papers.get(limit=300, include=["documents", "metadatas"])
        named, titled = [], []
        for doc, m in zip(got["documents"], got["metadatas"]):
            hit = _INTRODUCES.search(doc)
            if hit and len(hit.group(1)) <= 24:
                named.append(f"What does {hit.group(1)} do?")
            elif m.get("title") and len(m["title"]) < 90:
                titled.append(f"What is the main finding of “{m['title']}”?")
        return (named[: max(1, n - 2)] + titled)[:n]

    def _require_index(self) -> None:
        if self.index.count() == 0:
            raise UserError(
                "Nothing is indexed yet. Run `rag ingest seeds/` (or `make run`) first, then ask again."
            )

    # ------------------------------------------------------------ steps
    def evidence(self, question: str, hits: list[Hit]) -> EvidenceSet:
        s = self.settings
        return select(question, hits, self.judge, s.grounding.evidence_per_paper, s.grounding.evidence_share)

    def read(self, question: str, history=None, top_k=None, mode=None, filters=None) -> Reading:
        """How the question is read (rag.reading.reader), retrieval checking a chat follow-up."""
        k, mode = top_k or self.settings.retrieval.top_k, mode or self.settings.retrieval.mode

        def retrieve(q: str, f) -> list[Hit]:
            return self.retriever.retrieve(q, k, mode, filters=f)

        return self.reader(question, history, retrieve, filters=filters, key=(k, mode))

    # ------------------------------------------------------------ public API
    def stream(self, question: str, history: list[dict] | None = None, **kw) -> AnswerStream:
        """The answer as a stream: iterate it for a `Retrieved`, caveats and text deltas, then one `Answer`,
        or call `.answer()`. Keywords: top_k, mode, task ("answer" | "summarize"), filters
        (rag.retrieval.filters.Filters; default: the retriever's, or one the question names)."""
        return AnswerStream(self._events(question, history, **kw))

    def _events(
        self,
        question: str,
        history: list[dict] | None = None,
        *,
        top_k: int | None = None,
        mode: Mode | None = None,
        task: str = "answer",
        filters=None,
    ) -> Iterator[str | Retrieved | Caveat | Answer]:
        s = self.settings
        question = check_question(question, s.grounding.max_question_chars)
        self._require_index()
        clock = Clock()
        k, mode = top_k or s.retrieval.top_k, mode or s.retrieval.mode
        if filters is None and self.retriever.filters:
            filters = self.retriever.filters
        if task != "summarize" and courtesy_only(question):
            # "thanks!", "ok great": nothing to read or look up; the list shown stays the one "the second one"
            # points at
            reading = Reading(question, question, "explain", shown=tuple(listed_papers(history)))
            turn = Turn(question, reading, s, self.judge, self.retriever, lambda: self.llm, clock)
            thanked = {"thanks", "thank", "thx"} & set(words(question))
            yield Retrieved(question, question, reading.shape, [])
            yield turn.answer([], [], text=("You're welcome. " if thanked else "") + prompts.ASK_AWAY)
            return
        reading = self.read(question, history, k, mode, filters)
        if task == "summarize":
            reading.shape = "summary"
        if reading.shape == "summary" and not reading.over:  # a topic of its own ("summarize all of X")
            reading.entry, reading.shown = None, ()
        turn = Turn(question, reading, s, self.judge, self.retriever, lambda: self.llm, clock)
        listed = None
        if reading.shape == "summary":
            from rag.shapes.summarize import summarize_stream

            if reading.over:  # "summarize them" after a list: the papers listed, in its order
                papers = self.retriever.bm25().papers
                shown = [Listed(papers[i], "", 1.0) for i in reading.over if i in papers]
                listed = PaperList(reading.topic, reading.filters, shown, found=len(shown))
            else:
                listed = find(self.retriever, s, reading.topic or reading.asked, reading.filters)
            if listed.papers:
                yield from summarize_stream(turn, listed, top_k=top_k)
                return
            # no paper on all of it: the closest papers and why, as a list answer gives them
            reading.shape = "list"
        depth = max(k, s.grounding.list_candidates) if reading.shape == "list" else k
        hits = reading.hits.get(reading.query) if depth == k else None
        if reading.entry or reading.over:  # pointed at papers of the list just shown: those are the sources
            papers = self.retriever.bm25().papers
            hits = [
                Hit(papers[i], 1.0)
                for i in ([reading.entry] if reading.entry else reading.over)
                if i in papers
            ]
        if hits is None:
            hits = self.retriever.retrieve(reading.query, depth, mode, filters=reading.filters)
        decided = None  # (evidence, outcome) of the reading and hits, when already found
        if reading.how == "alone" and reading.shape in ("explain", "which") and user_turns(history):
            reading, hits, decided = self._in_context(turn, hits, history, k, mode)
        # an item compared counts when the paper it finds names it as its own (entries of a list are papers already)
        if reading.shape == "compare" and not reading.over:
            outright = words(reading.asked)[:1] in (["compare"], ["contrast"])  # or when asked outright
            first: dict[str, Hit] = {}
            for x in compared(reading.asked):
                found = self.retriever.retrieve(x, 1, mode, filters=reading.filters)[:1]
                # the question's names in the item: "Proteina" alone starts its text, so reads as no name
                names = named_terms(x) | {t for t in reading.terms if mentions(flatten(x), t)}
                if found and (outright or any(own_name(found[0].paper, t) for t in names)):
                    first.setdefault(found[0].paper.paper_id, found[0])
            hits = [*first.values(), *(h for h in hits if h.paper.paper_id not in first)]
            reading.compared = len(first)
            if len(first) < 2:  # "… compared with the baseline / AudioSet": one paper's answer, not a table
                reading.shape = "explain"
        turn.hits = hits
        clock.lap("retrieve_s")
        yield Retrieved(question, reading.query, reading.shape, hits, reading.filters)
        if reading.shape == "decision":  # "was it accepted?": the index's decisions, not the abstracts
            yield from decision_answer(turn, hits)
            return
        if is_instruction_only(question):
            yield turn.refusal(INSTRUCTION, [])
            return
        evset, outcome = turn.evidence, turn.outcome = decided or self._decide(reading, hits)
        clock.lap("evidence_s")
        if reading.over and reading.shape == "compare":  # "compare the first two": those entries side by side
            yield from outcome.caveats
            yield from tables.compare(turn, list(range(1, len(hits) + 1)))
            return
        if reading.over:
            yield from tables.per_paper(turn)
            return
        by_author = reading.shape == "list" and reading.filters.author and not content_words(reading.topic)
        if outcome.refused and not reading.entry and not by_author:  # an author's papers need no topic
            yield turn.refusal(outcome.refused, outcome.caveats, outcome.signals)
            return
        if reading.shape == "list":
            yield from list_answer(turn, listed)
            return
        chosen = list(range(1, reading.compared + 1)) if reading.compared > 1 else sorted(outcome.focus)
        if reading.shape == "compare" and len(chosen) > 1:
            yield from outcome.caveats
            yield from tables.compare(turn, chosen)
            return
        # "tell me more about the 3rd one": nothing asked of the entry but what it is
        if reading.entry and not asked_words(reading.asked, reading.terms):
            yield from outcome.caveats
            yield from tables.overview(turn)
            return
        yield from self._explain(turn)

    def _in_context(
        self, turn: Turn, hits: list[Hit], history, k: int, mode
    ) -> tuple[Reading, list[Hit], tuple[EvidenceSet, Outcome] | None]:
        """A chat question that finds nothing relevant read alone ("so is the success down to ICL?") is asked
        of the turn before, when that finds something: a hard refusal is for nothing relevant in the chat.
        Returns the reading, its hits and, when it stays alone, its (evidence, outcome)."""
        reading = turn.reading
        alone = self._decide(reading, hits)
        if alone[1].refused != NOTHING_RELEVANT:
            return reading, hits, alone

        def retrieve(q: str, f) -> list[Hit]:
            return self.retriever.retrieve(q, k, mode, filters=f)

        leaned = self.reader.leaning(reading, history, retrieve, (k, mode))
        found = retrieve(leaned.query, leaned.filters)
        # the user's own words must find something in those papers: "what's a good bread recipe?" does not
        if self._decide(replace(leaned, query=leaned.asked, base=None), found)[1].refused == NOTHING_RELEVANT:
            return reading, hits, alone
        turn.reading = leaned
        return leaned, found, None

    def _decide(self, reading: Reading, hits: list[Hit]) -> tuple[EvidenceSet, Outcome]:
        """The evidence sentences of the hits for the reading's query, and the outcome they decide."""
        lexical = self.retriever.bm25()
        evset = self.evidence(reading.query, hits)
        return evset, decide(reading, evset, self.judge, lexical.idf, lexical.known, self.settings)

    def _explain(self, turn: Turn) -> Iterator:
        """Each part answered by its best evidence sentences, quoted and cited; a part its papers don't state
        gets its caveat. Then (answer_style) a generated lead, shown only when it is clean and contained."""
        reading, evset, outcome = turn.reading, turn.evidence, turn.outcome
        quotes = list({(e.paper_n, e.start): e for pa in outcome.parts for e in pa.quotes}.values())
        if not quotes:  # every part has a caveat: what the abstracts this is about do state
            top = [evset.top(n) for n in sorted(outcome.focus)]
            quotes = [e for e in top if e is not None][:1]
        yield from outcome.caveats
        # titled: several papers, or papers other than the one followed (`left`)
        titled = reading.shape == "which" or bool(reading.left) or len({e.paper_n for e in quotes}) > 1
        sentences = quote_sentences(quotes, evset, titled=titled)
        body = "\n".join(x.text + f" [{x.citations[0]}]" for x in sentences)
        yield body
        if self.settings.grounding.answer_style == "lead" and quotes:
            lead = _lead(turn, quotes)
            if lead is not None:
                yield "\n" + lead.text + "".join(f" [{n}]" for n in lead.citations)
                sentences = [lead, *sentences]
        yield turn.answer(sentences)

    def ask(self, question: str, history: list[dict] | None = None, **kw) -> Answer:
        return self.stream(question, history, **kw).answer()


def _lead(turn: Turn, quotes) -> Sentence | None:
    """One generated sentence answering the question from the quoted sentences; None unless it is well
    formed and every number, name and content word of it is in the sentences it cites."""
    evset = turn.evidence
    ev = EvidenceSet(evset.question, evset.hits, sorted(quotes, key=lambda e: (e.paper_n, e.start)))
    raw = turn.generate(answer_messages(ev, turn.reading.prompt_question))
    _, sents, _ = bind(raw, quotes, turn.judge, turn.settings.grounding.support_threshold)
    for x in sents:
        cited = [e.text for e in quotes if e.paper_n in x.citations]
        if x.supported and clean_claim(x.text, cited):
            return x
    return None


def answer_messages(evset: EvidenceSet, question: str) -> list[dict]:
    """The generator's chat: the evidence blocks and the question (the bench times this same prompt)."""
    return [
        {"role": "system", "content": prompts.ANSWER_SYSTEM},
        {"role": "user", "content": prompts.ANSWER_USER.format(evidence=blocks(evset), question=question)},
    ]


__all__ = ["Engine", "NOTHING_RELEVANT", "answer_messages"]
