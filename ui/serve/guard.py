"""ASGI guards in front of the Gradio app: a request-body cap, a failed-login limit per client, the routes
a login must cover, and the raw API's inputs checked.

Gradio's `launch(max_file_size=...)` caps /upload; `BodyCap` caps every other request body too,
and `LoginLimiter` answers 429 to a client address after `max_failures` wrong passwords within
`window_s` seconds (Gradio's auth callable is not told who is asking, so the /login route is
wrapped here; the address is the peer's, as uvicorn trusts no forwarding header unless told to).
`RouteGuard` turns uploads off (the page takes no files) and, with a login, requires it on every
/gradio_api route but the few the login page reads (Gradio leaves some public, e.g. /reset).
`ApiInputs` answers a raw /gradio_api/call request whose data don't fit the endpoint with a message
naming the input (Gradio's own answer is `{"error": null}`).
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections import defaultdict, deque


async def _reply(send, status: int, detail: str, headers: list | None = None, key: str = "detail") -> None:
    body = json.dumps({key: detail}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
            + (headers or []),
        }
    )
    await send({"type": "http.response.body", "body": body})


class BodyCap:
    """413 for a request whose body is (or grows) larger than `max_bytes`."""

    def __init__(self, app, max_bytes: int):
        self.app, self.max_bytes = app, max_bytes

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        too_big = f"Request too large: the limit is {self.max_bytes:,} bytes."
        length = dict(scope.get("headers") or []).get(b"content-length")
        if length is not None and length.isdigit() and int(length) > self.max_bytes:
            return await _reply(send, 413, too_big)
        seen = 0
        started = False

        async def capped_receive():
            nonlocal seen
            msg = await receive()
            if msg["type"] == "http.request":
                seen += len(msg.get("body", b""))
                if seen > self.max_bytes:
                    raise _TooLarge
            return msg

        async def tracking_send(msg):
            nonlocal started
            started = started or msg["type"] == "http.response.start"
            await send(msg)

        try:
            await self.app(scope, capped_receive, tracking_send)
        except _TooLarge:
            if not started:
                await _reply(send, 413, too_big)


class _TooLarge(Exception):
    pass


class LoginLimiter:
    """At most `max_failures` failed POST /login per client address in any `window_s` seconds."""

    def __init__(self, app, max_failures: int, window_s: float, clock=time.monotonic):
        self.app, self.max_failures, self.window_s, self.clock = app, max_failures, window_s, clock
        self.failures: dict[str, deque[float]] = defaultdict(deque)
        self._lock = threading.Lock()

    def _recent(self, client: str) -> deque[float]:
        q, now = self.failures[client], self.clock()
        while q and now - q[0] > self.window_s:
            q.popleft()
        return q

    async def __call__(self, scope, receive, send):
        path = scope.get("path", "")
        if (
            scope["type"] != "http"
            or scope.get("method") != "POST"
            or not path.rstrip("/").endswith("/login")
        ):
            return await self.app(scope, receive, send)
        client = (scope.get("client") or ("?", 0))[0]
        with self._lock:
            q = self._recent(client)
            if len(q) >= self.max_failures:
                wait = max(1, int(self.window_s - (self.clock() - q[0])) + 1)
                return await _reply(
                    send,
                    429,
                    f"Too many failed logins; try again in {wait} s.",
                    [(b"retry-after", str(wait).encode())],
                )

        async def watching_send(msg):
            if msg["type"] == "http.response.start" and msg["status"] in (400, 401, 403):
                with self._lock:
                    self._recent(client).append(self.clock())
            await send(msg)

        await self.app(scope, receive, watching_send)


async def _body(receive) -> bytes:
    chunks, more = [], True
    while more:
        msg = await receive()
        chunks.append(msg.get("body", b""))
        more = msg.get("more_body", False)
    return b"".join(chunks)


def _replay(body: bytes, receive):
    sent = False

    async def again():
        nonlocal sent
        if sent:
            return await receive()
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    return again


class RouteGuard:
    """No uploads; with a login, every /gradio_api route needs it but those the login page reads."""

    PUBLIC = {"login_check", "user", "token", "app_id", "theme.css", "startup-events"}

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] not in ("http", "websocket"):
            return await self.app(scope, receive, send)
        path = scope.get("path", "").rstrip("/")
        gradio = scope.get("app")
        refusal = None
        if path.endswith("/upload") or path.endswith("/upload_progress"):
            refusal = 403, "Uploads are off: this page takes no files."
        elif (
            path.startswith("/gradio_api/")
            and path.split("/")[2] not in self.PUBLIC
            and getattr(gradio, "auth", None)
            and not _logged_in(scope, gradio)
        ):
            refusal = 401, "Not authenticated: log in first."
        if refusal is None:
            return await self.app(scope, receive, send)
        if scope["type"] == "websocket":
            return await send({"type": "websocket.close", "code": 1008})
        await _body(receive)  # read (BodyCap bounds it) and dropped, so the client reads the answer
        await _reply(send, *refusal)


def _logged_in(scope, gradio) -> bool:
    """Gradio's own test (routes.get_current_user): a session cookie it issued at login."""
    from starlette.requests import HTTPConnection

    cookies = HTTPConnection(scope).cookies
    cid = gradio.cookie_id
    token = cookies.get(f"access-token-{cid}") or cookies.get(f"access-token-unsecure-{cid}")
    return token in gradio.tokens


