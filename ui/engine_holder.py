"""The engine behind the page: loaded once (optionally in a background thread, so the page
can come up first), then one engine per LLM profile, each loaded once."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from rag.errors import UserError
from rag.models.generator import PROFILES

if TYPE_CHECKING:  # importing the engine takes seconds (llama-index, chroma): only the loader does
    from rag.answer import Engine

log = logging.getLogger("ui")

N_EXAMPLES = 5


class EngineHolder:
    """Holds the engine: loads it once, then hands out per-profile engines via
    `engine.with_llm(name)`."""

    def __init__(
        self,
        engine: Engine | None = None,
        *,
        loader: Callable[[], Engine] | None = None,
        default_profile: str | None = None,
    ):
        if engine is None and loader is None:
            raise ValueError("EngineHolder needs an engine or a loader")
        self._engine = engine
        self._loader = loader
        self._ready = threading.Event()
        self._error: str | None = None
        self._thread: threading.Thread | None = None
        self._profiles: dict[str, Engine] = {}
        self._profile_locks: dict[str, threading.Lock] = {}
        self._lock = threading.Lock()
        self._examples: list[str] | None = None
        self._default_profile = default_profile
        self.progress: str | None = None
        self.index_progress: tuple[int, int] | None = None  # (chunks done, total) while indexing
        self._indexed: dict | None = None
        if engine is not None:
            self._on_loaded(engine)

    def _on_loaded(self, engine: Engine) -> None:
        self._engine = engine
        self._default_profile = self._default_profile or engine.llm_profile
        self._profiles[self._default_profile] = engine
        self._ready.set()

    def set_progress(self, message: str) -> None:
        """Loaders call this to say what they are doing; the page shows it."""
        self.progress = message

    def set_index_progress(self, done: int, total: int) -> None:
        """`ingest(on_progress=...)`: chunks embedded so far of `total`; the banner shows it."""
        self.index_progress = (int(done), int(total))

    def indexed(self) -> dict:
        """What the engine searches: {"what": "38 seed abstracts", "papers": {id: Paper}, "areas": [...]};
        empty until ready (read once: the page's index does not change while it serves)."""
        if self.state != "ready":
            return {}
        if self._indexed is None:
            from rag.ingest.catalog import describe_indexed
            from ui.filters import areas

            eng = self.engine
            try:
                if hasattr(eng, "retriever"):
                    papers = eng.retriever.bm25().papers
                else:  # an engine without a retriever (tests' fakes) may hold its papers
                    papers = {p.paper_id: p for p in getattr(eng, "papers", [])}
                self._indexed = {"what": describe_indexed(papers), "papers": papers, "areas": areas(papers)}
            except Exception:  # noqa: BLE001 - the page works without saying it
                log.exception("describing the index failed")
                self._indexed = {}
        return self._indexed

    def start(self) -> EngineHolder:
        """Start loading in a background thread (no-op when already loaded or loading)."""
        with self._lock:
            if self._ready.is_set() or self._thread is not None:
                return self
            self._thread = threading.Thread(target=self._load, name="engine-loader", daemon=True)
            self._thread.start()
        return self

    def _load(self) -> None:
        t0 = time.perf_counter()
        try:
            engine = self._loader()
        except UserError as e:
            self._error = str(e)
            log.error("engine failed to load: %s", e)
        except Exception as e:  # noqa: BLE001 - the page shows the first line, the log the rest
            log.exception("engine failed to load")
            first = (str(e).strip().splitlines() or [type(e).__name__])[0][:300]
            self._error = f"{type(e).__name__}: {first}"
        else:
            self._on_loaded(engine)
            log.info("engine ready in %.1f s", time.perf_counter() - t0)
        finally:
            self._ready.set()

    @property
    def state(self) -> str:
        if self._error:
            return "error"
        return "ready" if self._ready.is_set() and self._engine is not None else "loading"

    @property
    def error(self) -> str | None:
        return self._error

    def failure(self) -> str:
        """What the page says when the engine could not start."""
        return f"The engine could not start: {self._error}"

    @property
    def default_profile(self) -> str:
        return self._default_profile or PROFILES[0]

    def wait(self, timeout: float | None = None) -> bool:
        self._ready.wait(timeout)
        return self.state == "ready"

    @property
    def engine(self) -> Engine:
        if self.state != "ready":
            raise RuntimeError("engine not ready")
        return self._engine

    def profile_loaded(self, name: str | None) -> bool:
        return not name or name in self._profiles

    def for_profile(self, name: str | None) -> Engine:
        """The engine for LLM profile `name`, loading it on first use (once)."""
        base = self.engine
        if not name or name == self.default_profile:
            return base
        if name in self._profiles:
            return self._profiles[name]
        with self._lock:
            plock = self._profile_locks.setdefault(name, threading.Lock())
        with plock:
            if name not in self._profiles:
                engine = base.with_llm(name)
                engine.warm_up()  # load now, so the "Loading model" banner is true and the next question is fast
                self._profiles[name] = engine
        return self._profiles[name]

    def examples(self, n: int = N_EXAMPLES) -> list[str]:
        """Up to `n` example questions (drawn once); none until the engine is ready."""
        if self.state != "ready":
            return []
        if self._examples is None:
            try:
                qs = self.engine.example_questions(n=n)
            except Exception:  # noqa: BLE001 - examples are a nicety; the page works without
                log.exception("example_questions failed")
                qs = []
            self._examples = [q.strip() for q in qs if q.strip()][:n]
        return list(self._examples)
