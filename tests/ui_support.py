"""Shared test support for the UI tests: a FakeEngine with the Engine protocol, a tiny
corpus of real ICLR 2025 abstracts, a crafted XSS abstract, and helpers to run the app on a
free loopback port.

The FakeEngine has the attributes of `rag.answer.Engine` that `ui/` uses: `settings`,
`llm_profile`, `stream(question, history, *, top_k, mode, task)` (token strings, then one
`Answer`), `with_llm(name)`, `example_questions(n)`, `warm_up()` and `ingest_if_empty()`. It
records every call in `engine.calls` so tests can check which history each session sent.
"""

from __future__ import annotations

import contextlib
import http.server
import re
import socket
import threading
import time
from dataclasses import dataclass

from rag.errors import UserError
from rag.types import Answer, Citation, Hit, Paper, Sentence
from tests.conftest import make_settings

CORPUS_ROWS = [
    {
        "id": "Tn5B6Udq3E",
        "title": "Physics of Language Models: Part 2.1, Grade-School Math and the Hidden Reasoning Process",
        "decision": "Accept (Poster)",
        "abstract": "Recent advances in language models have demonstrated their capability to solve mathematical reasoning problems, achieving near-perfect accuracy on grade-school level math benchmarks like GSM8K. In this paper, we formally study how language models solve these problems. We design a series of controlled experiments to address several fundamental questions: (1) Can language models truly develop reasoning skills, or do they simply memorize templates? (2) What is the model's hidden (mental) reasoning process? (3) Do models solve math questions using skills similar to or different from humans? (4) Do models trained on GSM8K-like datasets develop reasoning skills beyond those necessary for solving GSM8K problems? (5) What mental process causes models to make reasoning mistakes? (6) How large or deep must a model be to effectively solve GSM8K-level math questions? Our study uncovers many hidden mechanisms by which language models solve mathematical questions, providing insights that extend beyond current understandings of LLMs.",
    },
    {
        "id": "Tpjq66xwTq",
        "title": "Real-time design of architectural structures with differentiable mechanics and neural networks",
        "decision": "Accept (Poster)",
        "abstract": "Designing mechanically efficient geometry for architectural structures like shells, towers, and bridges, is an expensive iterative process. Existing techniques for solving such inverse problems rely on traditional optimization methods, which are slow and computationally expensive, limiting iteration speed and design exploration. Neural networks would seem to offer a solution via data-driven amortized optimization, but they often require extensive fine-tuning and cannot ensure that important design criteria, such as mechanical integrity, are met. In this work, we combine neural networks with a differentiable mechanics simulator to develop a model that accelerates the solution of shape approximation problems for architectural structures represented as bar systems. This model explicitly guarantees compliance with mechanical constraints while generating designs that closely match target geometries. We validate our approach in two tasks, the design of masonry shells and cable-net towers. Our model achieves better accuracy and generalization than fully neural alternatives, and comparable accuracy to direct optimization but in real time, enabling fast and reliable design exploration. We further demonstrate its advantages by integrating it into 3D modeling software and fabricating a physical prototype. Our work opens up new opportunities for accelerated mechanical design enhanced by neural networks for the built environment.",
    },
    {
        "id": "TqYjhJrp9m",
        "title": "Zero-shot forecasting of chaotic systems",
        "decision": "Accept (Poster)",
        "abstract": "Time-series forecasting is a challenging problem that traditionally requires specialized models custom-trained for the specific task at hand. Recently, inspired by the success of large language models, foundation models pre-trained on vast amounts of time-series data from diverse domains have emerged as a promising candidate for general-purpose time-series forecasting. The defining characteristic of these foundation models is their ability to perform zero-shot learning, that is, forecasting a new system from limited context data without explicit re-training or fine-tuning. Here, we evaluate whether the zero-shot learning paradigm extends to the challenging task of forecasting chaotic systems. Across 135 distinct chaotic dynamical systems and $10^8$ timepoints, we find that foundation models produce competitive forecasts compared to custom-trained models (including NBEATS, TiDE, etc.), particularly when training data is limited. Interestingly, even after point forecasts fail, large foundation models are able to preserve the geometric and statistical properties of the chaotic attractors. We attribute this success to foundation models' ability to perform in-context learning and identify context parroting as a simple mechanism used by these models to capture the long-term behavior of chaotic dynamical systems. Our results highlight the potential of foundation models as a tool for probing nonlinear and complex systems.",
    },
    {
        "id": "Tqdsruwyac",
        "title": "Estimation of single-cell and tissue perturbation effect in spatial transcriptomics via Spatial Causal Disentanglement",
        "decision": "Accept (Poster)",
        "abstract": "Models of Virtual Cells and Virtual Tissues at single-cell resolution would allow us to test perturbations in silico and accelerate progress in tissue and cell engineering. However, most such models are not rooted in causal inference and as a result, could mistake correlation for causation. We introduce Celcomen, a novel generative graph neural network grounded in mathematical causality to disentangle intra- and inter-cellular gene regulation in spatial transcriptomics and single-cell data. Celcomen can also be prompted by perturbations to generate spatial counterfactuals, thus offering insights into experimentally inaccessible states, with potential applications in human health. We validate the model's disentanglement and identifiability through simulations, and demonstrate its counterfactual predictions in clinically relevant settings, including human glioblastoma and fetal spleen, recovering inflammation-related gene programs post immune system perturbation. Moreover, it supports mechanistic interpretability, as its parameters can be reverse-engineered from observed behavior, making it an accessible model for understanding both neural networks and complex biological systems.",
    },
    {
        "id": "TrJ36UfD9P",
        "title": "Methods with Local Steps and Random Reshuffling for Generally Smooth Non-Convex Federated Optimization",
        "decision": "Accept (Poster)",
        "abstract": "Non-convex Machine Learning problems typically do not adhere to the standard smoothness assumption. Based on empirical findings, Zhang et al. (2020b) proposed a more realistic generalized $(L_0,L_1)$-smoothness assumption, though it remains largely unexplored. Many existing algorithms designed for standard smooth problems need to be revised. However, in the context of Federated Learning, only a few works address this problem but rely on additional limiting assumptions. In this paper, we address this gap in the literature: we propose and analyze new methods with local steps, partial participation of clients, and Random Reshuffling without extra restrictive assumptions beyond generalized smoothness. The proposed methods are based on the proper interplay between clients' and server's stepsizes and gradient clipping. Furthermore, we perform the first analysis of these methods under the Polyak-Łojasiewicz condition. Our theory is consistent with the known results for standard smooth problems, and our experimental results support the theoretical insights.",
    },
    {
        "id": "Nq7yKYL0Bp",
        "title": "ProtPainter: Draw or Drag Protein via Topology-guided Diffusion",
        "decision": "Accept (Poster)",
        "abstract": "Recent advances in protein backbone generation have achieved promising results under structural, functional, or physical constraints. However, existing methods lack the flexibility for precise topology control, limiting navigation of the backbone space. We present $\\textbf{ProtPainter}$, a diffusion-based approach for generating protein backbones conditioned on 3D curves. ProtPainter follows a two-stage process: curve-based sketching and sketch-guided backbone generation. For the first stage, we propose $\\textbf{CurveEncoder}$, which predicts secondary structure annotations from a curve to parametrize sketch generation. For the second stage, the sketch guides the generative process in Denoising Diffusion Probabilistic Modeling (DDPM) to generate backbones. During the process, we further introduce a fusion scheduling scheme, Helix-Gating, to control the scaling factors. To evaluate, we propose the first benchmark for topology-conditioned protein generation, introducing Protein Restoration Task and a new metric, self-consistency Topology Fitness (scTF). Experiments demonstrate ProtPainter's ability to generate topology-fit (scTF $>$ 0.8) and designable (scTM $>$ 0.5) backbones, with drawing and dragging tasks showcasing its flexibility and versatility.",
    },
    {
        "id": "NxyfSW6mLK",
        "title": "REGENT: A Retrieval-Augmented Generalist Agent That Can Act In-Context in New Environments",
        "decision": "Accept (Oral)",
        "abstract": "Building generalist agents that can rapidly adapt to new environments is a key challenge for deploying AI in the digital and real worlds. Is scaling current agent architectures the most effective way to build generalist agents? We propose a novel approach to pre-train relatively small policies on relatively small datasets and adapt them to unseen environments via in-context learning, without any finetuning. Our key idea is that retrieval offers a powerful bias for fast adaptation. Indeed, we demonstrate that even a simple retrieval-based 1-nearest neighbor agent offers a surprisingly strong baseline for today's state-of-the-art generalist agents. From this starting point, we construct a semi-parametric agent, REGENT, that trains a transformer-based policy on sequences of queries and retrieved neighbors. REGENT can generalize to unseen robotics and game-playing environments via retrieval augmentation and in-context learning, achieving this with up to 3x fewer parameters and up to an order-of-magnitude fewer pre-training datapoints, significantly outperforming today's state-of-the-art generalist agents.",
    },
    {
        "id": "V3zobHnS61",
        "title": "RA-TTA: Retrieval-Augmented Test-Time Adaptation for Vision-Language Models",
        "decision": "Accept (Poster)",
        "abstract": "Vision-language models (VLMs) are known to be susceptible to distribution shifts between pre-training data and test data, and test-time adaptation (TTA) methods for VLMs have been proposed to mitigate the detrimental impact of the distribution shifts. However, the existing methods solely rely on the internal knowledge encoded within the model parameters, which are constrained to pre-training data. To complement the limitation of the internal knowledge, we propose **Retrieval-Augmented-TTA (RA-TTA)** for adapting VLMs to test distribution using **external** knowledge obtained from a web-scale image database. By fully exploiting the bi-modality of VLMs, RA-TTA **adaptively** retrieves proper external images for each test image to refine VLMs' predictions using the retrieved external images, where fine-grained **text descriptions** are leveraged to extend the granularity of external knowledge. Extensive experiments on 17 datasets demonstrate that the proposed RA-TTA outperforms the state-of-the-art methods by 3.01-9.63\\% on average.",
    },
]

