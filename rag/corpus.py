"""Corpus files -> Paper records.

Two formats:
- seed `.txt`: a header line, then abstracts separated by one or more blank lines (CRLF ok);
  ids and titles come from a `metadata.jsonl` beside the file, when present.
- `.jsonl` (or gzipped `.jsonl.gz`, e.g. the bundled seeds/iclr2025.jsonl.gz): one object per line with `id`, `title`, `abstract` and optional `decision`,
  `authors`, `primary_area`.
A bad file raises CorpusError naming the file (and line) before anything is returned.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import re
import zlib
from pathlib import Path

from rag.errors import CorpusError
from rag.types import Paper

METADATA_FILE = "metadata.jsonl"
_BLANK_LINES = re.compile(r"\n[ \t]*\n+")


def source_id(path: Path) -> str:
    """A file's stable identity: its resolved path, hashed (the name alone is shared across folders)."""
    return hashlib.sha256(str(Path(path).resolve()).encode()).hexdigest()[:16]


def _read_text(path: Path) -> str:
    if not path.exists():
        raise CorpusError(f"{path}: file not found. Check the path and try again.")
    if not path.is_file():
        raise CorpusError(f"{path}: not a regular file.")
    data = path.read_bytes()
    if path.name.lower().endswith(".gz"):
        data = _gunzip(path, data)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise CorpusError(
            f"{path}: not UTF-8 text (bad byte at offset {e.start}). Re-save it as UTF-8."
        ) from None
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if not text.strip():
        raise CorpusError(f"{path}: the file is empty.")
    return text


def _gunzip(path: Path, data: bytes) -> bytes:
    try:
        return gzip.decompress(data)
    except (OSError, EOFError, zlib.error) as e:
        raise CorpusError(
            f"{path}: not a readable gzip file ({e}). Re-download or re-compress it with gzip."
        ) from None


def is_jsonl(path: Path) -> bool:
    """`.jsonl` or gzipped `.jsonl.gz`."""
    name = Path(path).name.lower()
    return name.endswith(".jsonl") or name.endswith(".jsonl.gz")


def load_metadata(folder: Path) -> dict[tuple[str, int], dict]:
    """(file name, index) -> {id, title, decision, ...} from folder/metadata.jsonl, if present."""
    meta_path = folder / METADATA_FILE
    if not meta_path.exists():
        return {}
    out = {}
    for lineno, rec in iter_jsonl(meta_path):
        check_record(meta_path, lineno, rec)
        out[(rec["file"], int(rec["index"]))] = rec
    return out


def iter_jsonl(path: Path):
    """(line number, object) for each non-blank line; a bad line raises CorpusError naming it."""
    for lineno, line in enumerate(_read_text(path).split("\n"), start=1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as e:
            raise CorpusError(f"{path}:{lineno}: not valid JSON ({e.msg}).") from None
        if not isinstance(rec, dict):
            raise CorpusError(f"{path}:{lineno}: expected a JSON object, got {type(rec).__name__}.")
        yield lineno, rec


def read_txt(path: Path) -> list[Paper]:
    text = _read_text(path)
    _header, _, body = text.partition("\n")
    blocks = [b.strip() for b in _BLANK_LINES.split(body)]
    blocks = [b for b in blocks if b]
    if not blocks:
        raise CorpusError(
            f"{path}: no abstracts found after the header line (abstracts are separated by blank lines)."
        )
    meta = load_metadata(path.parent)
    papers = []
    for i, block in enumerate(blocks):
        m = meta.get((path.name, i), {})
        papers.append(
            Paper(
                paper_id=m.get("id") or f"{path.stem}#{i}",
                text=block,
                source_file=path.name,
                source_id=source_id(path),
                index=i,
                title=m.get("title"),
                decision=m.get("decision"),
                authors=m.get("authors"),
                primary_area=m.get("primary_area"),
            )
        )
    return papers


# The type each field of a .jsonl record must have (absent or null is fine for all but abstract).
FIELD_TYPES: dict[str, tuple[type, ...]] = {
    "id": (str, int),
    "title": (str,),
    "abstract": (str,),
    "decision": (str,),
    "authors": (list,),
    "primary_area": (str,),
    "url": (str,),
}
_TYPE_WORDS = {str: "a string", int: "an integer", list: "a list of strings"}


def check_record(path: Path, lineno: int, rec: dict) -> None:
    """Every known field has its type (bool is not an id); else CorpusError naming file, line, field."""
    for name, types in FIELD_TYPES.items():
        v = rec.get(name)
        if v is None:
            continue
        ok = isinstance(v, types) and not isinstance(v, bool)
        if ok and name == "authors":
            ok = all(isinstance(a, str) for a in v)
        if not ok:
            want = " or ".join(_TYPE_WORDS[t] for t in types)
            got = "a list with a non-string item" if isinstance(v, list) else type(v).__name__
            raise CorpusError(
                f"{path}:{lineno}: field '{name}' must be {want}, got {got}. Fix the record; nothing was ingested."
            )


def read_jsonl(path: Path) -> list[Paper]:
    papers = []
    for lineno, rec in iter_jsonl(path):
        check_record(path, lineno, rec)
        abstract = rec.get("abstract")
        if not isinstance(abstract, str) or not abstract.strip():
            raise CorpusError(f"{path}:{lineno}: no 'abstract' text in this record.")
        idx = len(papers)
        authors = rec.get("authors")
        papers.append(
            Paper(
                paper_id=str(rec.get("id") or f"{path.stem}#{idx}"),
                text=abstract.strip(),
                source_file=path.name,
                source_id=source_id(path),
                index=idx,
                title=rec.get("title") or None,
                decision=rec.get("decision") or None,
                authors=list(authors) if isinstance(authors, list) else None,
                primary_area=rec.get("primary_area") or None,
            )
        )
    if not papers:
        raise CorpusError(f"{path}: no records found.")
    return papers


def read_file(path: Path) -> list[Paper]:
    path = Path(path)
    if is_jsonl(path):
        return read_jsonl(path)
    return read_txt(path)


def expand_paths(paths: list[Path]) -> list[Path]:
    """Folders expand to their .txt and .jsonl files (metadata excluded), sorted. A folder's `.jsonl.gz`
    is not picked up (seeds/ bundles the conference that way); name the file to ingest it."""
    out: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            files = sorted(
                f for f in p.iterdir() if f.suffix.lower() in (".txt", ".jsonl") and f.name != METADATA_FILE
            )
            if not files:
                raise CorpusError(f"{p}: no .txt or .jsonl corpus files in this folder.")
            out.extend(files)
        else:
            out.append(p)
    return out
