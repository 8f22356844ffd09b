"""`rag` command line: ingest, ask, chat, summarize, serve, eval, bench."""

from __future__ import annotations

import functools
import json
import sys
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
    str | None, typer.Option("--llm", help="qwen0.5b | smollm2 | path to HF folder or .gguf [env RAG_LLM].")
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
    """CLI flags override env vars, which override defaults."""
    if flags.get("mode") not in (None, "hybrid", "dense", "bm25"):
        raise UserError(f"Unknown --mode '{flags['mode']}': use hybrid, dense or bm25.")
    return Settings(**{k: v for k, v in flags.items() if v is not None})


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


def _engine(settings: Settings):
    from rag.answer import Engine

    return Engine(settings)


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
        elif live:
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
def ingest(
    paths: Annotated[
        list[Path] | None, typer.Argument(help="Files or folders (.txt seeds, .jsonl). Default: seeds/.")
    ] = None,
    conference: Annotated[
        bool, typer.Option("--conference", help="Ingest the bundled ICLR 2025 submissions (11,672 papers).")
    ] = False,
    json_out: JsonOut = False,
    data_dir: DataDir = None,
    chroma_url: ChromaUrl = None,
    collection: Collection = None,
    chunk_size: ChunkSize = None,
    chunk_overlap: ChunkOverlap = None,
    threads: Threads = None,
):
    """Chunk, embed and store abstracts. Re-running skips unchanged abstracts."""
    s = make_settings(
        data_dir=data_dir,
        chroma_url=chroma_url,
        collection=collection,
        chunk_size=chunk_size,
        chunk_overlap=chunk_overlap,
        threads=threads,
    )
    if conference and paths:
        raise UserError("Give either --conference or paths to ingest, not both.")
    if conference:
        from rag.catalog import ingest_conference

        engine = _engine(s)
        report = ingest_conference(engine.index, engine.embedder, progress=True)
    else:
        report = _engine(s).ingest(paths, progress=True)
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
def ask(
    question: str,
    json_out: JsonOut = False,
    top_k: TopK = None,
    mode: ModeOpt = None,
    data_dir: DataDir = None,
    chroma_url: ChromaUrl = None,
    collection: Collection = None,
    llm: Llm = None,
    max_new_tokens: MaxNew = None,
    threads: Threads = None,
    decision: Decision = None,
    area: Area = None,
    author: Author = None,
):
    """Answer one question with citations."""
    from rag.catalog import describe_indexed

    s = make_settings(
        data_dir=data_dir,
        chroma_url=chroma_url,
        collection=collection,
        llm=llm,
        max_new_tokens=max_new_tokens,
        threads=threads,
        top_k=top_k,
        mode=mode,
        decision=decision,
        area=area,
        author=author,
    )
    engine = _engine(s)
    indexed = describe_indexed(engine.retriever.bm25().papers) if engine.index.count() else "nothing indexed"
    question = _question_filters(engine, question, (decision, area, author))
    _run(engine, question, None, json_out, indexed=indexed)


@app.command()
@friendly
def summarize(
    topic: str,
    json_out: JsonOut = False,
    markdown: Annotated[
        Path | None, typer.Option("--markdown", help="Also write the summary as Markdown here.")
    ] = None,
    top_k: TopK = None,
    mode: ModeOpt = None,
    data_dir: DataDir = None,
    chroma_url: ChromaUrl = None,
    collection: Collection = None,
    llm: Llm = None,
    threads: Threads = None,
    decision: Decision = None,
    area: Area = None,
    author: Author = None,
):
    """A citation-backed summary of the indexed papers on a topic."""
    from rag.summarize import to_markdown

    s = make_settings(
        data_dir=data_dir,
        chroma_url=chroma_url,
        collection=collection,
        llm=llm,
        threads=threads,
        top_k=top_k,
        mode=mode,
        decision=decision,
        area=area,
        author=author,
    )
    ans = _run(_engine(s), topic, None, json_out, task="summarize")
    if markdown:
        markdown.write_text(to_markdown(ans), encoding="utf-8")


@app.command()
@friendly
def chat(
    top_k: TopK = None,
    mode: ModeOpt = None,
    data_dir: DataDir = None,
    chroma_url: ChromaUrl = None,
    collection: Collection = None,
    llm: Llm = None,
    threads: Threads = None,
    decision: Decision = None,
    area: Area = None,
    author: Author = None,
):
    """A terminal conversation; follow-up questions use the history. Ctrl-D to leave."""
    s = make_settings(
        data_dir=data_dir,
        chroma_url=chroma_url,
        collection=collection,
        llm=llm,
        threads=threads,
        top_k=top_k,
        mode=mode,
        decision=decision,
        area=area,
        author=author,
    )
    engine = _engine(s)
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
            ans = _run(engine, q, history, False)
        except UserError as e:
            typer.echo(f"error: {e}", err=True)
            continue
        history += [{"role": "user", "content": q}, {"role": "assistant", "content": ans.answer}]