class ApiInputs:
    """400 `{"error": ...}` naming the input, for a raw API call whose `data` don't fit the endpoint's
    parameters (count, and each value against the JSON schema Gradio publishes for it)."""

    ROUTE = re.compile(r"^/gradio_api/(?:call/v2|call|run|api)/([^/]+)/?$")

    def __init__(self, app):
        self.app = app
        self._params: dict[str, list] | None = None

    async def __call__(self, scope, receive, send):
        m = self.ROUTE.match(scope.get("path", "")) if scope["type"] == "http" else None
        if not m or scope.get("method") != "POST":
            return await self.app(scope, receive, send)
        body = await _body(receive)
        problem = self.problem(scope.get("app"), m.group(1), body)
        if problem:
            return await _reply(send, 400, problem, key="error")
        await self.app(scope, _replay(body, receive), send)

    def problem(self, gradio, name: str, body: bytes) -> str | None:
        import jsonschema

        if self._params is None:
            self._params = _api_params(gradio.get_blocks())
        params, states = self._params.get(name, (None, ()))
        try:
            data = json.loads(body or b"{}").get("data")
        except (ValueError, AttributeError):
            return 'The request body must be JSON: {"data": [...]}.'
        if params is None or not isinstance(data, list):
            return None  # Gradio's own answer names an unknown endpoint or a missing list
        if len(data) == len(params) + len(states):  # a client may send the session's state too
            data = [v for i, v in enumerate(data) if i not in states]
        if len(data) != len(params):
            names = ", ".join(p["parameter_name"] for p in params)
            return f"/{name} takes {len(params)} inputs in this order: {names}; got {len(data)}."
        for n, (value, p) in enumerate(zip(data, params), start=1):
            schema = {k: v for k, v in p.get("type", {}).items() if k in ("type", "enum")}
            try:
                jsonschema.validate(value, schema)
            except jsonschema.ValidationError as e:
                return f"Input {n} of /{name}, {p['parameter_name']} ({p.get('label')}): {e.message}."
        return None


def _api_params(blocks) -> dict[str, tuple[list, set[int]]]:
    """Endpoint name -> (its published parameters, positions of its State inputs, which the API skips)."""
    import gradio as gr

    endpoints = blocks.get_api_info()["named_endpoints"]
    states = {
        f.api_name: {i for i, c in enumerate(f.inputs) if isinstance(c, gr.State)}
        for f in blocks.fns.values()
        if f.api_name
    }
    return {k.strip("/"): (v["parameters"], states.get(k.strip("/"), set())) for k, v in endpoints.items()}
