"""`rag` command line: ingest, ask, chat, summarize, serve, list, author, similar, settings; eval,
eval-lists, eval-fit and bench come from iclr_rag.cli_eval, the shared flags and settings from iclr_rag.options."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from iclr_rag import cli_eval
from iclr_rag.options import (
    ANSWERING,
    FILTERS,
    STORE,
    JsonOut,
    collection_flag,
    echo,
    for_conference,
    friendly,
    json_text,
    with_settings,
)
from rag.errors import UserError
from rag.settings import GROUP_OF, Settings

app = typer.Typer(
    add_completion=False, no_args_is_help=True, help="Cited answers about ICLR 2025 papers, offline."
)


def _open_index(settings: Settings):
    """The store, checked before any model loads: missing or broken -> one line, nothing created."""
    from rag.index.index import Index

    index = Index(settings.storage)
    index.require()
    return index


def _engine(settings: Settings, index=None):
    from rag.answer import Engine

    return Engine(settings, index=index)


def _references(ans) -> str:
    """The answer's references under the numbers its text cites (a one-paper answer may cite [2])."""
    from rag.export import own_references

    return "\n\n".join(own_references(ans))


def _print_answer(ans) -> None:
    from rag.export import marked, readable

    echo(readable(marked(ans)))  # an unsupported sentence says so where it stands
    for c in ans.caveats:  # what the evidence does not cover, in one line each
        echo(f"Note: {readable(c.text)}")
    if ans.suggested_question:
        echo(f"\nDid you mean: {ans.suggested_question}")
    if ans.refused and ans.retrieved:
        echo("\nRelated papers (not citations):")
        for h in ans.retrieved[:5]:
            echo(f"- {h.paper.label}")
    refs = _references(ans)
    if refs:
        echo("\nReferences:\n" + readable(refs))


def _retrieved(item) -> None:
    """The sources on stderr as soon as they are retrieved: the generator loads after them, lazily, and
    only for an answer it writes (a list is quoted, a refusal says why)."""
    lines = [
        f"  {n}. {h.paper.label} [{h.paper.decision or '?'}]" for n, h in enumerate(item.retrieved[:8], 1)
    ]
    more = f", the first {len(lines)}" if len(item.retrieved) > len(lines) else ""
    echo(f"Retrieved {len(item.retrieved)} papers{more}:\n" + "\n".join(lines) + "\n", err=True)


def _run(engine, question, history, json_out, *, indexed: str | None = None, **kw):
    from rag.reading.hygiene import strip_controls
    from rag.types import AnswerStream, Retrieved

    live = not json_out and sys.stderr.isatty()
    stream = AnswerStream.of(engine.stream(question, history, **kw))
    flags = kw.get("filters") or getattr(getattr(engine, "retriever", None), "filters", None)
    applied = flags
    for item in stream:
        if isinstance(item, Retrieved) and item.filters is not None:
            applied = item.filters
            if applied and not flags and not json_out:  # "orals on X": the question's, as the engine read it
                echo(f"(filter from the question: {applied.describe()})", err=True)
        if isinstance(item, Retrieved) and item.retrieved and not json_out:
            _retrieved(item)
        elif live and isinstance(item, str):
            sys.stderr.write(strip_controls(item))
            sys.stderr.flush()
    ans = stream.answer()
    if live:
        sys.stderr.write("\n\n")
    if json_out:
        out = ans.to_json()
        if indexed is not None:
            out["indexed"] = indexed
            out["filters"] = applied.to_json()  # the one applied
        echo(json_text(out))
    else:
        _print_answer(ans)
        base = ans.leaned_on
        if base:
            echo(f"\n(read as a follow-up to: {base})", err=True)
        if indexed is not None:
            echo(f"\n(searched {indexed})", err=True)
    return ans


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
    repair: Annotated[
        bool,
        typer.Option(
            "--repair",
            help="Rebuild the collection's vector index from its stored abstracts first (damage is "
            "also found and rebuilt without it).",
        ),
    ] = False,
    *,
    settings: Settings,
):
    """Chunk, embed and store abstracts. Re-running skips unchanged abstracts; a damaged index is rebuilt."""
    from rag.index.index import Index
    from rag.ingest.corpus import Limits, read_corpus
    from rag.settings import SEEDS_DIR

    s = settings
    if conference and paths:
        raise UserError("Give either --conference or paths to ingest, not both.")
    if conference:
        from rag.settings import CONFERENCE_FILE

        paths, s = [CONFERENCE_FILE], for_conference(s, explicit=collection_flag(s))
    # every file is parsed (a bad one stops all) before the embedder loads
    papers = read_corpus(paths or [SEEDS_DIR], Limits.of(s.storage))
    index = Index(s.storage)
    damage = "rebuilt as asked (--repair)" if repair else index.damage()  # before any model loads
    engine = _engine(s, index=index)
    if damage:
        rebuilt = index.rebuild(engine.embedder, progress=True)
        what = damage if repair else f"it was damaged: {damage}"
        echo(f"Rebuilt the vector index from its {rebuilt.papers} stored abstracts ({what}).", err=True)
    report = engine.index.ingest(papers, engine.embedder, progress=True)
    if json_out:
        echo(json_text(report.to_json(), indent=None))
    else:
        r = report
        shipped = f" ({r.bundled} with shipped vectors)" if r.bundled else ""
        echo(
            f"{r.papers} papers, {r.chunks} chunks: {r.added} added{shipped}, {r.skipped} unchanged, "
            f"{r.removed} removed in {r.seconds:.1f}s -> {s.storage.chroma_url or s.storage.chroma_path}"
        )


