"""One typed settings object in seven groups (`settings.retrieval.top_k`). Values come from CLI flags, then
RAG_<GROUP>__<FIELD> env vars, then defaults."""

from __future__ import annotations

import ipaddress
import json
import logging
import os
import re
import sys
import typing
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, field_validator, model_validator
from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings, SettingsConfigDict

# Set before any HF/Gradio import so users never have to.
OFFLINE_ENV = {
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "HF_HUB_DISABLE_TELEMETRY": "1",
    "GRADIO_ANALYTICS_ENABLED": "False",
    "ANONYMIZED_TELEMETRY": "False",
    "TOKENIZERS_PARALLELISM": "false",
    # Spinning OpenMP workers starve the other threads on 2 cores (measured ~10x slower generate).
    "OMP_WAIT_POLICY": "PASSIVE",
}
for _k, _v in OFFLINE_ENV.items():
    os.environ.setdefault(_k, _v)

REPO_ROOT = Path(__file__).resolve().parent.parent
SEEDS_DIR = REPO_ROOT / "seeds"
# Every ICLR 2025 submission, bundled (seeds/ICLR2025_SOURCE.md); `rag ingest --conference` indexes it.
CONFERENCE_FILE = SEEDS_DIR / "iclr2025.jsonl.gz"
# Its chunk vectors, made by `rag bundle-vectors` from a conference index (rag.ingest.vector_bundle).
VECTOR_BUNDLE = SEEDS_DIR / "iclr2025.vectors.npz"

Mode = Literal["hybrid", "dense", "bm25"]


def _xdg(var: str, fallback: str) -> Path:
    return Path(os.environ.get(var) or Path.home() / fallback)


def D(default, description: str, **kw):
    """A field with its default and what it means (shown by `Settings.describe()`)."""
    if callable(default):
        return Field(default_factory=default, description=description, **kw)
    return Field(default=default, description=description, **kw)


