"""Inline CSS and JavaScript for the web UI. Nothing here loads from the network."""

from pathlib import Path

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


CSS = (
    f":root {{ {_vars(LIGHT)} }}\n.dark {{ {_vars(DARK)} color-scheme: dark; }}\n"
    + r"""
.gradio-container { max-width: 1480px !important; margin: 0 auto !important; }
footer { display: none !important; }
.sr-only-live { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }

/* header */
#app-header { padding: 4px 2px 0 2px; }
#app-header h1 { font-size: 1.35rem; font-weight: 650; margin: 0; color: var(--ink); letter-spacing: -0.01em; }
#app-header p { margin: 2px 0 0 0; color: var(--muted); font-size: 0.92rem; }
.status-banner { display: inline-flex; align-items: center; gap: 8px; font-size: 0.86rem;
                 padding: 5px 12px; border-radius: 999px; border: 1px solid var(--line); background: var(--card); color: var(--muted); }
.status-banner.loading { background: var(--load-bg); border-color: var(--load-line); color: var(--load-fg); }
.status-banner.ready { background: var(--ok-bg); border-color: var(--ok-line); color: var(--ok-fg); }
.status-banner.error { background: var(--err-bg); border-color: var(--err-line); color: var(--err-fg); }
.spinner { width: 12px; height: 12px; border-radius: 50%; border: 2px solid currentColor; border-right-color: transparent;
           animation: spin 0.8s linear infinite; display: inline-block; }
@keyframes spin { to { transform: rotate(360deg); } }
#status-row { align-items: flex-end; justify-content: center; }

/* focus: always visible for keyboard users */
#chat a:focus-visible, #sources a:focus-visible, #sources summary:focus-visible, #chat-col button:focus-visible,
#settings button:focus-visible { outline: 3px solid var(--focus) !important; outline-offset: 2px; }
#task label:has(input:focus-visible), #mode label:has(input:focus-visible),
#show-scores label:has(input:focus-visible) { outline: 3px solid var(--focus) !important; outline-offset: 2px; }
#task input:focus-visible, #mode input:focus-visible { outline: 2px solid var(--focus) !important; outline-offset: 1px; }

/* chat */
#chat { height: min(64vh, 720px) !important; overflow-y: auto !important; border: 1px solid var(--line) !important;
        border-radius: 12px !important; background: var(--card) !important; padding: 0 !important; }
#chat:has(.chat-log.empty) { height: auto !important; }
.chat-log { padding: 18px 20px; display: flex; flex-direction: column; gap: 18px; color: var(--ink);
            font-size: 0.98rem; line-height: 1.6; }
.chat-log.empty { justify-content: center; }
.empty-state { text-align: center; color: var(--muted); padding: 40px 10px 10px 10px; }
.empty-title { font-size: 1.2rem; font-weight: 600; color: var(--ink); margin-bottom: 6px; }
.turn { display: flex; flex-direction: column; gap: 10px; }
.msg { display: flex; }
.msg.user { justify-content: flex-end; }
.msg .bubble { max-width: 92%; padding: 10px 14px; border-radius: 14px; overflow-wrap: anywhere; color: var(--ink); }
.msg.user .bubble { background: var(--user-bubble); border-bottom-right-radius: 4px; white-space: pre-wrap; max-height: 14em; overflow-y: auto; }
.msg.bot .bubble { background: var(--card); border: 1px solid var(--line); border-bottom-left-radius: 4px; width: 92%; }
.msg.bot .bubble.error { background: var(--err-bg); border-color: var(--err-line); color: var(--err-fg); }
.mode-tag { font-size: 0.72rem; text-transform: uppercase; letter-spacing: 0.05em; color: var(--chip);
            background: var(--chip-bg); border-radius: 4px; padding: 1px 6px; margin-right: 8px; }
.answer-text.muted { color: var(--muted); margin-top: 8px; }
.note { font-size: 0.85rem; color: var(--load-fg); margin-bottom: 4px; }
.caret { display: inline-block; width: 7px; height: 1em; background: var(--caret); margin-left: 2px;
         vertical-align: text-bottom; animation: blink 1s steps(1) infinite; }
@keyframes blink { 50% { opacity: 0; } }
.typing span { display: inline-block; width: 6px; height: 6px; margin-right: 4px; border-radius: 50%;
               background: var(--caret); animation: bounce 1.2s infinite ease-in-out; }
.typing span:nth-child(2) { animation-delay: 0.15s; } .typing span:nth-child(3) { animation-delay: 0.3s; }
@keyframes bounce { 0%, 80%, 100% { opacity: 0.3; } 40% { opacity: 1; } }
.draft-note { font-size: 0.78rem; color: var(--muted); margin-top: 6px; }
.chips { white-space: nowrap; }
.cite-chip { display: inline-block; min-width: 1.35em; padding: 0 0.38em; margin: 0 1px; font-size: 0.74em;
             line-height: 1.45em; text-align: center; vertical-align: 0.12em; border-radius: 6px; font-weight: 600;
             color: var(--chip) !important; background: var(--chip-bg); border: 1px solid var(--chip-line);
             text-decoration: none !important; cursor: pointer; transition: background 0.15s; box-sizing: border-box; }
.cite-chip:hover, .cite-chip.active { background: var(--chip); color: var(--chip-on) !important; border-color: var(--chip); }
.unsupported { color: var(--dim); text-decoration: underline dotted var(--dim); text-underline-offset: 3px; }
.nf-mark { display: inline-block; margin-left: 6px; font-size: 0.72em; color: var(--warn-fg); background: var(--warn-bg);
           border: 1px solid var(--warn-line); border-radius: 4px; padding: 0 5px; vertical-align: 0.15em;
           text-decoration: none; white-space: nowrap; }
.badges { margin-top: 8px; display: flex; gap: 6px; flex-wrap: wrap; }
.badge { font-size: 0.74rem; padding: 1px 8px; border-radius: 999px; background: var(--warn-bg); color: var(--warn-fg); border: 1px solid var(--warn-line); }
.badge.subtle { background: var(--user-bubble); color: var(--muted); border-color: var(--line); }
.badge.stopped { background: var(--user-bubble); color: var(--ink); border-color: var(--line); }
.refusal strong { color: var(--warn-fg); }
.refusal ul { margin: 6px 0 0 0; padding-left: 1.2em; }
.refusal a { color: var(--chip); }
.math-tex .katex { font-size: 1.05em; }

/* composer */
#composer { border-radius: 12px; }
#composer textarea { font-size: 0.98rem !important; }
#question textarea::placeholder { color: var(--muted) !important; opacity: 1; }
#hint:not(:has(.hint)) { display: none !important; }
.hint { font-size: 0.86rem; color: var(--warn-fg); padding: 2px 4px; }
#send:not([disabled]), #find-btn { background: var(--primary) !important; color: #fff !important; border-color: var(--primary) !important; }
#send:not([disabled]):hover, #find-btn:hover { background: var(--primary-hover) !important; }
#stop { background: var(--err-bg) !important; color: var(--err-fg) !important; border: 1px solid var(--err-line) !important; }
#examples { display: grid !important; grid-template-columns: 1fr 1fr; gap: 8px; }
#examples > .block { grid-column: 1 / -1; }
#examples .example-q { text-align: left; justify-content: flex-start; font-weight: 400; font-size: 0.9rem;
                       background: var(--card) !important; border: 1px solid var(--line); border-radius: 10px; padding: 10px 12px;
                       color: var(--ink) !important; box-shadow: none; white-space: normal; height: 100%; }
#examples .example-q:hover { border-color: var(--chip-line); background: var(--chip-bg) !important; }
#examples-label { font-size: 0.82rem; color: var(--muted); padding-left: 2px; }
#settings .info-text, #settings .min_value, #settings .max_value, #settings [data-testid="block-info"] + .info-text { color: var(--muted) !important; opacity: 1 !important; }
#copy-status { font-size: 0.84rem; color: var(--ok-fg); align-self: center; }

/* sources */
#sources { height: min(64vh, 720px) !important; overflow-y: auto !important; border: 1px solid var(--line) !important;
           border-radius: 12px !important; background: var(--panel) !important; padding: 0 !important; position: relative; }
#sources:has(.sources-panel > .sources-empty) { height: auto !important; }
.sources-panel { padding: 14px 16px; color: var(--ink); font-size: 0.92rem; line-height: 1.55; }
.sources-empty, .sources-note { color: var(--muted); padding: 6px 2px; }
.score-legend { font-size: 0.78rem; color: var(--muted); border: 1px dashed var(--line); border-radius: 8px; padding: 6px 8px; margin-bottom: 10px; }
.for-q { font-size: 0.8rem; color: var(--muted); margin-bottom: 8px; }
.for-q span { color: var(--ink); }
h2.sec { font-size: 0.76rem; text-transform: uppercase; letter-spacing: 0.06em; color: var(--muted);
         margin: 6px 0 8px 0; font-weight: 600; }
.source { background: var(--card); border: 1px solid var(--line); border-radius: 10px; padding: 0 14px 12px 14px; margin-bottom: 12px;
          transition: box-shadow 0.3s, border-color 0.3s; scroll-margin-top: 10px; }
.source header { display: flex; gap: 10px; align-items: baseline; position: sticky; top: 0; z-index: 2;
                 background: var(--card); padding: 10px 0 4px 0; border-radius: 10px 10px 0 0; }
.source .num { flex: none; display: inline-block; min-width: 1.6em; text-align: center; font-size: 0.8rem; font-weight: 700;
               color: var(--chip); background: var(--chip-bg); border-radius: 6px; padding: 1px 4px; }
.source h3.title { margin: 0; font-size: 0.98rem; font-weight: 600; line-height: 1.35; color: var(--ink); }
.meta { display: flex; flex-wrap: wrap; gap: 6px 12px; margin: 6px 0 6px 0; font-size: 0.8rem; color: var(--muted); }
.meta .decision { color: var(--ok-fg); background: var(--ok-bg); border-radius: 4px; padding: 0 6px; }
.meta .authors { flex-basis: 100%; }
.meta a { color: var(--chip); text-decoration: underline; text-underline-offset: 2px; }
.meta .score, .retrieved .score { font-variant-numeric: tabular-nums; }
.abstract { margin: 6px 0 0 0; color: var(--ink); font-size: 0.9rem; }
mark.evidence { background: var(--evidence); color: inherit; padding: 1px 0; border-radius: 2px; }
.source.active { border-color: var(--chip); box-shadow: 0 0 0 3px color-mix(in srgb, var(--chip) 25%, transparent); }
.source.flash mark.evidence { animation: flash 1.6s ease-out; }
@keyframes flash { 0% { background: var(--evidence-strong); box-shadow: 0 0 0 3px var(--evidence-strong); } 100% { background: var(--evidence); box-shadow: none; } }
details.also { margin-top: 10px; border-top: 1px dashed var(--line); padding-top: 8px; }
details.also > summary { cursor: pointer; color: var(--muted); font-size: 0.85rem; }
.retrieved-list { list-style: none; padding: 0; margin: 8px 0 0 0; }
.retrieved { border: 1px solid var(--line); border-radius: 8px; background: var(--card); margin-bottom: 6px; padding: 6px 10px; }
.retrieved summary { cursor: pointer; font-size: 0.88rem; }
.retrieved .score { color: var(--muted); font-size: 0.78rem; }
.retrieved.active { border-color: var(--chip); }
#copy-row { gap: 8px; flex-wrap: wrap; }

/* touch screens and narrow windows: bigger targets, composer always in view, the chat scrolls */
/* what is indexed, indexing progress, filters in the chat */
#indexed .indexed { margin: 2px 2px 0 2px; color: var(--muted); font-size: 0.88rem; }
#indexed .indexed strong { color: var(--ink); font-weight: 600; }
.index-progress { display: inline-flex; align-items: center; gap: 6px; margin-left: 6px; }
.index-progress progress { width: 120px; height: 10px; accent-color: var(--load-fg); }
.filter-tag { display: inline-block; font-size: 0.8rem; color: var(--muted); border: 1px solid var(--line);
              border-radius: 999px; padding: 1px 8px; margin-bottom: 6px; }
.list-more { margin-top: 8px; font-size: 0.88rem; color: var(--muted); }

/* tabs: Ask | Find papers */
#tabs button[role="tab"] { color: var(--muted) !important; font-weight: 600; }
#tabs button[role="tab"][aria-selected="true"] { color: var(--ink) !important; }
#tabs button[role="tab"]:focus-visible { outline: 3px solid var(--focus) !important; outline-offset: 2px; }

/* Find papers */
#find-summary .find-note { color: var(--ink); font-size: 0.95rem; padding: 4px 2px; }
#find-summary .find-error { color: var(--err-fg); background: var(--err-bg); border: 1px solid var(--err-line);
                            border-radius: 8px; padding: 8px 12px; font-size: 0.92rem; }
#find-results > div { min-width: 0 !important; }
@media (max-width: 900px) {
  #find-results { flex-direction: column !important; }
  #find-results > div { width: 100% !important; }
  #find-controls { flex-wrap: wrap !important; }
  #find-controls > *, #find-controls .form > * { flex: 1 1 100% !important; min-width: 0 !important; }
  #find-controls .form { flex-wrap: wrap !important; }
  .find-table-wrap { max-width: calc(100vw - 40px); }
  #tab-find .row { flex-wrap: wrap !important; }
  #tab-find .row > * { min-width: 0 !important; max-width: 100% !important; }
  #find-pager > button, #find-exports > button { flex: 1 1 28% !important; }
  #tab-find, #find-results, #find-table { min-width: 0 !important; max-width: 100% !important; }
}
#find-chips { gap: 6px !important; flex-wrap: wrap; }
#find-chips button.filter-chip { border-radius: 999px !important; }
.find-table-wrap { overflow-x: auto; border: 1px solid var(--line); border-radius: 10px; background: var(--card); }
.find-table-wrap:focus-visible, #find-table a:focus-visible { outline: 3px solid var(--focus); outline-offset: 2px; }
table.find-table { border-collapse: collapse; width: 100%; font-size: 0.88rem; color: var(--ink); }
table.find-table caption { text-align: left; padding: 8px 10px; color: var(--muted); font-size: 0.85rem; }
table.find-table th, table.find-table td { padding: 7px 10px; border-top: 1px solid var(--line);
                                            text-align: left; vertical-align: top; }
table.find-table thead th { background: var(--panel); font-weight: 600; white-space: nowrap; }
table.find-table td.title { font-weight: 600; min-width: 14em; }
table.find-table td.title a { color: var(--chip); }
table.find-table td.quote { color: var(--muted); min-width: 18em; }
table.find-table td.n, table.find-table td.score { color: var(--muted); font-variant-numeric: tabular-nums; }
.find-charts { display: flex; flex-direction: column; gap: 14px; }
table.bar-chart { width: 100%; border-collapse: collapse; font-size: 0.85rem; color: var(--ink); }
table.bar-chart caption { text-align: left; font-weight: 600; padding-bottom: 4px; }
table.bar-chart thead { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); }
table.bar-chart th[scope=row] { font-weight: 400; text-align: left; padding: 3px 8px 3px 0; width: 45%;
                                overflow-wrap: anywhere; }
table.bar-chart td.bar-cell { width: 40%; padding: 3px 0; }
table.bar-chart .bar { display: block; height: 12px; border-radius: 3px; background: var(--chip); }
table.bar-chart.by-area .bar { background: var(--primary); }
table.bar-chart td.count { text-align: right; padding-left: 8px; white-space: nowrap; font-variant-numeric: tabular-nums; }
table.bar-chart .pct { color: var(--muted); }
#find-export-status .copy-msg { color: var(--muted); font-size: 0.85rem; }
@media (max-width: 640px) {
  table.find-table td.title { min-width: 10em; }
  table.find-table td.quote { min-width: 13em; }
}

@media (pointer: coarse), (max-width: 640px) {
  .cite-chip { min-width: 24px; min-height: 24px; line-height: 22px; font-size: 0.8em; vertical-align: 0.05em; margin: 0 2px; }
}
@media (max-width: 900px) {
  #app-header h1 { font-size: 1.15rem; }
  #app-header p { font-size: 0.84rem; }
  #status-row { align-items: flex-start; }
  /* room for the header, the indexed line, the Ask/Find tabs and the composer */
  #chat { height: max(180px, calc(100dvh - 560px)) !important; }
  #chat:has(.chat-log.empty) { height: auto !important; max-height: calc(100dvh - 560px); }
  #controls { flex-wrap: wrap; gap: 8px; }
  #controls > * { min-width: 0 !important; }
  #controls > #task { flex: 1 1 100% !important; }
  #controls > button { flex: 1 1 30% !important; white-space: nowrap; }
  #status-row { min-height: 0 !important; }
  #top-row { gap: 4px !important; }
  #sources { height: auto !important; max-height: 80vh; }
  #composer-wrap { position: sticky; bottom: 0; z-index: 20; background: var(--body-background-fill, var(--card));
                   padding: 6px 0 8px 0; }
  #examples { grid-template-columns: 1fr; }
}
"""
)


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


