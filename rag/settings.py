"""One typed settings object. Values come from CLI flags, then RAG_* env vars, then defaults."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from pydantic import Field
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

Mode = Literal["hybrid", "dense", "bm25"]


def _xdg(var: str, fallback: str) -> Path:
    return Path(os.environ.get(var) or Path.home() / fallback)


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="RAG_", extra="ignore")

    data_dir: Path = Field(default_factory=lambda: _xdg("XDG_DATA_HOME", ".local/share") / "iclr-rag")
    model_cache: Path = Field(default_factory=lambda: _xdg("XDG_CACHE_HOME", ".cache") / "iclr-rag")
    chroma_url: str | None = None  # unset: embedded PersistentClient in data_dir
    collection: str = "iclr"

    # Chunks must fit MiniLM's 256-wordpiece window together with the title prefix.
    chunk_size: int = 172  # tiktoken tokens; with the title prefix the max is <=256 wordpieces (measured)
    chunk_overlap: int = 16
    embed_batch: int = 32
    ingest_block: int = 512  # chunks embedded and committed per step (crash-safe unit)
    embed_int8: bool = False
    # MiniLM was trained on 128-wordpiece inputs: truncating the chunk window there embeds 1.35x
    # faster and ranked as well (README "Performance"); chunks keep their full text for BM25 and citing.
    embed_max_tokens: int = 128

    top_k: int = 5
    mode: Mode = "hybrid"
    candidates: int = 40  # chunks pulled from each retriever before fusion
    # Fusion calibrated on eval/questions.jsonl against the full 11,672-paper corpus (README "Quality"):
    # BM25 carries questions that name a method, acronym or number; paraphrases lean on dense.
    dense_weight: float = 1.0
    bm25_weight: float = 1.0  # questions with named terms
    bm25_weight_plain: float = 0.2  # questions without
    rrf_k: int = 10
    named_boost: float = 2.0  # extra rank-1 votes for papers naming the question's named terms
    store_check_s: float = 2.0  # how often a query re-checks a shared store for other writers

    context_papers: int = 4  # papers shown to the generator (the rest are listed as retrieved)
    full_abstracts: int = 2  # the top papers go in whole; the others as their best chunk
    llm: str = "qwen0.5b"  # qwen0.5b | smollm2 | path to an HF folder or .gguf file
    max_new_tokens: int = 160
    threads: int = Field(default_factory=lambda: max(1, os.cpu_count() or 1))
    int8: bool = True  # dynamic int8 quantization of the LLM on CPU

    # Grounding: thresholds calibrated on eval/questions.jsonl (see README "Quality").
    support_threshold: float = 0.55
    refuse_threshold: float = 0.15
    drop_unsupported: bool = False
    focus_ratio: float = 0.95  # shown and citable: sources this close to the most question-relevant one
    focus_broad_ratio: float = 0.7  # ... when the question asks about several papers
    # below this, an unsupported answer becomes a refusal (0.2 wrongly refused 2 paraphrases on the dev set)
    fallback_min_answerability: float = 0.15
    # ... for "which paper …?" questions, where quoting the nearest abstract would name the wrong paper
    which_fallback_min: float = 0.38
    summary_min_relevance: float = 0.35
    summary_candidates: int = 15
    summary_cut: float = 0.75  # keep papers whose relevance is within this share of the best
    summary_max_papers: int = 6
    max_question_chars: int = 4000

    auth: str | None = None  # USER:PASS for the web UI

    @property
    def chroma_path(self) -> Path:
        return self.data_dir / "chroma"