class StorageSettings(BaseModel):
    """Where the index lives and how abstracts become stored vectors."""

    data_dir: Path = D(lambda: _xdg("XDG_DATA_HOME", ".local/share") / "iclr-rag", "Index folder.")
    model_cache: Path = D(
        lambda: _xdg("XDG_CACHE_HOME", ".cache") / "iclr-rag", "Converted models, shared by all data dirs."
    )
    chroma_url: str | None = D(None, "Chroma server URL; unset = embedded PersistentClient in data_dir.")
    collection: str = D("iclr", "Chroma collection name (Chroma's rules; `<name>_papers` is made beside it).")
    conference_collection: str = D(
        "iclr2025",
        "Collection of the bundled conference (`--conference`), so the seeds stay their own index.",
    )
    chunk_size: int = D(
        172,
        "Chunk size in tiktoken tokens; with the title prefix a chunk fits MiniLM's 256 wordpieces.",
        ge=32,
    )
    chunk_overlap: int = D(16, "Chunk overlap in tiktoken tokens (smaller than chunk_size).", ge=0)
    embed_batch: int = D(32, "Chunks per embedder batch.")
    ingest_block: int = D(512, "Chunks embedded and committed per step (the crash-safe unit).")
    embed_backend: Literal["torch", "onnx", "onnx-int8"] = D(
        "torch",
        "Embedder runtime. torch: sentence-transformers. onnx: ONNX Runtime fp32 (torch's vectors). onnx-int8: "
        "ONNX Runtime with int8 weights, exported once into model_cache: faster, vectors at mean cosine 0.994 to "
        "torch (its own embedder name, so a torch store re-embeds); not the default, as full-scale hybrid hit@5 "
        "on the calibration half of eval/data/questions.jsonl drops (0.965 against 0.976). onnx* fall back to "
        "torch without onnxruntime.",
    )
    embed_dtype: Literal["auto", "float32", "bfloat16"] = D(
        "auto",
        "Torch embedder's compute dtype (autocast). auto: bfloat16 where the CPU computes it natively "
        "(AVX-512 BF16 or AMX), else float32 (emulated bfloat16 is slow). bfloat16 vectors are float32's to "
        "cosine 0.9999, so it keeps the float32 embedder name and stores stay valid.",
    )
    embed_workers: int = D(
        0,
        "Concurrent embedder streams for large inputs (ingest), each on threads/workers intra-op threads; 0: one "
        "per CPU thread, 1: a single stream.",
    )
    embed_int8: bool = D(False, "Dynamic int8 embedder (changes the vectors: mean cosine 0.90 to fp32).")
    embed_max_tokens: int = D(
        128,
        "Embedding window in wordpieces (MiniLM's training length). Chunks keep their full text for BM25 and "
        "citing.",
    )
    vector_bundle: Path | None = D(
        VECTOR_BUNDLE,
        "Shipped chunk vectors (rag.ingest.vector_bundle): a paper whose vector_hash (text, title, chunking, embedder "
        "name and window) is in it is stored with them instead of being embedded; empty = embed everything. "
        "int8 rows of the float32 vectors: mean cosine 0.99997 (min 0.99992) over the 24,132 conference chunks.",
    )
    store_page: int = D(5000, "Records read per page when loading the whole store.")
    store_check_s: float = D(
        2.0, "How often a query re-checks a shared store for other processes' writes, in seconds."
    )
    max_abstract_chars: int = D(
        20_000, "Longest abstract one ingest accepts (the conference's longest: 3,317 characters).", ge=1
    )
    max_ingest_records: int = D(
        50_000, "Most records one ingest reads (the conference: 11,672); split a bigger corpus.", ge=1
    )
    max_ingest_bytes: int = D(
        100_000_000,
        "Most bytes of corpus text one ingest reads, gzip counted unpacked (the conference: 21 MB).",
        ge=1,
    )

    @field_validator("collection", "conference_collection")
    @classmethod
    def _chroma_name(cls, v: str) -> str:
        # Chroma's rules for `v` and `v_papers`: 3-63 characters of [a-zA-Z0-9._-], alphanumeric at both ends,
        # no "..", not an IPv4 address
        ok = re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{1,54}[A-Za-z0-9]", v) and ".." not in v
        try:
            ipaddress.IPv4Address(v)
            ok = False
        except ValueError:
            pass
        if not ok:
            raise ValueError(
                "a collection name is 3-56 letters, digits, '.', '_' or '-', starting and ending with a letter or "
                "digit, with no '..' (Chroma's rules)"
            )
        return v

    @field_validator("data_dir")
    @classmethod
    def _a_folder(cls, v: Path) -> Path:
        for p in (v, *v.parents):  # the nearest existing path must be a folder
            if p.exists():
                if not p.is_dir():
                    raise ValueError(f"{p} is a file, not a folder; name a folder (it is created if missing)")
                break
        return v

    @model_validator(mode="after")
    def _overlap_below_size(self):
        if self.chunk_overlap >= self.chunk_size:
            raise ValueError(
                f"the chunk overlap ({self.chunk_overlap}) must be smaller than the chunk size ({self.chunk_size})"
            )
        return self

    @field_validator("vector_bundle", mode="before")
    @classmethod
    def _no_bundle(cls, v):  # RAG_STORAGE__VECTOR_BUNDLE= (empty) turns it off
        return None if v is None or str(v).strip() in ("", "0", "none", "off") else v

    @property
    def chroma_path(self) -> Path:
        return self.data_dir / "chroma"


