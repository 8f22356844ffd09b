"""Issue 39, serving: the failed-login limit counts the real peer (forwarding headers only from a configured
proxy), uploads are off, a login covers every data route, the raw API names a bad input, the password can
stay out of the command line, and a bad or busy port is one line."""

from __future__ import annotations

import http.cookiejar
import json
import os
import socket
import urllib.error
import urllib.request

import pytest

from tests.conftest import make_settings
from tests.ui_support import FakeEngine, free_port

FORM = "application/x-www-form-urlencoded"


def _request(url, data: bytes | None = None, headers: dict | None = None, opener=None, method=None):
    """(status, body) of one request."""
    req = urllib.request.Request(url, data=data, headers=headers or {}, method=method)
    try:
        with (opener or urllib.request.build_opener()).open(req, timeout=30) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


@pytest.fixture
def serve():
    """start(build_app(FakeEngine), ...) on a free port; closed afterwards."""
    from ui.app import build_app, start

    demos = []

    def go(**kw):
        demo = build_app(FakeEngine(token_delay=0))
        demos.append(demo)
        return start(demo, port=free_port(), quiet=True, **kw)

    yield go
    for d in demos:
        d.close()


def _wrong_login(url, forwarded: str) -> int:
    return _request(
        url + "login", b"username=ann&password=wrong", {"Content-Type": FORM, "X-Forwarded-For": forwarded}
    )[0]


def test_rotating_x_forwarded_for_does_not_escape_the_login_limit(serve):
    url = serve(auth="ann:pw", settings=make_settings(login_max_failures=5))
    codes = [_wrong_login(url, f"10.0.0.{i}") for i in range(10)]
    assert codes[:5] == [400] * 5 and set(codes[5:]) == {429}


def test_forwarded_for_counts_behind_a_configured_proxy(serve):
    url = serve(auth="ann:pw", settings=make_settings(login_max_failures=5, forwarded_allow_ips="127.0.0.1"))
    assert {_wrong_login(url, "10.0.0.1") for _ in range(6)} == {400, 429}
    assert _wrong_login(url, "10.0.0.2") == 400  # another client behind the proxy: its own count


def test_uploads_are_off(serve):
    from gradio.utils import get_upload_folder

    url = serve()
    boundary = "xyzBOUNDARY"
    body = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="files"; filename="a.bin"\r\n'
        f"Content-Type: application/octet-stream\r\n\r\n".encode()
        + b"x" * 100_000
        + f"\r\n--{boundary}--\r\n".encode()
    )
    folder = get_upload_folder()
    before = sum(len(files) for _, _, files in os.walk(folder)) if os.path.isdir(folder) else 0
    ctype = {"Content-Type": f"multipart/form-data; boundary={boundary}"}
    codes = {_request(url + "gradio_api/upload", body, ctype)[0] for _ in range(30)}
    assert codes == {403}
    after = sum(len(files) for _, _, files in os.walk(folder)) if os.path.isdir(folder) else 0
    assert after == before


def test_with_a_login_no_data_route_is_public(serve):
    url = serve(auth="ann:pw")
    assert _request(url + "openapi.json")[0] == 404
    assert _request(url + "docs")[0] == 404
    reset = json.dumps({"event_id": "x"}).encode()
    assert _request(url + "gradio_api/reset", reset, {"Content-Type": "application/json"})[0] == 401
    jar = http.cookiejar.CookieJar()
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    assert _request(url + "login", b"username=ann&password=pw", {"Content-Type": FORM}, opener)[0] == 200
    assert _request(url + "gradio_api/reset", reset, {"Content-Type": "application/json"}, opener)[0] == 200
    assert _request(url + "config", opener=opener)[0] == 200
    assert _request(url + "gradio_api/login_check")[0] == 401  # what the login page asks stays reachable


def _call(url, data):
    return _request(
        url + "gradio_api/call/ask", json.dumps({"data": data}).encode(), {"Content-Type": "application/json"}
    )


def test_raw_api_names_the_bad_input(serve):
    url = serve()
    status, body = _call(url, ["What does Celcomen do?"])
    assert (
        status == 400
        and "/ask takes 5 inputs in this order: question, task, top_k, mode, profile; got 1" in body
    )
    status, body = _call(url, ["What does Celcomen do?", "Answer", "abc", "hybrid", "qwen0.5b"])
    assert status == 400 and "Input 3 of /ask, top_k" in body and "'abc' is not of type 'number'" in body
    for good in (
        ["What does Celcomen do?", "Answer", 5, "hybrid", "qwen0.5b"],
        ["What does Celcomen do?", "Answer", 5, "hybrid", "qwen0.5b", None],  # with the session's state
    ):
        status, body = _call(url, good)
        assert status == 200 and json.loads(body)["event_id"]


def _serve_cli(monkeypatch, *args, env=None):
    """`rag serve ARGS` up to the point it would serve: returns (result, the settings it would serve)."""
    from typer.testing import CliRunner

    import iclr_rag.cli as cli
    import ui.app

    got = {}
    monkeypatch.setattr(ui.app, "serve", lambda s, **kw: got.setdefault("settings", s))
    monkeypatch.setattr(cli, "_open_index", lambda s: None)
    r = CliRunner().invoke(cli.app, ["serve", "--no-ingest-seeds", *args], env=env)
    return r, got.get("settings")


def test_the_password_can_come_from_a_file_or_the_environment(monkeypatch, tmp_path):
    f = tmp_path / "login"
    f.write_text("ann:s3cret\n")
    r, s = _serve_cli(monkeypatch, "--auth-file", str(f))
    assert r.exit_code == 0, r.output
    assert s.serving.auth == "ann:s3cret" and "s3cret" not in r.output
    r, s = _serve_cli(monkeypatch, env={"RAG_SERVING__AUTH": "ann:env"})
    assert r.exit_code == 0 and s.serving.auth == "ann:env"
    f.write_text("no colon\n")
    r, _ = _serve_cli(monkeypatch, "--auth-file", str(f))
    assert r.exit_code == 2 and "USER:PASS" in r.stderr
    r, _ = _serve_cli(monkeypatch, "--auth", "ann:pw")
    assert (
        r.exit_code == 0 and "RAG_SERVING__AUTH or --auth-file" in r.stderr
    )  # --auth still works, with a warning


def test_a_bad_or_busy_port_is_one_line(monkeypatch):
    r, _ = _serve_cli(monkeypatch, "--port", "70000")
    assert r.exit_code == 2 and r.stderr.strip().count("\n") == 0 and "1 to 65535" in r.stderr
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        r, s = _serve_cli(monkeypatch, "--port", str(port))
    assert r.exit_code == 2 and s is None
    assert r.stderr.strip().count("\n") == 0 and f"Cannot serve on 127.0.0.1:{port}" in r.stderr
