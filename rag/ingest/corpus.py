"""Corpus files -> Paper records.

Three formats:
- seed `.txt`: a header line, then abstracts separated by one or more blank lines (CRLF ok);
  ids and titles come from a `metadata.jsonl` beside the file, when present.
- `.jsonl` (or gzipped `.jsonl.gz`, e.g. the bundled seeds/iclr2025.jsonl.gz): one object per line with `id`, `title`, `abstract` and optional `decision`,
  `authors`, `primary_area`.
- `.csv` with a header row naming the same fields (`abstract` required; `authors` split on ";", else ",").
A bad file raises CorpusError naming the file (and line) before anything is returned. `read_corpus` also
holds one ingest to `Limits` (bytes read, records, abstract length), so a huge input is refused up front.
"""

from __future__ import annotations

import csv
import gzip
import hashlib
import io
import json
import re
import zlib
from pathlib import Path

from rag.errors import CorpusError
from rag.text import SURROGATE
from rag.types import Paper

METADATA_FILE = "metadata.jsonl"
_BLANK_LINES = re.compile(r"\n[ \t]*\n+")


class Limits:
    """What one ingest may read, counted down across its files: bytes of corpus text (a gzipped file
    counts decompressed), records, and characters of one abstract. None = no limit."""

    def __init__(self, max_bytes: int | None = None, max_records: int | None = None, max_chars=None):
        self.bytes_left, self.records_left, self.max_chars = max_bytes, max_records, max_chars
        self.max_bytes, self.max_records = max_bytes, max_records

    @classmethod
    def of(cls, storage) -> Limits:
        """The limits of the settings' storage group."""
        return cls(
            storage.max_ingest_bytes,
            storage.max_ingest_records,
            storage.max_abstract_chars,
        )

    def take_bytes(self, path: Path, n: int) -> None:
        if self.bytes_left is not None:
            if n > self.bytes_left:
                raise CorpusError(
                    f"{path}: the corpus files of this ingest hold more than {self.max_bytes:,} bytes, the limit "
                    "for one ingest (RAG_STORAGE__MAX_INGEST_BYTES). Split the corpus and ingest the parts one by one, "
                    "or raise the limit."
                )
            self.bytes_left -= n

    def take_record(self, path: Path) -> None:
        if self.records_left is not None:
            if self.records_left <= 0:
                raise CorpusError(
                    f"{path}: this ingest holds more than {self.max_records:,} records, the limit for one ingest "
                    "(RAG_STORAGE__MAX_INGEST_RECORDS). Split the corpus and ingest the parts one by one, or raise the limit."
                )
            self.records_left -= 1

    def check_length(self, path: Path, where: object, text: str) -> None:
        if self.max_chars is not None and len(text) > self.max_chars:
            raise CorpusError(
                f"{path}:{where}: the abstract is {len(text):,} characters long; the limit is {self.max_chars:,} "
                "(RAG_STORAGE__MAX_ABSTRACT_CHARS). Is it really one abstract? Nothing was ingested."
            )


def source_id(path: Path) -> str:
    """A file's stable identity: its resolved path, hashed (the name alone is shared across folders)."""
    return hashlib.sha256(str(Path(path).resolve()).encode()).hexdigest()[:16]


def _read_text(path: Path, limits: Limits | None = None) -> str:
    if not path.exists():
        raise CorpusError(f"{path}: file not found. Check the path and try again.")
    if not path.is_file():
        raise CorpusError(f"{path}: not a regular file.")
    limits = limits or Limits()
    gz = path.name.lower().endswith(".gz")
    if not gz:
        limits.take_bytes(path, path.stat().st_size)  # before reading it
    data = path.read_bytes()
    if gz:
        data = _gunzip(path, data, limits.bytes_left)
        limits.take_bytes(path, len(data))
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


def _gunzip(path: Path, data: bytes, max_bytes: int | None = None) -> bytes:
    """Decompressed, at most max_bytes + 1 of it (a gzip bomb stops at the limit)."""
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(data)) as f:
            return f.read(-1 if max_bytes is None else max_bytes + 1)
    except (OSError, EOFError, zlib.error) as e:
        raise CorpusError(
            f"{path}: not a readable gzip file ({e}). Re-download or re-compress it with gzip."
        ) from None


def generated_id(path: Path, index: int, text: str) -> str:
    """An id for a record that has none: the file's stem and place plus a hash of the abstract, so files of
    one name in two folders never share ids, while a moved file keeps its papers' ids (and vectors)."""
    return f"{path.stem}#{index}-{hashlib.sha256(text.encode()).hexdigest()[:8]}"


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