class RetrievalSettings(BaseModel):
    """Dense + BM25, fused. Fusion calibrated on eval/data/questions.jsonl against the full corpus."""

    top_k: int = D(5, "Papers retrieved per question.", ge=1, le=50)
    mode: Mode = D("hybrid", "hybrid, dense or bm25.")
    candidates: int = D(40, "Chunks pulled from each retriever (dense, BM25) before fusion.")
    dense_weight: float = D(1.0, "RRF weight of the dense side.")
    bm25_weight: float = D(
        1.0, "RRF weight of BM25 (the same for every question; eval/results/retrieval-plain-weight)."
    )
    rrf_k: int = D(10, "Reciprocal-rank fusion constant k (a rank r scores 1 / (k + r)).")
    named_boost: float = D(2.0, "Extra rank-1 votes for papers naming the question's named terms.")
    cover_depth: int = D(
        100,
        "A question's named term that none of the papers shown mentions, while some indexed paper does, brings "
        'in the best such paper (searched this many BM25 chunks deep; 0 = off), so "the sources never mention X" '
        "is true of the index, not of the top k.",
    )
    paper_weight: float = D(
        0.0,
        "RRF weight of a third side: the query against each paper's mean chunk vector (0 = off: on the "
        "calibration half of eval/data/questions.jsonl, full index, it lowers hit@5).",
    )
    paper_candidates: int = D(40, "Papers pulled by the paper-vector side.")
    prf_docs: int = D(
        0,
        "Pseudo-relevance feedback: top papers of the first pass used to expand the query (0 = off: on the "
        "calibration half of eval/data/questions.jsonl, full index, it leaves hit@5 as is and changes the fused "
        "scores' scale).",
    )
    prf_terms: int = D(8, "Feedback: expansion words (highest tf x idf in the feedback papers).")
    prf_weight: float = D(0.5, "Feedback: RRF weight of the expanded BM25 pass.")
    prf_dense_weight: float = D(
        0.5, "Feedback: RRF weight of the dense pass on query + feedback papers' vectors."
    )
    prf_beta: float = D(
        0.5, "Feedback: weight of the feedback papers' mean vector added to the query vector."
    )
    decision: str | None = D(
        None,
        "Only papers with this decision: oral|spotlight|poster|accepted|rejected|withdrawn or exact; "
        "several, comma-separated: either.",
    )
    area: str | None = D(None, "Only papers in this primary area (case-insensitive exact match).")
    author: str | None = D(None, "Only papers with an author matching this (substring, case/accent-blind).")


class GroundingSettings(BaseModel):
    """The support judge, the outcome decision (rag.grounding.outcome) and the answer's evidence."""

    support_threshold: float = D(0.55, "Judge score (0-1) at which an evidence sentence supports a claim.")
    judge_cos_weight: float = D(0.5, "Judge: weight of embedding cosine (the rest is content-word overlap).")
    judge_mismatch_penalty: float = D(
        0.5,
        "Judge: factor for a claim whose numbers/named methods the evidence lacks, or whose negation differs.",
    )
    answer_style: Literal["quote", "lead"] = D(
        "quote",
        "quote: each part of the question is answered by its best abstract sentences, quoted and cited; lead: "
        "the generator also writes a one-sentence answer from them, shown only when it is well formed and "
        "contained in the sentences it cites.",
    )
    refuse_model: dict[str, tuple[float, float, float]] = D(
        {
            "relevance": (0.50768, 0.18105, -0.22817),
            "cosine": (0.55601, 0.14115, -0.41842),
            "cover": (0.65658, 0.22258, -0.26574),
        },
        "Nothing relevant: feature -> (mean, sd, weight) of a logistic model over the best evidence sentence's "
        "score, the best chunk cosine and the best paper's rarity-weighted share of the question's words "
        "(`rag eval-fit` over the 21 question files of eval/data/; eval/results/outcome-refit-2026-12-07). A name no abstract mentions "
        "is a caveat, not a reason to refuse.",
    )
    refuse_intercept: float = D(-0.0911, "Nothing relevant: the logistic model's intercept.")
    refuse_bar: float = D(
        0.77594,
        "Refuse when the model's probability (0-1) of nothing relevant reaches this (`rag eval-fit`).",
    )
    caveat_model: dict[str, tuple[float, float, float]] = D(
        {
            "cover": (0.61857, 0.30693, 0.18005),
            "thing": (0.81677, 0.34667, -0.31568),
            "score": (0.48122, 0.19236, -0.44377),
            "no_number": (0.05105, 0.22011, 0.34423),
            "which": (0.18421, 0.38766, -0.58848),
            "aspect": (0.04, 0.19596, 0.3651),
            "gain": (0.02699, 0.0409, 0.56136),
        },
        "A part not stated: feature -> (mean, sd, weight) of a logistic model over a part's evidence "
        "(rag.grounding.outcome.answer_part: shares of its words and of the asked thing its papers hold, its best "
        "sentence's score, how much closer it comes to its paper without the words it lacks, ...) (`rag eval-fit`).",
    )
    caveat_intercept: float = D(-0.2052, "A part not stated: the logistic model's intercept.")
    caveat_bar: float = D(
        0.73242,
        "A part gets a caveat when the model's probability (0-1) of not stated reaches this (`rag eval-fit`).",
    )
    which_caveat_model: dict[str, tuple[float, float, float]] = D(
        {
            "cover": (0.56718, 0.28219, -1.26012),
            "thing": (0.74442, 0.36485, 0.38279),
            "score": (0.47027, 0.17773, 0.08321),
            "missing": (11.75681, 7.30647, -0.71027),
            "elsewhere": (4.91502, 5.48254, -1.15612),
            "aspect": (0.21714, 0.4123, 1.17527),
        },
        'A part of a "which paper" description its closest paper lacks: the caveat model of its own, over the '
        "same signals as `caveat_model` and whether the paper lacks an aspect of the description (`rag eval-fit`).",
    )
    which_caveat_intercept: float = D(-0.87287, "A description's part not matched: the model's intercept.")
    which_caveat_bar: float = D(
        0.72024,
        "A description's part gets a caveat when that model's probability reaches this (`rag eval-fit`).",
    )
    number_window: int = D(
        8, "A number answers a part when it stands within this many words of what is asked."
    )
    part_sentences: int = D(2, "Sentences quoted per part and paper.")
    contribution_bonus: float = D(
        0.15,
        "A part asking nothing but what a paper does prefers its 'we propose …' sentences by this much score.",
    )
    instance_bonus: float = D(
        0.15,
        "A part asking which X (datasets, LLMs, environments) of papers naming an X is answered by the sentences "
        "naming one (rag.grounding.kinds), their scores raised by this much (0-1 score units).",
    )
    part_share: float = D(0.85, "... each within this share of the part's best sentence score.")
    compare_min: float = D(0.2, "Compare tables: a cell's sentence must score this against its column.")
    focus_broad_ratio: float = D(
        0.7, "A compare or list question may cite every source this close to the most relevant one."
    )
    evidence_per_paper: int = D(3, "Evidence: best sentences kept per paper (plus a needed neighbour).")
    evidence_share: float = D(0.7, "Evidence: a paper's sentences within this share of its best sentence.")
    list_candidates: int = D(12, "List answers: papers retrieved before the evidence bar.")
    list_aspect_gain: float = D(
        0.06,
        "Lister: a paper lacks part of a topic when the words of the topic it never uses pull the topic "
        "away from it by this much cosine (rag.grounding.gaps.missing_aspects).",
    )
    list_max: int = D(10, "List answers: at most this many lines (the lister gives complete lists).")
    list_closest: int = D(3, "List answers that find no paper on every part of the topic: the closest shown.")
    max_question_chars: int = D(4000, "Longest question accepted.")


