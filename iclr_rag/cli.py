"""`rag` command line: ingest, ask, chat, summarize, serve, eval, bench."""

from __future__ import annotations

import functools
import inspect
import json
import sys
import typing
from pathlib import Path
from typing import Annotated

import typer

from rag.errors import UserError
from rag.settings import Settings

app = typer.Typer(
    add_completion=False, no_args_is_help=True, help="Cited answers about ICLR 2025 papers, offline."
)

DataDir = Annotated[Path | None, typer.Option("--data-dir", help="Index folder [env RAG_DATA_DIR].")]
ChromaUrl = Annotated[
    str | None, typer.Option("--chroma-url", help="Chroma server URL; unset = embedded [env RAG_CHROMA_URL].")
]
Collection = Annotated[
    str | None, typer.Option("--collection", help="Chroma collection name [env RAG_COLLECTION].")
]
Llm = Annotated[
    str | None,
    typer.Option("--llm", help="qwen0.5b | smollm2 | qwen1.5b | path to HF folder or .gguf [env RAG_LLM]."),
]
TopK = Annotated[
    int | None, typer.Option("--top-k", min=1, max=50, help="Papers to retrieve [env RAG_TOP_K].")
]
ModeOpt = Annotated[str | None, typer.Option("--mode", help="hybrid | dense | bm25 [env RAG_MODE].")]
MaxNew = Annotated[
    int | None, typer.Option("--max-new-tokens", min=8, help="Generation budget [env RAG_MAX_NEW_TOKENS].")
]
Threads = Annotated[int | None, typer.Option("--threads", min=1, help="CPU threads [env RAG_THREADS].")]
ChunkSize = Annotated[
    int | None, typer.Option("--chunk-size", min=32, help="Chunk size in tokens [env RAG_CHUNK_SIZE].")
]
ChunkOverlap = Annotated[
    int | None, typer.Option("--chunk-overlap", min=0, help="Chunk overlap [env RAG_CHUNK_OVERLAP].")
]
JsonOut = Annotated[bool, typer.Option("--json", help="Machine-readable output.")]
ConferenceOpt = Annotated[
    bool,
    typer.Option(
        "--conference", help="Ask the bundled 11,672 ICLR 2025 submissions (after `rag ingest --conference`)."
    ),
]
Decision = Annotated[
    str | None,
    typer.Option(
        "--decision",
        help="Only oral|spotlight|poster|accepted|rejected|withdrawn papers, or an exact decision "
        "('Accept (Oral)', 'Desk Rejected', ...) [env RAG_DECISION].",
    ),
]
Area = Annotated[
    str | None, typer.Option("--area", help="Only papers in this primary area (any case) [env RAG_AREA].")
]
Author = Annotated[
    str | None,
    typer.Option(
        "--author", help="Only papers with an author matching NAME (any case/accents) [env RAG_AUTHOR]."
    ),
]


def make_settings(**flags) -> Settings:
    """CLI flags override env vars, which override defaults. `conference`: the bundled conference's
    collection instead of the seeds' (unless --collection names one)."""
    if flags.get("mode") not in (None, "hybrid", "dense", "bm25"):
        raise UserError(f"Unknown --mode '{flags['mode']}': use hybrid, dense or bm25.")
    conference = flags.pop("conference", None)
    s = Settings(**{k: v for k, v in flags.items() if v is not None})
    return for_conference(s, explicit=flags.get("collection")) if conference else s


def collection_flag(s: Settings) -> str | None:
    """The collection the user named (flag or env), if it isn't the default."""
    return s.collection if s.collection != Settings.model_fields["collection"].default else None


def for_conference(s: Settings, explicit: str | None = None) -> Settings:
    """Settings that read and write the bundled conference's own collection."""
    return s if explicit else s.model_copy(update={"collection": s.conference_collection})


# Each settings flag, declared once; commands name the ones they take (`with_settings`).
SETTINGS_OPTIONS = {
    "data_dir": DataDir,
    "chroma_url": ChromaUrl,
    "collection": Collection,
    "llm": Llm,
    "top_k": TopK,
    "mode": ModeOpt,
    "max_new_tokens": MaxNew,
    "threads": Threads,
    "chunk_size": ChunkSize,
    "chunk_overlap": ChunkOverlap,
    "decision": Decision,
    "area": Area,
    "author": Author,
    "conference": ConferenceOpt,
}
FLAG_DEFAULTS = {"conference": False}  # on/off flags; every other option defaults to None (= settings)
STORE = ("data_dir", "chroma_url", "collection")
FILTERS = ("decision", "area", "author")
ANSWERING = (*STORE, "llm", "threads", "top_k", "mode", *FILTERS, "conference")


