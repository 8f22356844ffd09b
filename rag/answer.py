"""The engine: condense follow-up -> retrieve -> numbered sources -> generate (streamed) -> cite.

UI, CLI and eval all call `Engine.stream`/`Engine.ask`; there is no second code path.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator

from rag import prompts
from rag.cite import Judge, bind, extractive
from rag.errors import UserError
from rag.index import Index
from rag.models import LLM, get_embedder, load_llm
from rag.question import answerability, asks_which, focus, named_terms
from rag.retrieve import Retriever
from rag.settings import Mode, Settings
from rag.types import Answer, Hit

# "We introduce Celcomen, a ..." -> "Celcomen": a named method worth asking about.
_INTRODUCES = re.compile(
    r"\b(?:introduce|propose|present)s?\s+(?:\w+\s+){0,1}?([A-Z][A-Za-z0-9.\-]*[A-Z0-9][A-Za-z0-9.\-]*|[A-Z][a-z]+[A-Z]\w*|[A-Z][a-z]{3,}(?=, an? ))[,(]"
)


def check_question(question: str, settings: Settings) -> str:
    if not isinstance(question, str) or not question.strip():
        raise UserError("The question is empty. Type a question about the indexed ICLR 2025 papers.")
    if len(question) > settings.max_question_chars:
        raise UserError(
            f"The question is {len(question):,} characters long; the limit is {settings.max_question_chars:,}. "
            "Shorten it to the question itself."
        )
    return " ".join(question.split())


def _user_turns(history: list[dict] | None) -> list[str]:
    return [
        m["content"] for m in (history or []) if m.get("role") == "user" and str(m.get("content", "")).strip()
    ]


class Engine:
    def __init__(self, settings: Settings, embedder=None, llm: LLM | None = None, index: Index | None = None):
        self.settings = settings
        self.embedder = embedder or get_embedder(settings)
        self.index = index or Index(settings)
        self.retriever = Retriever(self.index, self.embedder, settings)
        self.judge = Judge(self.embedder)
        self._llm = llm
        self._siblings: dict[str, Engine] = {}

    # ------------------------------------------------------------ plumbing
    @property
    def llm(self) -> LLM:
        if self._llm is None:
            self._llm = load_llm(self.settings.llm, self.settings)
        return self._llm

    @property
    def llm_profile(self) -> str:
        return self._llm.name if self._llm else self.settings.llm

    def ingest(self, paths=None, progress: bool = False):
        """Parse every file first (a bad file stops all), then index; BM25 rebuilds on next query."""
        from rag.corpus import expand_paths, read_file
        from rag.settings import SEEDS_DIR

        papers = [p for f in expand_paths(paths or [SEEDS_DIR]) for p in read_file(f)]
        report = self.index.ingest(papers, self.embedder, progress=progress)
        self.retriever.refresh()
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
    def condense(self, question: str, history: list[dict] | None) -> str:
        """Follow-up -> standalone question, as llama-index's CondensePlusContext does."""
        turns = _user_turns(history)
        if not turns:
            return question
        convo = "\n".join(f"User: {t}" for t in turns[-3:])
        msgs = [
            {"role": "system", "content": prompts.CONDENSE_SYSTEM},
            {"role": "user", "content": prompts.CONDENSE_USER.format(history=convo, question=question)},
        ]
        out = self.llm.generate(msgs, max_new_tokens=48).strip().split("\n")[0].strip()
        # A rewrite that dropped the thread keeps the previous turn's words, so retrieval still finds it.
        invented = named_terms(out) - named_terms(" ".join([*turns, question]))
        if not out or len(out) > 400 or invented:  # e.g. a made-up "1000" would trigger a refusal
            out = question
        return f"{out} ({turns[-1]})" if turns[-1].lower() not in out.lower() else out

    def sources_prompt(self, question: str, hits: list[Hit]) -> list[dict]:
        blocks = []
        for n, h in enumerate(hits, start=1):
            text = (
                h.paper.text
                if n <= self.settings.full_abstracts
                else " … ".join(c.text for c in sorted(h.chunks[:1], key=lambda c: c.start))
            )
            title = (h.paper.title or h.paper.label).replace('"', "'")
            blocks.append(prompts.SOURCE_BLOCK.format(n=n, title=title, text=text))
        return [
            {"role": "system", "content": prompts.ANSWER_SYSTEM},
            {
                "role": "user",
                "content": prompts.ANSWER_USER.format(sources="\n\n".join(blocks), question=question),
            },
        ]

    def refusal_score(self, question: str, hits: list[Hit]) -> tuple[float, str]:
        """Answerability of the question from these sources; below `refuse_threshold` we refuse."""
        return answerability(
            question, hits, self.judge, self.retriever.bm25().idf
        )  # one freshness check per question

    def focus(self, question: str, hits: list[Hit]) -> set[int]:
        """The sources (1-based) the question is about: the only ones an answer may cite."""
        return focus(question, hits, self.judge, self.settings.focus_ratio, self.settings.focus_broad_ratio)

    # ------------------------------------------------------------ public API
    def stream(
        self,
        question: str,
        history: list[dict] | None = None,
        *,
        top_k: int | None = None,
        mode: Mode | None = None,
        task: str = "answer",
    ) -> Iterator[str | Answer]:
        """Yield raw token deltas while generating, then exactly one verified `Answer`."""
        if task == "summarize":
            from rag.summarize import summarize_stream

            yield from summarize_stream(self, question, top_k=top_k, mode=mode)
            return
        s = self.settings
        question = check_question(question, s)
        self._require_index()
        t0 = time.perf_counter()
        standalone = self.condense(question, history)
        t_cond = time.perf_counter()
        hits = self.retriever.retrieve(standalone, top_k or s.top_k, mode or s.mode)
        t_ret = time.perf_counter()
        timings = {"condense_s": t_cond - t0, "retrieve_s": t_ret - t_cond}
        gen_hits = hits[: s.context_papers]
        score, reason = self.refusal_score(standalone, gen_hits)

        def refusal() -> Answer:
            timings.setdefault("generate_s", 0.0)
            timings["total_s"] = time.perf_counter() - t0
            text = prompts.REFUSAL + (
                f" ({reason}.)" if reason.startswith(("the sources", "no single", "no indexed")) else ""
            )
            return Answer(
                question,
                text,
                [],
                [],
                hits,
                refused=True,
                standalone_question=standalone,
                timings=timings,
                refusal_reason=reason,
            )

        if score < s.refuse_threshold:
            yield refusal()
            return

        # The generator sees only the sources the question is about: it can't write about the others.
        allowed = self.focus(standalone, gen_hits)
        gen_hits = [h for n, h in enumerate(gen_hits, start=1) if n in allowed]
        raw = []
        for delta in self.llm.stream(self.sources_prompt(standalone, gen_hits)):
            raw.append(delta)
            yield delta
        t_gen = time.perf_counter()
        timings["generate_s"] = t_gen - t_ret
        timings["first_token_s"] = self.llm.stats.first_token_s
        timings["tokens_per_s"] = self.llm.stats.tokens_per_s

        text, sentences, citations = bind(
            "".join(raw), gen_hits, self.judge, s.support_threshold, s.drop_unsupported
        )
        fallback = False
        if not any(x.supported for x in sentences):
            # The model found nothing in the sources. Quoting the nearest sentences is a fair answer to
            # "how does X work", not to "which paper does X" when no source covers X.
            which = asks_which(standalone)
            if score < (s.which_fallback_min if which else s.fallback_min_answerability):
                reason = (
                    "no indexed abstract matches what the question describes"
                    if which
                    else "no generated sentence was supported and the best evidence is weak"
                )
                yield refusal()
                return
            fallback = True
            text, sentences, citations = bind(
                extractive(standalone, gen_hits, self.judge), gen_hits, self.judge, 0.0
            )
        timings["verify_s"] = time.perf_counter() - t_gen
        timings["total_s"] = time.perf_counter() - t0
        yield Answer(
            question,
            text,
            citations,
            sentences,
            hits,
            refused=False,
            standalone_question=standalone,
            fallback=fallback,
            timings=timings,
        )

    def ask(self, question: str, history: list[dict] | None = None, **kw) -> Answer:
        for item in self.stream(question, history, **kw):
            if isinstance(item, Answer):
                return item
        raise RuntimeError("engine produced no answer")  # unreachable: stream always ends with one
