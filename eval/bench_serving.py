"""`rag bench` serving measurements (first token, decode, memory of the loading path), each run in a
fresh interpreter through eval.bench_workers, so that its peak RSS is its own."""

from __future__ import annotations

import time
from pathlib import Path

from eval.bench_common import peak_rss_mb, ratio, settings_from


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
    from eval.inputs import corpus_files, load_questions
    from rag.answer import Engine, answer_messages
    from rag.ingest.corpus import read_file

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
        hits = engine.retriever.retrieve(q["question"], s.retrieval.top_k, s.retrieval.mode)[
            : s.generation.context_papers
        ]
        evset = engine.evidence(q["question"], hits)
        msgs = answer_messages(evset, q["question"])
        if len(gen) % 2 == 0:  # alternate which goes first, so warm caches / load favour neither
            bare = _bare_generate(engine.llm, msgs, s.generation.max_new_tokens)
            text = engine.llm.generate(msgs, max_new_tokens=s.generation.max_new_tokens)
            st = engine.llm.stats
        else:
            text = engine.llm.generate(msgs, max_new_tokens=s.generation.max_new_tokens)
            st = engine.llm.stats
            bare = _bare_generate(engine.llm, msgs, s.generation.max_new_tokens)
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
            "new_tokens": engine.llm.stats.new_tokens if ans.timings.get("generate_s") else 0,
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
    from rag.models.embedder import get_embedder
    from rag.models.generator import gguf_source, load_llm, resolve_llm
    from rag.models.int8 import int8_cache_path

    s = settings_from(a["settings"])
    t0 = time.perf_counter()
    folder = resolve_llm(s.generation.llm, s)  # converts the GGUF on a first-ever start (counted in the peak)
    hit = (
        int8_cache_path(folder, s, gguf_source(folder)).exists()
        if s.generation.int8 and s.generation.int8_cache
        else None
    )
    t1 = time.perf_counter()
    llm = load_llm(s.generation.llm, s)
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
        "int8": s.generation.int8,
        "int8_cache": s.generation.int8_cache,
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
