"""Inline CSS and JavaScript for the web UI. Nothing here loads from the network."""

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

CSS = r"""
:root { --evidence: #fff3b0; --evidence-strong: #ffe066; --chip: #3b5bdb; --chip-bg: #edf2ff;
        --ink: #1f2933; --muted: #667085; --line: #e4e7ec; --panel: #fbfcfe; }
.gradio-container { max-width: 1480px !important; margin: 0 auto !important; }
footer { display: none !important; }

/* header */
#app-header { padding: 4px 2px 0 2px; }
#app-header h1 { font-size: 1.35rem; font-weight: 650; margin: 0; color: var(--body-text-color, var(--ink)); letter-spacing: -0.01em; }
#app-header p { margin: 2px 0 0 0; color: var(--body-text-color-subdued, var(--muted)); font-size: 0.92rem; }
.status-banner { display: inline-flex; align-items: center; gap: 8px; font-size: 0.86rem;
                 padding: 5px 12px; border-radius: 999px; border: 1px solid var(--line); background: #fff; color: var(--muted); }
.status-banner.loading { background: #fff8e6; border-color: #f5d48a; color: #7a5200; }
.status-banner.ready { background: #effaf3; border-color: #b7e4c7; color: #1e6b3a; }
.status-banner.error { background: #fff1f0; border-color: #f5b5ae; color: #a1271c; }
.spinner { width: 12px; height: 12px; border-radius: 50%; border: 2px solid currentColor; border-right-color: transparent;
           animation: spin 0.8s linear infinite; display: inline-block; }
@keyframes spin { to { transform: rotate(360deg); } }
#status-row { align-items: flex-end; justify-content: center; }

/* chat */
#chat { height: min(64vh, 720px) !important; overflow-y: auto !important; border: 1px solid var(--line) !important;
        border-radius: 12px !important; background: #fff !important; padding: 0 !important; }
#chat:has(.chat-log.empty) { height: auto !important; }
.chat-log { padding: 18px 20px; display: flex; flex-direction: column; gap: 18px; color: var(--ink);
            font-size: 0.98rem; line-height: 1.6; }
.chat-log.empty { justify-content: center; }
.empty-state { text-align: center; color: var(--muted); padding: 40px 10px 10px 10px; }
.empty-title { font-size: 1.2rem; font-weight: 600; color: var(--ink); margin-bottom: 6px; }
.turn { display: flex; flex-direction: column; gap: 10px; }
.msg { display: flex; }
.msg.user { justify-content: flex-end; }
.msg .bubble { max-width: 92%; padding: 10px 14px; border-radius: 14px; overflow-wrap: anywhere; }
.msg.user .bubble { background: #f2f4f7; border-bottom-right-radius: 4px; white-space: pre-wrap; max-height: 14em; overflow-y: auto; }
.msg.bot .bubble { background: #fff; border: 1px solid var(--line); border-bottom-left-radius: 4px; width: 92%; }
.msg.bot .bubble.error { background: #fff6f5; border-color: #f5b5ae; color: #8a1f17; }
.mode-tag { font-size: 0.72rem; text-transform: uppercase; letter-spacing: 0.05em; color: #5c6ac4;
            background: #eef0ff; border-radius: 4px; padding: 1px 6px; margin-right: 8px; }
.answer-text.muted { color: var(--muted); margin-top: 8px; }
.note { font-size: 0.85rem; color: #7a5200; margin-bottom: 4px; }
.caret { display: inline-block; width: 7px; height: 1em; background: #98a2b3; margin-left: 2px;
         vertical-align: text-bottom; animation: blink 1s steps(1) infinite; }
@keyframes blink { 50% { opacity: 0; } }
.typing span { display: inline-block; width: 6px; height: 6px; margin-right: 4px; border-radius: 50%;
               background: #98a2b3; animation: bounce 1.2s infinite ease-in-out; }
.typing span:nth-child(2) { animation-delay: 0.15s; } .typing span:nth-child(3) { animation-delay: 0.3s; }
@keyframes bounce { 0%, 80%, 100% { opacity: 0.3; } 40% { opacity: 1; } }
.chips { white-space: nowrap; }
.cite-chip { display: inline-block; min-width: 1.35em; padding: 0 0.38em; margin: 0 1px; font-size: 0.74em;
             line-height: 1.45em; text-align: center; vertical-align: 0.12em; border-radius: 6px; font-weight: 600;
             color: var(--chip) !important; background: var(--chip-bg); border: 1px solid #c5d0fa;
             text-decoration: none !important; cursor: pointer; transition: background 0.15s; }
.cite-chip:hover, .cite-chip.active { background: var(--chip); color: #fff !important; border-color: var(--chip); }
.cite-chip.pending { cursor: default; color: #98a2b3 !important; background: #f2f4f7; border-color: #e4e7ec; }
.unsupported { color: #98a2b3; text-decoration: underline dotted #c0c6d0; text-underline-offset: 3px; }
.unsupported .cite-chip { opacity: 0.6; }
.nf-mark { display: inline-block; margin-left: 6px; font-size: 0.7em; color: #b54708; background: #fff4e5;
           border: 1px solid #fedf89; border-radius: 4px; padding: 0 5px; vertical-align: 0.15em;
           text-decoration: none; white-space: nowrap; }
.badges { margin-top: 8px; display: flex; gap: 6px; flex-wrap: wrap; }
.badge { font-size: 0.74rem; padding: 1px 8px; border-radius: 999px; background: #fff4e5; color: #b54708; border: 1px solid #fedf89; }
.badge.subtle { background: #f2f4f7; color: var(--muted); border-color: var(--line); }
.refusal strong { color: #8a4b00; }
.refusal ul { margin: 6px 0 0 0; padding-left: 1.2em; }
.refusal a { color: var(--chip); }

/* composer */
#composer { border-radius: 12px; }
#composer textarea { font-size: 0.98rem !important; }
#hint:not(:has(.hint)) { display: none !important; }
.hint { font-size: 0.86rem; color: #b54708; padding: 2px 4px; }
#examples { display: grid !important; grid-template-columns: 1fr 1fr; gap: 8px; }
#examples > .block { grid-column: 1 / -1; }
#examples .example-q { text-align: left; justify-content: flex-start; font-weight: 400; font-size: 0.9rem;
                       background: #fff; border: 1px solid var(--line); border-radius: 10px; padding: 10px 12px;
                       color: var(--ink); box-shadow: none; white-space: normal; height: 100%; }
#examples .example-q:hover { border-color: #c5d0fa; background: var(--chip-bg); }
#examples-label { font-size: 0.82rem; color: var(--body-text-color-subdued, var(--muted)); padding-left: 2px; }

/* sources */
#sources { height: min(64vh, 720px) !important; overflow-y: auto !important; border: 1px solid var(--line) !important;
           border-radius: 12px !important; background: var(--panel) !important; padding: 0 !important; }
#sources:has(.sources-panel > .sources-empty) { height: auto !important; }
.sources-panel { padding: 14px 16px; color: var(--ink); font-size: 0.92rem; line-height: 1.55; }
.sources-empty, .sources-note { color: var(--muted); padding: 6px 2px; }
.for-q { font-size: 0.8rem; color: var(--muted); margin-bottom: 8px; }
.for-q span { color: var(--ink); }
h3.sec { font-size: 0.76rem; text-transform: uppercase; letter-spacing: 0.06em; color: var(--muted);
         margin: 6px 0 8px 0; font-weight: 600; }
.source { background: #fff; border: 1px solid var(--line); border-radius: 10px; padding: 12px 14px; margin-bottom: 12px;
          transition: box-shadow 0.3s, border-color 0.3s; scroll-margin-top: 10px; }
.source header { display: flex; gap: 10px; align-items: baseline; }
.source .num { flex: none; display: inline-block; min-width: 1.6em; text-align: center; font-size: 0.8rem; font-weight: 700;
               color: var(--chip); background: var(--chip-bg); border-radius: 6px; padding: 1px 4px; }
.source h4.title { margin: 0; font-size: 0.98rem; font-weight: 600; line-height: 1.35; color: var(--ink); }
.meta { display: flex; flex-wrap: wrap; gap: 6px 12px; margin: 6px 0 6px 0; font-size: 0.78rem; color: var(--muted); }
.meta .decision { color: #1e6b3a; background: #effaf3; border-radius: 4px; padding: 0 6px; }
.meta a { color: var(--chip); text-decoration: none; }
.meta a:hover { text-decoration: underline; }
.meta .score { font-variant-numeric: tabular-nums; }
.abstract { margin: 6px 0 0 0; color: #344054; font-size: 0.9rem; }
mark.evidence { background: var(--evidence); color: inherit; padding: 1px 0; border-radius: 2px; }
.source.active { border-color: var(--chip); box-shadow: 0 0 0 3px rgba(59, 91, 219, 0.18); }
.source.flash mark.evidence { animation: flash 1.6s ease-out; }
@keyframes flash { 0% { background: var(--evidence-strong); box-shadow: 0 0 0 3px var(--evidence-strong); } 100% { background: var(--evidence); box-shadow: none; } }
details.also { margin-top: 10px; border-top: 1px dashed var(--line); padding-top: 8px; }
details.also > summary { cursor: pointer; color: var(--muted); font-size: 0.85rem; }
.retrieved-list { list-style: none; padding: 0; margin: 8px 0 0 0; }
.retrieved { border: 1px solid var(--line); border-radius: 8px; background: #fff; margin-bottom: 6px; padding: 6px 10px; }
.retrieved summary { cursor: pointer; font-size: 0.88rem; }
.retrieved .score { color: var(--muted); font-size: 0.78rem; font-variant-numeric: tabular-nums; }
.retrieved.active { border-color: var(--chip); }
#copy-row { gap: 8px; }
@media (max-width: 900px) { #chat, #sources { height: auto; max-height: none; } }
"""

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

  function focusEl(el) {
    if (!el) return;
    var p = panel();
    if (p) p.querySelectorAll('.source.active, .retrieved.active').forEach(function (x) { x.classList.remove('active'); });
    el.classList.add('active');
    el.classList.remove('flash'); void el.offsetWidth; el.classList.add('flash');
    if (p && p.contains(el) && p.scrollHeight > p.clientHeight) {
      var top = el.getBoundingClientRect().top - p.getBoundingClientRect().top + p.scrollTop - 10;
      p.scrollTo({ top: top, behavior: 'smooth' });
      var r = p.getBoundingClientRect();
      if (r.top < 0 || r.bottom > window.innerHeight) p.scrollIntoView({ behavior: 'smooth', block: 'start' });
    } else {
      el.scrollIntoView({ behavior: 'smooth', block: 'start' });
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

  document.addEventListener('click', function (ev) {
    var t = ev.target;
    if (!t || !t.closest) return;
    var chip = t.closest('a.cite-chip[data-n]');
    if (chip) {
      ev.preventDefault();
      window.iclrShowSource(chip.getAttribute('data-turn'), chip.getAttribute('data-n'));
      return;
    }
    var rel = t.closest('a.related-link[data-rel]');
    if (rel) {
      ev.preventDefault();
      var turn = rel.getAttribute('data-turn');
      showTurn(turn);
      var li = document.getElementById('rel-' + turn + '-' + rel.getAttribute('data-rel'));
      if (li) { var d = li.querySelector('details'); if (d) d.open = true; }
      focusEl(li);
    }
  }, true);

  // Keep the chat scrolled to the newest text unless the reader scrolled up.
  var stick = true;
  document.addEventListener('scroll', function (ev) {
    var c = document.getElementById('chat');
    if (c && ev.target === c) stick = c.scrollHeight - c.scrollTop - c.clientHeight < 60;
  }, true);
  new MutationObserver(function (muts) {
    var c = document.getElementById('chat');
    if (!c) return;
    for (var i = 0; i < muts.length; i++) {
      if (c.contains(muts[i].target)) { if (stick) c.scrollTop = c.scrollHeight; break; }
    }
  }).observe(document.documentElement, { childList: true, subtree: true });
})();
"""

COPY_JS = r"""
(text) => {
  try { if (text && navigator.clipboard) navigator.clipboard.writeText(text).catch(function () {}); } catch (e) {}
  return [];
}
"""
