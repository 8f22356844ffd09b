"""The web UI through its HTTP API (gradio_client), on a free loopback port.

Covers: the `/ask` API (streaming, JSON answer, follow-ups), per-session history, New chat,
errors in plain words, the loading state, model profiles, auth, host warning, and eight
simultaneous sessions.
"""

from __future__ import annotations

import os
import re
import threading
import time
import urllib.error
import urllib.request

import pytest

from tests.ui_support import FakeEngine, SlowLoader, free_port, running_app

gradio_client = pytest.importorskip("gradio_client")
from gradio_client import Client  # noqa: E402

from tests.conftest import make_settings  # noqa: E402

ASK = "/ask"


def ask(client, question, task="Answer", top_k=5, mode="hybrid", profile="qwen0.5b"):
    """Returns (chat_html, sources_html, answer_json, n_updates)."""
    job = client.submit(question, task, top_k, mode, profile, api_name=ASK)
    chat, sources, data = job.result(timeout=120)
    return chat, sources, data, len(job.outputs())


def visible_text(html: str) -> str:
    return re.sub(r"<[^>]+>", "", html)


@pytest.fixture(scope="module")
def engine():
    return FakeEngine(token_delay=0.005)


@pytest.fixture(scope="module")
def app_url(engine):
    with running_app(engine) as (url, _demo):
        yield url


@pytest.fixture
def client(app_url):
    return Client(app_url, verbose=False)


# --------------------------------------------------------------------------- module level


def test_analytics_off_and_no_remote_fonts():
    from ui import app

    assert os.environ["GRADIO_ANALYTICS_ENABLED"] == "False"
    kw = app.launch_kwargs()
    theme = kw["theme"]
    assert not theme._stylesheets, theme._stylesheets  # no Google Fonts stylesheet
    assert "googleapis" not in theme._get_theme_css()
    for key in ("css", "head"):
        assert "http://" not in kw[key] and "https://" not in kw[key]
    assert kw["run_history"] is False


def test_parse_auth(monkeypatch):
    from rag.errors import UserError
    from ui.app import parse_auth

    monkeypatch.delenv("RAG_AUTH", raising=False)
    monkeypatch.delenv("RAG_SERVING__AUTH", raising=False)
    assert parse_auth(None) is None
    assert parse_auth("ann:s3cr:et") == ("ann", "s3cr:et")
    monkeypatch.setenv("RAG_AUTH", "bob:pw")  # the deprecated flat name, for one release
    assert parse_auth(None) == ("bob", "pw")
    monkeypatch.setenv("RAG_SERVING__AUTH", "eve:pw")
    assert parse_auth(None) == ("eve", "pw")
    assert parse_auth("") is None
    for bad in ("nopass", ":pw", "user:"):
        with pytest.raises(UserError):
            parse_auth(bad)


def test_non_loopback_host_needs_auth_or_insecure_flag(capsys):
    from rag.errors import UserError
    from ui.app import check_host

    check_host("127.0.0.1")
    check_host("0.0.0.0", ("ann", "pw"))
    assert capsys.readouterr().err == ""
    with pytest.raises(UserError, match="--auth USER:PASS.*--insecure-no-auth"):
        check_host("0.0.0.0")
    check_host("0.0.0.0", None, insecure_no_auth=True)
    assert "WARNING" in capsys.readouterr().err


# --------------------------------------------------------------------------- API


def test_api_lists_named_endpoints(client):
    names = set(client.view_api(print_info=False, return_format="dict")["named_endpoints"])
    assert {"/ask", "/new_chat", "/copy_answer"} <= names


def test_ask_streams_then_returns_verified_answer(client):
    chat, sources, data, n_updates = ask(client, "What does Celcomen do?")
    assert n_updates >= 3  # streamed: several partial updates before the final one
    assert data["question"] == "What does Celcomen do?"
    assert data["citations"][0]["paper_id"] == "Tqdsruwyac"
    assert "[1]" in data["answer"]
    assert "References" in data["markdown"] and "openreview.net/forum?id=Tqdsruwyac" in data["markdown"]
    assert 'class="cite-chip"' in chat and 'data-n="1"' in chat
    assert 'id="src-0-1"' in sources and '<mark class="evidence">' in sources
    assert "Celcomen" in visible_text(sources)


