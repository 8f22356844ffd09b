"""Shared fixtures: a tiny corpus, the seed index, a fake LLM, a real `chroma run` server, eval papers."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rag.models.generator import GenStats
from rag.settings import SEEDS_DIR, Settings, nest
from rag.types import Paper

REPO = Path(__file__).resolve().parent.parent
CELCOMEN = ("000_e01d3feec203c69d.txt", 1)

# Two tiny hand-written papers for judge and question tests.
CEL = Paper(
    "P1",
    "Models of virtual tissues would allow in-silico tests. We introduce Celcomen, a generative graph "
    "neural network for spatial transcriptomics. We validate it on human glioblastoma and fetal spleen data, "
    "reaching 93% accuracy.",
    "a.txt",
    0,
    title="Celcomen",
)
RL = Paper(
    "P2",
    "We study offline reinforcement learning. Our agent, MR.Q, uses model-based representations and "
    "matches strong baselines on 118 continuous-control tasks.",
    "a.txt",
    1,
    title="MR.Q",
)

# A described paper and its near neighbour (ranked first, lacking half the description).
NEAR = Paper(
    "N1", "We predict counterfactual outcomes over time from patient histories.", "n.txt", 0, title="Outcomes"
)
DESCRIBED = Paper(
    "N2",
    "A selective state-space model predicts counterfactual outcomes under treatment sequences over time, "
    "decorrelating the current treatment from the history.",
    "n.txt",
    1,
    title="State spaces for treatments",
)
DESCRIPTION = "Predicting outcomes under treatment sequences over time with a selective state-space model"


def P(pid, f="x.jsonl", i=None):
    """A paper as eval rows hold one (retrieved or cited), for the eval metric and score tests."""
    return {"paper_id": pid, "source_file": f, "index": i}


class FakeLLM:
    """Scripted generator: `reply(messages) -> str`, streamed word by word."""

    name = "fake"

    def __init__(self, reply=None):
        self.reply = reply or (lambda messages: "I found it in the sources [1].")
        self.calls: list[list[dict]] = []
        self.stats = GenStats()

    def stream(self, messages, max_new_tokens=None):
        self.calls.append(messages)
        text = self.reply(messages)
        words = text.split(" ")
        for i, w in enumerate(words):
            yield w + (" " if i < len(words) - 1 else "")
        self.stats = GenStats(prompt_tokens=10, new_tokens=len(words), first_token_s=0.001, total_s=0.002)

    def generate(self, messages, max_new_tokens=None):
        return "".join(self.stream(messages, max_new_tokens))


def source_text(messages, n: int | None = None) -> str:
    """The evidence sentences of paper [n] in an answer prompt, joined (the first paper shown when n
    is None): for fakes that copy from their sources."""
    user = messages[-1]["content"].split("Evidence:\n", 1)[1].split("\n\nQuestion:", 1)[0]
    blocks = {}
    for block in user.split("\n\n"):
        head, *lines = block.split("\n")
        num = int(head[1 : head.index("]")])
        blocks[num] = " ".join(x[2:] for x in lines if x.startswith("- "))
    return blocks[n if n is not None else min(blocks)]


class FakeEmbedder:
    """Deterministic unit vectors from a text hash (no model load); counts what it embeds."""

    name = "fake-embedder"
    max_seq_length = 128

    def __init__(self, delay_s: float = 0.0):
        self.calls, self.delay_s = 0, delay_s

    def encode(self, texts, progress=False, bulk=False):
        import hashlib

        import numpy as np

        time.sleep(self.delay_s)
        self.calls += len(texts)
        rows = [np.frombuffer(hashlib.sha256(t.encode()).digest(), dtype=np.uint8)[:16] for t in texts]
        v = np.asarray(rows, dtype=np.float32) + 1.0
        return v / np.linalg.norm(v, axis=1, keepdims=True)


@pytest.fixture
def fake_embedder():
    return FakeEmbedder()


@pytest.fixture
def slow_embedder():
    """A FakeEmbedder taking 0.3 s per batch (for races between ingests)."""
    return FakeEmbedder(delay_s=0.3)


@pytest.fixture
def tiny_papers():
    """Four one-chunk papers from one file."""
    from rag.types import Paper

    return [
        Paper(
            paper_id=f"T{i}",
            text=f"We propose method M{i} for graph learning. It works well on benchmark {i}.",
            source_file="tiny.jsonl",
            source_id="tiny",
            index=i,
            title=f"Tiny paper {i}",
        )
        for i in range(4)
    ]


@pytest.fixture
def fake_llm():
    return FakeLLM()


@pytest.fixture(scope="session")
def embedder():
    from rag.models.embedder import get_embedder

    return get_embedder(Settings())


def make_settings(data_dir: Path | None = None, **kw) -> Settings:
    """Settings named by their flat names (`make_settings(d, top_k=3)`), built nested (rag.settings.nest)
    without the deprecation warning: a test is not a user."""
    return Settings(**nest(({"data_dir": data_dir} if data_dir is not None else {}) | kw))


def changed(s: Settings, **kw) -> Settings:
    """A copy of `s` with the flat-named settings changed (`s.replace` by group)."""
    return s.replace(**nest(kw))


@pytest.fixture(scope="session")
def judge(embedder):
    """The support judge over the real embedder (read-only, shared)."""
    from rag.grounding.cite import Judge

    return Judge(embedder)


@pytest.fixture
def settings(tmp_path) -> Settings:
    return make_settings(tmp_path / "data")


@pytest.fixture(scope="session")
def seed_papers():
    from rag.ingest.corpus import expand_paths, read_file

    return [p for f in expand_paths([SEEDS_DIR]) for p in read_file(f)]


@pytest.fixture(scope="session")
def seed_data_dir(tmp_path_factory, embedder, seed_papers) -> Path:
    """A data dir with the 38 seeds ingested once per session (tests must not write to it)."""
    from rag.index.index import Index

    d = tmp_path_factory.mktemp("seed-data")
    Index(make_settings(d).storage).ingest(seed_papers, embedder, progress=False)
    return d


@pytest.fixture
def seed_engine(seed_data_dir, embedder, fake_llm):
    from rag.answer import Engine

    return Engine(make_settings(seed_data_dir), embedder=embedder, llm=fake_llm)


def run_rag(*args, data_dir, timeout=300):
    """`python -m iclr_rag ARGS` with RAG_STORAGE__DATA_DIR=data_dir; returns the CompletedProcess."""
    env = {**os.environ, "RAG_STORAGE__DATA_DIR": str(data_dir)}
    return subprocess.run(
        [sys.executable, "-m", "iclr_rag", *args], env=env, capture_output=True, text=True, timeout=timeout
    )


@pytest.fixture
def rag_cli():
    return run_rag


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def chroma_server(tmp_path):
    """A real `chroma run` server on a free loopback port, stopped afterwards."""
    exe = shutil.which("chroma", path=str(Path(sys.executable).parent)) or shutil.which("chroma")
    assert exe, "the chroma CLI comes with chromadb; is the venv installed?"
    port = free_port()
    proc = subprocess.Popen(
        [exe, "run", "--path", str(tmp_path / "server"), "--host", "127.0.0.1", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "ANONYMIZED_TELEMETRY": "False"},
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + 60
    import urllib.request

    while True:
        try:
            urllib.request.urlopen(f"{url}/api/v2/heartbeat", timeout=1)
            break
        except Exception:
            if time.time() > deadline or proc.poll() is not None:
                proc.kill()
                pytest.fail("chroma server did not start")
            time.sleep(0.3)
    yield url
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()


# ---------------------------------------------------------------- the bundled conference file
SAMPLE_PER_DECISION = {
    "Accept (Oral)": 50,
    "Accept (Spotlight)": 50,
    "Accept (Poster)": 60,
    "Reject": 60,
    "Withdrawn": 50,
    "Desk Rejected": 30,
}


@pytest.fixture(scope="session")
def conference_papers():
    from rag.ingest.corpus import read_file
    from rag.settings import CONFERENCE_FILE

    return read_file(CONFERENCE_FILE)


@pytest.fixture(scope="session")
def sample_papers(conference_papers):
    """300 real abstracts, chosen deterministically: evenly spaced within each decision (ids sorted)."""
    out = []
    for decision, n in SAMPLE_PER_DECISION.items():
        group = sorted(
            (p for p in conference_papers if p.decision == decision and len(p.text) >= 100),
            key=lambda p: p.paper_id,
        )
        step = max(1, len(group) // n)
        out += group[::step][:n]
    return out


@pytest.fixture(scope="session")
def sample_data_dir(tmp_path_factory, embedder, sample_papers) -> Path:
    """A data dir with the 300 sampled conference papers ingested once per session (read-only)."""
    from rag.index.index import Index

    d = tmp_path_factory.mktemp("sample-data")
    Index(make_settings(d).storage).ingest(sample_papers, embedder, progress=False)
    return d


@pytest.fixture
def sample_settings(sample_data_dir):
    return make_settings(sample_data_dir)


@pytest.fixture
def sample_retriever(sample_settings, embedder):
    from rag.index.index import Index
    from rag.retrieval.retrieve import Retriever

    s = sample_settings
    return Retriever(Index(s.storage), embedder, s.retrieval, s.generation.context_papers)
