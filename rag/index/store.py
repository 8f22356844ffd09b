"""Opening the Chroma store (embedded PersistentClient or a `chroma run` server), storage failures as one
line saying what to do (never a traceback), and one ingest per store at a time."""

from __future__ import annotations

import contextlib
import errno
import fcntl
import functools
import hashlib
import os
import re
import signal
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path
from urllib.parse import urlparse

from rag.errors import StorageError, UserError
from rag.settings import StorageSettings

_CONNECTION_ERRORS = (
    "ConnectError",
    "ConnectTimeout",
    "ReadError",
    "ReadTimeout",
    "WriteError",
    "RemoteProtocolError",
    "ConnectionError",
    "ConnectionRefusedError",
    "ConnectionResetError",
)


def _where(storage: StorageSettings) -> str:
    return f"the Chroma server at {storage.chroma_url}" if storage.chroma_url else str(storage.data_dir)


# What Chroma says when a collection's vector (HNSW) segment is unreadable: truncated by a full disk, bytes
# overwritten, its folder deleted. The records (sqlite) are intact, so `Index.rebuild` can redo it.
VECTOR_DAMAGE = (
    "hnsw",
    "error finding id",
    "error getting embedding",
    "pickle",
    "segment reader",
)


def gist(msg: str, n: int = 90) -> str:
    """A long nested error message's end (Chroma nests causes as "a: b: c"; the last says the most)."""
    msg = " ".join(msg.split())
    msg = re.sub(r"^[\w.]+(?:Error|Exception): ", "", msg)
    if len(msg) <= n:
        return msg
    tail = msg[-n:]
    return "…" + (tail.split(": ", 1)[1] if ": " in tail else tail)


def storage_error(exc: BaseException, storage: StorageSettings, writing: bool = False) -> StorageError | None:
    """A known storage failure as a StorageError saying what happened and what to do; None if unknown."""
    msg = str(exc)
    low = msg.lower()
    names = {t.__name__ for t in type(exc).__mro__}
    where = _where(storage)
    again = "run `rag ingest` again (it resumes where it stopped)" if writing else "try again"
    if storage.chroma_url and names & set(_CONNECTION_ERRORS):
        return StorageError(
            f"Lost the connection to {where} ({type(exc).__name__}). Check that the server is running, "
            f"then {again}."
        )
    if (
        "readonly database" in low
        or "read-only file system" in low
        or (isinstance(exc, PermissionError) and not storage.chroma_url)
    ):
        return StorageError(
            f"{where} is read-only ({msg.strip().splitlines()[0][:80]}). The embedded index needs write access "
            "even to answer questions: make the folder writable, or copy it and pass --data-dir COPY."
        )
    if (
        "error in compaction" in low
        or "disk is full" in low
        or "no space left" in low
        or (isinstance(exc, OSError) and exc.errno == errno.ENOSPC)
    ):
        return StorageError(
            f"{where}: the disk is full (writing the index failed). Free some space, then run `rag ingest` "
            "again; it resumes where it stopped."
        )
    if any(d in low for d in VECTOR_DAMAGE):
        return StorageError(
            f"The vector index of collection '{storage.collection}' in {where} is damaged ({gist(msg)}). Run "
            "`rag ingest --repair`: it rebuilds the index from the stored abstracts."
        )
    damaged = (
        "file is not a database",
        "malformed",
        "database corrupt",
        "no such table",
        "file is encrypted",
    )
    if any(d in low for d in damaged) or "PanicException" in names:
        first = msg.strip().splitlines()[0][:100] if msg.strip() else type(exc).__name__
        return StorageError(
            f"The index in {where} is damaged ({first}). Move the folder aside "
            f"(e.g. mv {storage.data_dir} {storage.data_dir}.damaged) and run `rag ingest` again."
        )
    return None


@contextlib.contextmanager
def storage_errors(storage: StorageSettings, writing: bool = False):
    """Known storage failures inside the block become one StorageError line (never a traceback).
    BaseException, because a corrupt store can raise pyo3's PanicException, which isn't an Exception."""
    try:
        yield
    except (UserError, KeyboardInterrupt, SystemExit, GeneratorExit):
        raise
    except BaseException as e:
        err = storage_error(e, storage, writing)
        if err is None:
            raise
        raise err from None


def guarded(writing: bool = False):
    """Method decorator: `storage_errors` around an Index method (uses self.storage)."""

    def deco(fn):
        @functools.wraps(fn)
        def wrapper(self, *a, **kw):
            with storage_errors(self.storage, writing):
                return fn(self, *a, **kw)

        return wrapper

    return deco


@contextlib.contextmanager
def _quiet_stderr():
    """Hold back what native code writes to fd 2 (a Rust panic prints its own backtrace there) and
    replay it only if the block succeeds: a damaged store then reads as our one line, nothing else."""
    try:
        fd = sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):  # captured stderr (pytest, notebooks)
        yield
        return
    sys.stderr.flush()
    saved = os.dup(fd)
    with tempfile.TemporaryFile() as tmp:
        os.dup2(tmp.fileno(), fd)
        ok = False
        try:
            yield
            ok = True
        finally:
            os.dup2(saved, fd)
            os.close(saved)
            if ok:
                tmp.seek(0)
                held = tmp.read()
                if held:
                    os.write(fd, held)


def store_exists(storage: StorageSettings) -> bool:
    """Whether an embedded store was ever written here (a server store is checked by collection)."""
    return bool(storage.chroma_url) or (storage.chroma_path / "chroma.sqlite3").exists()


