"""`rag eval`, `rag eval-lists` and `rag bench`: the offline evaluation and benchmark commands
(registered on the `rag` app by iclr_rag.cli)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from iclr_rag.options import STORE, friendly, with_settings
from rag.settings import Settings


@friendly
@with_settings("top_k", "mode", "llm", "threads")
def eval_cmd(
    questions: Annotated[Path, typer.Option(help="JSONL question set.")] = Path("eval/data/questions.jsonl"),
    corpus: Annotated[
        str, typer.Option(help="seeds, or a .jsonl/.txt file or folder (e.g. the full ICLR 2025 JSONL).")
    ] = "seeds",
    out: Annotated[Path, typer.Option(help="Report folder.")] = Path("eval/out"),
    compare: Annotated[str | None, typer.Option(help="Comma list of dense,bm25,hybrid,baseline.")] = None,
    limit: Annotated[
        int | None, typer.Option(min=1, help="At most N questions (round-robin over types).")
    ] = None,
    split: Annotated[
        str, typer.Option(help="Dev-set half: heldout (the figures that count), calibration, or all.")
    ] = "heldout",
    scale: Annotated[
        str | None, typer.Option(help="Questions written for: seeds or full (default: from --corpus).")
    ] = None,
    retrieval_only: Annotated[
        bool, typer.Option("--retrieval-only", "--no-generate", help="Retrieval metrics only, no LLM.")
    ] = False,
    types: Annotated[str | None, typer.Option(help="Comma list of question types to keep.")] = None,
    ids: Annotated[str | None, typer.Option(help="Comma list of question ids to keep.")] = None,
    depth: Annotated[int | None, typer.Option(min=1, help="Ranking depth recorded per question.")] = None,
    no_plots: Annotated[bool, typer.Option("--no-plots", help="Skip the PNG plots.")] = False,
    data_dir: Annotated[Path | None, typer.Option("--data-dir", help="Reuse this index folder.")] = None,
    gate_only: Annotated[
        bool,
        typer.Option(
            "--gate-only",
            help="No model: a stand-in copies the first evidence sentence, so refusals, shapes and "
            "citations are the rules' alone (to compare code versions; fast, the same on every CPU).",
        ),
    ] = False,
    *,
    settings: Settings,
):
    """Run a question set through the engine and write report.json/.md, rows.jsonl and plots."""
    import eval.report
    import eval.run

    extra = {"depth": depth} if depth else {}
    if gate_only:
        from eval.gate import CopyingLLM

        extra["llm"] = CopyingLLM()
        extra["calibrate"] = False  # the decisions are the point: no fusion-grid sides
    rep = eval.run.main(
        questions,
        corpus,
        out,
        compare,
        limit,
        settings,
        data_dir=data_dir,
        retrieval_only=retrieval_only,
        types=types.split(",") if types else None,
        ids=ids.split(",") if ids else None,
        plots=not no_plots,
        split=split,
        scale=scale,
        **extra,
    )
    typer.echo(eval.report.headline(rep))
    typer.echo(f"-> {out / 'report.md'}")


@friendly
@with_settings(*STORE, "threads", "mode")
def eval_lists_cmd(
    topics: Annotated[
        list[Path] | None, typer.Option(help="JSONL gold topics (repeat for several files).")
    ] = None,
    out: Annotated[Path, typer.Option(help="Report folder.")] = Path("eval/out/lists"),
    min_score: Annotated[
        float | None, typer.Option("--min-score", help="Score bar to report at (default: lister_min_score).")
    ] = None,
    fit: Annotated[
        bool,
        typer.Option(
            "--fit", help="Fit the lister's model on the calibration topics first (OUT/lister_model.json)."
        ),
    ] = False,
    absent: Annotated[
        Path | None,
        typer.Option(
            help="JSONL topics no paper is about: how many list nothing (default: eval/data/list_absent_topics.jsonl)."
        ),
    ] = None,
    *,
    settings: Settings,
):
    """`rag list` on the gold topics: recall, judged precision and time per list, both halves;
    the score bar that the calibration half supports; how many topics no paper is about list nothing.
    Writes report.json/.md and rows.jsonl."""
    import eval.lists

    rep = eval.lists.main(
        settings,
        topics or [eval.lists.DEFAULT_TOPICS],
        out,
        bar=min_score,
        fit=fit,
        absent=absent or eval.lists.DEFAULT_ABSENT,
    )
    typer.echo(eval.lists.headline(rep))
    typer.echo(f"-> {out / 'report.md'}")


@friendly
def eval_fit_cmd(
    runs: Annotated[
        list[Path], typer.Argument(help="`rag eval` run folders (rows.jsonl), one per question file.")
    ],
    out: Annotated[Path, typer.Option(help="Report folder.")] = Path("eval/out/fit"),
    refuse_budget: Annotated[
        float, typer.Option(help="Share of answerable questions a refusal may take (on the files fitted on).")
    ] = 0.01,
    caveat_budget: Annotated[
        float, typer.Option(help="Share of answerable questions a caveat on what was asked may take.")
    ] = 0.06,
):
    """Fit the outcome's refusal and caveat bars (rag.grounding.outcome) and score them leave one question file out.
    Writes fit.json/.md with the settings to paste."""
    import eval.fit

    rep = eval.fit.main(runs, out, refuse_budget, caveat_budget)
    sm = rep["summary"]
    typer.echo(
        "leave-one-file-out mean (worst): hard-refused {:.3f} ({:.3f}), caveat on asked {:.3f} ({:.3f}), "
        "unanswerable handled {:.3f} ({:.3f})".format(
            *(
                x
                for k in ("answerable_hard_refused", "answerable_caveat_on_asked", "unanswerable_handled")
                for x in (sm[k]["mean"], sm[k]["worst"])
            )
        )
    )
    typer.echo(f"-> {out / 'fit.md'}")


@friendly
def eval_fusion_cmd(
    runs: Annotated[
        list[Path],
        typer.Argument(
            help="`rag eval` run folders (rows.jsonl with traces), one per question file and scale."
        ),
    ],
    out: Annotated[Path, typer.Option(help="Report file (JSON).")] = Path("eval/out/fusion-lofo.json"),
):
    """Sweep the fusion weights over the retriever's traces, leaving one question file out: is a weight change
    better on the files it was not chosen on? Run `rag eval` with RAG_RETRIEVAL__PAPER_WEIGHT=0.000001 to
    trace the paper side too."""
    from eval.calibrate import fusion_lofo
    from rag.errors import UserError

    s = Settings().retrieval
    rows = {}
    for d in runs:
        f = d / "rows.jsonl"
        if not f.exists():
            raise UserError(f"{f} does not exist: give `rag eval` run folders.")
        rows[d.name] = [json.loads(x) for x in f.read_text().splitlines() if x.strip()]
    current = {"bm25_weight": s.bm25_weight, "paper_weight": s.paper_weight, "rrf_k": s.rrf_k}
    rep = fusion_lofo(rows, {**current, "named_boost": s.named_boost})
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(rep, indent=1))
    for r in rep["runs"]:
        typer.echo(
            f"{r['run']:40s} n={r['n']:4d} current hit@1 {r['current']['hit_at_1']:.3f} | chosen on the others "
            f"{r['chosen']} hit@1 {r['held_out']['hit_at_1']:.3f}"
        )
    typer.echo(
        f"held-out change in hit@1: mean {rep['mean_gain_hit_at_1']:+.4f}; "
        f"{rep['runs_better']} runs better, {rep['runs_worse']} worse -> {out}"
    )


@friendly
@with_settings("threads")
def bench(
    corpus: Annotated[str | None, typer.Option(help="Larger corpus for the scale figures (JSONL).")] = None,
    out: Annotated[Path, typer.Option(help="Output folder.")] = Path("eval/out/bench"),
    sample: Annotated[int, typer.Option(help="Papers of --corpus for retrieval latency; 0 = all.")] = 1000,
    ingest_sample: Annotated[int, typer.Option(help="Papers timed for ingest throughput.")] = 300,
    full_ingest: Annotated[
        bool,
        typer.Option(
            "--full-ingest",
            help="Also time the whole-corpus ingest, embedded and into a chroma server (~30+ min).",
        ),
    ] = False,
    no_baseline: Annotated[
        bool, typer.Option("--no-baseline", help="Skip the llama-index baseline.")
    ] = False,
    answers: Annotated[int, typer.Option(min=0, help="Answers timed end to end.")] = 3,
    ingest_repeats: Annotated[int, typer.Option(min=1, help="Repeats of each ingest timing.")] = 2,
    data_dir: Annotated[Path | None, typer.Option("--data-dir", help="Reuse this index folder.")] = None,
    *,
    settings: Settings,
):
    """Performance ratios against bare baselines, measured side by side in one run."""
    import eval.bench

    res = eval.bench.main(
        corpus,
        out,
        settings,
        data_dir=data_dir,
        sample=sample or None,
        ingest_sample=ingest_sample,
        full_ingest=full_ingest,
        baseline=not no_baseline,
        n_answers=answers,
        ingest_repeats=ingest_repeats,
    )
    typer.echo((out / "bench.md").read_text() if (out / "bench.md").exists() else json.dumps(res, indent=2))