# A paper from a seed .txt file: no OpenReview id, no title, so it is labelled `file #index`.
UNTITLED = Paper(
    paper_id="002_fdada5ea96b8bec8.txt#4",
    text=(
        "We study sparse mixture-of-experts routing for small language models. "
        "Routing tokens by a learned hash reduces load imbalance without auxiliary losses. "
        "On four benchmarks the method matches dense models at a third of the compute."
    ),
    source_file="002_fdada5ea96b8bec8.txt",
    index=4,
)

# Everything a hostile abstract could try: a script tag, an event-handler attribute, an
# attribute-breaking quote, a javascript: link and a remote Markdown image (tracking pixel).
XSS_MARKER = "xssmarker"


def xss_paper(track_url: str = "http://127.0.0.1:9/track.png") -> Paper:
    return Paper(
        paper_id='evil"><img src=x onerror="window.__xss=3">',
        title='Tracking pixel study <img src=x onerror="window.__xss=1">',
        decision='Accept <b onmouseover="window.__xss=4">(Oral)</b>',
        source_file="evil.txt",
        index=0,
        text=(
            f"The {XSS_MARKER} study measures tracking pixels in abstracts. "
            "<script>window.__xss = 2; fetch('" + track_url + "?script')</script> "
            f'It embeds <img src="{track_url}?img" onerror="window.__xss=1"> an image. '
            f"It also embeds ![x]({track_url}) a Markdown image and [a link](javascript:window.__xss=5). "
            "Templates like ${window.__xss=6} and {{constructor.constructor('window.__xss=7')()}} stay text."
            ' Math like $\\href{javascript:window.__xss=9}{x}$ and $<img src=x onerror="window.__xss=10">$ is inert.'
        ),
    )