def test_follow_up_gets_session_history_and_new_chat_clears_it(client, engine):
    ask(client, "What does Celcomen do?")
    chat, _, data, _ = ask(client, "How was it validated?")
    last = engine.calls[-1]
    assert last.question == "How was it validated?"
    assert [m["role"] for m in last.history] == ["user", "assistant"]
    assert last.history[0]["content"] == "What does Celcomen do?"
    assert "[1]" in last.history[1]["content"]  # the verified answer text, not HTML
    assert "<" not in last.history[1]["content"]
    assert data["citations"]  # the follow-up is answered from the same paper
    assert chat.count('class="turn"') == 2

    client.predict(api_name="/new_chat")
    chat, _, _, _ = ask(client, "What is ProtPainter used for?")
    assert engine.calls[-1].history == []
    assert chat.count('class="turn"') == 1


def test_copy_answer_gives_markdown_with_references(client):
    ask(client, "What does Celcomen do?")
    md = client.predict(api_name="/copy_answer")
    md = md["value"] if isinstance(md, dict) else md
    assert md.startswith("**Q:** What does Celcomen do?")
    assert re.search(
        r"^\[1\] .+\. ICLR 2025 \(Accept \(Poster\)\)\. <https://openreview\.net/forum\?id=Tqdsruwyac>$",
        md,
        re.M,
    )


def test_settings_reach_the_engine(client, engine):
    ask(client, "retrieval-augmented adaptation", task="Summarize", top_k=3, mode="bm25", profile="smollm2")
    c = engine.calls[-1]
    assert (c.task, c.top_k, c.mode, c.llm) == ("summarize", 3, "bm25", "smollm2")
    ask(client, "What does Celcomen do?", top_k=7, mode="dense")
    c = engine.calls[-1]
    assert (c.task, c.top_k, c.mode, c.llm) == ("answer", 7, "dense", "qwen0.5b")


def test_refusal_is_plain(client):
    chat, sources, data, _ = ask(client, "zzyzx qwerty plugh")
    assert data["refused"] is True
    assert "don&#x27;t answer this question" in chat
    assert "Related papers" in sources


# --------------------------------------------------------------------------- errors


def test_empty_question_is_ignored(client, engine):
    before = len(engine.calls)
    chat, _, data, _ = ask(client, "   ")
    assert data is None
    assert len(engine.calls) == before
    assert 'class="turn"' not in chat


def test_over_long_question_is_explained_and_app_keeps_serving(client):
    chat, _, data, _ = ask(client, "x" * 4001)
    assert data is None
    text = visible_text(chat)
    assert "4,001 characters" in text and "limit is 4,000" in text
    assert "Traceback" not in chat and "UserError" not in chat
    assert chat.count("x" * 1200) == 1 and "x" * 1300 not in chat  # the bubble is shortened
    _, _, data, _ = ask(client, "What does Celcomen do?")
    assert data["citations"]


def test_model_failure_is_friendly_and_app_keeps_serving(client):
    chat, _, data, _ = ask(client, "please explode now")
    assert data is None
    assert "the model failed while answering" in chat
    assert "Traceback" not in chat and "RuntimeError" not in chat and "lunch" not in chat
    _, _, data, _ = ask(client, "What does Celcomen do?")
    assert data["citations"]


# --------------------------------------------------------------------------- loading


def test_question_during_loading_waits_then_answers():
    from ui.app import EngineHolder

    eng = FakeEngine(token_delay=0)
    loader = SlowLoader(eng, delay=0.2, gated=True)
    holder = EngineHolder(loader=loader).start()
    with running_app(holder) as (url, _):
        assert holder.state == "loading"
        job = Client(url, verbose=False).submit(
            "What does Celcomen do?", "Answer", 5, "hybrid", "qwen0.5b", api_name=ASK
        )
        deadline = time.time() + 60
        while not any(o and "Waiting for the models to load" in o[0] for o in job.outputs()):
            assert time.time() < deadline, "no 'waiting' update while loading"
            time.sleep(0.1)
        assert holder.state == "loading"
        loader.release()
        chat, _, data = job.result(timeout=60)
        assert data["citations"]
        assert any("Waiting for the models to load" in o[0] for o in job.outputs() if o and o[0])
    assert len(eng.calls) == 1  # loaded once


