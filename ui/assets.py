"""The web UI's CSS and JavaScript: the stylesheet and page script live in ui/static/ (inlined into the page,
so nothing loads from the network); the colour palettes, fonts and the small event snippets are here."""

from pathlib import Path

STATIC = Path(__file__).resolve().parent / "static"

SYSTEM_SANS = [
    "ui-sans-serif",
    "system-ui",
    "-apple-system",
    "Segoe UI",
    "Roboto",
    "Helvetica Neue",
    "Noto Sans",
    "Liberation Sans",
    "Arial",
    "sans-serif",
]
SYSTEM_MONO = ["ui-monospace", "SFMono-Regular", "Menlo", "Consolas", "Liberation Mono", "monospace"]

# Colours as variables: light, and dark when the browser prefers it (Gradio then sets `.dark`).
# Pairs were checked for WCAG AA contrast (text >= 4.5:1) on their backgrounds.
LIGHT = {
    "ink": "#1f2933",
    "muted": "#4f5a6b",
    "dim": "#5a6575",
    "line": "#d9dee6",
    "panel": "#f7f9fc",
    "card": "#ffffff",
    "user-bubble": "#eef1f5",
    "chip": "#3b5bdb",
    "chip-bg": "#edf2ff",
    "chip-line": "#b9c6f7",
    "chip-on": "#ffffff",
    "evidence": "#fff0a0",
    "evidence-strong": "#ffd84d",
    "warn-fg": "#8f3a00",
    "warn-bg": "#fff4e5",
    "warn-line": "#f6c76b",
    "ok-fg": "#1b6336",
    "ok-bg": "#eaf7ef",
    "ok-line": "#b7e4c7",
    "err-fg": "#8a1f17",
    "err-bg": "#fff3f2",
    "err-line": "#f0aaa2",
    "load-fg": "#6f4a00",
    "load-bg": "#fff8e6",
    "load-line": "#f0cf80",
    "focus": "#1d4ed8",
    "primary": "#4338ca",
    "primary-hover": "#3730a3",
    "caret": "#8a94a6",
}
DARK = {
    "ink": "#e6e9ef",
    "muted": "#aab3c2",
    "dim": "#a0a9b8",
    "line": "#3a4354",
    "panel": "#141924",
    "card": "#1b2130",
    "user-bubble": "#283042",
    "chip": "#a9b9ff",
    "chip-bg": "#27305a",
    "chip-line": "#46549a",
    "chip-on": "#10131c",
    "evidence": "#574700",
    "evidence-strong": "#8a7000",
    "warn-fg": "#ffc078",
    "warn-bg": "#35230c",
    "warn-line": "#6e4c1c",
    "ok-fg": "#86e0a6",
    "ok-bg": "#102a1b",
    "ok-line": "#245c3a",
    "err-fg": "#ffb4ab",
    "err-bg": "#361512",
    "err-line": "#7a2e27",
    "load-fg": "#ffd47a",
    "load-bg": "#2f230c",
    "load-line": "#6b5220",
    "focus": "#93b4ff",
    "primary": "#4f46e5",
    "primary-hover": "#4338ca",
    "caret": "#8a94a6",
}


def _vars(colors: dict[str, str]) -> str:
    return " ".join(f"--{k}: {v};" for k, v in colors.items())


_PALETTES = f":root {{ {_vars(LIGHT)} }}\n.dark {{ {_vars(DARK)} color-scheme: dark; }}\n"
CSS = _PALETTES + (STATIC / "app.css").read_text(encoding="utf-8")


def _gradio_asset(prefix: str, suffix: str) -> str | None:
    """The hashed file name of an asset Gradio ships in its frontend build (e.g. KaTeX)."""
    import gradio

    folder = Path(gradio.__file__).parent / "templates" / "frontend" / "assets"
    found = sorted(folder.glob(f"{prefix}-*{suffix}"))
    return found[0].name if found else None


# KaTeX as Gradio's own frontend serves it (./assets/…, same origin): math renders offline.
KATEX_JS = _gradio_asset("katex", ".js")
KATEX_CSS = _gradio_asset("katex", ".css")


def head_html() -> str:
    """What goes in the page's <head>: KaTeX's stylesheet (local) and the page script."""
    css = f'<link rel="stylesheet" href="./assets/{KATEX_CSS}">' if KATEX_CSS else ""
    js = JS.replace("__KATEX_JS__", f"./assets/{KATEX_JS}" if KATEX_JS else "")
    return f"{css}<script>{js}</script>"


JS = (STATIC / "app.js").read_text(encoding="utf-8")

# Copy to the clipboard and say so (visibly, and to screen readers through #copy-status).
COPY_JS = r"""
(text) => {
  var say = function (msg) {
    var s = document.querySelector('#copy-status .copy-msg');
    if (s) { s.textContent = msg; clearTimeout(window.__iclrCopyT);
             window.__iclrCopyT = setTimeout(function () { s.textContent = ''; }, 4000); }
  };
  try {
    if (text && navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(function () { say('Copied to the clipboard.'); },
        function () { say('Could not copy: select the text below and copy it.'); });
    } else { say(text ? 'Shown below: select it and copy.' : ''); }
  } catch (e) { say('Could not copy: select the text below and copy it.'); }
  return [];
}
"""

# Save a text as a file in the browser (a blob: URL, nothing leaves the machine).
_DOWNLOAD_JS = r"""
(text) => {
  var name = __NAME__;
  if (text && text.charAt(0) !== '(') {
    var a = document.createElement('a');
    a.href = URL.createObjectURL(new Blob([text], { type: 'text/plain;charset=utf-8' }));
    a.download = name; a.textContent = name; a.hidden = true;  // never an unnamed link, even for a second
    document.body.appendChild(a); a.click();
    setTimeout(function () { URL.revokeObjectURL(a.href); a.remove(); }, 1000);
    var s = document.querySelector(__STATUS__); if (s) s.textContent = 'Saved ' + name + '.';
  }
  return [];
}
"""


def download_js(filename: str, status: str = "#copy-status .copy-msg") -> str:
    """JS that saves its one input (a text) as `filename` and says so in the `status` element."""
    import json

    return _DOWNLOAD_JS.replace("__NAME__", json.dumps(filename)).replace("__STATUS__", json.dumps(status))