def corpus_papers() -> list[Paper]:
    papers = [
        Paper(
            paper_id=r["id"],
            text=r["abstract"],
            source_file="000_e01d3feec203c69d.txt",
            index=i,
            title=r["title"],
            decision=r["decision"],
            authors=["Ada Placeholder", "Ben Placeholder"],  # made-up names: the rows carry none
        )
        for i, r in enumerate(CORPUS_ROWS)
    ]
    return papers + [UNTITLED]


# ----------------------------------------------------------------------------- fake engine

_STOP = set(
    """a an the of in on for to and or is are was were be been by with what which who whom how
    why when where does do did can could would should will this that these those it its their
    they them about from as at into than then there here tell me my your our we you i paper
    papers work works method methods approach model models new use used using show shows
    summarize summarise explain describe give list any some more most other such also only""".split()
)
_SENT_RE = re.compile(r"(?<=[.!?])\s+(?=[A-Z<\[!])")


def words(text: str) -> list[str]:
    return [w for w in re.findall(r"[a-z0-9][a-z0-9\-]+", text.lower()) if w not in _STOP]


def split_sentences(text: str) -> list[tuple[int, int]]:
    spans, pos = [], 0
    for m in _SENT_RE.finditer(text):
        spans.append((pos, m.start()))
        pos = m.end()
    spans.append((pos, len(text)))
    return [(s, e) for s, e in spans if e > s]


@dataclass
class Call:
    question: str
    history: list[dict]
    top_k: int | None
    mode: str | None
    task: str
    llm: str
    filters: object = None