@app.command("bundle-vectors")
@friendly
@with_settings(*STORE)
def bundle_vectors(
    out: Annotated[Path | None, typer.Option("--out", help="Default: the shipped bundle's path.")] = None,
    *,
    settings: Settings,
):
    """Write the conference index's chunk vectors (or --collection's) into the bundle `ingest` reuses."""
    from rag.ingest import vector_bundle
    from rag.settings import VECTOR_BUNDLE

    s = for_conference(settings, explicit=collection_flag(settings))
    index = _open_index(s)
    entries = vector_bundle.from_index(index)
    if not entries:
        raise UserError(
            f"Nothing is stored in collection '{s.storage.collection}' under {s.storage.data_dir}; ingest it first."
        )
    target = out or VECTOR_BUNDLE
    info = vector_bundle.write(target, entries)
    echo(f"{info['papers']} papers, {info['chunks']} chunk vectors -> {target} ({info['bytes']:,} bytes)")


@app.command()
@friendly
@with_settings(*ANSWERING, "max_new_tokens")
def ask(question: str, json_out: JsonOut = False, *, settings: Settings):
    """Answer one question with citations."""
    from rag.ingest.catalog import describe_indexed
    from rag.reading.hygiene import has_words, validate_question

    q = has_words(
        validate_question(question, settings.grounding.max_question_chars)
    )  # before any model loads
    engine = _engine(settings, _open_index(settings))
    indexed = describe_indexed(engine.retriever.bm25().papers)
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
    from rag.export import answer_markdown
    from rag.reading.hygiene import has_words, validate_question

    t = has_words(validate_question(topic, settings.grounding.max_question_chars))
    if markdown and not markdown.parent.is_dir():
        raise UserError(f"--markdown {markdown}: the folder {markdown.parent} does not exist.")
    ans = _run(_engine(settings, _open_index(settings)), t, None, json_out, task="summarize")
    if markdown:
        # the answer, then its numbered references (authors, decision, OpenReview URL)
        markdown.write_text(answer_markdown([ans], chat=False), encoding="utf-8")


@app.command()
@friendly
@with_settings(*ANSWERING)
def chat(*, settings: Settings):
    """A terminal conversation; follow-up questions use the history. Ctrl-D to leave."""
    from rag.reading.hygiene import has_words, validate_question

    engine = _engine(settings, _open_index(settings))
    echo("Loading models…", err=True)
    engine.warm_up()
    history: list[dict] = []
    if hasattr(sys.stdin, "reconfigure"):  # an undecodable line is one error, not the end of the chat
        sys.stdin.reconfigure(errors="surrogateescape")
    while True:
        try:
            q = input("\nyou> ")
        except EOFError:
            break
        if q.strip().lower() in {"exit", "quit", ":q"}:
            break
        try:
            q = has_words(validate_question(q, settings.grounding.max_question_chars))
            ans = _run(engine, q, history, False)  # a filter the question names holds for it only
        except UserError as e:
            echo(f"error: {e}", err=True)
            continue
        history += [{"role": "user", "content": q}, ans.as_turns()[1]]  # a list's papers go with it


