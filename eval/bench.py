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
Entry point for the CLI: `eval.bench.main(corpus, out, settings, ...)`.
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

REPO = Path(__file__).resolve().parent.parent

from eval.bench_workers import free_port, pct, peak_rss_mb, ratio  # noqa: E402,F401  (re-exported)


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
    from rag.index import Index
    from rag.settings import Settings

    s = Settings(**settings)
    if s.collection == s.conference_collection or Index(s).count():
        return settings
    conf = dict(settings, collection=s.conference_collection)
    return conf if Index(Settings(**conf)).count() else settings


def main(
    corpus: str | Path | None = None,
    out: Path | str = "eval/out/bench",
    settings=None,
    *,
    data_dir: Path | str | None = None,
    sample: int | None = 1000,
    ingest_sample: int | None = 300,
    questions: Path | str = REPO / "eval" / "questions.jsonl",
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
    base = {k: (str(v) if isinstance(v, Path) else v) for k, v in settings.model_dump().items()}
    shipped = base.get("vector_bundle")  # the ingest rows time the encoder path; 6 also times the bundle's
    base["vector_bundle"] = None
    base.pop("chroma_url", None)
    res: dict = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "threads": settings.threads,
        "loadavg_start": [round(x, 2) for x in os.getloadavg()],
        "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY"),
        "llm": settings.llm,
        "embed_batch": settings.embed_batch,
        "top_k": settings.top_k,
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
        onnx = settings.embed_backend != "torch"
        from rag.embedder import embed_dtype  # torch, in this process only to read the CPU's bf16 support

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
            "backend": settings.embed_backend,
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


def summary(res: dict) -> dict:
    g = lambda d, *ks: _dig(d, ks)  # noqa: E731
    return {
        "ingest_ratio_chunks_per_s": g(res, "ingest", "ratio_chunks_per_s"),
        "ingest_backend": g(res, "ingest", "backend"),
        "ingest_ratio_vs_raw_onnx": g(res, "ingest", "ratio_vs_raw_onnx"),
        "embed_window128_speedup_vs_256": g(res, "ingest", "speedup_window128_vs_256"),
        "retrieval_38_hybrid_ratio_p50": g(res, "retrieval", "seeds", "ratio_hybrid_p50"),
        "retrieval_38_hybrid_ratio_p95": g(res, "retrieval", "seeds", "ratio_hybrid_p95"),
        "retrieval_38_dense_ratio_p50": g(res, "retrieval", "seeds", "ratio_dense_p50"),
        "retrieval_large_papers": g(res, "retrieval", "large", "papers"),
        "retrieval_large_hybrid_ratio_p50": g(res, "retrieval", "large", "ratio_hybrid_p50"),
        "retrieval_large_hybrid_ratio_p95": g(res, "retrieval", "large", "ratio_hybrid_p95"),
        "retrieval_large_dense_ratio_p50": g(res, "retrieval", "large", "ratio_dense_p50"),
        "generation_ratio_first_token": g(res, "serve", "generation", "ratio_first_token"),
        "generation_ratio_tokens_per_s": g(res, "serve", "generation", "ratio_tokens_per_s"),
        "end_to_end_ratio_vs_baseline": g(res, "serve", "end_to_end", "ratio"),
        "ingest_peak_rss_mb": g(res, "ingest", "pipeline", "peak_rss_mb"),
        "serving_peak_rss_mb": g(res, "serve", "serving_peak_rss_mb"),
        "serving_rss_mb": g(res, "serve", "serving_rss_mb"),
        "load_peak_rss_mb": g(res, "memory", "current", "serving_peak_rss_mb"),
        "load_settled_rss_mb": g(res, "memory", "current", "serving_settled_rss_mb"),
        "load_embedder_share_mb": g(res, "memory", "current", "embedder_share_mb"),
        "llm_load_s": g(res, "memory", "current", "llm_load_s"),
        "no_cache_peak_rss_mb": g(res, "memory", "no_int8_cache", "serving_peak_rss_mb"),
        "no_cache_settled_rss_mb": g(res, "memory", "no_int8_cache", "serving_settled_rss_mb"),
        "no_cache_llm_load_s": g(res, "memory", "no_int8_cache", "llm_load_s"),
        "full_ingest_embedded_s": g(res, "full_ingest", "embedded", "seconds"),
        "full_ingest_server_s": g(res, "full_ingest", "server", "seconds"),
        "full_ingest_shipped_s": g(res, "full_ingest", "shipped", "seconds"),
        "full_ingest_shipped_chunks": g(res, "full_ingest", "shipped", "bundled"),
    }