class FakeEngine:
    """Deterministic stand-in for rag.answer.Engine (same protocol, no models).

    Triggers in the question, for tests: "explode" raises mid-stream (model failure);
    "speculate" adds one unsupported sentence; a question sharing no word with any abstract
    is refused.
    """

    def __init__(
        self,
        papers: list[Paper] | None = None,
        *,
        token_delay: float = 0.01,
        llm_name: str = "qwen0.5b",
        profile_load_delay: float = 0.0,
        max_question_chars: int = 4000,
        announce_hits: bool = False,
        _shared: dict | None = None,
    ):
        self.papers = papers if papers is not None else corpus_papers()
        self.token_delay = token_delay
        self.announce_hits = announce_hits  # stream the retrieved hits (a list[Hit]) before any text
        self.profile_load_delay = profile_load_delay
        self.settings = make_settings(llm=llm_name, max_question_chars=max_question_chars)
        self._shared = (
            _shared
            if _shared is not None
            else {
                "calls": [],
                "lock": threading.Lock(),
                "profiles": {},
                "active": 0,
                "max_active": 0,
            }
        )
        self._shared["profiles"].setdefault(llm_name, self)

    # -- bookkeeping visible to tests
    @property
    def calls(self) -> list[Call]:
        return self._shared["calls"]

    @property
    def profile_loads(self) -> dict[str, int]:
        """How many times each other LLM profile was loaded."""
        return dict(self._shared.get("loads", {}))

    @property
    def max_active(self) -> int:
        """The most streams that ran at the same time (the UI should serialize them)."""
        return self._shared["max_active"]

    # -- protocol
    @property
    def llm_profile(self) -> str:
        return self.settings.generation.llm

    def warm_up(self) -> None:
        """Nothing to load."""

    def ingest_if_empty(self, paths=None):
        """The corpus is in memory: nothing to index."""
        return None

    def question_filters(self, question, listed=False):
        """The filters a question names, as the engine reads them (no corpus names here)."""
        from rag.retrieval.filters import filters_from_question

        return filters_from_question(question, listed)

    def with_llm(self, name: str) -> FakeEngine:
        with self._shared["lock"]:
            eng = self._shared["profiles"].get(name)
        if eng is None:
            with self._shared["lock"]:
                loads = self._shared.setdefault("loads", {})
                loads[name] = loads.get(name, 0) + 1
            time.sleep(self.profile_load_delay)
            eng = FakeEngine(
                self.papers,
                token_delay=self.token_delay,
                llm_name=name,
                profile_load_delay=self.profile_load_delay,
                max_question_chars=self.settings.grounding.max_question_chars,
                announce_hits=self.announce_hits,
                _shared=self._shared,
            )
        return eng

    def example_questions(self, n: int = 5) -> list[str]:
        qs = [
            "What does Celcomen do?",
            "Can foundation models forecast chaotic systems zero-shot?",
            "How does REGENT adapt to new environments?",
            "How do language models solve grade-school math problems?",
            "What is ProtPainter used for?",
            "Which papers use retrieval-augmented test-time adaptation?",
        ]
        return qs[:n]

    def retrieve(self, question: str, top_k: int, mode: str | None) -> list[Hit]:
        q = set(words(question))
        scored = []
        for p in self.papers:
            title_w = set(words(p.title or ""))
            body_w = words(p.text)
            score = sum(3.0 for w in q if w in title_w) + sum(1.0 for w in body_w if w in q)
            if mode == "dense":
                score *= 0.9
            scored.append((score, p))
        scored.sort(key=lambda x: -x[0])  # stable: ties keep corpus order
        total = sum(s for s, _ in scored) or 1.0
        return [Hit(paper=p, score=round((s + 0.01) / (total + 0.01), 4)) for s, p in scored[:top_k]]

    def stream(self, question, history=None, *, top_k=None, mode=None, task="answer", filters=None):
        question = (question or "").strip()
        if not question:
            raise UserError("Please type a question.")
        limit = self.settings.grounding.max_question_chars
        if len(question) > limit:
            raise UserError(
                f"Your question is {len(question):,} characters long; the limit is "
                f"{limit:,}. Please shorten it."
            )
        history = [dict(m) for m in (history or [])]
        shared = self._shared
        with shared["lock"]:
            shared["calls"].append(Call(question, history, top_k, mode, task, self.llm_profile, filters))
        if filters is None:  # as the engine does: the question's own filters
            filters = self.question_filters(question)[0] or None
            shared["active"] += 1
            shared["max_active"] = max(shared["max_active"], shared["active"])
        try:
            yield from self._stream(question, history, top_k or 5, mode, task, filters)
        finally:
            with shared["lock"]:
                shared["active"] -= 1

    def _stream(self, question, history, top_k, mode, task, filters=None):
        t0 = time.perf_counter()
        # "condense": a follow-up borrows the words of the previous user question
        prev = [m["content"] for m in history if m["role"] == "user"]
        query = question + (" " + prev[-1] if prev else "")
        hits = self.retrieve(query, top_k, mode)
        if filters:
            hits = [h for h in hits if filters.matches(h.paper)]
        if self.announce_hits:
            yield list(hits)
        if "explode" in question.lower():
            yield "Let me "
            raise RuntimeError("llama went out to lunch (simulated model failure)")
        qw = set(words(question)) or set(words(query))
        usable = [
            h for h in hits if set(words(h.paper.text + " " + (h.paper.title or ""))) & set(words(query))
        ]
        if not usable:
            text = "The indexed abstracts don't answer this question."
            yield from self._tokens(text)
            yield Answer(
                question=question,
                answer=text,
                citations=[],
                sentences=[],
                retrieved=hits,
                refused=True,
                timings={"total": time.perf_counter() - t0},
            )
            return
        citations: list[Citation] = []
        sentences: list[Sentence] = []
        pieces: list[str] = []
        picked = usable[: (3 if task == "summarize" else 2)]
        for n, h in enumerate(picked, 1):
            text = h.paper.text
            spans = split_sentences(text)
            ranked = sorted(spans, key=lambda se: -len(qw & set(words(text[se[0] : se[1]]))))
            best = ranked[:1] if task == "summarize" or n > 1 else ranked[:2]
            if "verbatim" in question.lower() and n == 1:
                best = list(spans)  # quote the whole abstract (used by the XSS tests)
            best.sort()
            for s, e in best:
                sent = text[s:e].strip()
                claim = f"{sent.rstrip('.')} [{n}]."
                if task == "summarize":
                    claim = f"{h.paper.label}: {claim}"
                pieces.append(claim)
                sentences.append(Sentence(text=claim, citations=[n], supported=True, support_score=0.9))
            citations.append(
                Citation(
                    n=n,
                    paper_id=h.paper.paper_id,
                    title=h.paper.title,
                    source_file=h.paper.source_file,
                    index=h.paper.index,
                    quote=text[best[0][0] : best[0][1]],
                    quote_start=best[0][0],
                    quote_end=best[0][1],
                    spans=list(best),
                )
            )
        if "speculate" in question.lower():
            extra = "It is the first method ever to solve this problem completely."
            pieces.append(extra)
            sentences.append(Sentence(text=extra, citations=[], supported=False, support_score=0.1))
        sep = "\n" if task == "summarize" else " "
        answer_text = sep.join(pieces)
        if task == "summarize":
            answer_text = f"{len(picked)} papers on this topic:\n" + answer_text
        yield from self._tokens(answer_text)
        yield Answer(
            question=question,
            answer=answer_text,
            citations=citations,
            sentences=sentences,
            retrieved=hits,
            standalone_question=query,
            timings={"total": time.perf_counter() - t0},
        )

    def _tokens(self, text):
        for tok in re.findall(r"\S+\s*|\s+", text):
            if self.token_delay:
                time.sleep(self.token_delay)
            yield tok


