"""The `rag` command line: clear errors, exit codes, no tracebacks."""

import json
import os
import subprocess
import sys

import pytest

from tests.conftest import make_settings
from tests.conftest import run_rag as rag


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
    from rag.index.index import Index

    assert Index(make_settings(data_dir=tmp_path / "d").storage).count() == 0


def test_ingest_json_summary_and_idempotence(tmp_path):
    first = json.loads(rag("ingest", "--json", data_dir=tmp_path).stdout)
    assert set(first) == {"papers", "chunks", "added", "bundled", "skipped", "removed", "seconds"}
    assert first["papers"] == 38 and first["added"] == first["chunks"] > 38
    assert first["bundled"] == first["added"]  # the seeds are conference papers: their vectors are shipped
    second = json.loads(rag("ingest", "--json", data_dir=tmp_path).stdout)
    assert (second["added"], second["skipped"], second["chunks"]) == (0, first["chunks"], first["chunks"])


def test_help_lists_the_commands(tmp_path):
    out = rag("--help", data_dir=tmp_path).stdout
    for cmd in ("ingest", "ask", "chat", "summarize", "serve"):
        assert cmd in out


# ------------------------------------------------------------ issue 14: fast, one-line failures
def test_invalid_input_is_rejected_before_any_model_loads(tmp_path, monkeypatch):
    """Defect 8d: each of these fails with exit 2 without building the engine."""
    from typer.testing import CliRunner

    import iclr_rag.cli as cli

    def no_models(*a, **kw):
        raise AssertionError("models must not load for invalid input")

    monkeypatch.setattr(cli, "_engine", no_models)
    monkeypatch.setattr("rag.models.embedder.get_embedder", no_models)
    monkeypatch.setenv("RAG_STORAGE__DATA_DIR", str(tmp_path / "d"))
    runner = CliRunner()
    cases = [
        (["ask", ""], "empty"),
        (["ask", "\x1b[31m"], "empty"),
        (["ask", "q" * 4001], "limit is 4,000"),
        (["ask", "x", "--mode", "magic"], "hybrid, dense or bm25"),
        (["ask", "x", "--top-k", "0"], "top-k"),
        (["ask", "What does Celcomen do?"], "Nothing is indexed yet"),
        (["summarize", ""], "empty"),
        (["ingest", str(tmp_path / "missing.txt")], "file not found"),
        (["serve", "--host", "0.0.0.0"], "--insecure-no-auth"),
        (["serve", "--no-ingest-seeds"], "Nothing is indexed yet"),
    ]
    for args, msg in cases:
        r = runner.invoke(cli.app, args)
        out = r.stdout + (r.stderr or "")
        assert r.exit_code == 2 and msg in out, (args, out)
    assert not (tmp_path / "d" / "chroma").exists()  # defect 4: reading created nothing


def test_damaged_index_is_one_line(tmp_path):
    """Defect 3: a corrupted chroma.sqlite3 -> exit 2, one line naming the folder and what to do."""
    (tmp_path / "chroma").mkdir()
    (tmp_path / "chroma" / "chroma.sqlite3").write_bytes(os.urandom(8192))
    r = rag("ask", "What does Celcomen do?", data_dir=tmp_path)
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "is damaged" in lines[0] and str(tmp_path) in lines[0], r.stderr


def test_bad_field_type_ingests_nothing(tmp_path):
    """Defect 2: a non-scalar title -> exit 2, file:line, and the file's valid records aren't ingested."""
    f = tmp_path / "c.jsonl"
    f.write_text(
        '{"id":"G1","title":"ok","abstract":"We propose B. It works."}\n'
        '{"id":"X1","title":{"en":"t"},"abstract":"We propose A. It works."}\n'
    )
    r = rag("ingest", str(f), data_dir=tmp_path / "d")
    assert r.returncode == 2 and "c.jsonl:2: field 'title'" in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / "d" / "chroma").exists()


def _readonly_rag(data, *args):
    """`rag` with `data` mounted read-only (root ignores file modes; a private mount namespace does not)."""
    cmd = " ".join(f"'{a}'" for a in [sys.executable, "-m", "iclr_rag", *args])
    script = f"mount --bind '{data}' '{data}' && mount -o remount,bind,ro '{data}' && exec {cmd}"
    env = {**os.environ, "RAG_STORAGE__DATA_DIR": str(data)}
    return subprocess.run(
        ["unshare", "-m", "sh", "-c", script], env=env, capture_output=True, text=True, timeout=300
    )


