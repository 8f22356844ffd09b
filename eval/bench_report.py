"""`rag bench` results as read by people: the summary ratios (report.json "summary") and report.md."""

from __future__ import annotations

from eval.bench_common import ratio


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
    from eval.report_markdown import fmt

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
