"""Opening the Chroma store (embedded PersistentClient or a `chroma run` server), storage failures as one
line saying what to do (never a traceback), and one ingest per store at a time."""

from __future__ import annotations

import contextlib
import errno
import fcntl
import functools
import hashlib
import os
import sys
import tempfile
from urllib.parse import urlparse

from rag.errors import StorageError, UserError
from rag.settings import Settings

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


def _where(settings: Settings) -> str:
    return f"the Chroma server at {settings.chroma_url}" if settings.chroma_url else str(settings.data_dir)


def storage_error(exc: BaseException, settings: Settings, writing: bool = False) -> StorageError | None:
    """A known storage failure as a StorageError saying what happened and what to do; None if unknown."""
    msg = str(exc)
    low = msg.lower()
    names = {t.__name__ for t in type(exc).__mro__}
    where = _where(settings)
    again = "run `rag ingest` again (it resumes where it stopped)" if writing else "try again"
    if settings.chroma_url and names & set(_CONNECTION_ERRORS):
        return StorageError(
            f"Lost the connection to {where} ({type(exc).__name__}). Check that the server is running, "
            f"then {again}."
        )
    if (
        "readonly database" in low
        or "read-only file system" in low
        or (isinstance(exc, PermissionError) and not settings.chroma_url)
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
            f"(e.g. mv {settings.data_dir} {settings.data_dir}.damaged) and run `rag ingest` again."
        )
    return None


@contextlib.contextmanager
def storage_errors(settings: Settings, writing: bool = False):
    """Known storage failures inside the block become one StorageError line (never a traceback).
    BaseException, because a corrupt store can raise pyo3's PanicException, which isn't an Exception."""
    try:
        yield
    except (UserError, KeyboardInterrupt, SystemExit, GeneratorExit):
        raise
    except BaseException as e:
        err = storage_error(e, settings, writing)
        if err is None:
            raise
        raise err from None


def guarded(writing: bool = False):
    """Method decorator: `storage_errors` around an Index method (uses self.settings)."""

    def deco(fn):
        @functools.wraps(fn)
        def wrapper(self, *a, **kw):
            with storage_errors(self.settings, writing):
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


def store_exists(settings: Settings) -> bool:
    """Whether an embedded store was ever written here (a server store is checked by collection)."""
    return bool(settings.chroma_url) or (settings.chroma_path / "chroma.sqlite3").exists()


def not_indexed(settings: Settings) -> UserError:
    how = (
        "`rag ingest --conference` (or `make run CORPUS=iclr2025`)"
        if settings.collection == settings.conference_collection
        else "`rag ingest seeds/` (or `make run`)"
    )
    return UserError(f"Nothing is indexed yet in {_where(settings)}. Run {how} first, then ask again.")


def open_client(settings: Settings):
    import chromadb
    from chromadb.config import Settings as ChromaSettings

    chroma_settings = ChromaSettings(anonymized_telemetry=False)
    if not settings.chroma_url:
        with storage_errors(settings), _quiet_stderr():
            settings.chroma_path.mkdir(parents=True, exist_ok=True)
            return chromadb.PersistentClient(path=str(settings.chroma_path), settings=chroma_settings)
    url = urlparse(settings.chroma_url if "://" in settings.chroma_url else f"http://{settings.chroma_url}")
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
            f"Cannot reach the Chroma server at {settings.chroma_url} ({type(e).__name__}). "
            "Start it with `chroma run --path DIR --port N`, or unset --chroma-url to use the embedded store."
        ) from None
    return client


@contextlib.contextmanager
def ingest_lock(settings: Settings, say=None):
    """One ingest at a time per store: an flock on a file in the data dir (server mode: in the model
    cache, keyed by URL + collection). A second ingest waits, then skips what the first stored."""
    if settings.chroma_url:
        key = hashlib.sha256(f"{settings.chroma_url}|{settings.collection}".encode()).hexdigest()[:16]
        path = settings.model_cache / "locks" / f"ingest-{key}.lock"
    else:
        path = settings.data_dir / f"ingest-{settings.collection}.lock"
    with storage_errors(settings, writing=True):
        path.parent.mkdir(parents=True, exist_ok=True)
        f = open(path, "a+")  # noqa: SIM115 - held for the block
    with f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            (say or (lambda m: print(m, file=sys.stderr, flush=True)))(
                f"waiting for another ingest into {_where(settings)} to finish…"
            )
            fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)
