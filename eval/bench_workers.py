"""`rag bench` measurements, each run in a fresh interpreter by eval.bench.run_worker
(`python -m eval.bench_workers NAME ARGS_JSON`) so that its peak RSS is its own."""

from __future__ import annotations

import contextlib
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

from eval.bench_common import free_port, load_papers, pct, peak_rss_mb, ratio, settings_from
from eval.bench_serving import w_llm_memory, w_serve

# ------------------------------------------------------------------ workers (run in subprocesses)


def w_raw_encode(a: dict) -> dict:
    """Raw SentenceTransformer.encode on exactly the chunk texts the pipeline embeds."""
    import torch
    from sentence_transformers import SentenceTransformer

    from rag.ingest.chunk import chunk_paper, embed_text, make_splitter
    from rag.models.embedder import embedder_path

    s = settings_from(a["settings"])
    torch.set_num_threads(s.generation.threads)
    papers = load_papers(a["papers"])
    splitter = make_splitter(s.storage.chunk_size, s.storage.chunk_overlap)
    texts = [embed_text(c, p) for p in papers for c in chunk_paper(p, splitter)]
    model = SentenceTransformer(str(embedder_path()), device="cpu")
    # the same window as the pipeline (a.window), or the model's own 256 for the "before" figure
    model.max_seq_length = a.get("window") or s.storage.embed_max_tokens
    # float32 (the baseline), or bfloat16 autocast as the pipeline's embedder uses on CPUs that have it
    dtype = a.get("dtype") or "float32"
    ctx = torch.autocast("cpu", dtype=torch.bfloat16) if dtype == "bfloat16" else contextlib.nullcontext()
    with ctx:
        model.encode(
            texts[:8], batch_size=s.storage.embed_batch
        )  # warm-up, as the pipeline's embedder is warm
        t0 = time.perf_counter()
        model.encode(
            texts, batch_size=s.storage.embed_batch, normalize_embeddings=True, show_progress_bar=False
        )
        dt = time.perf_counter() - t0
    return {
        "chunks": len(texts),
        "seconds": round(dt, 3),
        "chunks_per_s": round(len(texts) / dt, 2),
        "dtype": dtype,
        "window": model.max_seq_length,
        "peak_rss_mb": round(peak_rss_mb(), 1),
    }


def w_raw_onnx(a: dict) -> dict:
    """Bare onnxruntime on the pipeline's cached export of its backend (in input order, tokenizer padding):
    what the ONNX backend's pipeline is measured against, beside the bare torch encoder."""
    import numpy as np
    import onnxruntime as ort
    from transformers import AutoTokenizer

    from rag.ingest.chunk import chunk_paper, embed_text, make_splitter
    from rag.models.embedder import ONNX_INPUTS, embedder_path, onnx_path, onnx_session

    s = settings_from(a["settings"])
    papers = load_papers(a["papers"])
    splitter = make_splitter(s.storage.chunk_size, s.storage.chunk_overlap)
    texts = [embed_text(c, p) for p in papers for c in chunk_paper(p, splitter)]
    int8 = s.storage.embed_backend == "onnx-int8"
    onnx_session(s, int8)  # exports once if the cache lacks it (not timed)
    so = ort.SessionOptions()
    so.intra_op_num_threads = s.generation.threads
    sess = ort.InferenceSession(str(onnx_path(s, int8)), so, providers=["CPUExecutionProvider"])
    tok = AutoTokenizer.from_pretrained(str(embedder_path()))

    def encode(batch):
        enc = tok(
            batch, padding=True, truncation=True, max_length=s.storage.embed_max_tokens, return_tensors="np"
        )
        h = sess.run(None, {k: enc[k].astype(np.int64) for k in ONNX_INPUTS})[0]
        m = enc["attention_mask"][..., None]
        v = (h * m).sum(1) / m.sum(1)
        return v / np.linalg.norm(v, axis=1, keepdims=True)

    encode(texts[:8])
    t0 = time.perf_counter()
    for i in range(0, len(texts), s.storage.embed_batch):
        encode(texts[i : i + s.storage.embed_batch])
    dt = time.perf_counter() - t0
    return {
        "chunks": len(texts),
        "seconds": round(dt, 3),
        "chunks_per_s": round(len(texts) / dt, 2),
        "backend": s.storage.embed_backend,
        "peak_rss_mb": round(peak_rss_mb(), 1),
    }


def w_ingest(a: dict) -> dict:
    """The pipeline: Index.ingest (chunk, embed, write chunks + paper records) into a fresh store."""
    from rag.index.index import Index
    from rag.ingest.chunk import make_splitter
    from rag.models.embedder import get_embedder

    s = settings_from(a["settings"])
    papers = load_papers(a["papers"])
    emb = get_embedder(s)
    emb.encode(["warm-up"] * 8)
    make_splitter(
        s.storage.chunk_size, s.storage.chunk_overlap
    )  # its tokenizer loads once per process, like the model
    rss0 = peak_rss_mb()
    t_open = time.perf_counter()
    index = Index(s.storage)  # opening the store is a one-time cost, not throughput: timed on its own
    t0 = time.perf_counter()
    rep = index.ingest(papers, emb, progress=False)
    dt = time.perf_counter() - t0
    return {
        "papers": len(papers),
        "chunks": rep.chunks,
        "added": rep.added,
        "bundled": rep.bundled,
        "seconds": round(dt, 3),
        "open_store_s": round(t0 - t_open, 3),
        "with_open_s": round(time.perf_counter() - t_open, 3),
        "chunks_per_s": round(rep.added / dt, 2) if rep.added else None,
        "peak_rss_mb": round(peak_rss_mb(), 1),
        "peak_rss_before_ingest_mb": round(rss0, 1),
        "backend": emb.backend,
        "dtype": emb.dtype,
        "embedder": emb.name,
    }