def _dig(d, ks):
    for k in ks:
        if not isinstance(d, dict) or k not in d:
            return None
        d = d[k]
    return d


def _backend_label(backend: str | None, dtype: str | None) -> str:
    backend = backend or "torch"
    return f"{backend} {dtype}" if backend == "torch" and dtype else backend


def markdown(res: dict) -> str:
    from eval.report import fmt

    s = res["summary"]
    L = [
        f"# iclr-rag bench — {res['date']}",
        "",
        f"{res['threads']} threads, LLM {res['llm']}, embed batch {res['embed_batch']}, top_k {res['top_k']}. "
        "Ratios are ours ÷ bare library (throughput: >1 is faster; latency: <1 is faster).",
        "",
        f"Machine load average at start / end: {res.get('loadavg_start')} / {res.get('loadavg_end')} "
        f"(OMP_WAIT_POLICY={res.get('omp_wait_policy')}). With more runnable processes than cores, timings "
        "here are noisy (±50 % seen on 2 cores); the parts interleave or alternate ours/bare to share the noise.",
        "",
        "| measure | ours | bare | ratio |",
        "|---|---:|---:|---:|",
    ]
    ing = res.get("ingest", {})
    L.append(
        f"| 1. ingest chunks/s ({fmt(_dig(ing, ['pipeline', 'chunks']))} chunks, backend "
        f"{_backend_label(s.get('ingest_backend'), ing.get('dtype'))}) vs raw torch encoder (float32) | "
        f"{fmt(_dig(ing, ['pipeline', 'chunks_per_s']), 1)} | {fmt(_dig(ing, ['raw_encode', 'chunks_per_s']), 1)} | "
        f"{fmt(s['ingest_ratio_chunks_per_s'])} |"
    )
    if ing.get("raw_onnx"):
        L.append(
            f"| 1a. ingest chunks/s vs bare onnxruntime on the same export ({s['ingest_backend']}) | "
            f"{fmt(_dig(ing, ['pipeline', 'chunks_per_s']), 1)} | {fmt(_dig(ing, ['raw_onnx', 'chunks_per_s']), 1)} | "
            f"{fmt(s['ingest_ratio_vs_raw_onnx'])} |"
        )
    if ing.get("raw_encode_bf16"):
        L.append(
            f"| 1a. ingest chunks/s (bfloat16) vs the bare encoder in bfloat16 autocast | "
            f"{fmt(_dig(ing, ['pipeline', 'chunks_per_s']), 1)} | "
            f"{fmt(_dig(ing, ['raw_encode_bf16', 'chunks_per_s']), 1)} | {fmt(ing.get('ratio_vs_raw_bf16'))} |"
        )
    L.append(
        f"| 1b. raw encoder chunks/s: 128-wordpiece window (ours) vs the model's 256 (before) | "
        f"{fmt(_dig(ing, ['raw_encode', 'chunks_per_s']), 1)} | "
        f"{fmt(_dig(ing, ['raw_encode_window256', 'chunks_per_s']), 1)} | "
        f"{fmt(s['embed_window128_speedup_vs_256'])} |"
    )
    for scale in ("seeds", "large"):
        r = _dig(res, ["retrieval", scale])
        if not r or r.get("error"):
            if r:
                L.append(f"| 2. retrieval ({scale}) | error: {r['error'][:120]} | | |")
            continue
        for mode in ("hybrid", "dense"):
            for q in ("p50", "p95"):
                L.append(
                    f"| 2. retrieval {mode} {q} ms, {r['papers']:,} papers / {r['chunks']:,} chunks | "
                    f"{fmt(r[f'engine_{mode}'][f'{q}_ms'], 1)} | {fmt(r['raw'][f'{q}_ms'], 1)} | "
                    f"{fmt(r[f'ratio_{mode}_{q}'])} |"
                )
    gen = _dig(res, ["serve", "generation"]) or {}
    L.append(
        f"| 3. first token s | {fmt(gen.get('engine_first_token_s'), 2)} | {fmt(gen.get('bare_first_token_s'), 2)} | "
        f"{fmt(gen.get('ratio_first_token'))} |"
    )
    L.append(
        f"| 3. decode tokens/s | {fmt(gen.get('engine_tokens_per_s'), 2)} | {fmt(gen.get('bare_tokens_per_s'), 2)} | "
        f"{fmt(gen.get('ratio_tokens_per_s'))} |"
    )
    e2e = _dig(res, ["serve", "end_to_end"]) or {}
    L.append(
        f"| 4. end-to-end answer s (vs llama-index default query engine; mean new tokens "
        f"{fmt(e2e.get('engine_mean_new_tokens'), 0)} vs {fmt(e2e.get('baseline_mean_new_tokens'), 0)}) | "
        f"{fmt(e2e.get('engine_mean_s'), 2)} | "
        f"{fmt(e2e.get('baseline_mean_s'), 2)} | {fmt(e2e.get('ratio'))} |"
    )
    L.append(
        f"| 5. peak RSS MiB: ingest / serving (serving RSS after the answers: {fmt(s['serving_rss_mb'], 0)}) | "
        f"{fmt(s['ingest_peak_rss_mb'], 0)} / {fmt(s['serving_peak_rss_mb'], 0)} "
        f"| raw encode {fmt(_dig(ing, ['raw_encode', 'peak_rss_mb']), 0)} | |"
    )
    if res.get("memory"):
        L.append(
            f"| 5b. serving memory MiB, LLM + embedder: peak / settled (embedder "
            f"{fmt(s['load_embedder_share_mb'], 0)}; LLM load s {fmt(s['llm_load_s'], 1)} vs "
            f"{fmt(s['no_cache_llm_load_s'], 1)}) | {fmt(s['load_peak_rss_mb'], 0)} / "
            f"{fmt(s['load_settled_rss_mb'], 0)} | int8_cache=False {fmt(s['no_cache_peak_rss_mb'], 0)} / "
            f"{fmt(s['no_cache_settled_rss_mb'], 0)} | {ratio(s['load_peak_rss_mb'], s['no_cache_peak_rss_mb'])} |"
        )
    fi = res.get("full_ingest")
    if fi:
        L.append(
            f"| 6. ingest wall s, {fmt(_dig(fi, ['embedded', 'papers']))} papers: embedded / chroma server | "
            f"{fmt(s['full_ingest_embedded_s'], 1)} | {fmt(s['full_ingest_server_s'], 1)} (server) | "
            f"{ratio(s['full_ingest_server_s'], s['full_ingest_embedded_s'])} |"
        )
        L.append(
            f"| 6b. ingest wall s with the shipped vectors ({fmt(s['full_ingest_shipped_chunks'])} chunks from the "
            f"bundle) / embedded | {fmt(s['full_ingest_shipped_s'], 1)} | {fmt(s['full_ingest_embedded_s'], 1)} | "
            f"{ratio(s['full_ingest_shipped_s'], s['full_ingest_embedded_s'])} |"
        )
    else:
        L.append("| 6. full ingest (embedded vs `chroma run`) | not run (opt-in: --full-ingest) | | |")
    errs = [f"{k}: {v['error'][:300]}" for k, v in _walk_errors(res)]
    if errs:
        L += ["", "## Errors", ""] + [f"- {e}" for e in errs]
    L += ["", "Raw numbers: bench.json.", ""]
    return "\n".join(L)


def _walk_errors(d, path=""):
    if isinstance(d, dict):
        if "error" in d and isinstance(d["error"], str):
            yield path, d
        for k, v in d.items():
            yield from _walk_errors(v, f"{path}.{k}" if path else k)