def with_settings(*names: str):
    """Add the named settings flags to a command and hand it `settings` (make_settings of them)."""

    def deco(fn):
        sig = inspect.signature(fn)
        hints = typing.get_type_hints(fn, include_extras=True)  # this module defers annotations
        params = [
            p.replace(annotation=hints.get(p.name, p.annotation))
            for p in sig.parameters.values()
            if p.name != "settings"
        ]
        params += [
            inspect.Parameter(
                n,
                inspect.Parameter.KEYWORD_ONLY,
                default=FLAG_DEFAULTS.get(n),
                annotation=SETTINGS_OPTIONS[n],
            )
            for n in names
        ]

        @functools.wraps(fn)
        def wrapper(*a, **kw):
            flags = {n: kw.pop(n, None) for n in names}
            return fn(*a, settings=make_settings(**flags), **kw)

        wrapper.__signature__ = sig.replace(parameters=params, return_annotation=inspect.Signature.empty)
        wrapper.__annotations__ = {p.name: p.annotation for p in params}
        return wrapper

    return deco


def friendly(fn):
    """User errors become one clear line on stderr and exit code 2, never a traceback."""

    @functools.wraps(fn)
    def wrapper(*a, **kw):
        try:
            return fn(*a, **kw)
        except UserError as e:
            typer.echo(f"error: {e}", err=True)
            raise typer.Exit(2) from None
        except KeyboardInterrupt:
            raise typer.Exit(130) from None

    return wrapper


def _open_index(settings: Settings):
    """The store, checked before any model loads: missing or broken -> one line, nothing created."""
    from rag.index import Index

    index = Index(settings)
    index.require()
    return index


def _engine(settings: Settings, index=None):
    from rag.answer import Engine

    return Engine(settings, index=index)


def _references(ans) -> str:
    from rag.summarize import to_markdown

    return to_markdown(ans).split("## References", 1)[1].strip() if ans.citations else ""


def _print_answer(ans) -> None:
    typer.echo(ans.answer)
    if ans.refused and ans.retrieved:
        typer.echo("\nRelated papers (not citations):")
        for h in ans.retrieved[:5]:
            typer.echo(f"- {h.paper.label}")
    refs = _references(ans)
    if refs:
        typer.echo("\nReferences:\n" + refs)
    unsupported = [x.text for x in ans.sentences if not x.supported]
    if unsupported:
        typer.echo(f"\n({len(unsupported)} sentence(s) not found in the sources.)")


def _run(engine, question, history, json_out, *, indexed: str | None = None, **kw):
    from rag.types import Answer

    live = not json_out and sys.stderr.isatty()
    ans = None
    for item in engine.stream(question, history, **kw):
        if isinstance(item, Answer):
            ans = item
        elif live and isinstance(item, str):
            sys.stderr.write(item)
            sys.stderr.flush()
    if live:
        sys.stderr.write("\n\n")
    if json_out:
        out = ans.to_json()
        if indexed is not None:
            out["indexed"] = indexed
            out["filters"] = engine.retriever.filters.to_json()
        typer.echo(json.dumps(out, ensure_ascii=False, indent=2))
    else:
        _print_answer(ans)
        if indexed is not None:
            typer.echo(f"\n(searched {indexed})", err=True)
    return ans


def _question_filters(engine, question: str, flags: tuple) -> str:
    """No --decision/--area/--author given: a decision or author named in the question ("orals on X",
    "papers by NAME") filters retrieval; says so on stderr. Returns the question to ask."""
    from rag.filters import filters_from_question

    if any(flags) or engine.retriever.filters:
        return question
    found, cleaned = filters_from_question(question)
    if found:
        engine.retriever.filters = found
        typer.echo(f"(filter from the question: {found.describe()})", err=True)
        return cleaned
    return question