class GenerationSettings(BaseModel):
    """The local generator and what it is shown."""

    llm: str = D(
        "qwen0.5b", "qwen0.5b | smollm2 | qwen1.5b (make install-1.5b) | path to an HF folder or .gguf file."
    )
    max_new_tokens: int = D(160, "Generation budget per answer, in new tokens.", ge=8)
    threads: int = D(lambda: max(1, os.cpu_count() or 1), "CPU threads (default: all cores).", ge=1)
    int8: bool = D(True, "Dynamic int8 quantization of the LLM on CPU.")
    int8_cache: bool = D(
        True,
        "Build the int8 LLM once into model_cache and load it from there (no fp32 copy in memory: a serving "
        "peak of about 1.5 GiB instead of 6). False: quantize the fp32 model at each start.",
    )
    context_papers: int = D(4, "Papers shown to the generator (the rest are listed as retrieved).")
    full_abstracts: int = D(2, "The top papers go in whole; the others as their best chunk.")
    summary_max_papers: int = D(
        20, "Summary: the lister's papers quoted, best first (the header says how many match in all)."
    )
    summary_themes: int = D(5, "Summary: at most this many themes.")
    summary_theme_size: int = D(3, "Summary: about this many papers per theme (clusters of their vectors).")


class ConversationSettings(BaseModel):
    """Whether a question leans on the chat (rag.reading.reader): the words' reading, checked by retrieval."""

    condense_check: bool = D(
        True,
        "Retrieve both readings (the question alone; with the turn it would lean on) unless it points back or "
        "states a switch; when their top papers differ, the question's rare words decide. False: the words alone.",
    )
    switch_min_gain: float = D(
        4.0,
        "Read alone when the alone reading's paper uses this much more of the question's words (summed BM25 idf "
        "of the words only it uses, minus the reverse) and switch_min_words of them.",
    )
    switch_min_words: int = D(
        2, "Read alone only when at least this many of the question's words are the alone paper's alone."
    )
    follow_min_gain: float = D(
        2.0,
        "Read as a follow-up when the follow-up reading's paper uses this much more (see switch_min_gain).",
    )
    condense_cache: int = D(
        256, "Questions whose reading is remembered, a count (a chat re-sends its history)."
    )


