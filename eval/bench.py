"""`rag bench`: measure the engine against the bare libraries it wraps, as ratios, in one run.

1. ingest throughput (chunks/s): Index.ingest ÷ raw SentenceTransformer.encode on the same chunk texts
   (same model folder, same batch size); each in its own subprocess.
2. retrieval latency p50/p95: Retriever.retrieve (hybrid and dense) ÷ raw query embedding + bare Chroma
   query on the same collection, on the 38 seeds and on a larger index (the full corpus via --data-dir,
   else a --sample of --corpus ingested once under OUT).
3. generation: first-token time and decode tokens/s of the engine's streaming LLM ÷ bare
   `model.generate` on the same prompt, same greedy settings (so the same tokens).
4. end-to-end answer time: Engine.ask ÷ the llama-index default query engine (eval/baseline.py).
5. peak RSS (VmHWM) of the ingest subprocess and of the serving subprocess (engine + LLM); 5b. serving
   memory of the loading path alone (LLM, one short answer, then the embedder): peak and settled RSS, the
   embedder's share and the LLM load time, with the int8 cache (current) and with int8_cache=False
   (the fp32 model quantized in place at start). Before issue 14 (fp32 kept while quantized) this was
   5,913 MiB peak / 3,381 MiB settled for the LLM alone, load 12 s.
6. opt-in (--full-ingest): corpus ingest wall time into the embedded store and into a real
   `chroma run` server started on a free loopback port by the harness (about 20 min each on 2 cores
   for the full corpus; --sample N limits it).

Every measurement runs in a fresh subprocess (eval/bench_workers.py) so peak RSS is its own.
Entry point for the CLI: `eval.bench.main(corpus, out, settings, ...)`; the report is eval/bench_report.py,
the workers eval/bench_workers.py (ingest, retrieval) and eval/bench_serving.py (generation, memory).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from eval.bench_common import REPO, free_port, pct, peak_rss_mb, ratio  # noqa: F401  (re-exported)
from eval.bench_report import markdown, summary  # noqa: F401  (re-exported)


def run_worker(name: str, args: dict, timeout: float | None = None) -> dict:
    """Run one measurement in a fresh interpreter; its last stdout line is the JSON result."""
    cmd = [sys.executable, "-m", "eval.bench_workers", name, json.dumps(args, default=str)]
    env = dict(
        os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))
    )
    t0 = time.perf_counter()
    p = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=timeout)
    wall = time.perf_counter() - t0
    lines = [x for x in p.stdout.splitlines() if x.startswith("{")]
    if p.returncode != 0 or not lines:
        return {
            "error": f"worker {name} exited {p.returncode}: {p.stderr.strip()[-1500:]}",
            "wall_s": round(wall, 1),
        }
    out = json.loads(lines[-1])
    out["process_wall_s"] = round(wall, 1)
    return out


# ------------------------------------------------------------------ orchestration


def filled_collection(settings: dict) -> dict:
    """These settings, reading the conference's collection when that is the one an existing index
    holds (`rag ingest --conference` writes it) and the default one is empty."""
    from rag.index.index import Index
    from rag.settings import Settings, nest

    s = Settings(**nest(settings))
    if s.storage.collection == s.storage.conference_collection or Index(s.storage).count():
        return settings
    conf = dict(settings, collection=s.storage.conference_collection)
    return conf if Index(Settings(**nest(conf)).storage).count() else settings


def main(
    corpus: str | Path | None = None,
    out: Path | str = "eval/out/bench",
    settings=None,
    *,
    data_dir: Path | str | None = None,
    sample: int | None = 1000,
    ingest_sample: int | None = 300,
    questions: Path | str = REPO / "eval" / "data" / "questions.jsonl",
    full_ingest: bool = False,
    baseline: bool = True,
    n_answers: int = 3,
    n_queries: int = 30,
    ingest_repeats: int = 2,
    progress: bool = True,
) -> dict:
    """Run the benchmark and write OUT/bench.json and OUT/bench.md. Returns the result dict.

    corpus: a larger corpus (e.g. the full 11,672 JSONL) for the at-scale retrieval and ingest parts;
    data_dir: an existing index of that corpus (full scale, nothing re-embedded); without it a
    `sample`-paper subset is ingested once under OUT; ingest_sample: papers from `corpus` used for the
    ingest-throughput ratio (seeds only when no corpus); full_ingest: part 6 (opt-in, slow), over
    `sample` papers of the corpus or all of it when sample is 0/None.
    """
    from rag.settings import Settings

    settings = settings or Settings()
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    # A worker's settings: this dump (nested, JSON), with flat overrides on top (`dict(base, data_dir=...)`,
    # read back by bench_common.settings_from).
    base = settings.model_dump(mode="json")
    shipped = base["storage"][
        "vector_bundle"
    ]  # the ingest rows time the encoder path; 6 also times the bundle's
    base["storage"] = dict(base["storage"], vector_bundle=None, chroma_url=None)
    res: dict = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "threads": settings.generation.threads,
        "loadavg_start": [round(x, 2) for x in os.getloadavg()],
        "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY"),
        "llm": settings.generation.llm,
        "embed_batch": settings.storage.embed_batch,
        "top_k": settings.retrieval.top_k,
    }

    def say(msg):
        if progress:
            print(f"[bench] {msg}", file=sys.stderr, flush=True)

    tmp = Path(tempfile.mkdtemp(prefix="rag-bench-"))
    try:
        # 1 + 5a. ingest throughput and peak RSS
        ing_papers = {"corpus": corpus, "sample": ingest_sample} if corpus else {"corpus": "seeds"}
        say(f"1. ingest vs raw encode on {ing_papers}")
        raws, ourss, onnxs, bf16s = [], [], [], []
        onnx = settings.storage.embed_backend != "torch"
        from rag.models.embedder import (
            embed_dtype,
        )  # torch, in this process only to read the CPU's bf16 support

        bf16 = not onnx and embed_dtype(settings) == "bfloat16"
        for i in range(max(1, ingest_repeats)):  # alternating, best of N: other processes' load is noise
            raws.append(run_worker("raw_encode", {"settings": base, "papers": ing_papers}))
            if onnx:  # the backend's own bare runtime, beside the bare torch encoder
                onnxs.append(run_worker("raw_onnx", {"settings": base, "papers": ing_papers}))
            if bf16:  # the same bare encoder in the pipeline's bfloat16 autocast
                bf16s.append(
                    run_worker("raw_encode", {"settings": base, "papers": ing_papers, "dtype": "bfloat16"})
                )
            ourss.append(
                run_worker(
                    "ingest", {"settings": dict(base, data_dir=str(tmp / f"ingest{i}")), "papers": ing_papers}
                )
            )
        raw = max(raws, key=lambda r: r.get("chunks_per_s") or 0)
        ours = max(ourss, key=lambda r: r.get("chunks_per_s") or 0)
        # before/after of the 128-wordpiece window: the raw encoder at the model's full 256
        raw256 = run_worker("raw_encode", {"settings": base, "papers": ing_papers, "window": 256})
        raw_onnx = max(onnxs, key=lambda r: r.get("chunks_per_s") or 0) if onnxs else None
        raw_bf16 = max(bf16s, key=lambda r: r.get("chunks_per_s") or 0) if bf16s else None
        res["ingest"] = {
            "papers": ing_papers,
            "backend": settings.storage.embed_backend,
            "raw_onnx": raw_onnx,
            "ratio_vs_raw_onnx": ratio(ours.get("chunks_per_s"), (raw_onnx or {}).get("chunks_per_s")),
            "dtype": ours.get("dtype"),
            "raw_encode_bf16": raw_bf16,
            "ratio_vs_raw_bf16": ratio(ours.get("chunks_per_s"), (raw_bf16 or {}).get("chunks_per_s")),
            "repeats": len(raws),
            "raw_encode": raw,
            "pipeline": ours,
            "all_chunks_per_s": {
                "raw": [r.get("chunks_per_s") for r in raws],
                "pipeline": [r.get("chunks_per_s") for r in ourss],
                "raw_onnx": [r.get("chunks_per_s") for r in onnxs],
                "raw_bf16": [r.get("chunks_per_s") for r in bf16s],
            },
            "ratio_chunks_per_s": ratio(ours.get("chunks_per_s"), raw.get("chunks_per_s")),
            "raw_encode_window256": raw256,
            "speedup_window128_vs_256": ratio(raw.get("chunks_per_s"), raw256.get("chunks_per_s")),
        }

        # 2. retrieval at 38 (seeds) and at scale
        seeds_dir = out / "data-seeds"
        run_worker("ingest", {"settings": dict(base, data_dir=str(seeds_dir)), "papers": {"corpus": "seeds"}})
        say("2. retrieval latency at 38 papers")
        rq = {"questions": str(questions), "n_queries": n_queries}
        res["retrieval"] = {
            "seeds": run_worker("retrieval", dict(rq, settings=dict(base, data_dir=str(seeds_dir))))
        }
        if data_dir or corpus:
            big = Path(data_dir) if data_dir else out / f"data-sample{sample or 'all'}"
            if not data_dir:
                say(
                    f"   ingesting a {sample or 'full'}-paper sample of {corpus} into {big} (reused next time)"
                )
                res["retrieval"]["large_ingest"] = run_worker(
                    "ingest",
                    {
                        "settings": dict(base, data_dir=str(big)),
                        "papers": {"corpus": corpus, "sample": sample},
                    },
                )
            large = filled_collection(dict(base, data_dir=str(big)))
            say(f"   retrieval latency at scale ({big}, collection {large['collection']})")
            res["retrieval"]["large"] = run_worker("retrieval", dict(rq, settings=large))

        # 3 + 4 + 5b. generation, end-to-end, serving RSS
        say("3-4. generation vs bare generate, end-to-end vs llama-index baseline (loads the LLM)")
        res["serve"] = run_worker(
            "serve",
            {
                "settings": dict(base, data_dir=str(seeds_dir)),
                "questions": str(questions),
                "n_answers": n_answers,
                "baseline": baseline,
                "out": str(out),
            },
        )

        # 5b. serving memory of the loading path, after `serve` built the int8 cache (so a cache hit)
        say("5b. serving memory: int8 cache (current) vs quantizing the fp32 model at start")
        res["memory"] = {
            "current": run_worker("llm_memory", {"settings": base}),
            "no_int8_cache": run_worker("llm_memory", {"settings": dict(base, int8_cache=False)}),
        }

        # 6. opt-in ingest into embedded store and into a chroma server
        if full_ingest:
            papers = {"corpus": corpus or "seeds", "sample": sample if sample else None}
            say(f"6. corpus ingest wall time, embedded and via `chroma run` ({papers})")
            res["full_ingest"] = {
                "papers": papers,
                "embedded": run_worker(
                    "ingest", {"settings": dict(base, data_dir=str(tmp / "full-embedded")), "papers": papers}
                ),
                "shipped": run_worker(
                    "ingest",
                    {
                        "settings": dict(base, data_dir=str(tmp / "full-shipped"), vector_bundle=shipped),
                        "papers": papers,
                    },
                ),
                "server": run_worker(
                    "ingest_server",
                    {
                        "settings": dict(base, data_dir=str(tmp / "full-client")),
                        "papers": papers,
                        "server_path": str(tmp / "full-server"),
                    },
                ),
            }
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    res["loadavg_end"] = [round(x, 2) for x in os.getloadavg()]
    res["summary"] = summary(res)
    (out / "bench.json").write_text(json.dumps(res, indent=2, default=str), encoding="utf-8")
    (out / "bench.md").write_text(markdown(res), encoding="utf-8")
    return res