@app.command()
@friendly
@with_settings(*STORE, "llm", "threads", *FILTERS)
def serve(
    host: Annotated[
        str,
        typer.Option(help="Bind address. Anything but loopback needs --auth (or --insecure-no-auth)."),
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port.")] = 7860,
    auth: Annotated[
        str | None,
        typer.Option(
            help="USER:PASS login. Others can read it in `ps`: prefer env RAG_SERVING__AUTH or --auth-file."
        ),
    ] = None,
    auth_file: Annotated[
        Path | None, typer.Option("--auth-file", help="A file whose first line is USER:PASS (the login).")
    ] = None,
    forwarded_allow_ips: Annotated[
        str | None,
        typer.Option(
            "--forwarded-allow-ips",
            help="Behind a reverse proxy: its address(es), whose X-Forwarded-For is trusted (default: none).",
        ),
    ] = None,
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
    from ui.serve.launch_options import check_host, check_port, parse_auth, read_auth_file

    if auth is not None and auth_file is not None:
        raise UserError("Give either --auth or --auth-file, not both.")
    if auth is not None:
        echo(
            "note: --auth shows the password to anyone who can list processes; RAG_SERVING__AUTH or --auth-file don't.",
            err=True,
        )
    auth = read_auth_file(auth_file) if auth_file is not None else auth
    s = settings.replace(serving={"auth": auth}) if auth is not None else settings
    if forwarded_allow_ips is not None:
        s = s.replace(serving={"forwarded_allow_ips": forwarded_allow_ips})
    check_host(host, parse_auth(s.serving.auth or ""), insecure_no_auth)  # before anything loads
    check_port(host, port)
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


def _retriever(settings: Settings):
    """The index and a torch-free query embedder (rag.models.minilm): a list embeds only a few short texts, and
    importing torch and sentence-transformers would cost 6-7 s of a cold start."""
    from rag.models.minilm import QueryEmbedder
    from rag.retrieval.retrieve import Retriever

    return Retriever(
        _open_index(settings),
        QueryEmbedder(settings.storage),
        settings.retrieval,
        settings.generation.context_papers,
    )


CsvOpt = Annotated[Path | None, typer.Option("--csv", help="Also write the list as CSV here.")]
BibOpt = Annotated[Path | None, typer.Option("--bibtex", help="Also write BibTeX entries here.")]
MdOpt = Annotated[Path | None, typer.Option("--markdown", help="Also write a Markdown list here.")]
LimitOpt = Annotated[int | None, typer.Option("--limit", min=1, help="At most N papers.")]


@app.command("list")
@friendly
@with_settings(*STORE, "threads", "mode", *FILTERS, "conference")
def list_cmd(
    topic: Annotated[
        str, typer.Argument(help="The topic; none with --author: every paper of that author.")
    ] = "",
    json_out: JsonOut = False,
    csv_file: CsvOpt = None,
    bibtex: BibOpt = None,
    markdown: MdOpt = None,
    limit: LimitOpt = None,
    *,
    settings: Settings,
):
    """Every indexed paper on a topic, each with the abstract sentence that shows it, best first."""
    from rag.retrieval.filters import Filters

    filters = Filters.of(settings.retrieval.decision, settings.retrieval.area, settings.retrieval.author)
    if not topic.strip() and not filters.author:
        raise UserError('Give a topic (e.g. `rag list "diffusion models"`), or an author with --author.')
    _list(settings, topic, filters, json_out, csv_file, bibtex, markdown, limit)


@app.command()
@friendly
@with_settings(*STORE, "threads", "decision", "area", "conference")
def author(
    name: Annotated[str, typer.Argument(help="An author's name, or part of it (any case or accents).")],
    json_out: JsonOut = False,
    csv_file: CsvOpt = None,
    bibtex: BibOpt = None,
    markdown: MdOpt = None,
    limit: LimitOpt = None,
    *,
    settings: Settings,
):
    """An author's papers (decision, area) and their co-authors in the corpus: `rag list --author NAME`."""
    from rag.retrieval.filters import Filters

    _list(
        settings,
        "",
        Filters.of(settings.retrieval.decision, settings.retrieval.area, name),
        json_out,
        csv_file,
        bibtex,
        markdown,
        limit,
    )


@app.command()
@friendly
@with_settings(*STORE, "threads", *FILTERS, "conference")
def similar(
    paper_id: Annotated[str, typer.Argument(help="The paper's OpenReview id (as in its forum URL).")],
    json_out: JsonOut = False,
    csv_file: CsvOpt = None,
    bibtex: BibOpt = None,
    markdown: MdOpt = None,
    limit: Annotated[int, typer.Option("--limit", min=1, help="How many papers.")] = 10,
    *,
    settings: Settings,
):
    """The papers nearest to one paper in the conference (cosine of their abstracts' vectors)."""
    from rag.retrieval.filters import Filters
    from rag.retrieval.similar import like_topic

    filters = Filters.of(settings.retrieval.decision, settings.retrieval.area, settings.retrieval.author)
    _list(settings, like_topic(paper_id), filters, json_out, csv_file, bibtex, markdown, limit)


def _list(settings, topic, filters, json_out, csv_file, bibtex, markdown, limit) -> None:
    """`rag list`, `rag author` and `rag similar`: rag.shapes.lister.find (Find papers' lister), then print/export."""
    from rag import export
    from rag.prompts import AT_LEAST
    from rag.reading.hygiene import validate_question
    from rag.retrieval.filters import Filters
    from rag.shapes.lister import find

    if topic.strip():
        topic = validate_question(topic, settings.grounding.max_question_chars)
    res = find(_retriever(settings), settings, topic, filters, limit=limit)
    if res.detected:
        read = Filters(**{k: getattr(res.filters, k) for k in res.detected})
        echo(f"(filter from the topic: {read.describe()})", err=True)
    for path, text in (
        (csv_file, lambda: export.to_csv(res.papers)),
        (bibtex, lambda: export.to_bibtex(res.papers)),
        (markdown, lambda: export.to_markdown(res.papers, heading=res.heading())),
    ):
        if path:
            try:
                path.write_text(text(), encoding="utf-8")
            except OSError as e:
                raise UserError(f"Cannot write {path}: {e.strerror}.") from None
    what = f" ({res.filters.describe()})" if res.filters and res.author is None else ""
    why = res.why_empty(what)
    if json_out:  # the JSON stays exactly its shape; the reason goes to stderr
        echo(json_text(res.to_json()))
        if not res.papers and res.author is None and res.like is None:
            echo(why, err=True)
        if not res.complete:
            echo(f"({AT_LEAST})", err=True)
        return
    if not res.papers and res.author is None and res.like is None:
        echo(why)
        return
    shown = len(res.papers)
    many = f"{res.found} {'paper' if res.found == 1 else 'papers'}"
    many = many if res.complete else f"at least {many}"
    head = f"The first {shown} of {many}" if res.found > shown else many[:1].upper() + many[1:]
    if res.author is not None:
        rest = Filters(res.filters.decision, res.filters.area)
        also = f" ({rest.describe()})" if rest else ""
        matched = f"; names matched: {', '.join(res.author.matched)}" if res.author.matched else ""
        echo(f"{head} by an author matching “{res.author.name}”{also}{matched}, best decision first:")
    elif res.like is not None:
        echo(f"{head} nearest to “{res.like.label}”{what}, nearest first:")
    else:
        echo(f"{head} on “{res.topic}”{what}, best first:")
    for n, x in enumerate(res.papers, start=1):
        p = x.paper
        area = f" · {export.plain(p.primary_area)}" if res.author is not None and p.primary_area else ""
        echo(f"{n}. {p.label} [{p.decision or '?'}{area}] {p.url or ''}\n   “{x.quote}”")
    if res.author is not None and res.author.coauthors:
        names = ", ".join(f"{a} ({k})" for a, k in res.author.coauthors[:30])
        more = len(res.author.coauthors) - 30
        echo(
            f"\nCo-authors in the conference ({len(res.author.coauthors)}): {names}"
            + (f" and {more} more" if more > 0 else "")
        )
    if not res.complete:
        echo(f"\n({AT_LEAST})")


@app.command("settings")
def settings_cmd(
    common: Annotated[
        bool, typer.Option("--common", help="Only the common settings (the README's table).")
    ] = False,
) -> None:
    """Every setting as a Markdown table: its flag, its RAG_* env var, its default and what it is."""
    from iclr_rag.settings_table import markdown

    echo(markdown(setting_flags(), common=common))


def setting_flags() -> set[str]:
    """Setting names that some `rag` command takes as a flag (`--top-k` for top_k)."""
    import inspect

    names = set()
    for cmd in app.registered_commands:
        names |= set(inspect.signature(cmd.callback).parameters)
    return names & set(GROUP_OF)


app.command("eval")(cli_eval.eval_cmd)
app.command("eval-lists")(cli_eval.eval_lists_cmd)
app.command("eval-fit")(cli_eval.eval_fit_cmd)
app.command("eval-fusion")(cli_eval.eval_fusion_cmd)
app.command()(cli_eval.bench)