class SlowLoader:
    """A factory that builds the engine slowly (to test the loading state): it waits `delay`
    seconds, or with `gated=True` until the test calls `release()` (deterministic under load)."""

    def __init__(self, engine, delay: float = 2.0, fail: bool = False, gated: bool = False):
        self.engine, self.delay, self.fail = engine, delay, fail
        self.gate = threading.Event()
        if not gated:
            self.gate.set()

    def release(self):
        self.gate.set()

    def __call__(self):
        self.gate.wait(300)
        time.sleep(self.delay)
        if self.fail:
            raise RuntimeError("weights file is corrupt (simulated)")
        return self.engine


# ----------------------------------------------------------------------------- servers


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class HitCounter:
    """A loopback HTTP server counting every request (a canary for anything that loads)."""

    def __init__(self):
        self.hits: list[str] = []
        counter = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802
                counter.hits.append(self.path)
                self.send_response(200)
                self.send_header("Content-Type", "image/png")
                self.end_headers()

            def log_message(self, *a):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()


@contextlib.contextmanager
def running_app(engine, **build_kwargs):
    """Build the UI around `engine` and serve it on a free loopback port; yields the base URL."""
    from ui.app import build_app, start

    demo = build_app(engine, **build_kwargs)
    port = free_port()
    url = start(demo, host="127.0.0.1", port=port, quiet=True)
    try:
        yield url, demo
    finally:
        demo.close()