def test_engine_load_failure_is_reported():
    from ui.app import EngineHolder

    holder = EngineHolder(loader=SlowLoader(None, delay=0.1, fail=True)).start()
    with running_app(holder) as (url, _):
        holder.wait(10)
        assert holder.state == "error"
        chat, _, data, _ = ask(Client(url, verbose=False), "What does Celcomen do?")
        assert data is None
        assert "could not start" in chat and "weights file is corrupt" in chat
        assert "Traceback" not in chat


def test_other_profile_loads_once():
    eng = FakeEngine(token_delay=0, profile_load_delay=0.5)
    with running_app(eng) as (url, _):
        c = Client(url, verbose=False)
        t0 = time.perf_counter()
        ask(c, "What does Celcomen do?", profile="smollm2")
        first = time.perf_counter() - t0
        ask(c, "What is ProtPainter used for?", profile="smollm2")
        ask(Client(url, verbose=False), "What is RA-TTA?", profile="smollm2")  # another session
    assert first >= 0.5  # the first question waited for the load
    assert eng.profile_loads == {"smollm2": 1}
    assert [x.llm for x in eng.calls] == ["smollm2"] * 3


def test_serve_is_up_before_the_engine_has_loaded(monkeypatch, tmp_path):
    """`rag serve` path: the page answers at once; the engine loads once, in the background."""
    from ui import app

    eng = FakeEngine(token_delay=0)
    loads = []
    gate = threading.Event()

    def fake_load(settings, *, ingest_seeds=False, report=None, **_):
        loads.append(ingest_seeds)
        report("Indexing the seed abstracts (first start only)…")
        gate.wait(60)
        return eng

    monkeypatch.setattr(app, "load_engine", fake_load)
    demo = app.serve(
        make_settings(data_dir=tmp_path, top_k=4, mode="bm25"), port=free_port(), auth="", block=False
    )
    try:
        holder = demo._iclr_holder
        assert holder.state == "loading"
        with urllib.request.urlopen(demo.local_url, timeout=10) as r:
            assert r.status == 200
        deadline = time.time() + 30
        while not holder.progress and time.time() < deadline:
            time.sleep(0.05)
        assert "Indexing the seed abstracts" in holder.progress
        assert holder.state == "loading"
        gate.set()
        c = Client(demo.local_url, verbose=False)
        _, _, data, _ = ask(c, "What does Celcomen do?", top_k=4, mode="bm25")
        assert data["citations"]
        ask(c, "How was it validated?", top_k=4, mode="bm25")
        assert loads == [True]  # loaded once, seeds ingested on demand
        assert [x.top_k for x in eng.calls] == [4, 4]
    finally:
        demo.close()


# --------------------------------------------------------------------------- auth


def test_auth_requires_login():
    eng = FakeEngine(token_delay=0)
    from ui.app import build_app, start

    demo = build_app(eng)
    port = free_port()
    url = start(demo, port=port, auth="ann:pw", quiet=True)
    try:
        with pytest.raises(urllib.error.HTTPError) as e:
            urllib.request.urlopen(url + "config", timeout=10)
        assert e.value.code in (401, 403)
        with pytest.raises(Exception):  # noqa: B017 - gradio_client raises its own auth error types
            Client(url, verbose=False)
        c = Client(url, auth=("ann", "pw"), verbose=False)
        _, _, data, _ = ask(c, "What does Celcomen do?")
        assert data["citations"]
    finally:
        demo.close()


def test_cancelled_answer_ends_as_stopped():
    """Defect 7: a cancelled API answer doesn't stay a pending bubble in that session."""
    with running_app(FakeEngine(token_delay=0.2)) as (url, _demo):
        c = Client(url, verbose=False)
        job = c.submit("What does Celcomen do?", "Answer", 5, "hybrid", "qwen0.5b", api_name=ASK)
        deadline = time.time() + 30
        while len(job.outputs()) < 2 and time.time() < deadline:
            time.sleep(0.05)
        job.cancel()
        time.sleep(1.0)
        chat, _sources, data = c.predict(
            "How was it validated?", "Answer", 5, "hybrid", "qwen0.5b", api_name=ASK
        )
        assert data and data["answer"]
        assert "pending" not in chat and "typing" not in chat
        assert "Stopped" in visible_text(chat)


def _post(url, data: bytes, content_type: str, timeout=10) -> int:
    req = urllib.request.Request(url, data=data, headers={"Content-Type": content_type}, method="POST")
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code


