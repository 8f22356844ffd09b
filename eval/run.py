"""`rag eval`: run the dev questions through the engine (and optionally the llama-index baseline),
score them and write report.json, report.md, rows.jsonl and PNG plots.

Entry point for the CLI: `eval.run.main(questions, corpus, out, compare, limit, settings, ...)`.
Its inputs (questions, configs, corpus, index) are eval/inputs.py; the scores and report sections
eval/scores.py; the files written eval/report.py.
"""

from __future__ import annotations

import time
import traceback
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from tqdm import tqdm

from eval import metrics as M
from eval.calibrate import ENGINE_MODES, calibration_section, features
from eval.gate import CopyingLLM
from eval.inputs import corpus_files, load_questions, parse_compare, prepare_index
from eval.rows import _pd, base_row, history_msgs, retrieval_query
from eval.scores import build_report, score_row
from rag.errors import UserError

DEFAULT_DEPTH = 20


# ------------------------------------------------------------------ one engine row per question


def ask_streaming(engine, question: str, history: list[dict], **kw):
    """Engine.stream (the code path Engine.ask wraps), also keeping the raw generated text and when the
    deltas arrived: the Answer only carries the verified text, and a fallback replaces it entirely."""
    from rag.types import AnswerStream

    t0 = time.perf_counter()
    raw: list[str] = []
    times: list[float] = []
    stream = AnswerStream.of(engine.stream(question, history, **kw))
    for item in stream:
        if isinstance(item, str) and item.strip():
            raw.append(item)
            times.append(time.perf_counter() - t0)
    ans = stream.answer()
    stream = {
        "deltas": len(raw),
        "first_delta_s": round(times[0], 3) if times else None,
        "last_delta_s": round(times[-1], 3) if times else None,
        "max_gap_s": round(max((b - a for a, b in zip(times, times[1:])), default=0.0), 3),
    }
    return ans, "".join(raw), stream


def engine_row(
    engine, q: dict, mode: str, gold: list, top_k: int, depth: int, generate: bool, calibrate: bool = True
) -> dict:
    task = "summarize" if q["type"] == "summary" else "answer"
    row = base_row(q, mode, gold, task)
    row["mode"] = mode
    if generate:
        ans, raw, stream = ask_streaming(
            engine, q["question"], history_msgs(q), top_k=top_k, mode=mode, task=task
        )
        standalone = ans.standalone_question or q["question"]
        row.update(
            raw_answer=raw,
            stream=stream,
            generated=True,
            standalone=standalone,
            answer=ans.answer,
            refused=ans.refused,
            refusal_code=ans.refusal_code,
            abstained=(not ans.refused) and M.abstains(ans.answer),
            fallback=ans.fallback,
            shape=ans.shape,
            refusal_reason=ans.refusal_reason,
            caveats=[{"code": c.code, "text": c.text, "part": c.part} for c in ans.caveats],
            parts=ans.parts,
            signals=ans.signals,
            leaned_on=ans.leaned_on,
            retrieved=[_pd(h.paper, h.score) for h in ans.retrieved],
            cited=[
                {k: getattr(c, k) for k in ("n", "paper_id", "title", "source_file", "index", "quote")}
                for c in ans.citations
            ],
            sentences=[
                {
                    "text": x.text,
                    "citations": x.citations,
                    "supported": x.supported,
                    "support_score": x.support_score,
                    "quoted": x.quoted,
                    "spans": [list(sp) for sp in x.spans],
                }
                for x in ans.sentences
            ],
            # the cited papers' titles and abstracts, for the independent check (eval/defects.py)
            sources={
                c.n: {"title": ans.retrieved[c.n - 1].paper.title, "text": ans.retrieved[c.n - 1].paper.text}
                for c in ans.citations
                if 0 < c.n <= len(ans.retrieved)
            },
            timings={k: round(float(v), 4) for k, v in ans.timings.items() if v is not None},
        )
        t0 = time.perf_counter()
        deep, trace = engine.retriever.retrieve(standalone, depth, mode, trace=True)
        row["timings"]["deep_retrieve_s"] = round(time.perf_counter() - t0, 4)
    else:
        standalone = retrieval_query(q, engine, top_k, mode)
        t0 = time.perf_counter()
        deep, trace = engine.retriever.retrieve(standalone, depth, mode, trace=True)
        row.update(
            generated=False, standalone=standalone, timings={"retrieve_s": round(time.perf_counter() - t0, 4)}
        )
        row["retrieved"] = [_pd(h.paper, h.score) for h in deep[:top_k]]
    row["ranked"] = [_pd(h.paper, h.score) for h in deep]
    if calibrate:  # the retrieval trace behind the fusion grid (a gate replay skips it)
        row["features"], row["sides"] = features(engine, standalone, deep, top_k), trace.to_json()
    return row


# ------------------------------------------------------------------ main


