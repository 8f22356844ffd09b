"""Helpers shared by the `rag bench` workers (eval.bench_workers, eval.bench_serving) and the harness."""

from __future__ import annotations

import random
import resource
import socket
from collections.abc import Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


# ------------------------------------------------------------------ helpers


def peak_rss_mb() -> float:
    """Peak resident set of this process (VmHWM), in MiB."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def pct(values: Sequence[float], q: float) -> float | None:
    from eval.metrics import percentile

    return percentile(values, q)


def ratio(a, b) -> float | None:
    return round(a / b, 3) if a is not None and b else None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def load_papers(spec: dict):
    """Papers for a worker: {"corpus": "seeds"|path, "sample": N|None, "seed": int}."""
    from eval.inputs import corpus_files
    from rag.ingest.corpus import read_file

    papers = [p for f in corpus_files(spec.get("corpus")) for p in read_file(f)]
    n = spec.get("sample")
    if n and n < len(papers):
        rnd = random.Random(spec.get("seed", 0))
        papers = sorted(rnd.sample(papers, n), key=lambda p: (p.source_file, p.index))
    return papers


def settings_from(d: dict):
    """Settings from a worker's dict: a settings dump (nested), flat names overriding it (rag.settings.nest)."""
    from rag.settings import Settings, nest

    return Settings(**nest(d))