def iter_jsonl(path: Path, limits: Limits | None = None):
    """(line number, object) for each non-blank line; a bad line raises CorpusError naming it."""
    for lineno, line in enumerate(_read_text(path, limits).split("\n"), start=1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as e:
            raise CorpusError(f"{path}:{lineno}: not valid JSON ({e.msg}).") from None
        except RecursionError:
            raise CorpusError(
                f"{path}:{lineno}: JSON nested too deeply; a record is one flat object."
            ) from None
        if not isinstance(rec, dict):
            raise CorpusError(f"{path}:{lineno}: expected a JSON object, got {type(rec).__name__}.")
        yield lineno, rec


def read_txt(path: Path, limits: Limits | None = None) -> list[Paper]:
    limits = limits or Limits()
    text = _read_text(path, limits)
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
        limits.take_record(path)
        limits.check_length(path, f"abstract {i + 1}", block)
        m = meta.get((path.name, i), {})
        papers.append(
            Paper(
                paper_id=str(m["id"]) if m.get("id") is not None else generated_id(path, i, block),
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
    """Every known field has its type (bool is not an id), an id is not blank, and no text holds a lone
    surrogate; else CorpusError naming file, line, field."""
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
        if name == "id" and isinstance(v, str) and not v.strip():
            raise CorpusError(
                f"{path}:{lineno}: field 'id' is empty. Give the record an id, or leave the field out to have "
                "one generated; nothing was ingested."
            )
    for name, v in rec.items():
        texts = v if isinstance(v, list) else [v]
        if any(isinstance(t, str) and SURROGATE.search(t) for t in texts):
            raise CorpusError(
                f"{path}:{lineno}: field '{name}' holds an invalid character (a lone surrogate such as "
                "\\udc00, which no UTF-8 text can hold). Fix the record; nothing was ingested."
            )


def _paper(path: Path, lineno: int, rec: dict, idx: int, limits: Limits) -> Paper:
    """One checked record (JSONL or CSV row) -> Paper; `lineno` names it in errors."""
    limits.take_record(path)
    check_record(path, lineno, rec)
    abstract = rec.get("abstract")
    if not isinstance(abstract, str) or not abstract.strip():
        raise CorpusError(f"{path}:{lineno}: no 'abstract' text in this record.")
    text = abstract.strip()
    limits.check_length(path, lineno, text)
    authors = rec.get("authors")
    return Paper(
        paper_id=str(rec["id"]) if rec.get("id") is not None else generated_id(path, idx, text),
        text=text,
        source_file=path.name,
        source_id=source_id(path),
        index=idx,
        title=rec.get("title") or None,
        decision=rec.get("decision") or None,
        authors=list(authors) if isinstance(authors, list) else None,
        primary_area=rec.get("primary_area") or None,
    )


def read_jsonl(path: Path, limits: Limits | None = None) -> list[Paper]:
    limits = limits or Limits()
    papers = []
    for lineno, rec in iter_jsonl(path, limits):
        papers.append(_paper(path, lineno, rec, len(papers), limits))
    if not papers:
        raise CorpusError(f"{path}: no records found.")
    return papers


def read_csv(path: Path, limits: Limits | None = None) -> list[Paper]:
    """A CSV with a header row (`abstract` and any of id, title, decision, authors, primary_area, url)."""
    limits = limits or Limits()
    reader = csv.DictReader(io.StringIO(_read_text(path, limits), newline=""), strict=True)
    try:
        header = {(h or "").strip().lower() for h in reader.fieldnames or []}
        if "abstract" not in header:
            raise CorpusError(
                f"{path}: no 'abstract' column. A CSV corpus needs a header row naming its columns: "
                "id, title, abstract (required), decision, authors, primary_area."
            )
        papers = []
        for row in reader:
            rec = {
                (k or "").strip().lower(): (v.strip() or None) if isinstance(v, str) else v
                for k, v in row.items()
            }
            if isinstance(rec.get("authors"), str):
                sep = ";" if ";" in rec["authors"] else ","
                rec["authors"] = [a.strip() for a in rec["authors"].split(sep) if a.strip()]
            papers.append(_paper(path, reader.line_num, rec, len(papers), limits))
    except csv.Error as e:
        raise CorpusError(f"{path}:{reader.line_num}: not valid CSV ({e}).") from None
    if not papers:
        raise CorpusError(f"{path}: no records found.")
    return papers


def read_file(path: Path, limits: Limits | None = None) -> list[Paper]:
    path = Path(path)
    name = path.name.lower()
    if is_jsonl(path):
        return read_jsonl(path, limits)
    if name.endswith(".csv"):
        return read_csv(path, limits)
    if path.suffix and not name.endswith(".txt"):
        raise CorpusError(
            f"{path}: unsupported file type '{path.suffix}'. Give seed .txt files, .jsonl (or .jsonl.gz) or "
            ".csv with a header row."
        )
    return read_txt(path, limits)


def read_corpus(paths: list[Path], limits: Limits | None = None) -> list[Paper]:
    """Every paper of these files and folders, one ingest's worth: `limits` hold for all of them together."""
    limits = limits or Limits()
    return [p for f in expand_paths(paths) for p in read_file(f, limits)]


def expand_paths(paths: list[Path]) -> list[Path]:
    """Folders expand to their .txt, .jsonl and .csv files (metadata excluded), sorted. A folder's `.jsonl.gz`
    is not picked up (seeds/ bundles the conference that way); name the file to ingest it."""
    out: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            files = sorted(
                f
                for f in p.iterdir()
                if f.suffix.lower() in (".txt", ".jsonl", ".csv") and f.name != METADATA_FILE
            )
            if not files:
                raise CorpusError(f"{p}: no .txt, .jsonl or .csv corpus files in this folder.")
            out.extend(files)
        else:
            out.append(p)
    return out
