"""The page's event handlers: Gradio calls the bound methods of one `Handlers` per app.

`Handlers` holds one handler object per part of the page, each given the `EngineHolder` it reads:

- `status`: `StatusHandlers` (here), the engine's state: the status banner, what is indexed, the
  area lists, the model switch;
- `chat`: `ui.chat.handlers.ChatHandlers`, the Ask tab (asking, Stop, New chat, copy, export, "See all N";
  `ask` for the API), over the engine loop in ui/chat/answer_stream.py;
- `find`: `ui.find.handlers.FindHandlers`, the Find-papers tab.

Gradio names API endpoints after these methods, so their names are the API.
"""

from __future__ import annotations

import logging

import gradio as gr

from ui.chat.handlers import ChatHandlers
from ui.chat.session import Session
from ui.engine_holder import EngineHolder
from ui.filters import ANY
from ui.find.handlers import FindHandlers
from ui.html.safe import esc
from ui.html.status import render_status

log = logging.getLogger("ui")


class Handlers:
    """One app's handlers: the engine's state (`status`), the Ask tab (`chat`) and Find papers (`find`),
    all over one `holder`; `n_examples` example questions are offered on an empty chat."""

    def __init__(self, holder: EngineHolder, n_examples: int):
        self.holder = holder
        self.status = StatusHandlers(holder, n_examples)
        self.chat = ChatHandlers(holder, n_examples)
        self.find = FindHandlers(holder)


class StatusHandlers:
    """What the page says about the engine in `holder`: loading, failed or ready, and what it searches."""

    def __init__(self, holder: EngineHolder, n_examples: int):
        self.holder = holder
        self.n_examples = n_examples

    def status_html(self, profile: str | None = None) -> str:
        """The status banner: loading, failed, or ready with `profile` (default: the engine's)."""
        holder = self.holder
        if holder.state == "loading":
            return render_status(
                "loading",
                (holder.progress or "Loading the models…") + " You can type your question meanwhile.",
                holder.index_progress,
            )
        if holder.state == "error":
            return render_status("error", holder.failure())
        return render_status("ready", f"Ready · model {profile or holder.default_profile}")

    def indexed_html(self) -> str:
        """The line under the title: what is searched ("38 seed abstracts")."""
        what = self.holder.indexed().get("what")
        if not what:
            return '<p id="indexed-line" class="indexed">Loading the index…</p>'
        return f'<p id="indexed-line" class="indexed">Searching <strong>{esc(what)}</strong>.</p>'

    def area_choices(self):
        """The primary-area dropdowns: "any" and every area of the indexed papers."""
        return gr.update(choices=[ANY, *self.holder.indexed().get("areas", [])])

    def poll_status(self, session: Session):
        """Status banner, submit button, example questions, what is indexed and the area dropdowns;
        stops polling once settled."""
        st = self.holder.state
        exs = self.holder.examples(self.n_examples) if st == "ready" else []
        show_ex = st == "ready" and bool(exs) and not session.turns
        btns = [
            gr.update(value=exs[i], visible=True) if i < len(exs) else gr.update(visible=False)
            for i in range(self.n_examples)
        ]
        return (
            self.status_html(),
            gr.update(interactive=st == "ready"),
            gr.Timer(active=st == "loading"),
            gr.update(visible=show_ex),
            *btns,
            self.indexed_html(),
            self.area_choices(),
            self.area_choices(),
        )

    def switch_model(self, profile: str):
        """Load an LLM profile on demand (cached), reporting progress in the banner."""
        holder = self.holder
        if holder.state == "ready" and not holder.profile_loaded(profile):
            yield render_status(
                "loading", f"Loading model {profile}… (first use; later questions won't wait)"
            )
            try:
                holder.for_profile(profile)
            except Exception:  # noqa: BLE001 - the current model keeps working
                log.exception("loading profile %s failed", profile)
                yield render_status(
                    "error", f"Model {profile} could not be loaded; keep using {holder.default_profile}."
                )
                return
        yield self.status_html(profile)