def _queries(a: dict) -> list[str]:
    from eval.inputs import load_questions
    from rag.reading.reader import leans

    qs = load_questions(a["questions"])
    qs = [q for q in qs if q["type"] != "summary"]
    # the words' reading (no retrieval check: the timings are of retrieval alone)
    return [
        f"{q['question']} ({q['history'][-1]})"
        if q.get("history") and leans(q["question"])
        else q["question"]
        for q in qs
    ][: a.get("n_queries", 30)]


def w_retrieval(a: dict) -> dict:
    """Engine retrieval (hybrid, dense) vs raw query embedding + bare Chroma query, same queries."""
    import chromadb
    import torch
    from chromadb.config import Settings as ChromaSettings
    from sentence_transformers import SentenceTransformer

    from rag.answer import Engine
    from rag.models.embedder import embedder_path

    s = settings_from(a["settings"])
    torch.set_num_threads(s.generation.threads)
    queries = _queries(a)
    reps = a.get("repeats", 2)
    engine = Engine(s)
    engine.index.require()  # an empty index is a clear error, not a BM25 crash over no chunks
    papers, chunks = engine.index.paper_count(), engine.index.count()
    t0 = time.perf_counter()
    engine.retriever.bm25()  # build/load the BM25 side outside the timed loop
    bm25_load = time.perf_counter() - t0
    out: dict = {
        "papers": papers,
        "chunks": chunks,
        "queries": len(queries),
        "repeats": reps,
        "bm25_build_or_load_s": round(bm25_load, 2),
    }
    model = SentenceTransformer(str(embedder_path()), device="cpu")
    client = chromadb.PersistentClient(
        path=str(s.storage.chroma_path), settings=ChromaSettings(anonymized_telemetry=False)
    )
    coll = client.get_collection(s.storage.collection)

    def raw(q):
        v = model.encode([q], normalize_embeddings=True)
        coll.query(query_embeddings=v.tolist(), n_results=s.retrieval.top_k)

    calls = {
        "hybrid": lambda q: engine.retriever.retrieve(q, s.retrieval.top_k, "hybrid"),
        "dense": lambda q: engine.retriever.retrieve(q, s.retrieval.top_k, "dense"),
        "raw": raw,
    }
    for f in calls.values():  # warm every path once
        f(queries[0])
    lat: dict[str, list[float]] = {k: [] for k in calls}
    # interleaved per query, order rotating, so load from other processes hits all three alike
    names = list(calls)
    for i in range(reps):
        for j, q in enumerate(queries):
            k = (i + j) % len(names)
            for name in names[k:] + names[:k]:
                t = time.perf_counter()
                calls[name](q)
                lat[name].append(time.perf_counter() - t)
    for name, xs in lat.items():
        key = "raw" if name == "raw" else f"engine_{name}"
        out[key] = {"p50_ms": round(pct(xs, 50) * 1e3, 2), "p95_ms": round(pct(xs, 95) * 1e3, 2)}
    for mode in ("hybrid", "dense"):
        out[f"ratio_{mode}_p50"] = ratio(out[f"engine_{mode}"]["p50_ms"], out["raw"]["p50_ms"])
        out[f"ratio_{mode}_p95"] = ratio(out[f"engine_{mode}"]["p95_ms"], out["raw"]["p95_ms"])
    out["peak_rss_mb"] = round(peak_rss_mb(), 1)
    return out


def w_ingest_server(a: dict) -> dict:
    """Ingest into a real `chroma run` server on a free loopback port (started and stopped here)."""
    port = free_port()
    path = Path(a["server_path"])
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True)
    chroma = Path(sys.executable).parent / "chroma"
    log = open(path.parent / f"chroma-server-{port}.log", "w")
    proc = subprocess.Popen(
        [str(chroma), "run", "--path", str(path), "--host", "127.0.0.1", "--port", str(port)],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        import chromadb

        deadline = time.time() + 60
        while True:
            try:
                chromadb.HttpClient(host="127.0.0.1", port=port).heartbeat()
                break
            except Exception:
                if time.time() > deadline or proc.poll() is not None:
                    raise RuntimeError(f"chroma server did not start on port {port}") from None
                time.sleep(0.5)
        a = dict(a, settings=dict(a["settings"], chroma_url=f"http://127.0.0.1:{port}"))
        res = w_ingest(a)
        res["server_peak_rss_mb"] = _proc_hwm_mb(proc.pid)
        res["port"] = port
        return res
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


def _proc_hwm_mb(pid: int) -> float | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return round(int(line.split()[1]) / 1024, 1)
    except OSError:
        return None
    return None


WORKERS = {
    "raw_encode": w_raw_encode,
    "raw_onnx": w_raw_onnx,
    "ingest": w_ingest,
    "retrieval": w_retrieval,
    "serve": w_serve,
    "llm_memory": w_llm_memory,
    "ingest_server": w_ingest_server,
}


if __name__ == "__main__":
    print(json.dumps(WORKERS[sys.argv[1]](json.loads(sys.argv[2])), default=str), flush=True)