@app.command()
@friendly
@with_settings(*STORE, "chunk_size", "chunk_overlap", "threads")
def ingest(
    paths: Annotated[
        list[Path] | None, typer.Argument(help="Files or folders (.txt seeds, .jsonl). Default: seeds/.")
    ] = None,
    json_out: JsonOut = False,
    conference: Annotated[
        bool, typer.Option("--conference", help="Ingest the bundled ICLR 2025 submissions (11,672 papers).")
    ] = False,
    *,
    settings: Settings,
):
    """Chunk, embed and store abstracts. Re-running skips unchanged abstracts."""
    from rag.corpus import expand_paths, read_file
    from rag.index import Index
    from rag.settings import SEEDS_DIR

    s = settings
    if conference and paths:
        raise UserError("Give either --conference or paths to ingest, not both.")
    if conference:
        from rag.settings import CONFERENCE_FILE

        paths, s = [CONFERENCE_FILE], for_conference(s, explicit=collection_flag(s))
    # every file is parsed (a bad one stops all) before the embedder loads
    papers = [p for f in expand_paths(paths or [SEEDS_DIR]) for p in read_file(f)]
    engine = _engine(s, index=Index(s))
    report = engine.index.ingest(papers, engine.embedder, progress=True)
    if json_out:
        typer.echo(json.dumps(report.to_json()))
    else:
        r = report
        typer.echo(
            f"{r.papers} papers, {r.chunks} chunks: {r.added} added, {r.skipped} unchanged, "
            f"{r.removed} removed in {r.seconds:.1f}s -> {s.chroma_url or s.chroma_path}"
        )


@app.command()
@friendly
@with_settings(*ANSWERING, "max_new_tokens")
def ask(question: str, json_out: JsonOut = False, *, settings: Settings):
    """Answer one question with citations."""
    from rag.catalog import describe_indexed
    from rag.hygiene import validate_question

    q = validate_question(question, settings.max_question_chars)  # before any model loads
    engine = _engine(settings, _open_index(settings))
    indexed = describe_indexed(engine.retriever.bm25().papers)
    q = _question_filters(engine, q, tuple(getattr(settings, f) for f in FILTERS))
    _run(engine, q, None, json_out, indexed=indexed)


@app.command()
@friendly
@with_settings(*ANSWERING)
def summarize(
    topic: str,
    json_out: JsonOut = False,
    markdown: Annotated[
        Path | None, typer.Option("--markdown", help="Also write the summary as Markdown here.")
    ] = None,
    *,
    settings: Settings,
):
    """A citation-backed summary of the indexed papers on a topic."""
    from rag.hygiene import validate_question
    from rag.summarize import to_markdown

    t = validate_question(topic, settings.max_question_chars)
    if markdown and not markdown.parent.is_dir():
        raise UserError(f"--markdown {markdown}: the folder {markdown.parent} does not exist.")
    ans = _run(_engine(settings, _open_index(settings)), t, None, json_out, task="summarize")
    if markdown:
        markdown.write_text(to_markdown(ans), encoding="utf-8")


@app.command()
@friendly
@with_settings(*ANSWERING)
def chat(*, settings: Settings):
    """A terminal conversation; follow-up questions use the history. Ctrl-D to leave."""
    from rag.hygiene import validate_question

    engine = _engine(settings, _open_index(settings))
    typer.echo("Loading models…", err=True)
    engine.warm_up()
    history: list[dict] = []
    while True:
        try:
            q = input("\nyou> ")
        except EOFError:
            break
        if q.strip().lower() in {"exit", "quit", ":q"}:
            break
        try:
            q = validate_question(q, settings.max_question_chars)
            ans = _run(engine, q, history, False)
        except UserError as e:
            typer.echo(f"error: {e}", err=True)
            continue
        history += [{"role": "user", "content": q}, {"role": "assistant", "content": ans.answer}]


