"""`rag bench` measurements, each run in a fresh interpreter by eval.bench.run_worker
(`python -m eval.bench_workers NAME ARGS_JSON`) so that its peak RSS is its own."""

from __future__ import annotations

import contextlib
import json
import random
import resource
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


# ------------------------------------------------------------------ helpers


def peak_rss_mb() -> float:
    """Peak resident set of this process (VmHWM), in MiB."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def pct(values: Sequence[float], q: float) -> float | None:
    from eval.metrics import percentile

    return percentile(values, q)


def ratio(a, b) -> float | None:
    return round(a / b, 3) if a is not None and b else None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def load_papers(spec: dict):
    """Papers for a worker: {"corpus": "seeds"|path, "sample": N|None, "seed": int}."""
    from eval.run import corpus_files
    from rag.corpus import read_file

    papers = [p for f in corpus_files(spec.get("corpus")) for p in read_file(f)]
    n = spec.get("sample")
    if n and n < len(papers):
        rnd = random.Random(spec.get("seed", 0))
        papers = sorted(rnd.sample(papers, n), key=lambda p: (p.source_file, p.index))
    return papers


def settings_from(d: dict):
    from rag.settings import Settings

    return Settings(**d)


# ------------------------------------------------------------------ workers (run in subprocesses)


def w_raw_encode(a: dict) -> dict:
    """Raw SentenceTransformer.encode on exactly the chunk texts the pipeline embeds."""
    import torch
    from sentence_transformers import SentenceTransformer

    from rag.chunk import chunk_paper, embed_text, make_splitter
    from rag.embedder import embedder_path

    s = settings_from(a["settings"])
    torch.set_num_threads(s.threads)
    papers = load_papers(a["papers"])
    splitter = make_splitter(s.chunk_size, s.chunk_overlap)
    texts = [embed_text(c, p) for p in papers for c in chunk_paper(p, splitter)]
    model = SentenceTransformer(str(embedder_path()), device="cpu")
    # the same window as the pipeline (a.window), or the model's own 256 for the "before" figure
    model.max_seq_length = a.get("window") or s.embed_max_tokens
    # float32 (the baseline), or bfloat16 autocast as the pipeline's embedder uses on CPUs that have it
    dtype = a.get("dtype") or "float32"
    ctx = torch.autocast("cpu", dtype=torch.bfloat16) if dtype == "bfloat16" else contextlib.nullcontext()
    with ctx:
        model.encode(texts[:8], batch_size=s.embed_batch)  # warm-up, as the pipeline's embedder is warm
        t0 = time.perf_counter()
        model.encode(texts, batch_size=s.embed_batch, normalize_embeddings=True, show_progress_bar=False)
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

    from rag.chunk import chunk_paper, embed_text, make_splitter
    from rag.embedder import ONNX_INPUTS, embedder_path, onnx_path, onnx_session

    s = settings_from(a["settings"])
    papers = load_papers(a["papers"])
    splitter = make_splitter(s.chunk_size, s.chunk_overlap)
    texts = [embed_text(c, p) for p in papers for c in chunk_paper(p, splitter)]
    int8 = s.embed_backend == "onnx-int8"
    onnx_session(s, int8)  # exports once if the cache lacks it (not timed)
    so = ort.SessionOptions()
    so.intra_op_num_threads = s.threads
    sess = ort.InferenceSession(str(onnx_path(s, int8)), so, providers=["CPUExecutionProvider"])
    tok = AutoTokenizer.from_pretrained(str(embedder_path()))

    def encode(batch):
        enc = tok(batch, padding=True, truncation=True, max_length=s.embed_max_tokens, return_tensors="np")
        h = sess.run(None, {k: enc[k].astype(np.int64) for k in ONNX_INPUTS})[0]
        m = enc["attention_mask"][..., None]
        v = (h * m).sum(1) / m.sum(1)
        return v / np.linalg.norm(v, axis=1, keepdims=True)

    encode(texts[:8])
    t0 = time.perf_counter()
    for i in range(0, len(texts), s.embed_batch):
        encode(texts[i : i + s.embed_batch])
    dt = time.perf_counter() - t0
    return {
        "chunks": len(texts),
        "seconds": round(dt, 3),
        "chunks_per_s": round(len(texts) / dt, 2),
        "backend": s.embed_backend,
        "peak_rss_mb": round(peak_rss_mb(), 1),
    }


def w_ingest(a: dict) -> dict:
    """The pipeline: Index.ingest (chunk, embed, write chunks + paper records) into a fresh store."""
    from rag.chunk import make_splitter
    from rag.embedder import get_embedder
    from rag.index import Index

    s = settings_from(a["settings"])
    papers = load_papers(a["papers"])
    emb = get_embedder(s)
    emb.encode(["warm-up"] * 8)
    make_splitter(s.chunk_size, s.chunk_overlap)  # its tokenizer loads once per process, like the model
    rss0 = peak_rss_mb()
    t_open = time.perf_counter()
    index = Index(s)  # opening the store is a one-time cost, not throughput: timed on its own
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
    from eval.run import load_questions, retrieval_query

    qs = load_questions(a["questions"])
    qs = [q for q in qs if q["type"] != "summary"]
    return [retrieval_query(q) for q in qs][: a.get("n_queries", 30)]


def w_retrieval(a: dict) -> dict:
    """Engine retrieval (hybrid, dense) vs raw query embedding + bare Chroma query, same queries."""
    import chromadb
    import torch
    from chromadb.config import Settings as ChromaSettings
    from sentence_transformers import SentenceTransformer

    from rag.answer import Engine
    from rag.embedder import embedder_path

    s = settings_from(a["settings"])
    torch.set_num_threads(s.threads)
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
        path=str(s.chroma_path), settings=ChromaSettings(anonymized_telemetry=False)
    )
    coll = client.get_collection(s.collection)

    def raw(q):
        v = model.encode([q], normalize_embeddings=True)
        coll.query(query_embeddings=v.tolist(), n_results=s.top_k)

    calls = {
        "hybrid": lambda q: engine.retriever.retrieve(q, s.top_k, "hybrid"),
        "dense": lambda q: engine.retriever.retrieve(q, s.top_k, "dense"),
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


class _Clock:
    """A transformers streamer that only records when each generated token arrives (no decoding)."""

    def __init__(self):
        self.t0 = time.perf_counter()
        self.times: list[float] = []
        self._prompt_seen = False

    def put(self, value):
        if not self._prompt_seen:  # generate() first puts the prompt ids
            self._prompt_seen = True
            return
        self.times.extend([time.perf_counter() - self.t0] * int(value.numel()))

    def end(self):
        pass


def _bare_generate(llm, messages, max_new_tokens: int) -> dict:
    """model.generate on the chat-templated prompt with the engine's greedy settings; per-token times
    from a no-op streamer (first token = prefill + one step; decode rate over the rest)."""
    import threading

    import torch

    inputs = llm.prompt_ids(messages)
    clock = _Clock()
    got: dict = {}

    def run():  # in a worker thread, as LLM.stream runs it: under CPU contention torch ops in the
        # main thread can be ~10x slower (OpenMP spin-waiting), which would flatter the engine
        with torch.no_grad():
            clock.t0 = time.perf_counter()
            got["ids"] = llm.model.generate(
                **inputs,
                max_new_tokens=max_new_tokens,
                do_sample=False,
                repetition_penalty=1.05,
                streamer=clock,
                pad_token_id=llm.tokenizer.pad_token_id or llm.tokenizer.eos_token_id,
            )
            got["total"] = time.perf_counter() - clock.t0

    th = threading.Thread(target=run)
    th.start()
    th.join()
    ids, total = got["ids"], got["total"]
    n = int(ids.shape[1] - inputs["input_ids"].shape[1])
    first = clock.times[0] if clock.times else total
    return {
        "prompt_tokens": int(inputs["input_ids"].shape[1]),
        "new_tokens": n,
        "first_token_s": first,
        "total_s": total,
        "tokens_per_s": (n - 1) / (total - first) if n > 1 and total > first else None,
    }


def _rss_now_mb() -> float | None:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def w_serve(a: dict) -> dict:
    """Serving process: engine + LLM. Generation vs bare generate, end-to-end vs the llama-index
    baseline, and peak RSS of serving (taken before the baseline loads its own embedder)."""
    from eval.run import corpus_files, load_questions
    from rag import prompts
    from rag.answer import Engine
    from rag.corpus import read_file

    s = settings_from(a["settings"])
    engine = Engine(s)
    t0 = time.perf_counter()
    engine.warm_up()
    out: dict = {
        "warm_up_s": round(time.perf_counter() - t0, 1),
        "llm": engine.llm.name,
        "device": engine.llm.device,
        "rss_after_load_mb": round(_rss_now_mb() or 0, 1),
        "peak_rss_after_load_mb": round(peak_rss_mb(), 1),
    }
    qs = [q for q in load_questions(a["questions"]) if q["type"] in ("factoid", "which")][
        : a.get("n_answers", 3)
    ]

    # 3. generation: engine stream vs bare generate, same prompt (the engine's own sources prompt)
    gen = []
    for q in qs[: a.get("n_gen", 3)]:
        hits = engine.retriever.retrieve(q["question"], s.top_k, s.mode)[: s.context_papers]
        evset = engine.evidence(q["question"], hits)
        msgs = engine.prompt(prompts.ANSWER_SYSTEM, prompts.ANSWER_USER, evset, q["question"])
        if len(gen) % 2 == 0:  # alternate which goes first, so warm caches / load favour neither
            bare = _bare_generate(engine.llm, msgs, s.max_new_tokens)
            text = engine.llm.generate(msgs, max_new_tokens=s.max_new_tokens)
            st = engine.llm.stats
        else:
            text = engine.llm.generate(msgs, max_new_tokens=s.max_new_tokens)
            st = engine.llm.stats
            bare = _bare_generate(engine.llm, msgs, s.max_new_tokens)
        gen.append(
            {
                "id": q["id"],
                "bare": {k: (round(v, 3) if isinstance(v, float) else v) for k, v in bare.items()},
                "engine": {
                    "prompt_tokens": st.prompt_tokens,
                    "new_tokens": st.new_tokens,
                    "first_token_s": round(st.first_token_s, 3),
                    "total_s": round(st.total_s, 3),
                    "tokens_per_s": round(st.tokens_per_s, 3),
                },
                "chars": len(text),
            }
        )

    def mean(xs):
        xs = [x for x in xs if x]
        return sum(xs) / len(xs) if xs else None

    e_ft, b_ft = (
        mean(g["engine"]["first_token_s"] for g in gen),
        mean(g["bare"]["first_token_s"] for g in gen),
    )
    e_tps, b_tps = (
        mean(g["engine"]["tokens_per_s"] for g in gen),
        mean(g["bare"]["tokens_per_s"] for g in gen),
    )
    out["generation"] = {
        "per_prompt": gen,
        "engine_first_token_s": e_ft,
        "bare_first_token_s": b_ft,
        "engine_tokens_per_s": e_tps,
        "bare_tokens_per_s": b_tps,
        "ratio_first_token": ratio(e_ft, b_ft),
        "ratio_tokens_per_s": ratio(e_tps, b_tps),
    }

    # 4. end-to-end: Engine.ask vs the llama-index default query engine (same embedder, same LLM object)
    def ask_engine(q):
        t = time.perf_counter()
        ans = engine.ask(q["question"])
        return {
            "id": q["id"],
            "total_s": round(time.perf_counter() - t, 3),
            "refused": ans.refused,
            "new_tokens": 0 if ans.refused else engine.llm.stats.new_tokens,
            "timings": {k: round(v, 3) for k, v in ans.timings.items()},
        }

    e2e = {qs[0]["id"]: ask_engine(qs[0])}  # before the baseline exists: serving RSS is the engine's alone
    out["serving_peak_rss_mb"] = round(peak_rss_mb(), 1)
    out["serving_rss_mb"] = round(_rss_now_mb() or 0, 1)
    base = {}
    bl = None
    if a.get("baseline", True):
        from eval.baseline import Baseline

        papers = [p for f in corpus_files(a.get("baseline_corpus", "seeds")) for p in read_file(f)]
        bl = Baseline(s, papers, Path(a["out"]), engine=engine, progress=False)
        out["baseline_build_s"] = round(bl.build_s, 1)
        bl.query(qs[0]["question"])  # warm-up (the first call pays lazy imports)

    def ask_base(q):
        t = time.perf_counter()
        r = bl.query(q["question"])
        dt = time.perf_counter() - t
        text = str(r.response or "")
        return {
            "id": q["id"],
            "total_s": round(dt, 3),
            "chars": len(text),
            "new_tokens": len(engine.llm.tokenizer(text, add_special_tokens=False)["input_ids"]),
        }

    for i, q in enumerate(qs):  # interleaved, alternating who goes first
        steps = [("e", ask_engine), ("b", ask_base)] if i % 2 else [("b", ask_base), ("e", ask_engine)]
        for who, fn in steps:
            if who == "b" and bl is not None:
                base[q["id"]] = fn(q)
            elif who == "e" and q["id"] not in e2e:
                e2e[q["id"]] = fn(q)
    e2e, base = list(e2e.values()), list(base.values())
    e_tot, b_tot = mean(x["total_s"] for x in e2e), mean(x["total_s"] for x in base)
    out["end_to_end"] = {
        "engine": e2e,
        "baseline": base,
        "engine_mean_s": e_tot,
        "baseline_mean_s": b_tot,
        "ratio": ratio(e_tot, b_tot),
        "engine_mean_new_tokens": mean(x.get("new_tokens") for x in e2e),
        "baseline_mean_new_tokens": mean(x.get("new_tokens") for x in base),
    }
    out["peak_rss_with_baseline_mb"] = round(peak_rss_mb(), 1)
    return out


def w_llm_memory(a: dict) -> dict:
    """Serving memory in this fresh process: the LLM as `load_llm` loads it now, one short greedy answer, then
    the embedder. Peak is VmHWM, settled is VmRSS after that; the embedder's share is what loading it adds."""
    from rag.embedder import get_embedder
    from rag.int8 import int8_cache_path
    from rag.models import gguf_source, load_llm, resolve_llm

    s = settings_from(a["settings"])
    t0 = time.perf_counter()
    folder = resolve_llm(s.llm, s)  # converts the GGUF on a first-ever start (counted in the peak)
    hit = int8_cache_path(folder, s, gguf_source(folder)).exists() if s.int8 and s.int8_cache else None
    t1 = time.perf_counter()
    llm = load_llm(s.llm, s)
    load_s = time.perf_counter() - t1
    msgs = [
        {"role": "user", "content": a.get("prompt", "What is a diffusion model? Answer in one sentence.")}
    ]
    text = llm.generate(msgs, max_new_tokens=a.get("max_new_tokens", 16))
    llm_peak, llm_rss = peak_rss_mb(), _rss_now_mb() or 0
    emb = get_embedder(s)
    emb.encode(["a short warm-up sentence"])
    rss = _rss_now_mb() or 0
    return {
        "int8": s.int8,
        "int8_cache": s.int8_cache,
        "int8_cache_hit": hit,
        "device": llm.device,
        "resolve_s": round(t1 - t0, 1),
        "llm_load_s": round(load_s, 1),
        "llm_peak_rss_mb": round(llm_peak, 1),
        "llm_settled_rss_mb": round(llm_rss, 1),
        "serving_peak_rss_mb": round(peak_rss_mb(), 1),
        "serving_settled_rss_mb": round(rss, 1),
        "embedder_share_mb": round(rss - llm_rss, 1),
        "new_tokens": llm.stats.new_tokens,
        "text": text[:200],
    }


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
