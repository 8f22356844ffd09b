"""How the page is served: its look (system fonts, inline CSS/JS), login and host checks."""

from __future__ import annotations

import os
import socket
import sys
from typing import Any

import gradio as gr

from rag.errors import UserError
from ui.assets import CSS, SYSTEM_MONO, SYSTEM_SANS, head_html

LOOPBACK = {"127.0.0.1", "localhost", "::1"}


def theme() -> gr.themes.Base:
    """Default theme with system fonts only (no Google Fonts, no font files)."""
    return gr.themes.Default(
        primary_hue="indigo",
        neutral_hue="slate",
        font=[gr.themes.Font(f) if " " in f else f for f in SYSTEM_SANS],
        font_mono=[gr.themes.Font(f) if " " in f else f for f in SYSTEM_MONO],
    )


def launch_kwargs() -> dict[str, Any]:
    """The look of the page: Gradio 6 takes theme/css/head at launch(), not in Blocks()."""
    return dict(
        theme=theme(),
        css=CSS,
        head=head_html(),
        footer_links=["api"],
        run_history=False,
        show_error=False,
        ssr_mode=False,
    )


def parse_auth(auth: str | tuple[str, str] | None) -> tuple[str, str] | None:
    """'USER:PASS' (or RAG_SERVING__AUTH, or the deprecated RAG_AUTH, when `auth` is None) -> (user, pass);
    '' disables auth."""
    if auth is None:
        auth = os.environ.get("RAG_SERVING__AUTH") or os.environ.get("RAG_AUTH") or None
    if not auth:
        return None
    if isinstance(auth, tuple):
        return auth
    user, sep, password = str(auth).partition(":")
    if not sep or not user or not password:
        raise UserError("Auth must look like USER:PASS (both parts non-empty).")
    return user, password


def read_auth_file(path) -> str:
    """USER:PASS from the first line of a file (so the password is in no command line)."""
    try:
        with open(path, encoding="utf-8") as f:
            line = f.readline().strip()
    except (OSError, UnicodeDecodeError) as e:
        raise UserError(
            f"--auth-file {path}: cannot read it ({getattr(e, 'strerror', None) or e})."
        ) from None
    parse_auth(line or ":")  # same rule as --auth
    return line


def check_port(host: str, port: int) -> None:
    """The port is a port, and free on that address (as uvicorn binds it: SO_REUSEADDR)."""
    if not 1 <= port <= 65535:
        raise UserError(f"--port {port}: a port is a number from 1 to 65535.")
    try:
        family, kind, proto, _, addr = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
        with socket.socket(family, kind, proto) as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind(addr)
    except OSError as e:
        raise UserError(
            f"Cannot serve on {host}:{port} ({e.strerror or e}): another server may be using it. "
            "Stop it, or pick another port with --port."
        ) from None


def check_host(host: str, auth=None, insecure_no_auth: bool = False) -> None:
    """A non-loopback address needs a login, unless --insecure-no-auth says otherwise on purpose."""
    if host in LOOPBACK or auth:
        return
    if not insecure_no_auth:
        raise UserError(
            f"Serving on {host} makes the chat reachable from other machines: set --auth USER:PASS "
            "(or RAG_SERVING__AUTH), or pass --insecure-no-auth to serve it without a login anyway."
        )
    print(
        f"WARNING: serving on {host} without a login (--insecure-no-auth): anyone who can reach this "
        "machine can use the chat.",
        file=sys.stderr,
    )


def guard_kwargs(serving) -> dict[str, Any]:
    """launch() arguments that bound what a client can send: upload and body caps, login limit (the
    settings' serving group)."""
    from starlette.middleware import Middleware

    from ui.serve.guard import ApiInputs, BodyCap, LoginLimiter, RouteGuard

    return dict(
        max_file_size=serving.upload_max_bytes,
        app_kwargs={
            # FastAPI's own schema pages list every route and skip the login: off (Gradio's are behind it)
            "openapi_url": None,
            "docs_url": None,
            "redoc_url": None,
            "middleware": [
                Middleware(BodyCap, max_bytes=serving.request_max_bytes),
                Middleware(
                    LoginLimiter,
                    max_failures=serving.login_max_failures,
                    window_s=serving.login_window_s,
                ),
                Middleware(RouteGuard),
                Middleware(ApiInputs),
            ],
        },
    )