@app.command()
@friendly
@with_settings(*STORE, "llm", "threads", *FILTERS)
def serve(
    host: Annotated[
        str,
        typer.Option(help="Bind address. Anything but loopback needs --auth (or --insecure-no-auth)."),
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port.")] = 7860,
    auth: Annotated[str | None, typer.Option(help="USER:PASS login [env RAG_AUTH].")] = None,
    insecure_no_auth: Annotated[
        bool,
        typer.Option(
            "--insecure-no-auth", help="Serve a non-loopback address without a login (anyone can use it)."
        ),
    ] = False,
    ingest_seeds: Annotated[
        bool, typer.Option("--ingest-seeds/--no-ingest-seeds", help="Ingest seeds/ if the index is empty.")
    ] = True,
    conference: Annotated[
        bool,
        typer.Option(
            "--conference", help="Serve the bundled 11,672 ICLR 2025 submissions (indexed on first start)."
        ),
    ] = False,
    *,
    settings: Settings,
):
    """Start the browser chat UI."""
    from ui.launch_options import check_host, parse_auth

    s = settings.model_copy(update={"auth": auth}) if auth is not None else settings
    check_host(host, parse_auth(s.auth or ""), insecure_no_auth)  # before anything loads
    if conference:  # its own collection; the page starts at once and its loader indexes it
        s = for_conference(s, explicit=collection_flag(s))
    elif not ingest_seeds:
        _open_index(s)
    from ui.app import serve as serve_ui

    # With --conference the page comes up at once; a first start indexes the submissions in the
    # engine loader, the page's banner counting the chunks (and the terminal showing its bar).
    serve_ui(
        s,
        host=host,
        port=port,
        ingest_seeds=ingest_seeds and not conference,
        insecure_no_auth=insecure_no_auth,
        conference=conference,
    )


@app.command("list")
@friendly
@with_settings(*STORE, "threads", "mode", *FILTERS, "conference")
def list_cmd(
    topic: str,
    json_out: JsonOut = False,
    csv_file: Annotated[Path | None, typer.Option("--csv", help="Also write the list as CSV here.")] = None,
    bibtex: Annotated[Path | None, typer.Option("--bibtex", help="Also write BibTeX entries here.")] = None,
    markdown: Annotated[
        Path | None, typer.Option("--markdown", help="Also write a Markdown list here.")
    ] = None,
    limit: Annotated[int | None, typer.Option("--limit", min=1, help="At most N papers.")] = None,
    *,
    settings: Settings,
):
    """Every indexed paper on a topic, each with the abstract sentence that shows it, best first."""
    from rag import export
    from rag.filters import Filters
    from rag.lister import list_papers

    engine = _engine(settings, _open_index(settings))
    filters = Filters.of(settings.decision, settings.area, settings.author)
    if not filters:
        from rag.filters import filters_from_question

        found, cleaned = filters_from_question(topic)
        if found:
            filters, topic = found, cleaned
            typer.echo(f"(filter from the topic: {found.describe()})", err=True)
    res = list_papers(engine.retriever, topic, filters, limit=limit, judge=None)
    for path, text in (
        (csv_file, lambda: export.to_csv(res.papers)),
        (bibtex, lambda: export.to_bibtex(res.papers)),
        (markdown, lambda: export.to_markdown(res.papers, heading=f"ICLR 2025 papers on {res.topic}")),
    ):
        if path:
            try:
                path.write_text(text(), encoding="utf-8")
            except OSError as e:
                raise UserError(f"Cannot write {path}: {e.strerror}.") from None
    if json_out:
        typer.echo(json.dumps(res.to_json(), ensure_ascii=False, indent=2))
        return
    what = f" ({filters.describe()})" if filters else ""
    typer.echo(f"{len(res.papers)} papers on “{res.topic}”{what}, best first:")
    for n, x in enumerate(res.papers, start=1):
        typer.echo(f"{n}. {x.paper.label} [{x.paper.decision or '?'}] {x.paper.url or ''}\n   “{x.quote}”")


@app.command("eval")
@friendly
@with_settings("top_k", "mode", "llm", "threads")
def eval_cmd(
    questions: Annotated[Path, typer.Option(help="JSONL question set.")] = Path("eval/questions.jsonl"),
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
    *,
    settings: Settings,
):
    """Run a question set through the engine and write report.json/.md, rows.jsonl and plots."""
    import eval.report
    import eval.run

    extra = {"depth": depth} if depth else {}
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


@app.command("eval-lists")
@friendly
@with_settings(*STORE, "threads", "mode")
def eval_lists_cmd(
    topics: Annotated[Path, typer.Option(help="JSONL gold topics.")] = Path("eval/list_topics.jsonl"),
    out: Annotated[Path, typer.Option(help="Report folder.")] = Path("eval/out/lists"),
    min_score: Annotated[
        float | None, typer.Option("--min-score", help="Score bar to report at (default: lister_min_score).")
    ] = None,
    *,
    settings: Settings,
):
    """`rag list` on the gold topics: recall, judged precision and time per list, both halves;
    the score bar that the calibration half supports. Writes report.json/.md and rows.jsonl."""
    import eval.lists

    rep = eval.lists.main(settings, topics, out, bar=min_score)
    typer.echo(eval.lists.headline(rep))
    typer.echo(f"-> {out / 'report.md'}")


@app.command()
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