def main(
    questions: Path | str,
    corpus: str | Path | None = "seeds",
    out: Path | str = "eval/out",
    compare: str | Sequence[str] | None = None,
    limit: int | None = None,
    settings=None,
    *,
    data_dir: Path | str | None = None,
    retrieval_only: bool = False,
    types: Sequence[str] | None = None,
    depth: int = DEFAULT_DEPTH,
    progress: bool = True,
    plots: bool = True,
    ids: Sequence[str] | None = None,
    llm=None,
    split: str | None = None,
    scale: str | None = None,
    calibrate: bool = True,
) -> dict:
    """Run the eval and write OUT/report.json, report.md, rows.jsonl and *.png. Returns the report dict.

    questions: JSONL dev set; corpus: "seeds" (default) or a file/folder (e.g. the full 11,672 JSONL);
    compare: "dense,bm25,hybrid,baseline" (any subset; default: settings.retrieval.mode); limit: first N questions;
    data_dir: reuse an existing index (else OUT/data-<corpus key>, ingested incrementally);
    retrieval_only: no LLM: retrieval metrics, predicted refusals and calibration tables only;
    llm: a ready generator object for the engine (tests pass a fake); default: load settings.generation.llm.
    """
    from rag.answer import Engine
    from rag.settings import SEEDS_DIR, Settings

    settings = settings or Settings()
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    t_start = time.perf_counter()
    if scale is None:  # the questions written for this corpus: seeds, or the full conference
        scale = "seeds" if str(corpus) == "seeds" else "full"
    qs = load_questions(questions, limit, types, ids, split=split, scale=scale)
    if not qs:
        raise UserError(f"no questions in {questions}" + (f" of types {types}" if types else ""))
    configs = parse_compare(compare, settings.retrieval.mode)
    id_map = M.load_id_map(SEEDS_DIR / "metadata.jsonl")
    files = corpus_files(corpus)
    s, papers, ingest_rep = prepare_index(
        settings, files, out, Path(data_dir) if data_dir else None, progress
    )
    engine = Engine(s, llm=llm)
    top_k = s.retrieval.top_k
    golds = {q["id"]: M.resolve_gold(q["gold"], id_map) for q in qs}

    warm_s = None
    if not retrieval_only and any(c in ENGINE_MODES for c in configs):
        t0 = time.perf_counter()
        engine.warm_up()  # load the LLM (and BM25) now: the first question must not pay for it
        warm_s = round(time.perf_counter() - t0, 1)
    rows: list[dict] = []
    baseline = None
    for config in configs:
        if config == "baseline":
            from eval.baseline import Baseline

            baseline = Baseline(s, papers, out, engine=engine, generate=not retrieval_only, progress=progress)
        bar = tqdm(qs, desc=f"eval {config}", unit="q", disable=not progress)
        for q in bar:
            gold = golds[q["id"]]
            try:
                if config == "baseline":
                    row = baseline.row(q, gold, depth)
                else:
                    row = engine_row(
                        engine, q, config, gold, top_k, depth, not retrieval_only, calibrate=calibrate
                    )
            except Exception as e:  # one broken question must not lose the run
                row = base_row(q, config, gold, "answer")
                row["error"] = f"{type(e).__name__}: {e}"
                row["traceback"] = traceback.format_exc(limit=5)
            row["scores"] = score_row(row, gold, depth) if not row.get("error") else {}
            rows.append(row)
    wall = time.perf_counter() - t_start

    reports = {}
    for config in configs:
        reports[config] = build_report([r for r in rows if r["config"] == config], depth)
    primary = configs[0]
    report = dict(reports[primary])
    report["config"] = config_section(
        engine,
        s,
        configs,
        primary,
        files,
        papers,
        ingest_rep,
        retrieval_only,
        depth,
        baseline,
        len(qs),
        wall,
        questions,
    )
    report["config"]["warm_up_s"] = warm_s
    if len(configs) > 1:
        report["compare"] = reports
    report["calibration"] = calibration_section(rows, s)

    from eval import report as R

    R.write_all(out, report, rows, configs, plots=plots)
    return report


def config_section(
    engine,
    s,
    configs,
    primary,
    files,
    papers,
    ingest_rep,
    retrieval_only,
    depth,
    baseline,
    n_questions,
    wall,
    questions,
) -> dict:
    llm = None if retrieval_only else (engine._llm.name if engine._llm else s.generation.llm)
    return {
        "primary": primary,
        "configs": configs,
        "retrieval_only": retrieval_only,
        "models": {
            "embedder": engine.embedder.name,
            "llm": llm,
            "int8": s.generation.int8 and not isinstance(engine._llm, CopyingLLM),
            "baseline": baseline.describe() if baseline else None,
        },
        "top_k": s.retrieval.top_k,
        "retrieval_mode": primary if primary in ENGINE_MODES else "baseline",
        "depth": depth,
        "corpus": {
            "files": [str(f) for f in files],
            "papers": len(papers),
            "indexed_papers": engine.index.paper_count(),
            "chunks": engine.index.count(),
            "ingest": ingest_rep.to_json(),
        },
        "data_dir": str(s.storage.data_dir),
        "settings": {
            k: s.value(k)
            for k in (
                "candidates",
                "dense_weight",
                "bm25_weight",
                "rrf_k",
                "context_papers",
                "full_abstracts",
                "max_new_tokens",
                "support_threshold",
                "refuse_bar",
                "caveat_bar",
                "which_caveat_bar",
                "answer_style",
                "chunk_size",
                "chunk_overlap",
                "threads",
            )
        },
        "questions": {"file": str(questions), "n": n_questions},
        "wall_s": round(wall, 1),
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
    }
