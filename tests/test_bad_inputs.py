"""Issue 39: every bad input is one line on stderr, exit 2, nothing written (undecodable text, huge or
nested corpora, configuration mistakes), Ctrl-C says so, and corpus text reaches the terminal inert."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

import iclr_rag.cli as cli
from rag.types import Answer, Citation, Hit, Paper
from tests.conftest import make_settings


def _rag(args, env=None, input=None):
    r = CliRunner().invoke(cli.app, args, env=env, input=input)
    return r, r.stderr.strip()


def _one_line(r, err, msg):
    assert r.exit_code == 2, (r.exit_code, r.output)
    assert "\n" not in err and err.startswith("error: ") and msg in err, err
    assert "Traceback" not in r.output


@pytest.fixture
def no_models(monkeypatch):
    def fail(*a, **kw):
        raise AssertionError("no model may load for bad input")

    monkeypatch.setattr(cli, "_engine", fail)


@pytest.mark.parametrize("cmd", ["ask", "summarize", "list"])
def test_undecodable_question_is_one_line(tmp_path, no_models, cmd):
    # what Python makes of argv bytes that are not UTF-8 ($'\xff')
    r, err = _rag([cmd, "What does Celcomen do \udcff?", "--data-dir", str(tmp_path / "d")])
    _one_line(r, err, "not valid UTF-8")
    assert not (tmp_path / "d").exists()


@pytest.mark.parametrize("cmd", ["ask", "summarize"])  # a list topic of marks: "no word to look for"
def test_a_question_of_marks_only_is_one_line(tmp_path, no_models, cmd):
    r, err = _rag([cmd, "   ?? ", "--data-dir", str(tmp_path / "d")])
    _one_line(r, err, "has no words")
    assert not (tmp_path / "d").exists()


def test_an_undecodable_chat_line_does_not_end_the_chat(monkeypatch, tmp_path):
    from rag.retrieval.filters import Filters, filters_from_question

    seen = []

    class Stub:
        retriever = type("R", (), {"filters": Filters()})()
        question_filters = staticmethod(filters_from_question)

        def warm_up(self):
            pass

        def stream(self, question, history, **kw):
            seen.append(question)
            yield Answer(question, "It does. [1]", [], [], [])

    monkeypatch.setattr(cli, "_engine", lambda settings, index=None: Stub())
    monkeypatch.setattr(cli, "_open_index", lambda settings: None)
    r = CliRunner().invoke(
        cli.app,
        ["chat", "--data-dir", str(tmp_path)],
        input=b"What \xff does it do?\nWhat does Celcomen do?\n",
    )
    assert r.exit_code == 0, r.output
    assert seen == ["What does Celcomen do?"] and "not valid UTF-8" in r.stderr


@pytest.mark.parametrize(
    "content, msg",
    [
        (
            '{"id": "S1", "abstract": "We study \\udc00 text."}\n',
            "c.jsonl:1: field 'abstract' holds an invalid",
        ),
        ("[" * 200_000 + "\n", "c.jsonl:1: JSON nested too deeply"),
        (
            json.dumps({"id": "B", "abstract": "word " * 10_000}) + "\n",
            "the limit is 20,000 (RAG_STORAGE__MAX_ABSTRACT_CHARS)",
        ),
        ("".join(f'{{"abstract": "x{i}."}}\n' for i in range(50_001)), "more than 50,000 records"),
    ],
)
def test_bad_corpus_is_one_line_and_writes_nothing(tmp_path, no_models, content, msg):
    f = tmp_path / "c.jsonl"
    f.write_text(content)
    r, err = _rag(["ingest", str(f), "--data-dir", str(tmp_path / "d")])
    _one_line(r, err, msg)
    assert not (tmp_path / "d").exists()


def test_configuration_mistakes_are_one_line(tmp_path, no_models):
    a_file = tmp_path / "hostname"
    a_file.write_text("x")
    seeds = str(tmp_path / "s.jsonl")
    (tmp_path / "s.jsonl").write_text('{"id": "A", "abstract": "We study graphs."}\n')
    d = ["--data-dir", str(tmp_path / "d")]
    cases = [
        (
            ["ingest", seeds, "--collection", "ab", *d],
            None,
            "Bad --collection value 'ab': a collection name is 3-56",
        ),
        (
            ["ask", "What does M do?", *d],
            {"RAG_TOP_K": "abc"},
            "Bad RAG_TOP_K value 'abc': Input should be a valid",
        ),
        (
            ["ingest", seeds, *d],
            {"RAG_THREADS": "0"},
            "Bad RAG_THREADS value '0': Input should be greater than",
        ),
        (
            ["ingest", seeds, "--chunk-size", "32", "--chunk-overlap", "64", *d],
            None,
            "the chunk overlap (64) must be smaller than the chunk size (32)",
        ),
        (["ingest", seeds, "--data-dir", str(a_file)], None, f"{a_file} is a file, not a folder"),
        (["list", "graphs", "--data-dir", str(a_file / "sub")], None, f"{a_file} is a file, not a folder"),
    ]
    for args, env, msg in cases:
        r, err = _rag(args, env)
        _one_line(r, err, msg)
    assert not (tmp_path / "d").exists()


def test_ctrl_c_says_so_and_exits_130(monkeypatch, tmp_path):
    def interrupted(*a, **kw):
        raise KeyboardInterrupt

    monkeypatch.setattr("rag.ingest.corpus.expand_paths", interrupted)
    r, err = _rag(["ingest", "--data-dir", str(tmp_path)])
    assert r.exit_code == 130 and err.startswith("interrupted") and "resumes" in err


# ------------------------------------------------------------ terminal output is inert
EVIL = "\x1b]0;PWNED\x07Evil \x1b]8;;http://evil.example/\x07title\x1b]8;;\x07 \x1b[2J\x9b31m"


def _hostile() -> Paper:
    return Paper("E1", f"We study graphs. {EVIL} It is great.", "e.jsonl", 0, title=EVIL, decision=EVIL)


def _controls(text: str) -> list[str]:
    return [c for c in text if (ord(c) < 32 and c not in "\n\t") or 0x7F <= ord(c) <= 0x9F]


def test_printed_answers_carry_no_terminal_controls(capsys):
    p = _hostile()
    cite = Citation(1, p.paper_id, p.title, p.source_file, 0, f"We study graphs. {EVIL}")
    ans = Answer("q", f"It does {EVIL} things [1].", [cite], [], [Hit(p, 1.0)], refused=False)
    cli._print_answer(ans)
    ans.refused = True
    cli._print_answer(ans)
    out = capsys.readouterr().out
    assert "Evil title" in out and not _controls(out)


def test_json_output_escapes_c1_controls():
    from iclr_rag.options import json_text

    text = json_text({"title": EVIL + "é"})
    assert not _controls(text) and "é" in text and json.loads(text)["title"] == EVIL + "é"


def test_rag_list_prints_no_terminal_controls(tmp_path, monkeypatch, embedder, fake_llm):
    from rag.answer import Engine
    from rag.index.index import Index

    s = make_settings(data_dir=tmp_path / "d")
    others = [
        Paper(f"O{i}", f"We study graph neural networks on task {i}.", "o.jsonl", i, title=f"Graphs {i}")
        for i in range(3)
    ]
    p = _hostile()
    p.text = f"We study graph neural networks. {EVIL} Graph neural networks are great."
    p.title = f"Graph neural networks {EVIL}"
    Index(s.storage).ingest([p, *others], embedder, progress=False)
    monkeypatch.setattr(
        cli, "_engine", lambda st, index=None: Engine(st, index=index, embedder=embedder, llm=fake_llm)
    )
    r = CliRunner().invoke(cli.app, ["list", "graph neural networks", "--data-dir", str(s.storage.data_dir)])
    assert r.exit_code == 0, r.output
    assert "Graph neural networks" in r.stdout and not _controls(r.stdout)
