"""The `rag` commands' shared options: typed flags, the settings they build, friendly errors."""

from __future__ import annotations

import functools
import inspect
import json
import os
import re
import typing
from pathlib import Path
from typing import Annotated

import typer
from pydantic import ValidationError

from rag.errors import UserError
from rag.settings import FIELDS, GROUP_OF, GROUPS, Settings, env_name, flat_env_names, nest

DataDir = Annotated[Path | None, typer.Option("--data-dir", help="Index folder (env RAG_STORAGE__DATA_DIR).")]
ChromaUrl = Annotated[
    str | None,
    typer.Option("--chroma-url", help="Chroma server URL; unset = embedded (env RAG_STORAGE__CHROMA_URL)."),
]
Collection = Annotated[
    str | None, typer.Option("--collection", help="Chroma collection name (env RAG_STORAGE__COLLECTION).")
]
Llm = Annotated[
    str | None,
    typer.Option(
        "--llm", help="qwen0.5b | smollm2 | qwen1.5b | path to HF folder or .gguf (env RAG_GENERATION__LLM)."
    ),
]
TopK = Annotated[
    int | None, typer.Option("--top-k", min=1, max=50, help="Papers to retrieve (env RAG_RETRIEVAL__TOP_K).")
]
ModeOpt = Annotated[
    str | None, typer.Option("--mode", help="hybrid | dense | bm25 (env RAG_RETRIEVAL__MODE).")
]
MaxNew = Annotated[
    int | None,
    typer.Option("--max-new-tokens", min=8, help="Generation budget (env RAG_GENERATION__MAX_NEW_TOKENS)."),
]
Threads = Annotated[
    int | None, typer.Option("--threads", min=1, help="CPU threads (env RAG_GENERATION__THREADS).")
]
ChunkSize = Annotated[
    int | None,
    typer.Option("--chunk-size", min=32, help="Chunk size in tokens (env RAG_STORAGE__CHUNK_SIZE)."),
]
ChunkOverlap = Annotated[
    int | None, typer.Option("--chunk-overlap", min=0, help="Chunk overlap (env RAG_STORAGE__CHUNK_OVERLAP).")
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
        "('Accept (Oral)', 'Desk Rejected', ...); several, comma-separated, for either ('oral,spotlight') "
        "(env RAG_RETRIEVAL__DECISION).",
    ),
]
Area = Annotated[
    str | None,
    typer.Option("--area", help="Only papers in this primary area (any case) (env RAG_RETRIEVAL__AREA)."),
]
Author = Annotated[
    str | None,
    typer.Option(
        "--author",
        help="Only papers with an author matching NAME (any case/accents) (env RAG_RETRIEVAL__AUTHOR).",
    ),
]


def make_settings(**flags) -> Settings:
    """CLI flags override env vars, which override defaults. `conference`: the bundled conference's
    collection instead of the seeds' (unless --collection names one)."""
    if flags.get("mode") not in (None, "hybrid", "dense", "bm25"):
        raise UserError(f"Unknown --mode '{flags['mode']}': use hybrid, dense or bm25.")
    conference = flags.pop("conference", None)
    try:
        s = Settings(**nest({k: v for k, v in flags.items() if v is not None}))
    except ValidationError as e:
        raise UserError(settings_error(e, flags)) from None
    return for_conference(s, explicit=flags.get("collection")) if conference else s


def settings_error(e: ValidationError, flags: dict) -> str:
    """A bad flag or RAG_* value as one line naming it, what is wrong and the value given."""
    err = e.errors()[0]
    msg = err["msg"].removeprefix("Value error, ")
    loc = [str(x) for x in err["loc"]]
    if loc and loc[0] in GROUPS:
        loc = loc[1:]  # (group, setting)
    if not loc or loc[0] not in GROUP_OF:  # a rule across fields (chunk overlap below chunk size)
        return f"Bad settings: {msg}."
    name = loc[0]
    if flags.get(name) is not None:
        where = f"--{name.replace('_', '-')}"
    elif env_name(name) not in {k.upper() for k in os.environ} and name in flat_env_names():
        where = flat_env_names()[name]  # a deprecated flat env var, read in place of the nested one
    else:
        where = env_name(name)
    value = err.get("input")
    return f"Bad {where} value {str(value) if isinstance(value, Path) else repr(value)}: {msg}."


def collection_flag(s: Settings) -> str | None:
    """The collection the user named (flag or env), if it isn't the default."""
    return s.storage.collection if s.storage.collection != FIELDS["collection"].default else None


def for_conference(s: Settings, explicit: str | None = None) -> Settings:
    """Settings that read and write the bundled conference's own collection."""
    return s if explicit else s.replace(storage={"collection": s.storage.conference_collection})


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


def echo(text: str = "", err: bool = False) -> None:
    """typer.echo of text that may hold corpus or model text: terminal control sequences out."""
    from rag.reading.hygiene import strip_controls

    typer.echo(strip_controls(str(text)), err=err)


_C1 = re.compile(r"[\x80-\x9f]")


def json_text(obj, indent: int | None = 2) -> str:
    """JSON as printed: non-ASCII kept, but C1 controls (which json leaves raw) written as \\u escapes."""
    return _C1.sub(lambda m: f"\\u{ord(m.group()):04x}", json.dumps(obj, ensure_ascii=False, indent=indent))


def friendly(fn):
    """User errors become one clear line on stderr and exit code 2, never a traceback; Ctrl-C says so and
    exits 130."""

    @functools.wraps(fn)
    def wrapper(*a, **kw):
        try:
            return fn(*a, **kw)
        except UserError as e:
            echo(f"error: {e}", err=True)
            raise typer.Exit(2) from None
        except KeyboardInterrupt:
            echo(
                "interrupted (an interrupted `rag ingest` resumes where it stopped when run again).", err=True
            )
            raise typer.Exit(130) from None

    return wrapper
