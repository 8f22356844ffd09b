"""How the page is served: its look (system fonts, inline CSS/JS), login and host checks."""

from __future__ import annotations

import os
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
    """'USER:PASS' (or RAG_AUTH when `auth` is None) -> (user, pass); '' disables auth."""
    if auth is None:
        auth = os.environ.get("RAG_AUTH") or None
    if not auth:
        return None
    if isinstance(auth, tuple):
        return auth
    user, sep, password = str(auth).partition(":")
    if not sep or not user or not password:
        raise UserError("Auth must look like USER:PASS (both parts non-empty).")
    return user, password


def check_host(host: str) -> None:
    if host not in LOOPBACK:
        print(
            f"WARNING: serving on {host}: anyone who can reach this machine can use the chat. "
            "Set --auth USER:PASS (or RAG_AUTH) to require a login.",
            file=sys.stderr,
        )