class ListSettings(BaseModel):
    """`rag list`: every paper on a topic, each with its best-matching abstract sentence. Calibrated with
    `rag eval-lists` on the calibration topics of eval/data/list_topics.jsonl, full index (eval/results/lists-full)."""

    lister_candidates: int = D(
        300,
        "Chunks pulled from each retriever (dense, BM25) as a list's first candidate pool.",
    )
    lister_deepen_share: float = D(
        0.05,
        "Look twice as deep (up to lister_max_candidates) while this share of the candidate pool's last quarter "
        "clears the bar: a broad topic ('diffusion models') is followed past the first pool; no calibration "
        "topic of eval/data/list_topics*.jsonl deepens.",
    )
    lister_max_candidates: int = D(
        4800,
        "The deepest pool a list looks at, in chunks a side; a list still clearing the bar there says 'at "
        "least'.",
    )
    lister_scoring: Literal["model", "paper", "sentence"] = D(
        "model",
        "model: a logistic model over the topic against each candidate's stored paper vector, its words and its "
        "retrieval rank (rag.shapes.list_score; nothing embedded per paper); paper: cosine and word share blended; "
        "sentence: every abstract sentence embedded and judged (too slow for hundreds of candidates).",
    )
    lister_model: dict[str, tuple[float, float, float]] = D(
        {
            "cos": (0.47752, 0.13531, -0.9033),
            "in_title": (0.35392, 0.28311, 0.18925),
            "rel_cos": (-0.22666, 0.12462, 0.78733),
            "idf_lex": (0.61791, 0.30104, -0.36241),
            "bm_n": (0.59497, 0.23739, 0.79065),
            "cent": (0.39359, 0.27481, -0.32432),
            "macos": (0.55143, 0.21956, 0.15175),
            "malex": (0.54173, 0.37334, 0.34117),
            "cen5": (0.64126, 0.12999, 0.70601),
            "lrank": (3.44089, 1.34775, -0.57459),
            "stated": (0.40933, 0.31164, 0.49101),
        },
        "Model scoring: feature -> (mean, sd, weight), fitted by `rag eval-lists --fit` on the 25 calibration "
        "topics of eval/data/list_topics.jsonl, list_topics_fresh.jsonl and list_topics_fresh2.jsonl, full index "
        "(eval/results/lists-fit).",
    )
    lister_model_intercept: float = D(
        0.60527, "Model scoring: the logistic model's intercept (see lister_model)."
    )
    lister_min_score: float = D(
        0.5,
        "A paper is listed when its score clears this (model scoring: a probability, 0-1). Chosen by leave-one-"
        "topic-out on the 25 calibration topics (see lister_model) as the bar maximising the worse of recall and "
        "judged precision. Paper scoring's bar on the same topics is about 0.46.",
    )
    lister_cover_check: int = D(
        5,
        "A list is empty when each of its first this many papers lacks part of the topic (rag.grounding.gaps, with "
        "list_aspect_gain): a topic no paper is about has closest papers, not matching ones. 0: no check.",
        ge=0,
    )
    lister_relative: float = D(
        0.65,
        "Paper and sentence scorings: ... and this share of the topic's best paper's score (chosen on the "
        "calibration topics). The model reads the topic's best itself (rel_cos).",
    )
    lister_title_weight: float = D(
        0.1, "Paper scoring: extra weight of the share of the topic's content words that the title uses."
    )
    lister_cos_weight: float = D(
        0.5, "Weight of embedding cosine in a paper or sentence score (the rest: word overlap)."
    )


