"""The inputs of an eval run: the questions (load_questions, stratified), the configs to compare
(parse_compare), the corpus files and the index built from them (corpus_files, corpus_key,
prepare_index)."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

from eval.calibrate import ENGINE_MODES
from rag.errors import UserError
from rag.ingest.corpus import iter_jsonl

CONFIGS = (*ENGINE_MODES, "baseline")


def load_questions(
    path: Path | str,
    limit: int | None = None,
    types: Sequence[str] | None = None,
    ids: Sequence[str] | None = None,
    split: str | None = None,
    scale: str | None = None,
) -> list[dict]:
    """Questions of the dev file; `split` (calibration | heldout) and `scale` (seeds | full) select
    the half and the corpus a question was written for (rows without them count as seeds)."""
    qs = []
    if not Path(path).is_file():
        raise UserError(f"{path}: question file not found (default: eval/data/questions.jsonl).")
    for lineno, q in iter_jsonl(Path(path)):
        for k in ("id", "type", "question"):
            if k not in q:
                raise UserError(f"{path}:{lineno}: question has no '{k}'")
        q.setdefault("gold", [])
        q.setdefault("answer_facts", [])
        q.setdefault("history", [])
        qs.append(q)
    if types:
        qs = [q for q in qs if q["type"] in types]
    if ids:
        qs = [q for q in qs if q["id"] in set(ids)]
    if split and split != "all":
        qs = [q for q in qs if q.get("split") == split]
    if scale:
        qs = [q for q in qs if q.get("scale", "seeds") == scale]
    if not limit or limit >= len(qs):
        return qs
    return stratified(qs, limit)


def stratified(qs: list[dict], n: int) -> list[dict]:
    """The first n questions taken round-robin across types (file order within a type), so a small
    --limit still covers every type; the result keeps the file order."""
    by_type: dict[str, list[dict]] = {}
    for q in qs:
        by_type.setdefault(q["type"], []).append(q)
    picked: set[str] = set()
    queues = [list(v) for v in by_type.values()]
    while len(picked) < n:
        for qu in queues:
            if qu and len(picked) < n:
                picked.add(qu.pop(0)["id"])
    return [q for q in qs if q["id"] in picked]


def parse_compare(compare: str | Sequence[str] | None, default_mode: str) -> list[str]:
    if not compare:
        return [default_mode]
    items = (
        compare.split(",") if isinstance(compare, str) else [x for c in compare for x in str(c).split(",")]
    )
    out = []
    for c in (x.strip().lower() for x in items):
        if not c:
            continue
        if c not in CONFIGS:
            raise UserError(f"unknown config '{c}' in --compare: use {', '.join(CONFIGS)}")
        if c not in out:
            out.append(c)
    return out or [default_mode]


def corpus_files(corpus: str | Path | None) -> list[Path]:
    from rag.ingest.corpus import expand_paths
    from rag.settings import SEEDS_DIR

    if corpus in (None, "", "seeds"):
        return expand_paths([SEEDS_DIR])
    return expand_paths([Path(corpus)])


def corpus_key(files: Sequence[Path], storage) -> str:
    """A corpus's index key: its files and the settings' storage group's chunking and collection."""
    h = hashlib.sha256()
    for f in files:
        st = f.stat()
        h.update(f"{f.resolve()}|{st.st_size}|{int(st.st_mtime)};".encode())
    h.update(f"{storage.chunk_size}|{storage.chunk_overlap}|{storage.collection}".encode())
    return h.hexdigest()[:12]


def prepare_index(settings, files: Sequence[Path], out: Path, data_dir: Path | None, progress: bool = True):
    """Ingest the corpus (incremental: unchanged abstracts are skipped) into data_dir, or into
    OUT/data-<corpus key>. Returns (settings bound to that dir, papers, ingest report)."""
    from rag.index.index import Index
    from rag.ingest.corpus import read_file
    from rag.models.embedder import get_embedder

    dd = Path(data_dir) if data_dir else out / f"data-{corpus_key(files, settings.storage)}"
    s = settings.replace(
        storage={"data_dir": dd, "chroma_url": None if not data_dir else settings.storage.chroma_url}
    )
    papers = [p for f in files for p in read_file(f)]
    rep = Index(s.storage).ingest(papers, get_embedder(s), progress=progress)
    return s, papers, rep