# Event delegation on the document: it survives every re-render of the chat/sources HTML.
JS = r"""
(function () {
  if (window.__iclrRagUi) return;
  window.__iclrRagUi = true;

  function panel() { return document.getElementById('sources'); }

  function showTurn(turn) {
    var p = panel(); if (!p) return null;
    var secs = p.querySelectorAll('section.turn-sources');
    var target = null;
    secs.forEach(function (s) {
      var on = s.getAttribute('data-turn') === String(turn);
      if (on) { s.removeAttribute('hidden'); target = s; } else { s.setAttribute('hidden', ''); }
    });
    return target;
  }

  // Bring the evidence (the first highlighted sentence, else the element) to the middle of the
  // sources panel; the card's sticky header keeps its title in view above it.
  function focusEl(el) {
    if (!el) return;
    var p = panel();
    if (p) p.querySelectorAll('.source.active, .retrieved.active').forEach(function (x) { x.classList.remove('active'); });
    el.classList.add('active');
    el.classList.remove('flash'); void el.offsetWidth; el.classList.add('flash');
    var target = el.querySelector('mark.evidence') || el;
    var smooth = window.matchMedia('(prefers-reduced-motion: reduce)').matches ? 'auto' : 'smooth';
    if (p && p.contains(el) && p.scrollHeight > p.clientHeight + 4) {
      var pr = p.getBoundingClientRect(), tr = target.getBoundingClientRect();
      var top = tr.top - pr.top + p.scrollTop - (p.clientHeight - Math.min(tr.height, p.clientHeight)) / 2;
      p.scrollTo({ top: Math.max(0, top), behavior: smooth });
      if (pr.top < 0 || pr.bottom > window.innerHeight) p.scrollIntoView({ behavior: smooth, block: 'nearest' });
    } else {
      target.scrollIntoView({ behavior: smooth, block: 'center' });
    }
  }

  window.iclrShowSource = function (turn, n) {
    showTurn(turn);
    var el = document.getElementById('src-' + turn + '-' + n);
    document.querySelectorAll('.cite-chip.active').forEach(function (c) { c.classList.remove('active'); });
    document.querySelectorAll('.cite-chip[data-turn="' + turn + '"][data-n="' + n + '"]').forEach(function (c) { c.classList.add('active'); });
    focusEl(el);
    return !!el;
  };

  function activate(t) {
    var chip = t.closest('a.cite-chip[data-n]');
    if (chip) {
      window.iclrShowSource(chip.getAttribute('data-turn'), chip.getAttribute('data-n'));
      return true;
    }
    var rel = t.closest('a.related-link[data-rel]');
    if (rel) {
      var turn = rel.getAttribute('data-turn');
      showTurn(turn);
      var li = document.getElementById('rel-' + turn + '-' + rel.getAttribute('data-rel'));
      if (li) { var d = li.querySelector('details'); if (d) d.open = true; }
      focusEl(li);
      return true;
    }
    return false;
  }

  document.addEventListener('click', function (ev) {
    var t = ev.target;
    if (t && t.closest && activate(t)) ev.preventDefault();
  }, true);

  function visible(el) { return !!el && el.offsetParent !== null && !el.disabled; }

  document.addEventListener('keydown', function (ev) {
    var t = ev.target;
    // role=button links answer Space like buttons do (Enter already clicks them)
    if ((ev.key === ' ' || ev.key === 'Spacebar') && t && t.closest && t.closest('a[role="button"]')) {
      ev.preventDefault();
      activate(t);
      return;
    }
    if (ev.key === 'Escape') {
      var stop = document.getElementById('stop');
      if (visible(stop)) { ev.preventDefault(); stop.click(); }
    }
  }, true);

  // Accessible names and states that the Gradio widgets leave out.
  function fixA11y() {
    var chat = document.getElementById('chat');
    if (chat && !chat.hasAttribute('role')) {
      chat.setAttribute('role', 'log');
      chat.setAttribute('aria-live', 'polite');
      chat.setAttribute('aria-label', 'Conversation');
      chat.setAttribute('tabindex', '0');
    }
    if (chat) chat.setAttribute('aria-busy', chat.querySelector('.bubble.pending') ? 'true' : 'false');
    var src = document.getElementById('sources');
    if (src && !src.hasAttribute('role')) {
      src.setAttribute('role', 'region'); src.setAttribute('aria-label', 'Sources'); src.setAttribute('tabindex', '0');
    }
    [['task', 'Mode'], ['mode', 'Retrieval mode']].forEach(function (pair) {
      var fs = document.getElementById(pair[0]);
      if (!fs) return;
      if (fs.getAttribute('aria-label') !== pair[1]) { fs.setAttribute('role', 'radiogroup'); fs.setAttribute('aria-label', pair[1]); }
      fs.querySelectorAll('input[type=radio]').forEach(function (i) { if (i.name !== 'iclr-' + pair[0]) i.name = 'iclr-' + pair[0]; });
    });
    document.querySelectorAll('#settings > button.label-wrap').forEach(function (b) {
      var content = b.parentElement.querySelector('[data-testid="accordion-content"]');
      var open = !!content && content.style.display !== 'none';
      if (b.getAttribute('aria-expanded') !== String(open)) b.setAttribute('aria-expanded', String(open));
      if (content && !content.id) content.id = 'settings-content';
      if (content) b.setAttribute('aria-controls', content.id);
    });
  }

  // Math: $…$ in answers and abstracts, typeset by the KaTeX that Gradio ships (same origin).
  // KaTeX escapes what it prints and, untrusted (the default), refuses \href, \url and \html*.
  var katex = null, katexLoading = false;
  var MATH_RE = /(^|[^\\$])\$(?!\s)([^$\n]{1,300}?[^\s\\])\$(?![0-9$])/;
  var MATH_SCOPE = '#chat .answer-text:not(.streaming), #sources .abstract, #sources .title';
  function loadKatex() {
    if (katex || katexLoading || !'__KATEX_JS__') return;
    katexLoading = true;
    import('__KATEX_JS__').then(function (m) { katex = m.default; renderMath(); })
      .catch(function () { katexLoading = false; });
  }
  function renderNode(node) {
    var m = MATH_RE.exec(node.nodeValue);
    if (!m) return false;
    var start = m.index + m[1].length, end = m.index + m[0].length;
    var span = document.createElement('span');
    span.className = 'math-tex';
    try {
      katex.render(m[2], span, { throwOnError: false, trust: false, strict: 'ignore', maxExpand: 200, output: 'htmlAndMathml' });
    } catch (e) { span.textContent = m[0].slice(m[1].length); }
    var rest = node.splitText(start);
    rest.nodeValue = rest.nodeValue.slice(end - start);
    node.parentNode.insertBefore(span, rest);
    renderNode(rest);
    return true;
  }
  function renderMath() {
    var roots = document.querySelectorAll(MATH_SCOPE);
    if (!roots.length) return;
    var nodes = [];
    roots.forEach(function (r) {
      if (r.textContent.indexOf('$') < 0) return;
      var w = document.createTreeWalker(r, NodeFilter.SHOW_TEXT);
      while (w.nextNode()) {
        var n = w.currentNode;
        if (n.nodeValue.indexOf('$') >= 0 && !(n.parentElement && n.parentElement.closest('.katex'))) nodes.push(n);
      }
    });
    if (!nodes.length) return;
    if (!katex) { loadKatex(); return; }
    nodes.forEach(renderNode);
  }

  // Keep the chat scrolled to the newest text unless the reader scrolled up.
  var stick = true, pending = false;
  document.addEventListener('scroll', function (ev) {
    var c = document.getElementById('chat');
    if (c && ev.target === c) stick = c.scrollHeight - c.scrollTop - c.clientHeight < 60;
  }, true);
  new MutationObserver(function (muts) {
    var c = document.getElementById('chat');
    if (c) {
      for (var i = 0; i < muts.length; i++) {
        if (c.contains(muts[i].target)) { if (stick) c.scrollTop = c.scrollHeight; break; }
      }
    }
    if (!pending) {
      pending = true;
      requestAnimationFrame(function () { pending = false; fixA11y(); renderMath(); });
    }
  }).observe(document.documentElement, { childList: true, subtree: true, attributes: true, attributeFilter: ['style'] });
})();
"""

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
