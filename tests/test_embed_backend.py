"""rag/models/embedder.py embedder backends: the ONNX path batches by token length yet returns vectors in input
order, equal to unbatched ones; it is exported once into model_cache; without onnxruntime it falls back to
torch; int8 vectors carry their own embedder name (so a store re-embeds rather than mixing vectors); the
torch embedder computes in bfloat16 only where the CPU does so natively, with float32's vectors and name."""

from __future__ import annotations

import sys

import numpy as np
import pytest

pytest.importorskip("onnxruntime")
pytest.importorskip("onnx")

from rag.models import embedder  # noqa: E402
from rag.settings import Settings  # noqa: E402
from tests.conftest import make_settings

TEXTS = [
    ("Diffusion models for protein design. " * (1 + i % 7)) + f"variant {i} " + "graph " * (i * 3)
    for i in range(20)
]


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return tmp_path_factory.mktemp("model-cache")


def cos(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return (a * b).sum(1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))


def test_onnx_export_is_cached(cache, monkeypatch):
    calls = []
    real = embedder.export_onnx
    monkeypatch.setattr(embedder, "export_onnx", lambda *a, **k: (calls.append(a), real(*a, **k)))
    s = make_settings(model_cache=cache, embed_backend="onnx")
    first = embedder.Embedder(s)
    assert first.backend == "onnx" and len(calls) == 1
    path = embedder.onnx_path(s)
    assert path.exists() and not list(path.parent.glob("*.tmp*"))
    mtime = path.stat().st_mtime_ns
    second = embedder.Embedder(s)  # a later start: loads the export, does not export again
    assert second.backend == "onnx" and len(calls) == 1 and path.stat().st_mtime_ns == mtime


def test_bucketed_onnx_keeps_input_order_and_matches_unbucketed(cache):
    emb = embedder.Embedder(make_settings(model_cache=cache, embed_backend="onnx", embed_batch=4))
    lengths = [emb.count_tokens(t) for t in TEXTS]
    assert len(set(min(n, 128) for n in lengths)) > 5  # mixed lengths: the batches really are re-ordered
    batched = emb.encode(TEXTS)
    alone = [emb.encode([t])[0] for t in TEXTS]  # one text per batch: no padding, no re-ordering
    assert cos(batched, alone).min() >= 0.9999
    torch_vecs = embedder.Embedder(make_settings(model_cache=cache, embed_backend="torch")).encode(TEXTS)
    assert cos(batched, torch_vecs).min() >= 0.9999  # fp32 ONNX = torch vectors, hence the same name
    assert emb.name == embedder.EMBEDDER_NAME


def test_int8_onnx_is_close_to_torch_and_named_apart(cache):
    emb = embedder.Embedder(make_settings(model_cache=cache, embed_backend="onnx-int8"))
    torch_emb = embedder.Embedder(make_settings(model_cache=cache, embed_backend="torch"))
    assert cos(emb.encode(TEXTS), torch_emb.encode(TEXTS)).mean() >= 0.99
    assert emb.name != torch_emb.name == embedder.EMBEDDER_NAME


def test_falls_back_to_torch_without_onnxruntime(tmp_path, monkeypatch, caplog):
    monkeypatch.setitem(sys.modules, "onnxruntime", None)  # `import onnxruntime` raises ImportError
    emb = embedder.Embedder(make_settings(model_cache=tmp_path, embed_backend="onnx-int8"))
    assert emb.backend == "torch" and emb.session is None and emb.name == embedder.EMBEDDER_NAME
    assert "torch backend" in caplog.text
    assert len(emb.encode(["a sentence"])[0]) == 384
    assert not (tmp_path / "onnx").exists()  # nothing exported


@pytest.mark.parametrize("native", [True, False])
def test_auto_dtype_is_bfloat16_only_on_cpus_that_compute_it(monkeypatch, native):
    monkeypatch.setattr(embedder, "native_bf16", lambda: native)
    assert embedder.embed_dtype(Settings()) == ("bfloat16" if native else "float32")
    # an explicit setting wins either way
    assert embedder.embed_dtype(make_settings(embed_dtype="float32")) == "float32"
    assert embedder.embed_dtype(make_settings(embed_dtype="bfloat16")) == "bfloat16"


def test_bfloat16_embedder_gives_float32_vectors_under_the_same_name(cache):
    # explicit bfloat16: runs (emulated, slower) on any CPU, so this holds on AVX2-only machines too
    bf16 = embedder.Embedder(make_settings(model_cache=cache, embed_dtype="bfloat16"))
    fp32 = embedder.Embedder(make_settings(model_cache=cache, embed_dtype="float32"))
    assert (bf16.dtype, fp32.dtype) == ("bfloat16", "float32")
    a, b = np.asarray(bf16.encode(TEXTS)), np.asarray(fp32.encode(TEXTS))
    assert np.allclose(np.linalg.norm(a, axis=1), 1.0, atol=1e-5)  # normalized in float32
    assert cos(a, b).min() >= 0.9995  # the same vectors to within bfloat16 rounding: stores stay valid
    assert bf16.name == fp32.name == embedder.EMBEDDER_NAME
    # int8 is its own thing: no bfloat16 on top of it
    assert (
        embedder.Embedder(make_settings(model_cache=cache, embed_int8=True, embed_dtype="bfloat16")).dtype
        == "float32"
    )


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_bulk_streams_give_the_single_stream_vectors_in_input_order(cache, dtype):
    import torch

    e = embedder.Embedder(make_settings(model_cache=cache, embed_dtype=dtype, embed_workers=2, embed_batch=4))
    texts = TEXTS * 3  # 60 texts: 15 batches over 2 streams
    threads = torch.get_num_threads()
    bulk, one = np.asarray(e.encode(texts, bulk=True)), np.asarray(e.encode(texts))
    assert bulk.shape == one.shape and cos(bulk, one).min() >= 0.9999  # same rows, same order
    assert np.allclose(np.linalg.norm(bulk, axis=1), 1.0, atol=1e-5)
    assert torch.get_num_threads() == threads  # the process's threads are given back
    single = embedder.Embedder(
        make_settings(model_cache=cache, embed_dtype=dtype, embed_workers=1, embed_batch=4)
    )
    assert cos(np.asarray(single.encode(texts, bulk=True)), one).min() >= 0.9999
