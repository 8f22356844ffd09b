"""ASGI guards in front of the Gradio app: a request-body cap and a failed-login limit per client.

Gradio's `launch(max_file_size=...)` caps /upload; `BodyCap` caps every other request body too,
and `LoginLimiter` answers 429 to a client address after `max_failures` wrong passwords within
`window_s` seconds (Gradio's auth callable is not told who is asking, so the /login route is
wrapped here).
"""

from __future__ import annotations

import json
import threading
import time
from collections import defaultdict, deque


async def _reply(send, status: int, detail: str, headers: list | None = None) -> None:
    body = json.dumps({"detail": detail}).encode()
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