def test_read_only_data_dir_says_so_in_one_line(tmp_path, fake_embedder, tiny_papers):
    from rag.index.index import Index

    Index(make_settings(data_dir=tmp_path).storage).ingest(tiny_papers, fake_embedder, progress=False)
    probe = subprocess.run(["unshare", "-m", "true"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip("no mount namespaces here")
    r = _readonly_rag(tmp_path, "ask", "What does M1 do?")
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1 and "is read-only" in lines[0], r.stderr


def test_conference_flag_reads_its_own_collection_and_says_how_to_fill_it(tmp_path):
    from rag.settings import SEEDS_DIR

    assert rag("ingest", str(SEEDS_DIR), data_dir=tmp_path).returncode == 0
    r = rag("ask", "--conference", "What does Celcomen do?", data_dir=tmp_path)
    assert r.returncode == 2 and "rag ingest --conference" in r.stderr and "Traceback" not in r.stderr


def test_bundle_vectors_writes_what_ingest_reuses_and_says_when_nothing_is_stored(tmp_path):
    from rag.ingest.vector_bundle import VectorBundle

    out = tmp_path / "v.npz"
    r = rag("bundle-vectors", "--out", str(out), data_dir=tmp_path / "empty")
    assert r.returncode == 2 and "ingest" in r.stderr and "Traceback" not in r.stderr + r.stdout
    assert not out.exists()
    rag("ingest", "--collection", "mine", data_dir=tmp_path / "d")
    r = rag("bundle-vectors", "--collection", "mine", "--out", str(out), data_dir=tmp_path / "d")
    assert r.returncode == 0 and "38 papers, 83 chunk vectors" in r.stdout
    assert len(VectorBundle.load(out)) == 38


def test_a_follow_up_says_which_earlier_question_it_was_read_with(capsys):
    from iclr_rag.cli import _run
    from rag.types import Answer

    class Stub:
        def stream(self, question, history, **kw):
            yield Answer(
                question,
                "It does. [1]",
                [],
                [],
                [],
                standalone_question=f"{question} (What is X?)",
                leaned_on="What is X?",
            )

    _run(Stub(), "Does it scale?", [{"role": "user", "content": "What is X?"}], False)
    assert "(read as a follow-up to: What is X?)" in capsys.readouterr().err


def test_the_terminal_reads_latex_marks_as_words_and_says_how_many_sources_it_lists(capsys):
    from iclr_rag.cli import _print_answer, _retrieved
    from rag.types import Answer, Caveat, Citation, Hit, Paper, Retrieved

    p = Paper("id1", "x", "f.txt", 0, title=r"\textsc{DySpec}")
    ans = Answer(
        "q",
        r"It reaches **4.43$\times$** with \texttt{Llama3-8B}, 58.1\% [1]",
        [Citation(1, "id1", p.title, "f.txt", 0, "q")],
        [],
        [Hit(p, 1.0)],
        caveats=[Caveat("not_stated", r"The abstract of “\textsc{DySpec}” does not say it.")],
    )
    _print_answer(ans)
    out = capsys.readouterr().out
    assert r"It reaches 4.43$\times$ with Llama3-8B, 58.1% [1]" in out
    assert "“DySpec”" in out and "[1] DySpec." in out and "textsc" not in out
    _retrieved(Retrieved("q", "q", "explain", [Hit(p, 1.0)] * 12))
    assert "Retrieved 12 papers, the first 8:" in capsys.readouterr().err


def test_a_refusal_prints_the_question_a_typo_meant(capsys):
    from iclr_rag.cli import _print_answer
    from rag.types import Answer

    ans = Answer("q", "The indexed abstracts don't answer this question.", [], [], [], refused=True)
    _print_answer(ans)
    assert "Did you mean" not in capsys.readouterr().out
    ans.suggested_question = "What does Celcomen do?"
    _print_answer(ans)
    assert "Did you mean: What does Celcomen do?" in capsys.readouterr().out


def test_an_unsupported_sentence_is_marked_where_it_stands(capsys):
    from iclr_rag.cli import _print_answer
    from rag.types import Answer, Sentence

    sents = [Sentence("It does X.", [1], True, 0.9), Sentence("It also cures Y.", [], False, 0.2)]
    _print_answer(Answer("q", "It does X. [1] It also cures Y.", [], sents, []))
    out = capsys.readouterr().out
    assert "It does X. [1] It also cures Y. (not found in the sources)" in out
    assert out.count("not found in the sources") == 1
    # the terminal shows the answer as written: "<" is no tag there, and lines stay lines
    lines = "3 papers match:\nA: it holds when n < 100 and fails when n > 1000 [1]\nB: uses <eos> tokens [2]"
    _print_answer(Answer("q", lines, [], [], []))
    assert lines in capsys.readouterr().out


def test_ask_json_reports_the_filter_the_question_applied(capsys):
    from iclr_rag.cli import _run
    from rag.retrieval.filters import Filters
    from rag.types import Answer, Retrieved

    class Stub:
        retriever = type("R", (), {"filters": Filters()})()

        def stream(self, question, history, **kw):
            yield Retrieved(question, question, "list", [], Filters("oral"))  # as the engine read it
            yield Answer(question, "It does. [1]", [], [], [])

    _run(Stub(), "Which oral papers are about X?", None, True, indexed="3 papers")
    assert json.loads(capsys.readouterr().out)["filters"]["decision"] == "oral"


def test_chat_says_the_filter_each_question_applied_not_once_for_all(monkeypatch, tmp_path):
    # "Which spotlight papers …" filters that question only (the engine reads it, as on the page); the chat
    # passes each question as typed and says which filter the engine applied
    from typer.testing import CliRunner

    import iclr_rag.cli as cli
    from rag.retrieval.filters import Filters, filters_from_question
    from rag.types import Answer, Retrieved

    seen = []

    class Stub:
        retriever = type("R", (), {"filters": Filters()})()

        def warm_up(self):
            pass

        def stream(self, question, history, **kw):
            seen.append((question, kw.get("filters")))
            yield Retrieved(question, question, "list", [], filters_from_question(question)[0])
            yield Answer(question, "It does. [1]", [], [], [])

    monkeypatch.setattr(cli, "_engine", lambda settings, index=None: Stub())
    monkeypatch.setattr(cli, "_open_index", lambda settings: None)
    turns = "Which spotlight papers are about speculative decoding?\nWhat speedups do they report?\n"
    r = CliRunner().invoke(cli.app, ["chat", "--data-dir", str(tmp_path)], input=turns)
    assert r.exit_code == 0, r.output
    assert seen == [
        ("Which spotlight papers are about speculative decoding?", None),
        ("What speedups do they report?", None),
    ]
    assert r.output.count("(filter from the question: ") == 1
