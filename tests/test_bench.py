"""eval/bench.py: report assembly on a synthetic result, worker plumbing, and (slow) real workers."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from eval import bench

ROOT = Path(__file__).resolve().parents[1]


def fake_result() -> dict:
    return {
        "date": "2026-01-01T00:00:00+00:00",
        "threads": 2,
        "llm": "qwen0.5b",
        "embed_batch": 32,
        "top_k": 5,
        "ingest": {
            "papers": {"corpus": "seeds"},
            "raw_encode": {"chunks": 83, "chunks_per_s": 20.0, "peak_rss_mb": 700},
            "pipeline": {"chunks": 83, "chunks_per_s": 18.0, "peak_rss_mb": 900},
            "ratio_chunks_per_s": 0.9,
        },
        "retrieval": {
            "seeds": {
                "papers": 38,
                "chunks": 83,
                "engine_hybrid": {"p50_ms": 60.0, "p95_ms": 90.0},
                "engine_dense": {"p50_ms": 30.0, "p95_ms": 40.0},
                "raw": {"p50_ms": 20.0, "p95_ms": 30.0},
                "ratio_hybrid_p50": 3.0,
                "ratio_hybrid_p95": 3.0,
                "ratio_dense_p50": 1.5,
                "ratio_dense_p95": 1.333,
            },
            "large": {"error": "worker retrieval exited 1: boom"},
        },
        "serve": {
            "generation": {
                "engine_first_token_s": 6.0,
                "bare_first_token_s": 5.0,
                "engine_tokens_per_s": 9.0,
                "bare_tokens_per_s": 10.0,
                "ratio_first_token": 1.2,
                "ratio_tokens_per_s": 0.9,
            },
            "end_to_end": {"engine_mean_s": 12.0, "baseline_mean_s": 10.0, "ratio": 1.2},
            "serving_peak_rss_mb": 2500.0,
        },
        "memory": {
            "current": {
                "serving_peak_rss_mb": 1700.0,
                "serving_settled_rss_mb": 1650.0,
                "embedder_share_mb": 150.0,
            },
            "no_int8_cache": {"serving_peak_rss_mb": 3400.0, "serving_settled_rss_mb": 1700.0},
        },
    }


def test_summary_and_markdown_from_a_result():
    res = fake_result()
    res["summary"] = bench.summary(res)
    s = res["summary"]
    assert s["ingest_ratio_chunks_per_s"] == 0.9
    assert s["retrieval_38_hybrid_ratio_p50"] == 3.0
    assert s["retrieval_large_hybrid_ratio_p50"] is None  # the large part failed
    assert s["generation_ratio_tokens_per_s"] == 0.9 and s["end_to_end_ratio_vs_baseline"] == 1.2
    assert s["serving_peak_rss_mb"] == 2500.0 and s["full_ingest_embedded_s"] is None
    md = bench.markdown(res)
    assert "| 1. ingest chunks/s" in md and "0.900" in md
    assert "retrieval hybrid p50 ms, 38 papers" in md
    assert "not run (opt-in: --full-ingest)" in md
    assert s["load_peak_rss_mb"] == 1700.0 and s["no_cache_peak_rss_mb"] == 3400.0
    assert "| 5b. serving memory" in md and "| 1700 / 1650 |" in md and "| 0.5 |" in md
    assert "## Errors" in md and "retrieval.large" in md
    json.dumps(res)


def test_onnx_backend_ingest_is_reported_beside_both_bare_encoders():
    res = fake_result()
    res["ingest"].update(
        backend="onnx-int8",
        raw_onnx={"chunks": 83, "chunks_per_s": 40.0},
        pipeline={"chunks": 83, "chunks_per_s": 36.0, "peak_rss_mb": 900},
        ratio_chunks_per_s=1.8,
        ratio_vs_raw_onnx=0.9,
    )
    res["summary"] = s = bench.summary(res)
    assert s["ingest_backend"] == "onnx-int8" and s["ingest_ratio_vs_raw_onnx"] == 0.9
    md = bench.markdown(res)
    assert "backend onnx-int8) vs raw torch encoder (float32) | 36.0 | 20.0 | 1.800 |" in md
    assert (
        "| 1a. ingest chunks/s vs bare onnxruntime on the same export (onnx-int8) | 36.0 | 40.0 | 0.900 |"
        in md
    )


def test_bfloat16_ingest_is_reported_beside_both_bare_encoders():
    res = fake_result()
    res["ingest"].update(
        backend="torch",
        dtype="bfloat16",
        pipeline={"chunks": 83, "chunks_per_s": 36.0, "peak_rss_mb": 900},
        raw_encode_bf16={"chunks": 83, "chunks_per_s": 40.0, "dtype": "bfloat16"},
        ratio_chunks_per_s=1.8,
        ratio_vs_raw_bf16=0.9,
    )
    res["summary"] = bench.summary(res)
    md = bench.markdown(res)
    assert "backend torch bfloat16) vs raw torch encoder (float32) | 36.0 | 20.0 | 1.800 |" in md
    assert (
        "| 1a. ingest chunks/s (bfloat16) vs the bare encoder in bfloat16 autocast | 36.0 | 40.0 | 0.900 |"
        in md
    )


def test_helpers():
    assert bench.ratio(3.0, 2.0) == 1.5 and bench.ratio(None, 2.0) is None and bench.ratio(1.0, 0) is None
    assert bench.pct([1.0, 2.0, 3.0], 50) == 2.0
    port = bench.free_port()
    with socket.socket() as s:  # the port is free to bind right after
        s.bind(("127.0.0.1", port))
    assert bench.peak_rss_mb() > 10


def test_failed_worker_is_an_error_entry_not_a_crash():
    out = bench.run_worker("no_such_worker", {}, timeout=120)
    assert "error" in out and "no_such_worker" in out["error"]


@pytest.mark.slow
def test_real_ingest_workers_on_seeds(tmp_path):
    """Raw encode vs pipeline ingest on the 38 seeds, and ingest into a real `chroma run` server."""
    from rag.settings import Settings

    s = Settings().model_dump(mode="json")  # a worker's settings: nested, flat overrides on top
    s["storage"]["chroma_url"] = None
    papers = {"corpus": "seeds"}
    raw = bench.run_worker("raw_encode", {"settings": s, "papers": papers}, timeout=300)
    ours = bench.run_worker(
        "ingest", {"settings": dict(s, data_dir=str(tmp_path / "d")), "papers": papers}, timeout=300
    )
    assert raw["chunks"] == ours["chunks"] == ours["added"] > 38
    assert raw["chunks_per_s"] > 0 and ours["chunks_per_s"] > 0 and ours["peak_rss_mb"] > 100
    srv = bench.run_worker(
        "ingest_server",
        {
            "settings": dict(s, data_dir=str(tmp_path / "c")),
            "papers": papers,
            "server_path": str(tmp_path / "srv"),
        },
        timeout=300,
    )
    assert srv.get("added") == ours["added"], srv
    assert srv["server_peak_rss_mb"] and srv["server_peak_rss_mb"] > 10


@pytest.mark.slow
def test_real_serve_worker_times_the_engines_own_prompt(seed_data_dir):
    """Generation vs bare generate on the engine's evidence prompt, and one end-to-end answer (no baseline)."""
    from rag.settings import Settings

    s = Settings().model_dump(mode="json")  # a worker's settings: nested, flat overrides on top
    s["storage"]["chroma_url"] = None
    args = {
        "settings": dict(s, data_dir=str(seed_data_dir)),
        "questions": "eval/data/questions.jsonl",
        "n_answers": 1,
        "n_gen": 1,
        "baseline": False,
        "out": str(seed_data_dir.parent),
    }
    out = bench.run_worker("serve", args, timeout=900)
    assert "error" not in out, out.get("error")
    (g,) = out["generation"]["per_prompt"]
    assert g["engine"]["prompt_tokens"] == g["bare"]["prompt_tokens"] > 50  # the same prompt both ways
    assert g["engine"]["new_tokens"] > 0 and out["generation"]["ratio_tokens_per_s"] > 0
    assert out["end_to_end"]["engine"][0]["total_s"] > 0 and out["serving_peak_rss_mb"] > 100


def test_the_scale_index_is_read_from_the_collection_that_holds_it(tmp_path, fake_embedder, tiny_papers):
    """`rag ingest --conference` fills the conference's collection: the bench times that one, not the
    empty default (whose BM25 side once crashed over no chunks)."""
    from rag.index.index import Index
    from tests.conftest import make_settings

    d = tmp_path / "data"
    empty = {"data_dir": str(d)}
    assert bench.filled_collection(empty) == empty  # nothing anywhere: as given (the worker says so)
    conf = make_settings(d)
    conf = conf.replace(storage={"collection": conf.storage.conference_collection})
    Index(conf.storage, create=True).ingest(tiny_papers, fake_embedder, progress=False)
    assert bench.filled_collection(empty) == dict(empty, collection=conf.storage.conference_collection)
    # a filled default collection, or one named, is kept
    Index(make_settings(d).storage, create=True).ingest(tiny_papers, fake_embedder, progress=False)
    assert bench.filled_collection(empty) == empty
    assert bench.filled_collection(dict(empty, collection=conf.storage.conference_collection))[
        "collection"
    ] == (conf.storage.conference_collection)