@app.command()
@friendly
def serve(
    host: Annotated[
        str, typer.Option(help="Bind address. Anything but loopback needs --auth.")
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port.")] = 7860,
    auth: Annotated[str | None, typer.Option(help="USER:PASS login [env RAG_AUTH].")] = None,
    ingest_seeds: Annotated[
        bool, typer.Option("--ingest-seeds/--no-ingest-seeds", help="Ingest seeds/ if the index is empty.")
    ] = True,
    conference: Annotated[
        bool,
        typer.Option(
            "--conference", help="Serve the bundled 11,672 ICLR 2025 submissions (indexed on first start)."
        ),
    ] = False,
    data_dir: DataDir = None,
    chroma_url: ChromaUrl = None,
    collection: Collection = None,
    llm: Llm = None,
    threads: Threads = None,
    decision: Decision = None,
    area: Area = None,
    author: Author = None,
):
    """Start the browser chat UI."""
    from ui.app import serve as serve_ui

    s = make_settings(
        data_dir=data_dir,
        chroma_url=chroma_url,
        collection=collection,
        llm=llm,
        threads=threads,
        auth=auth,
        decision=decision,
        area=area,
        author=author,
    )
    if conference:  # before the UI starts: the terminal shows the progress bar of a first start
        _ensure_conference(s)
    serve_ui(s, host=host, port=port, ingest_seeds=ingest_seeds)


def _ensure_conference(s: Settings) -> None:
    from rag.catalog import holds_conference, ingest_conference
    from rag.index import Index
    from rag.models import get_embedder

    index = Index(s)
    if holds_conference(index):
        return
    typer.echo(
        "Indexing the 11,672 ICLR 2025 submissions (first start only; later starts skip them)…", err=True
    )
    rep = ingest_conference(index, get_embedder(s), progress=True)
    typer.echo(f"{rep.papers} papers indexed ({rep.added} chunks embedded) in {rep.seconds:.0f}s", err=True)


@app.command("list")
@friendly
def list_cmd(
    topic: str,
    json_out: JsonOut = False,
    csv_file: Annotated[Path | None, typer.Option("--csv", help="Also write the list as CSV here.")] = None,
    bibtex: Annotated[Path | None, typer.Option("--bibtex", help="Also write BibTeX entries here.")] = None,
    markdown: Annotated[
        Path | None, typer.Option("--markdown", help="Also write a Markdown list here.")
    ] = None,
    limit: Annotated[int | None, typer.Option("--limit", min=1, help="At most N papers.")] = None,
    mode: ModeOpt = None,
    decision: Decision = None,
    area: Area = None,
    author: Author = None,
    data_dir: DataDir = None,
    chroma_url: ChromaUrl = None,
    collection: Collection = None,
    threads: Threads = None,
):
    """Every indexed paper on a topic, each with the abstract sentence that shows it, best first."""
    from rag import export
    from rag.filters import Filters
    from rag.lister import list_papers

    s = make_settings(
        data_dir=data_dir, chroma_url=chroma_url, collection=collection, threads=threads, mode=mode
    )
    engine = _engine(s)
    filters = Filters.of(decision, area, author)
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
    retrieval_only: Annotated[
        bool, typer.Option("--retrieval-only", "--no-generate", help="Retrieval metrics only, no LLM.")
    ] = False,
    data_dir: DataDir = None,
    top_k: TopK = None,
    mode: ModeOpt = None,
    llm: Llm = None,
    threads: Threads = None,
):
    """Run a question set through the engine and write report.json/.md, rows.jsonl and plots."""
    import eval.report
    import eval.run

    s = make_settings(top_k=top_k, mode=mode, llm=llm, threads=threads)
    rep = eval.run.main(
        questions, corpus, out, compare, limit, s, data_dir=data_dir, retrieval_only=retrieval_only
    )
    typer.echo(eval.report.headline(rep))
    typer.echo(f"-> {out / 'report.md'}")


@app.command()
@friendly
def bench(
    corpus: Annotated[str | None, typer.Option(help="Larger corpus for the scale figures (JSONL).")] = None,
    out: Annotated[Path, typer.Option(help="Output folder.")] = Path("eval/out/bench"),
    sample: Annotated[int, typer.Option(help="Papers of --corpus for retrieval latency; 0 = all.")] = 1000,
    full_ingest: Annotated[
        bool,
        typer.Option(
            "--full-ingest",
            help="Also time the whole-corpus ingest, embedded and into a chroma server (~30+ min).",
        ),
    ] = False,
    data_dir: DataDir = None,
    threads: Threads = None,
):
    """Performance ratios against bare baselines, measured side by side in one run."""
    import eval.bench

    res = eval.bench.main(
        corpus,
        out,
        make_settings(threads=threads),
        data_dir=data_dir,
        sample=sample or None,
        full_ingest=full_ingest,
    )
    typer.echo((out / "bench.md").read_text() if (out / "bench.md").exists() else json.dumps(res, indent=2))