def not_indexed(storage: StorageSettings, others: dict[str, int] | None = None) -> UserError:
    """ "Nothing is indexed yet", saying how to fill it and which other collection of the store holds papers."""
    how = (
        "`rag ingest --conference` (or `make run CORPUS=iclr2025`)"
        if storage.collection == storage.conference_collection
        else "`rag ingest seeds/` (or `make run`)"
    )
    if not others:
        return UserError(f"Nothing is indexed yet in {_where(storage)}. Run {how} first, then ask again.")
    name, n = max(others.items(), key=lambda x: x[1])
    flag = "--conference" if name == storage.conference_collection else f"--collection {name}"
    return UserError(
        f"Nothing is indexed yet in collection '{storage.collection}' of {_where(storage)}, but collection "
        f"'{name}' holds {n:,} paper{'s' * (n != 1)}: add {flag} to read it, or fill this one with {how.split(' (')[0]}."
    )


def open_client(storage: StorageSettings):
    import chromadb
    from chromadb.config import Settings as ChromaSettings

    chroma_settings = ChromaSettings(anonymized_telemetry=False)
    if not storage.chroma_url:
        with storage_errors(storage), _quiet_stderr():
            storage.chroma_path.mkdir(parents=True, exist_ok=True)
            return chromadb.PersistentClient(path=str(storage.chroma_path), settings=chroma_settings)
    url = urlparse(storage.chroma_url if "://" in storage.chroma_url else f"http://{storage.chroma_url}")
    try:
        client = chromadb.HttpClient(
            host=url.hostname or "127.0.0.1",
            port=url.port or (443 if url.scheme == "https" else 8000),
            ssl=url.scheme == "https",
            settings=chroma_settings,
        )
        client.heartbeat()
    except Exception as e:
        raise UserError(
            f"Cannot reach the Chroma server at {storage.chroma_url} ({type(e).__name__}). "
            "Start it with `chroma run --path DIR --port N`, or unset --chroma-url to use the embedded store."
        ) from None
    return client


def vector_segments(storage: StorageSettings, names: tuple[str, ...]) -> list[Path]:
    """The folders of these collections' vector segments in an embedded store (Chroma keeps a segment's
    HNSW files in a folder named by its id; the ids are in its sqlite catalog, read read-only)."""
    db_path = storage.chroma_path / "chroma.sqlite3"
    if storage.chroma_url or not db_path.exists():
        return []
    with contextlib.closing(sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)) as db:
        rows = db.execute(
            "SELECT s.id FROM segments s JOIN collections c ON s.collection = c.id "
            f"WHERE s.scope = 'VECTOR' AND c.name IN ({','.join('?' * len(names))})",
            names,
        ).fetchall()
    return [storage.chroma_path / str(r[0]) for r in rows]


# Reads every stored vector of the named collections and runs one query: exits non-zero (or is killed: a
# damaged HNSW file can crash the reader) when a collection's vector index is unreadable.
_CHECK = """
import sys, chromadb
from chromadb.config import Settings
c = chromadb.PersistentClient(path=sys.argv[1], settings=Settings(anonymized_telemetry=False))
names = {x.name for x in c.list_collections()}
for name in sys.argv[2:]:
    if name not in names:
        continue
    col, n = c.get_collection(name, embedding_function=None), None
    n = col.count()
    for off in range(0, n, 5000):
        got = col.get(include=["embeddings"], limit=5000, offset=off)
        if got["ids"] and (got["embeddings"] is None or len(got["embeddings"]) != len(got["ids"])):
            sys.exit("error getting embedding: vectors missing")
        if off == 0 and got["ids"]:
            col.query(query_embeddings=[got["embeddings"][0]], n_results=min(n, 10), include=[])
"""


def vector_damage(storage: StorageSettings, names: tuple[str, ...]) -> str | None:
    """Why an embedded store's vector index is unreadable (a short reason), or None. Checked in a child
    process: reading a truncated HNSW file can crash the reader, which must not take this process along."""
    if storage.chroma_url or not store_exists(storage):
        return None
    r = subprocess.run(
        [sys.executable, "-c", _CHECK, str(storage.chroma_path), *names],
        capture_output=True,
        text=True,
        errors="replace",
        env={**os.environ, "ANONYMIZED_TELEMETRY": "False"},
    )
    if r.returncode < 0:
        return f"reading it crashed ({signal.Signals(-r.returncode).name})"
    lines = [x.strip() for x in r.stderr.splitlines() if x.strip()]
    why = lines[-1] if lines else ""
    # other failures (read-only, disk full, sqlite damage) are left to the ingest, which names them
    return gist(why) if r.returncode and any(d in why.lower() for d in VECTOR_DAMAGE) else None


@contextlib.contextmanager
def ingest_lock(storage: StorageSettings, say=None, identity: str | None = None):
    """One ingest at a time per store: an flock on a file in the data dir (server mode: in the model
    cache, keyed by `identity`, the server's own id of the collection, so every spelling of its URL shares
    the lock). A second ingest waits, then skips what the first stored."""
    if storage.chroma_url:
        key = hashlib.sha256((identity or f"{storage.chroma_url}|{storage.collection}").encode()).hexdigest()
        path = storage.model_cache / "locks" / f"ingest-{key[:16]}.lock"
    else:
        path = storage.data_dir / f"ingest-{storage.collection}.lock"
    with storage_errors(storage, writing=True):
        path.parent.mkdir(parents=True, exist_ok=True)
        f = open(path, "a+")  # noqa: SIM115 - held for the block
    with f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            (say or (lambda m: print(m, file=sys.stderr, flush=True)))(
                f"waiting for another ingest into {_where(storage)} to finish…"
            )
            fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)
