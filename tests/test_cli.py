"""The `rag` command line: clear errors, exit codes, no tracebacks."""

import json
import os
import subprocess
import sys

import pytest


def rag(*args, data_dir, timeout=300):
    env = {**os.environ, "RAG_DATA_DIR": str(data_dir)}
    return subprocess.run(
        [sys.executable, "-m", "iclr_rag", *args], env=env, capture_output=True, text=True, timeout=timeout
    )


@pytest.mark.parametrize("question, msg", [("", "empty"), ("   ", "empty"), ("q" * 4001, "limit is 4,000")])
def test_bad_questions_exit_cleanly(tmp_path, question, msg):
    r = rag("ask", question, data_dir=tmp_path)
    assert r.returncode == 2
    assert msg in r.stderr and "Traceback" not in r.stderr + r.stdout


def test_question_before_ingest_says_how(tmp_path):
    r = rag("ask", "What does Celcomen do?", data_dir=tmp_path)
    assert r.returncode == 2 and "rag ingest" in r.stderr and "Traceback" not in r.stderr


def test_bad_mode(tmp_path):
    r = rag("ask", "x", "--mode", "magic", data_dir=tmp_path)
    assert r.returncode == 2 and "hybrid, dense or bm25" in r.stderr


def test_bad_file_ingests_nothing(tmp_path):
    good = tmp_path / "good.txt"
    good.write_text("header\n\nA fine abstract about graphs.\n")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "x", "abstract": "ok"}\n{"id": "y"\n')
    r = rag("ingest", str(good), str(bad), data_dir=tmp_path / "d")
    assert r.returncode == 2 and "bad.jsonl:2" in r.stderr and "Traceback" not in r.stderr
    r = rag("ingest", str(tmp_path / "missing.txt"), data_dir=tmp_path / "d")
    assert r.returncode == 2 and "missing.txt: file not found" in r.stderr
    from rag.index import Index
    from rag.settings import Settings

    assert Index(Settings(data_dir=tmp_path / "d")).count() == 0


def test_ingest_json_summary_and_idempotence(tmp_path):
    first = json.loads(rag("ingest", "--json", data_dir=tmp_path).stdout)
    assert set(first) == {"papers", "chunks", "added", "skipped", "removed", "seconds"}
    assert first["papers"] == 38 and first["added"] == first["chunks"] > 38
    second = json.loads(rag("ingest", "--json", data_dir=tmp_path).stdout)
    assert (second["added"], second["skipped"], second["chunks"]) == (0, first["chunks"], first["chunks"])


def test_help_lists_the_commands(tmp_path):
    out = rag("--help", data_dir=tmp_path).stdout
    for cmd in ("ingest", "ask", "chat", "summarize", "serve"):
        assert cmd in out