class ServingSettings(BaseModel):
    """The web UI."""

    auth: str | None = D(None, "USER:PASS login for the web UI.")
    forwarded_allow_ips: str = D(
        "",
        "Addresses of the reverse proxy whose X-Forwarded-For the server trusts (comma-separated, '*' any); none "
        "by default, so no client can choose the address the failed-login limit counts.",
    )
    queue_size: int = D(128, "Requests waiting in the UI queue; beyond it a request is turned away.")
    handler_concurrency: int = D(8, "Fast UI events (no generation) handled at once.")
    concurrency: int = D(1, "Answers generated at once (one model, 2 cores).")
    example_count: int = D(5, "Example questions shown on the first page.")
    find_page_size: int = D(20, "Find papers: rows per page of the result table.")
    upload_max_bytes: int = D(
        1_000_000,
        "Largest file Gradio would accept (its /upload route is turned off: the page takes no files).",
    )
    request_max_bytes: int = D(2_000_000, "Largest request body the web server accepts.")
    login_max_failures: int = D(5, "Failed logins allowed per client address per login_window_s.")
    login_window_s: float = D(60.0, "Window of the failed-login limit, in seconds.")


# The groups, in order: `settings.<group>.<field>`, env RAG_<GROUP>__<FIELD>.
GROUPS: dict[str, type[BaseModel]] = {
    "storage": StorageSettings,
    "retrieval": RetrievalSettings,
    "grounding": GroundingSettings,
    "generation": GenerationSettings,
    "conversation": ConversationSettings,
    "lists": ListSettings,
    "serving": ServingSettings,
}
# Each setting's group, by the setting's own name (names are unique across groups).
GROUP_OF: dict[str, str] = {name: group for group, cls in GROUPS.items() for name in cls.model_fields}
FIELDS: dict[str, FieldInfo] = {name: GROUPS[group].model_fields[name] for name, group in GROUP_OF.items()}
ENV_PREFIX = "RAG_"

log = logging.getLogger(__name__)
_warned_env: set[str] = set()


def env_name(name: str) -> str:
    """A setting's env var: RAG_<GROUP>__<FIELD> (`top_k`: RAG_RETRIEVAL__TOP_K)."""
    return f"{ENV_PREFIX}{GROUP_OF[name]}__{name}".upper()


def _values(group) -> dict:
    """A group given as a model or a dict, as a dict of its values (a copy)."""
    if isinstance(group, BaseModel):
        return {k: getattr(group, k) for k in type(group).model_fields}
    return dict(group or {})


def nest(values: Mapping[str, Any]) -> dict[str, Any]:
    """Settings named by their own names (`top_k=3`) as the nested form (`retrieval={"top_k": 3}`).
    Groups given whole pass through, a setting named by its own name overriding its group's value; other
    keys pass through. The non-deprecated way to build `Settings` from flat names (CLI flags, tests)."""
    out = {k: v for k, v in values.items() if k not in GROUP_OF}
    for name, value in values.items():
        if name in GROUP_OF:
            group = GROUP_OF[name]
            out[group] = {**_values(out.get(group)), name: value}
    return out


def _env_value(name: str, raw: str):
    """A flat env var's text as the env source reads it: JSON for dict and list settings."""
    if typing.get_origin(FIELDS[name].annotation) in (dict, list, tuple, set):
        try:
            return json.loads(raw)
        except ValueError:
            return raw  # validation names the bad value
    return raw


def _warn_flat(flat: list[str], example: str, stacklevel: int) -> None:
    """One DeprecationWarning naming each flat setting's group, with an example of the nested form."""
    warnings.warn(
        "flat setting names are deprecated: "
        + ", ".join(f"{k} is now {GROUP_OF[k]}.{k}" for k in flat)
        + f" (e.g. {example})",
        DeprecationWarning,
        stacklevel=stacklevel + 1,  # the caller's frame, past this helper
    )


def _caller_stacklevel() -> int:
    """The stacklevel of the first frame outside pydantic and this module (a warning names the caller)."""
    import pydantic as _p
    import pydantic_settings as _ps

    skip = (str(Path(_p.__file__).parent), str(Path(_ps.__file__).parent), __file__)
    frame, level = sys._getframe(1), 1
    while frame is not None and frame.f_code.co_filename.startswith(skip):
        frame, level = frame.f_back, level + 1
    return level