def test_failed_logins_are_limited_per_client():
    """30 wrong passwords in a row: only the first few are checked, then 429 (issue 14, defect 6)."""
    from ui.app import build_app, start

    demo = build_app(FakeEngine(token_delay=0))
    url = start(
        demo, port=free_port(), auth="ann:pw", quiet=True, settings=make_settings(login_max_failures=5)
    )
    try:
        form = "application/x-www-form-urlencoded"
        codes = [_post(url + "login", b"username=ann&password=wrong", form) for _ in range(30)]
        assert codes[:5] == [400] * 5 and set(codes[5:]) == {429}
        assert _post(url + "login", b"username=ann&password=pw", form) == 429  # locked out for the window
    finally:
        demo.close()


def test_large_uploads_and_bodies_are_refused():
    from ui.app import build_app, start

    demo = build_app(FakeEngine(token_delay=0))
    url = start(
        demo,
        port=free_port(),
        quiet=True,
        settings=make_settings(upload_max_bytes=10_000, request_max_bytes=50_000),
    )
    try:
        boundary = "xyzBOUNDARY"

        def multipart(n):
            return (
                f'--{boundary}\r\nContent-Disposition: form-data; name="files"; filename="a.bin"\r\n'
                f"Content-Type: application/octet-stream\r\n\r\n".encode()
                + b"x" * n
                + f"\r\n--{boundary}--\r\n".encode()
            )

        ctype = f"multipart/form-data; boundary={boundary}"
        assert _post(url + "gradio_api/upload", multipart(1000), ctype) == 403  # uploads are off (issue 39)
        assert _post(url + "gradio_api/upload", multipart(200_000), ctype) == 413  # body cap
        assert _post(url + "gradio_api/queue/join", b"{" + b" " * 100_000 + b"}", "application/json") == 413
    finally:
        demo.close()


# --------------------------------------------------------------------------- concurrency

QUESTIONS = [
    ("What does Celcomen do?", "How was it validated?"),
    ("Can foundation models forecast chaotic systems zero-shot?", "Which systems were tested?"),
    ("How does REGENT adapt to new environments?", "How large is its policy?"),
    ("How do language models solve grade-school math problems?", "What did the probing reveal?"),
    ("What is ProtPainter used for?", "How is the topology used?"),
    ("What is RA-TTA?", "Which benchmarks were used?"),
    ("Local steps and random reshuffling in federated optimization?", "Which condition is analysed?"),
    ("Real-time design of architectural structures?", "How fast is it?"),
]


def test_eight_simultaneous_sessions_keep_their_own_history():
    eng = FakeEngine(token_delay=0.01)
    results: dict[int, dict] = {}
    errors: list[BaseException] = []
    with running_app(eng) as (url, _):
        barrier = threading.Barrier(len(QUESTIONS))

        def session(i: int):
            try:
                c = Client(url, verbose=False)
                first, follow = QUESTIONS[i]
                barrier.wait()
                _, _, d1, _ = ask(c, first)
                chat, _, d2, _ = ask(c, follow)
                results[i] = {"d1": d1, "d2": d2, "chat": chat}
            except BaseException as e:  # noqa: BLE001
                errors.append(e)

        threads = [threading.Thread(target=session, args=(i,)) for i in range(len(QUESTIONS))]
        for t in threads:
            t.start()
        for t in threads:
            t.join(180)
    assert not errors, errors
    assert len(results) == len(QUESTIONS)
    for i, (first, follow) in enumerate(QUESTIONS):
        r = results[i]
        assert r["d1"]["question"] == first and r["d1"]["answer"]
        assert r["d2"]["question"] == follow and r["d2"]["answer"]
        chat = visible_text(r["chat"])
        assert first in chat and follow in chat
        for j, (other_first, other_follow) in enumerate(QUESTIONS):
            if j != i:
                assert other_first not in chat and other_follow not in chat
    # the engine saw each follow-up with exactly its own session's first turn
    by_q = {c.question: c for c in eng.calls}
    for first, follow in QUESTIONS:
        assert by_q[first].history == []
        h = by_q[follow].history
        assert [m["content"] for m in h if m["role"] == "user"] == [first]
    assert eng.max_active == 1  # generation is serialized on the one CPU model
