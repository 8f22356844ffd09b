"""MiniLM (BERT, 6 layers, 384 wide) in numpy: the packaged embedder's forward pass with no torch import
(eval/train_relevance.py runs a cross-encoder on the same layers).

Importing torch and sentence-transformers takes 6-7 s cold on 2 cores; a topic of a few words takes
milliseconds to embed here, and the vectors are the packaged model's (mean cosine to sentence-transformers'
1.00000, tests/test_minilm.py). The tokenizer is the package's own `tokenizer.json` (Rust `tokenizers`).
"""

from __future__ import annotations

import functools
import json
import math
from pathlib import Path

import numpy as np


def _erf(x: np.ndarray) -> np.ndarray:
    """Abramowitz and Stegun 7.1.26 (absolute error < 1.5e-7, below float32's resolution here)."""
    s = np.sign(x)
    a = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    y = 1.0 - (
        ((((1.061405429 * t - 1.453152027) * t) + 1.421413741) * t - 0.284496736) * t + 0.254829592
    ) * t * np.exp(-a * a)
    return s * y


def _gelu(x: np.ndarray) -> np.ndarray:
    return 0.5 * x * (1.0 + _erf(x * 0.7071067811865476))


def _norm(x: np.ndarray, w: np.ndarray, b: np.ndarray, eps: float) -> np.ndarray:
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * w + b


def base_dir() -> Path:
    from rag.models.embedder import embedder_path

    return embedder_path()


@functools.cache
def base_weights() -> dict[str, np.ndarray]:
    """The packaged MiniLM's tensors, names without a model prefix."""
    from safetensors.numpy import load_file

    return load_file(str(base_dir() / "model.safetensors"))


def tokenizer(max_tokens: int):
    """The package's tokenizer, truncating to `max_tokens` (longest first for pairs), no padding."""
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(base_dir() / "tokenizer.json"))
    tok.enable_truncation(max_length=max_tokens, strategy="longest_first")
    tok.no_padding()
    return tok


class Encoder:
    """BERT's forward pass over float32 tensors (`w`: names as in a BertModel checkpoint)."""

    def __init__(self, w: dict[str, np.ndarray], config: dict, max_tokens: int):
        self.w = {k: np.asarray(v, dtype=np.float32) for k, v in w.items()}
        self.layers = int(config["num_hidden_layers"])
        self.heads = int(config["num_attention_heads"])
        self.eps = float(config.get("layer_norm_eps", 1e-12))
        self.max_tokens = max_tokens
        self.tok = tokenizer(max_tokens)

    @classmethod
    def packaged(cls, max_tokens: int = 128) -> Encoder:
        """The packaged embedder."""
        config = json.loads((base_dir() / "config.json").read_text())
        return cls(base_weights(), config, max_tokens)

    # ------------------------------------------------------------ forward
    def _batch(self, encodings) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        n = max(len(e.ids) for e in encodings)
        ids = np.zeros((len(encodings), n), dtype=np.int64)
        types = np.zeros_like(ids)
        mask = np.zeros(ids.shape, dtype=np.float32)
        for i, e in enumerate(encodings):
            ids[i, : len(e.ids)] = e.ids
            types[i, : len(e.ids)] = e.type_ids
            mask[i, : len(e.ids)] = 1.0
        return ids, types, mask

    def hidden(self, ids: np.ndarray, types: np.ndarray, mask: np.ndarray) -> np.ndarray:
        w, eps = self.w, self.eps
        b, n = ids.shape
        x = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][np.arange(n)][None]
            + w["embeddings.token_type_embeddings.weight"][types]
        )
        x = _norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], eps)
        d = x.shape[-1]
        h, hd = self.heads, d // self.heads
        pad = ((1.0 - mask) * -1e9)[:, None, None, :]
        for i in range(self.layers):
            p = f"encoder.layer.{i}."

            def lin(t, name, p=p):  # one 2-D product: a 3-D one runs a slow loop of small ones
                out = t.reshape(-1, t.shape[-1]) @ w[p + name + ".weight"].T + w[p + name + ".bias"]
                return out.reshape(*t.shape[:-1], -1)

            q, k, v = (
                lin(x, f"attention.self.{m}").reshape(b, n, h, hd).transpose(0, 2, 1, 3)
                for m in ("query", "key", "value")
            )
            att = q @ k.transpose(0, 1, 3, 2) * (1.0 / math.sqrt(hd)) + pad
            att = np.exp(att - att.max(-1, keepdims=True))
            att /= att.sum(-1, keepdims=True)
            ctx = (att @ v).transpose(0, 2, 1, 3).reshape(b, n, d)
            x = _norm(
                x + lin(ctx, "attention.output.dense"), *self._ln(p + "attention.output.LayerNorm"), eps
            )
            ff = lin(_gelu(lin(x, "intermediate.dense")), "output.dense")
            x = _norm(x + ff, *self._ln(p + "output.LayerNorm"), eps)
        return x

    def _ln(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        return self.w[name + ".weight"], self.w[name + ".bias"]

    # ------------------------------------------------------------ heads
    def embed(self, texts: list[str], batch: int = 32) -> np.ndarray:
        """Mean-pooled, normalized vectors (the sentence-transformers config of the package)."""
        out = []
        for i in range(0, len(texts), batch):
            ids, types, mask = self._batch(self.tok.encode_batch(texts[i : i + batch]))
            x = self.hidden(ids, types, mask)
            v = (x * mask[..., None]).sum(1) / np.maximum(mask.sum(1, keepdims=True), 1e-9)
            out.append(v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-12))
        return np.concatenate(out) if out else np.zeros((0, 384), dtype=np.float32)


class QueryEmbedder:
    """The packaged embedder for the few short texts a list embeds (its topic, the closest papers'
    sentences), with no torch: the Retriever's `encode`, as rag.models.embedder.Embedder's. Not for ingest."""

    def __init__(self, storage):
        from rag.models.embedder import EMBEDDER_NAME

        self.name = EMBEDDER_NAME
        self.max_seq_length = storage.embed_max_tokens
        self._encoder: Encoder | None = None

    def encode(self, texts: list[str], progress: bool = False, bulk: bool = False) -> np.ndarray:
        if self._encoder is None:
            self._encoder = Encoder.packaged(self.max_seq_length)
        return self._encoder.embed(list(texts))
