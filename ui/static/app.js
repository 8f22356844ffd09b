// The page script (ui/assets.py head_html): event delegation on the document, so it survives every
// re-render of the chat/sources HTML. head_html() puts the local KaTeX bundle's path in for its placeholder.
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
    var retry = t.closest('a.retry-link[data-q]');
    if (retry) {
      // ask the mended question or topic: put it in its box (Gradio reads the input event) and send it
      // a link into another tab ("More like this" on a chat source card) brings that tab forward first
      var tab = retry.getAttribute('data-tab') && document.getElementById(retry.getAttribute('data-tab'));
      if (tab && tab.getAttribute('aria-selected') !== 'true') tab.click();
      setTimeout(function () {
        var box = document.querySelector(retry.getAttribute('data-box'));
        var send = document.getElementById(retry.getAttribute('data-send'));
        if (!box || !send || send.disabled) return;
        box.value = retry.getAttribute('data-q');
        box.dispatchEvent(new Event('input', { bubbles: true }));
        setTimeout(function () { send.click(); }, 0);
      }, tab ? 60 : 0);
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
  // $k$ (one letter) and $\sim$50 (a TeX command may touch a digit); "$5 and $10" stays text
  var MATH_RE = /(^|[^\\$])\$(?:(\\[A-Za-z]+[^$\n]{0,300}?)\$|(?!\s)([^$\n]{0,300}?[^\s\\$])\$(?![0-9$]))/;
  // what abstracts write in LaTeX or Markdown outside math: 58.1\% and *Proteina* or _Proteina_
  var EMPH_RE = /(^|[\s(])([*_])([A-Za-z][^*_\n]{0,80}?[^\s*_])\2(?=[\s.,;:)\-'?!/]|$)/;  // *X*-based too
  // marks that only style a word, read as the word: \textsc{DySpec}, **P**arallel, **4.43$\times$**
  var MARKS_RE = /\\(?:textsc|texttt|textbf|textit|textrm|textsf|emph|underline)\{([^{}\n]{1,120})\}|\*\*(?=\S)([^*\n]{1,120}?)\*\*/g;
  var MATH_SCOPE = '#chat .answer-text:not(.streaming), #chat .paper-table, #sources .abstract, #sources .title';
  function loadKatex() {
    if (katex || katexLoading || !'__KATEX_JS__') return;
    katexLoading = true;
    import('__KATEX_JS__').then(function (m) { katex = m.default; renderMath(); })
      .catch(function () { katexLoading = false; });
  }
  function tidyNode(node) {  // 58.1\% -> 58.1%; *Proteina* -> <em>Proteina</em>
    if (node.nodeValue.indexOf('\\%') >= 0) node.nodeValue = node.nodeValue.replace(/\\%/g, '%');
    var m = EMPH_RE.exec(node.nodeValue);
    if (!m) return;
    var start = m.index + m[1].length, rest = node.splitText(start);
    rest.nodeValue = rest.nodeValue.slice(m[0].length - m[1].length);
    var em = document.createElement('em');
    em.textContent = m[3];
    node.parentNode.insertBefore(em, rest);
    tidyNode(rest);
  }
  function renderNode(node) {
    var m = MATH_RE.exec(node.nodeValue);
    if (!m) return false;
    var start = m.index + m[1].length, end = m.index + m[0].length;
    var span = document.createElement('span');
    span.className = 'math-tex';
    try {
      katex.render(m[2] || m[3], span, { throwOnError: false, trust: false, strict: 'ignore', maxExpand: 200, output: 'htmlAndMathml' });
    } catch (e) { span.textContent = m[0].slice(m[1].length); }
    var rest = node.splitText(start);
    rest.nodeValue = rest.nodeValue.slice(end - start);
    node.parentNode.insertBefore(span, rest);
    if (!renderNode(rest)) tidyNode(rest);
    tidyNode(node);
    return true;
  }
  function renderMath() {
    var roots = document.querySelectorAll(MATH_SCOPE);
    if (!roots.length) return;
    var nodes = [];
    roots.forEach(function (r) {
      var t = r.textContent;
      if (!/[$*_\\]/.test(t)) return;
      var w = document.createTreeWalker(r, NodeFilter.SHOW_TEXT), tidy = [];
      while (w.nextNode()) {
        var n = w.currentNode;
        if (n.parentElement && n.parentElement.closest('.katex')) continue;
        var bare = n.nodeValue.replace(MARKS_RE, '$1$2');
        if (bare !== n.nodeValue) n.nodeValue = bare;  // only a change: the observer sees every write
        if (n.nodeValue.indexOf('$') >= 0) nodes.push(n);
        else if (/[*_]|\\%/.test(n.nodeValue)) tidy.push(n);
      }
      tidy.forEach(tidyNode);
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
