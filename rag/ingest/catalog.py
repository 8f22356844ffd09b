"""What is indexed, in words ("38 seed abstracts", "11,672 ICLR 2025 submissions"), and the bundled
conference file: reading it and ingesting it."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import lru_cache

from rag.settings import CONFERENCE_FILE, SEEDS_DIR
from rag.types import Paper


@lru_cache(maxsize=1)
def conference_ids() -> frozenset[str]:
    """The OpenReview ids of the bundled conference file (read once per process, ~1 s)."""
    from rag.ingest.corpus import read_file

    return frozenset(p.paper_id for p in read_file(CONFERENCE_FILE))


@lru_cache(maxsize=1)
def conference_words() -> frozenset[str]:
    """Every word (lowercase) written in the bundled conference's titles and abstracts (read once per
    process, ~1.5 s): a word a small index lacks but the conference writes is a real word, not a typo."""
    from rag.ingest.corpus import read_file
    from rag.text import WORD

    return frozenset(
        w.lower() for p in read_file(CONFERENCE_FILE) for w in WORD.findall(f"{p.title} {p.text}")
    )


def _seed_files() -> set[str]:
    return {f.name for f in SEEDS_DIR.glob("*.txt")}


def describe_indexed(papers: Mapping[str, Paper]) -> str:
    """'11,672 ICLR 2025 submissions' when every bundled id is indexed (plus 'and N other abstracts'),
    '38 seed abstracts' when every paper came from a seed file, else 'N abstracts'."""
    n = len(papers)
    if n == 0:
        return "nothing indexed"
    if CONFERENCE_FILE.exists() and n >= 1000:  # cheap guard: the bundle is read only for big stores
        conf = conference_ids()
        if conf <= papers.keys():
            extra = n - len(conf)
            return f"{len(conf):,} ICLR 2025 submissions" + (
                f" and {extra:,} other abstracts" if extra else ""
            )
    if all(p.source_file in _seed_files() for p in papers.values()):
        return f"{n:,} seed abstract" + ("s" if n != 1 else "")
    return f"{n:,} abstract" + ("s" if n != 1 else "")


def holds_conference(index) -> bool:
    """Whether every bundled paper has a record in this index (not whether each is current)."""
    if index.paper_count() < len(conference_ids()):
        return False
    ids = sorted(conference_ids())
    return all(
        len(index.papers.get(ids=ids[i : i + 1000], include=[])["ids"]) == len(ids[i : i + 1000])
        for i in range(0, len(ids), 1000)
    )


def ingest_conference(
    index, embedder, progress: bool = True, on_progress: Callable[[int, int], None] | None = None
):
    """Index the bundled ICLR 2025 file; unchanged papers are skipped, so a re-run takes seconds.
    Callers holding a Retriever call its `refresh()` afterwards."""
    from rag.ingest.corpus import read_file

    return index.ingest(read_file(CONFERENCE_FILE), embedder, progress=progress, on_progress=on_progress)