def flat_env_names() -> dict[str, str]:
    """Deprecated flat env vars that are set ({setting: env var}), e.g. {"top_k": "RAG_TOP_K"}."""
    env = {k.upper(): k for k in os.environ}
    return {
        name: env[f"{ENV_PREFIX}{name}".upper()] for name in GROUP_OF if f"{ENV_PREFIX}{name}".upper() in env
    }


class Settings(BaseSettings):
    """Every setting, in its group: `settings.retrieval.top_k`, env RAG_RETRIEVAL__TOP_K, most also a CLI flag.

    The flat names of the previous release (`Settings(top_k=3)`, env RAG_TOP_K) still work, with a
    deprecation warning naming the new one; they go in the next release."""

    model_config = SettingsConfigDict(env_prefix=ENV_PREFIX, env_nested_delimiter="__", extra="ignore")

    storage: StorageSettings = Field(default_factory=StorageSettings)
    retrieval: RetrievalSettings = Field(default_factory=RetrievalSettings)
    grounding: GroundingSettings = Field(default_factory=GroundingSettings)
    generation: GenerationSettings = Field(default_factory=GenerationSettings)
    conversation: ConversationSettings = Field(default_factory=ConversationSettings)
    lists: ListSettings = Field(default_factory=ListSettings)
    serving: ServingSettings = Field(default_factory=ServingSettings)

    @model_validator(mode="before")
    @classmethod
    def _flat_names(cls, data):
        """Deprecated flat names into their groups: keyword arguments (over any env var), then the flat env
        vars of settings whose nested env var (or keyword) is unset."""
        if not isinstance(data, dict):
            return data
        flat = [k for k in data if k in GROUP_OF]
        if flat:
            _warn_flat(
                flat, 'Settings(retrieval={"top_k": 3}), or rag.settings.nest(...)', _caller_stacklevel()
            )
            data = nest(data)
        else:
            data = dict(data)
        for name, var in flat_env_names().items():
            group = GROUP_OF[name]
            given = data.get(group)
            if isinstance(given, BaseModel) or (isinstance(given, dict) and name in given):
                continue  # the group given whole, or the setting by its nested env var or a keyword
            data[group] = {**_values(given), name: _env_value(name, os.environ[var])}
            if var not in _warned_env:
                _warned_env.add(var)
                log.warning(
                    "%s is deprecated: set %s (the flat name goes in the next release).", var, env_name(name)
                )
        return data

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Settings:
        """A copy; `update` names groups, and a group's dict changes only the settings it names (as
        `replace`). Flat names in `update` are deprecated: moved into their groups, with a warning."""
        flat = [k for k in update or () if k in GROUP_OF]
        if flat:
            _warn_flat(flat, 'settings.replace(retrieval={"top_k": 3})', 2)
        return super().model_copy(update=self._grouped(nest(update or {}), deep), deep=deep)

    def replace(self, **groups: Mapping[str, Any] | BaseModel) -> Settings:
        """A copy with some settings changed, given by group: `s.replace(retrieval={"top_k": 3})` changes
        top_k and keeps every other setting; a group's model replaces the group. Not validated (as
        `model_copy`)."""
        return super().model_copy(update=self._grouped(groups))

    def _grouped(self, groups: Mapping[str, Any], deep: bool = False) -> dict[str, BaseModel]:
        update = {}
        for group, changes in groups.items():
            if group not in GROUPS:
                raise TypeError(f"{group!r} is not a settings group ({', '.join(GROUPS)})")
            if isinstance(changes, BaseModel):
                update[group] = changes
            else:
                update[group] = getattr(self, group).model_copy(update=dict(changes), deep=deep)
        return update

    def value(self, name: str):
        """A setting's value by its own name (`s.value("top_k")` is `s.retrieval.top_k`)."""
        return getattr(getattr(self, GROUP_OF[name]), name)

    @classmethod
    def describe(cls) -> list[tuple[str, str, str, str]]:
        """(group, field, default, description) for every setting, in group order."""
        rows = []
        for group, model in GROUPS.items():
            for name, f in model.model_fields.items():
                default = "(computed)" if f.default_factory else repr(f.default)
                rows.append((group, name, default, f.description or ""))
        return rows
