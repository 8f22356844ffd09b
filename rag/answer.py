"""The engine: standalone question -> retrieve -> evidence -> answer in the asked shape -> cite.

UI, CLI and eval all call `Engine.stream`/`Engine.ask`; there is no second code path. A stream
yields one `Retrieved` (the sources), text deltas that are kept, then exactly one verified `Answer`.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator

from rag import prompts
from rag.cite import Judge, bind, extractive, render
from rag.condense import Condensed, Condenser, user_turns
from rag.embedder import get_embedder
from rag.errors import UserError
from rag.evidence import (
    EvidenceSet,
    blocks,
    completion,
    normalize_draft,
    paper_scores,
    quoted_answer,
    quoted_lines,
    select,
    titles_only,
)
from rag.gaps import unknown_words
from rag.hygiene import is_instruction_only
from rag.index import Index
from rag.intent import for_generator, shape
from rag.list_answer import list_answer
from rag.models import LLM, load_llm
from rag.question import answerability, check_question, focus
from rag.retrieve import Retriever
from rag.settings import Mode, Settings
from rag.text import retyped, without_venue
from rag.types import Answer, Hit, Retrieved, final_answer

# "We introduce Celcomen, a ..." -> "Celcomen": a named method worth asking about.
_INTRODUCES = re.compile(
    r"\b(?:introduce|propose|present)s?\s+(?:\w+\s+){0,1}?([A-Z][A-Za-z0-9.\-]*[A-Z0-9][A-Za-z0-9.\-]*|[A-Z][a-z]+[A-Z]\w*|[A-Z][a-z]{3,}(?=, an? ))[,(]"
)


class Engine:
    def __init__(self, settings: Settings, embedder=None, llm: LLM | None = None, index: Index | None = None):
        self.settings = settings
        self.embedder = embedder or get_embedder(settings)
        self.index = index or Index(settings)
        self.retriever = Retriever(self.index, self.embedder, settings)
        self.judge = Judge(self.embedder, settings.judge_cos_weight, settings.judge_mismatch_penalty)
        self._llm = llm
        self._siblings: dict[str, Engine] = {}
        self.condenser = Condenser(settings, lambda: self.retriever.bm25().idf)

    # ------------------------------------------------------------ plumbing
    @property
    def llm(self) -> LLM:
        if self._llm is None:
            self._llm = load_llm(self.settings.llm, self.settings)
        return self._llm

    @property
    def llm_profile(self) -> str:
        return self._llm.name if self._llm else self.settings.llm

    def ingest(self, paths=None, progress: bool = False, on_progress=None):
        """Parse every file first (a bad file stops all), then index; BM25 rebuilds on next query."""
        from rag.corpus import expand_paths, read_file
        from rag.settings import SEEDS_DIR

        papers = [p for f in expand_paths(paths or [SEEDS_DIR]) for p in read_file(f)]
        report = self.index.ingest(papers, self.embedder, progress=progress, on_progress=on_progress)
        self.retriever.refresh()
        self.condenser.clear()
        return report

    def ingest_if_empty(self, paths=None):
        """The run command's first start: index the seeds when nothing is indexed yet."""
        return self.ingest(paths) if self.index.count() == 0 else None

    def with_llm(self, name: str) -> Engine:
        """An engine sharing index, embedder and retriever, with another generator (loaded on demand)."""
        if name == self.llm_profile:
            return self
        if name not in self._siblings:
            other = Engine.__new__(Engine)
            other.__dict__.update(self.__dict__)
            other.settings = self.settings.model_copy(update={"llm": name})
            other._llm, other._siblings = None, {}
            self._siblings[name] = other
        return self._siblings[name]

    def warm_up(self) -> None:
        """Load every model and the BM25 side now, so the first question doesn't pay for it."""
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
    def refusal_score(self, question: str, hits: list[Hit], asked: str | None = None) -> tuple[float, str]:
        """Answerability of the question from these sources; below `refuse_threshold` we refuse.
        `asked`: the user's own words when `question` carries an earlier turn for context."""
        return answerability(
            question,
            hits,
            self.judge,
            self.retriever.bm25().idf,
            asked=asked,
            window=self.settings.quantity_window,
            variant_share=self.settings.variant_min_share,
            asked_gap=(self.settings.asked_max_cover, self.settings.asked_min_missing),
            cover_margin=self.settings.focus_cover_margin,
        )

    def typo_hint(self, question: str, why: str) -> tuple[str, str | None]:
        """A refusal's reason, and the question to ask instead, when a word of it no abstract uses is one typo
        from one they do ("speculatve": say what the abstracts call it); (why, None) otherwise."""
        lexical = self.retriever.bm25()
        typos = lexical.typos(unknown_words(question, lexical.known), question)
        if not typos:
            return why, None
        mended = retyped(question, typos)
        return prompts.typo_reason(why, typos), mended if mended != question else None

    def evidence(self, question: str, hits: list[Hit]) -> EvidenceSet:
        s = self.settings
        return select(question, hits, self.judge, s.evidence_per_paper, s.evidence_share)

    def focus(self, question: str, evset: EvidenceSet, n_papers: int, alone: bool = True) -> set[int]:
        """The sources (1-based) the question is about: the only ones an answer may cite. `alone`: the
        question was read without its chat; a query carrying an earlier turn's words would pick that
        turn's paper by word coverage, so only the ranking decides then."""
        s = self.settings
        hits = evset.hits[:n_papers]
        rel = paper_scores(evset)[:n_papers]
        margin = s.focus_cover_margin if alone else 1.0
        return focus(question, hits, self.judge, s.focus_broad_ratio, rel=rel, cover_margin=margin)

    def prompt(self, system: str, user: str, evset: EvidenceSet, question: str, positions=None) -> list[dict]:
        return [
            {"role": "system", "content": system},
            {"role": "user", "content": user.format(evidence=blocks(evset, positions), question=question)},
        ]

    # ------------------------------------------------------------ public API
    def condense(
        self, question: str, history: list[dict] | None, top_k: int | None = None, mode=None, filters=None
    ) -> Condensed:
        """How the question is read in its chat (rag.condense): the standalone query and why."""
        k, mode = top_k or self.settings.top_k, mode or self.settings.mode

        def retrieve(q: str) -> list[Hit]:
            return self.retriever.retrieve(q, k, mode, filters=filters)

        return self.condenser(question, user_turns(history), retrieve, key=(k, mode, filters))

    def stream(
        self,
        question: str,
        history: list[dict] | None = None,
        *,
        top_k: int | None = None,
        mode: Mode | None = None,
        task: str = "answer",
        filters=None,
    ) -> Iterator[str | Retrieved | Answer]:
        """Yield `Retrieved`, then text deltas, then exactly one verified `Answer`. `filters`
        (rag.filters.Filters; default: the retriever's) keeps only matching papers."""
        s = self.settings
        question = without_venue(check_question(question, s.max_question_chars))  # every paper is ICLR 2025
        self._require_index()
        t0 = time.perf_counter()
        k, mode = top_k or s.top_k, mode or s.mode
        read = self.condense(question, history, k, mode, filters)
        query = read.query
        kind = "summary" if task == "summarize" else shape(question)
        if kind == "summary":
            from rag.summarize import summarize_stream

            yield from summarize_stream(
                self, query, top_k=top_k, mode=mode, question=question, filters=filters
            )
            return
        depth = max(k, s.list_candidates) if kind == "list" else k
        hits = read.hits.get(query) if depth == k else None  # the reading's own retrieval, when it ran
        if hits is None:
            hits = self.retriever.retrieve(query, depth, mode, filters=filters)
        timings = {"retrieve_s": time.perf_counter() - t0}
        yield Retrieved(question, query, kind, hits)
        shown = hits[: s.context_papers]
        score, reason = self.refusal_score(query, shown, asked=question)

        def refusal(why: str) -> Answer:
            why, mended = self.typo_hint(question, why)
            timings.setdefault("generate_s", 0.0)
            timings["total_s"] = time.perf_counter() - t0
            return Answer(
                question,
                prompts.refusal_text(why),
                [],
                [],
                hits,
                refused=True,
                standalone_question=query,
                timings=timings,
                refusal_reason=why,
                shape=kind,
                suggested_question=mended,
            )

        if is_instruction_only(question):
            yield refusal(prompts.INSTRUCTION_REASON)
            return
        if score < s.refuse_threshold:
            yield refusal(reason)
            return
        evset = self.evidence(query, hits)
        timings["evidence_s"] = time.perf_counter() - t0 - timings["retrieve_s"]
        if kind == "list":
            yield from list_answer(self, question, query, evset, timings, t0, refusal, filters, score)
            return
        allowed = self.focus(query, evset, s.context_papers, alone=query == question)
        if kind == "compare" and len(allowed) > 1:
            yield from self._compare(question, query, evset.restrict(allowed), timings, t0)
            return
        yield from self._explain(question, query, evset.restrict(allowed), score, timings, t0, refusal, kind)

    def _compare(self, question, query, evset: EvidenceSet, timings, t0) -> Iterator:
        """Each paper's evidence side by side, then a generated contrast kept only where verified."""
        s = self.settings
        positions = sorted(evset.papers())
        lines, used = quoted_lines(evset, positions, per_paper=s.compare_sentences)
        for line in [prompts.COMPARE_HEADER, *lines]:
            yield line + "\n"
        t_gen = time.perf_counter()
        msgs = self.prompt(
            prompts.COMPARE_SYSTEM,
            prompts.COMPARE_USER,
            evset,
            for_generator(question, query),  # several papers: a pronoun needs the turn it points to
            positions,
        )
        raw = self.llm.generate(msgs, max_new_tokens=s.compare_max_new_tokens)
        raw = normalize_draft(raw, evset)
        _, sents, cites = bind(raw, evset.items, self.judge, s.support_threshold, drop_unsupported=True)
        contrast = [x for x in sents if x.supported and len(set(x.citations)) > 1]
        ans = quoted_answer(
            question,
            prompts.COMPARE_HEADER,
            lines,
            used,
            evset.hits,
            standalone_question=query,
            shape="compare",
        )
        if contrast:
            extra = render(contrast)
            yield extra
            ans.answer += "\n" + extra
            ans.sentences += contrast
            have = {c.n for c in ans.citations}
            ans.citations += [c for c in cites if c.n not in have]
        timings["generate_s"] = time.perf_counter() - t_gen
        self._stats(timings)
        timings["total_s"] = time.perf_counter() - t0
        ans.timings = timings
        yield ans

    def _stats(self, timings: dict) -> None:
        stats = getattr(self.llm, "stats", None)
        if stats is not None:
            timings["first_token_s"] = stats.first_token_s
            timings["tokens_per_s"] = stats.tokens_per_s
            timings["prompt_tokens"] = getattr(stats, "prompt_tokens", 0)

    def _explain(self, question, query, evset: EvidenceSet, score, timings, t0, refusal, kind) -> Iterator:
        """One to three generated sentences from the evidence, each verified against it."""
        s = self.settings
        t_gen = time.perf_counter()
        raw = []
        msgs = self.prompt(
            prompts.ANSWER_SYSTEM, prompts.ANSWER_USER, evset, for_generator(question, query, s.llm_question)
        )
        for delta in self.llm.stream(msgs):
            raw.append(delta)
            yield delta
        first = "".join(raw)
        if titles_only(first, evset):
            # the draft named a paper ("[1] Title") and stopped: let it go on from that paper's evidence
            start = first.rstrip() + "\n- "
            yield start[len(first) :]
            raw = [start]
            for delta in self.llm.stream([*msgs, {"role": "assistant", "content": start}]):
                raw.append(delta)
                yield delta
        timings["generate_s"] = time.perf_counter() - t_gen
        self._stats(timings)
        t_ver = time.perf_counter()
        draft = normalize_draft("".join(raw), evset)
        text, sentences, citations = bind(
            draft, evset.items, self.judge, s.support_threshold, s.drop_unsupported
        )
        fallback = False
        cited = {n for x in sentences if x.supported for n in x.citations}
        extra = completion(
            query, text, evset, cited, s.complete_share, s.complete_sentences, s.complete_said_overlap
        )
        if extra:
            # quoted as written: the rest of what was asked, from the papers the answer already cites
            added = " ".join(f"{e.text.strip()} [{e.paper_n}]" for e in extra)
            yield "\n" + added
            text, sentences, citations = bind(
                f"{text} {added}", evset.items + extra, self.judge, s.support_threshold, s.drop_unsupported
            )
        if not any(x.supported for x in sentences):
            if score < s.fallback_min_answerability:
                yield refusal(prompts.WEAK_EVIDENCE_REASON)
                return
            fallback = True  # the draft found nothing checkable: quote the best evidence instead
            quotes = extractive(query, evset.items, self.judge, s.extract_sentences, s.extract_cut)
            text, sentences, citations = bind(quotes, evset.items, self.judge, 0.0)
        timings["verify_s"] = time.perf_counter() - t_ver
        timings["total_s"] = time.perf_counter() - t0
        yield Answer(
            question,
            text,
            citations,
            sentences,
            evset.hits,
            refused=False,
            standalone_question=query,
            fallback=fallback,
            timings=timings,
            shape=kind,
        )

    def ask(self, question: str, history: list[dict] | None = None, **kw) -> Answer:
        return final_answer(self.stream(question, history, **kw))
