"""The settings as a Markdown table, generated from the settings object (`rag settings`). The README's table
is `rag settings --common`; tests/test_readme.py checks that it is this module's output, so it cannot go
stale."""

from __future__ import annotations

from pathlib import Path

from rag.settings import FIELDS, REPO_ROOT, Settings, env_name

# What the README shows: the settings a user changes most, in this order. Every other one: `rag settings`.
COMMON = (
    "data_dir",
    "model_cache",
    "chroma_url",
    "collection",
    "conference_collection",
    "vector_bundle",
    "chunk_size",
    "chunk_overlap",
    "top_k",
    "mode",
    "decision",
    "area",
    "author",
    "answer_style",
    "llm",
    "max_new_tokens",
    "threads",
    "refuse_bar",
    "caveat_bar",
    "which_caveat_bar",
    "lister_min_score",
    "auth",
    "forwarded_allow_ips",
    "max_ingest_bytes",
    "max_ingest_records",
    "max_abstract_chars",
)

# Defaults computed at start-up, written the way they are computed (not this machine's values).
COMPUTED = {
    "data_dir": "`$XDG_DATA_HOME/iclr-rag` (`~/.local/share/iclr-rag`)",
    "model_cache": "`$XDG_CACHE_HOME/iclr-rag` (`~/.cache/iclr-rag`)",
    "threads": "all cores",
}


def default_text(name: str) -> str:
    """A setting's default as the table shows it."""
    if name in COMPUTED:
        return COMPUTED[name]
    value = FIELDS[name].default
    if value is None or value == "":
        return "unset"
    if isinstance(value, dict):
        return "(fitted model)"
    if isinstance(value, Path):
        value = value.relative_to(REPO_ROOT) if value.is_relative_to(REPO_ROOT) else value
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, int | float) and not isinstance(value, bool):
        return f"{value:,}" if isinstance(value, int) else str(value)
    return f"`{value}`"


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def markdown(flags: set[str], common: bool = False) -> str:
    """The table: setting, flag, env var, default and what it is; every setting, or the README's COMMON.
    `flags`: the settings some command takes as a flag (iclr_rag.cli.setting_flags)."""
    described = {name: (group, desc) for group, name, _default, desc in Settings.describe()}
    names = COMMON if common else list(described)
    lines = [
        "| setting | flag | env | default | what |"
        if common
        else "| group | setting | flag | env | default | what |",
        "|---|---|---|---|---|" if common else "|---|---|---|---|---|---|",
    ]
    for name in names:
        group, desc = described[name]
        flag = f"`--{name.replace('_', '-')}`" if name in flags else ""
        row = [f"`{name}`", flag, f"`{env_name(name)}`", _cell(default_text(name)), _cell(desc)]
        lines.append("| " + " | ".join(row if common else [group, *row]) + " |")
    return "\n".join(lines)
