"""Real-browser tests: Playwright driving Debian's headless Chromium against the running UI.

Needs `/usr/bin/chromium` (`apt-get install -y chromium`). Screenshots go to tests/artifacts/.

The engine is a fixture, `ui_engine`, parametrized over ENGINES:
- "fake": tests.ui_support.FakeEngine (no models);
- "seed": rag.answer.Engine over the seed abstracts with conftest's scripted FakeLLM
  (real retrieval, citation binding and verification);
- "real": the same with the real packaged LLM (marked slow: `-m "not slow"` skips it).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.ui_support import (
    XSS_MARKER,
    FakeEngine,
    HitCounter,
    SlowLoader,
    corpus_papers,
    running_app,
    xss_paper,
)

sync_api = pytest.importorskip("playwright.sync_api")

CHROMIUM = os.environ.get("RAG_CHROMIUM", "/usr/bin/chromium")
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
]
ARTIFACTS = Path(__file__).resolve().parent / "artifacts"
VIEWPORT = {"width": 1440, "height": 960}
T = 60_000  # ms; generous for the real engine on 2 CPU cores


def make_fake(request):
    return FakeEngine(token_delay=0.03)


def make_seed(request):
    """rag.answer.Engine over the seed abstracts with conftest's scripted FakeLLM."""
    return request.getfixturevalue("seed_engine")


def make_real(request):
    """rag.answer.Engine over the seed abstracts with the real packaged LLM, warmed up."""
    from rag.answer import Engine
    from tests.conftest import make_settings

    engine = Engine(
        make_settings(request.getfixturevalue("seed_data_dir")), embedder=request.getfixturevalue("embedder")
    )
    engine.warm_up()
    return engine


ENGINES = {"fake": make_fake, "seed": make_seed, "real": make_real}


@pytest.fixture(scope="module")
def browser():
    if not Path(CHROMIUM).exists():
        pytest.fail(
            f"{CHROMIUM} not found: install it with `apt-get install -y chromium` (or set RAG_CHROMIUM)"
        )
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        yield b
        b.close()


@pytest.fixture(params=["fake", "seed", pytest.param("real", marks=pytest.mark.slow)])
def ui_engine(request):
    request.node.engine_name = request.param
    return ENGINES[request.param](request)


class Page:
    """A browser page on the app that records every request it makes."""

    def __init__(self, browser, url):
        self.url = url
        self.ctx = browser.new_context(viewport=VIEWPORT)
        self.page = self.ctx.new_page()
        self.requests: list[str] = []
        self.errors: list[str] = []
        self.page.on("request", lambda r: self.requests.append(r.url))
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.goto(url)

    def external_requests(self) -> list[str]:
        origin = self.url.rstrip("/")
        return [
            u
            for u in self.requests
            if not (u.startswith(origin) or u.startswith("data:") or u.startswith("blob:"))
        ]

    def wait_ready(self):
        self.page.wait_for_selector("#send:not([disabled])", timeout=T)
        self.page.wait_for_selector(".status-banner.ready", timeout=T)

    def ask(self, text: str, *, press_enter: bool = False):
        n = self.page.locator("#chat .turn").count()
        self.page.fill("#question textarea", text)
        if press_enter:
            self.page.press("#question textarea", "Enter")
        else:
            self.page.click("#send")
        self.page.wait_for_function(
            f"document.querySelectorAll('#chat .turn').length > {n} && "
            "!document.querySelector('#chat .bubble.pending')",
            timeout=T * 2,
        )

    def shot(self, name: str):
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        path = ARTIFACTS / name
        self.page.screenshot(path=str(path), full_page=True)
        return path

    def close(self):
        self.ctx.close()


@pytest.fixture
def open_page(browser):
    pages = []

    def _open(url):
        p = Page(browser, url)
        pages.append(p)
        return p

    yield _open
    for p in pages:
        p.close()


# --------------------------------------------------------------------------- the main flow


def test_ask_celcomen_click_chip_shows_highlighted_abstract(ui_engine, open_page, request):
    name = request.node.engine_name
    with running_app(ui_engine) as (url, _):
        p = open_page(url)
        page = p.page
        p.wait_ready()
        # empty state with clickable example questions
        assert page.locator("#chat .empty-state").is_visible()
        page.wait_for_selector("#examples button.example-q", timeout=T)
        examples = page.locator("#examples button.example-q:visible")
        assert 4 <= examples.count() <= 6
        # watch for streamed (partial) text while the answer is generated
        page.evaluate(
            """() => { window.__sawStreaming = 0; new MutationObserver(() => {
                 const s = document.querySelector('#chat .answer-text.streaming');
                 if (s && s.textContent.trim()) window.__sawStreaming++; })
               .observe(document.getElementById('chat'), {childList: true, subtree: true}); }"""
        )
        p.ask("What does Celcomen do?", press_enter=True)
        if name == "fake":
            assert page.evaluate("window.__sawStreaming") >= 2  # grew token by token
        assert page.locator("#chat .answer-text.streaming").count() == 0  # final text replaced it
        chip = page.locator("#chat a.cite-chip").first
        chip.wait_for(timeout=T)
        assert page.locator("#examples").is_hidden()
        n = chip.get_attribute("data-n")
        chip.click()
        card = page.locator(f"#src-0-{n}")
        card.wait_for(timeout=T)
        page.wait_for_selector(f"#src-0-{n}.active", timeout=5000)
        assert "Celcomen" in card.inner_text()
        marks = card.locator("mark.evidence")
        assert marks.count() >= 1
        assert marks.first.inner_text().strip() in card.locator(".abstract").inner_text()
        bg = marks.first.evaluate("e => getComputedStyle(e).backgroundColor")
        assert bg not in ("rgba(0, 0, 0, 0)", "transparent")
        # the card is scrolled into view inside the sources panel
        in_view = page.evaluate(
            f"""() => {{ const p = document.getElementById('sources').getBoundingClientRect();
                 const c = document.getElementById('src-0-{n}').getBoundingClientRect();
                 return c.top >= p.top - 2 && c.top < p.bottom; }}"""
        )
        assert in_view
        shot = p.shot(f"ui-celcomen-{name}.png")
        assert shot.stat().st_size > 10_000
        assert p.external_requests() == []
        assert not p.errors, p.errors


# --------------------------------------------------------------------------- XSS


def test_hostile_abstract_neither_executes_nor_loads(open_page):
    with HitCounter() as counter:
        track = f"{counter.url}/track.png"
        eng = FakeEngine([xss_paper(track), *corpus_papers()], token_delay=0.005)
        with running_app(eng) as (url, _):
            p = open_page(url)
            page = p.page
            p.wait_ready()
            p.ask(f'verbatim {XSS_MARKER} tracking pixels <img src=x onerror="window.__xss=8">')
            page.locator("#chat a.cite-chip").first.click()
            # open every collapsed section and toggle scores so everything gets rendered
            page.evaluate("() => document.querySelectorAll('#sources details').forEach(d => d.open = true)")
            page.get_by_text("Settings", exact=True).click()
            page.locator("#show-scores input[type=checkbox]").check()
            page.wait_for_selector("#sources .score", timeout=T)
            page.locator("#sources .source").first.hover()
            page.wait_for_timeout(1500)
            p.shot("ui-xss.png")

            assert page.evaluate("typeof window.__xss") == "undefined"
            assert counter.hits == []
            assert (
                page.evaluate(
                    "document.querySelectorAll('#chat img, #sources img, #chat script, #sources script').length"
                )
                == 0
            )
            chat_text = page.locator("#chat").inner_text()
            sources_text = page.locator("#sources").inner_text()
            assert "<script>window.__xss = 2;" in sources_text
            assert f"![x]({track})" in sources_text
            assert '<img src=x onerror="window.__xss=1">' in sources_text  # the title, as text
            assert '<img src=x onerror="window.__xss=8">' in chat_text  # the question, as text
            assert "${window.__xss=6}" in chat_text
            hrefs = page.evaluate(
                "Array.from(document.querySelectorAll('#chat a, #sources a')).map(a => a.getAttribute('href'))"
            )
            assert all(h.startswith("#") or h.startswith("https://openreview.net/") for h in hrefs), hrefs
            assert p.external_requests() == []


# --------------------------------------------------------------------------- loading state


def test_page_shows_loading_then_enables_asking(open_page):
    from ui.app import EngineHolder

    loader = SlowLoader(FakeEngine(token_delay=0), delay=0.5, gated=True)
    holder = EngineHolder(loader=loader).start()
    with running_app(holder) as (url, _):
        p = open_page(url)
        page = p.page
        page.wait_for_selector(".status-banner.loading", timeout=T)
        assert "Loading" in page.locator(".status-banner").inner_text()
        assert page.locator("#send").is_disabled()
        p.shot("ui-loading.png")
        loader.release()
        p.wait_ready()
        assert page.locator("#send").is_enabled()
        page.wait_for_selector("#examples button.example-q", timeout=T)


# --------------------------------------------------------------------------- chat behaviour


def test_examples_follow_ups_copy_and_new_chat(open_page):
    eng = FakeEngine(token_delay=0.005)
    with running_app(eng) as (url, _):
        p = open_page(url)
        page = p.page
        p.wait_ready()

        # empty message: a hint, nothing sent
        page.click("#send")
        page.wait_for_selector("#hint .hint", timeout=T)
        assert page.locator("#chat .turn").count() == 0 and not eng.calls

        # an example question is clickable and answered
        page.locator("#examples button.example-q", has_text="What does Celcomen do?").click()
        page.wait_for_function(
            "document.querySelector('#chat .turn .answer-text') && "
            "!document.querySelector('#chat .bubble.pending')",
            timeout=T,
        )
        assert page.locator("#hint .hint").count() == 0

        # a follow-up in Summarize mode keeps the history
        page.locator("#task label", has_text="Summarize").click()
        p.ask("Summarize retrieval-augmented adaptation")
        assert eng.calls[-1].task == "summarize"
        assert [m["content"] for m in eng.calls[-1].history if m["role"] == "user"] == [
            "What does Celcomen do?"
        ]
        assert page.locator("#chat .turn").count() == 2
        # clicking a chip of the first answer switches the panel back to its sources
        page.locator('#chat a.cite-chip[data-turn="0"]').first.click()
        page.wait_for_selector('#sources section.turn-sources[data-turn="0"]:not([hidden])', timeout=5000)
        assert page.locator('#sources section.turn-sources[data-turn="1"]').is_hidden()

        # copy answer with references
        page.click("#copy-btn")
        box = page.locator("#copy-box textarea")
        box.wait_for(timeout=T)
        page.wait_for_function(
            "document.querySelector('#copy-box textarea').value.includes('References')", timeout=T
        )
        assert box.input_value().startswith("**Q:** Summarize retrieval-augmented adaptation")

        # an over-long question is explained, in the chat, without a traceback
        page.locator("#task label", has_text="Answer").click()
        p.ask("y" * 4001)
        err = page.locator("#chat .bubble.error").last
        assert "limit is 4,000" in err.inner_text()
        assert "Traceback" not in page.locator("#chat").inner_text()

        # a model failure is friendly
        p.ask("please explode")
        assert "model failed" in page.locator("#chat .bubble.error").last.inner_text()

        # New chat clears this session's history
        page.click("#new-chat")
        page.wait_for_selector("#chat .empty-state", timeout=T)
        page.wait_for_selector("#examples button.example-q", timeout=T)
        p.ask("What is ProtPainter used for?")
        assert eng.calls[-1].history == []
        assert p.external_requests() == []
        assert not p.errors, p.errors


def test_refusal_and_unsupported_sentence_render(open_page):
    eng = FakeEngine(token_delay=0)
    with running_app(eng) as (url, _):
        p = open_page(url)
        page = p.page
        p.wait_ready()
        p.ask("zzyzx qwerty plugh")
        assert "don't answer this question" in page.locator("#chat .refusal").last.inner_text()
        assert page.locator("#sources section.turn-sources:not([hidden]) .retrieved").count() >= 1
        page.locator("#chat .related-link").first.click()
        page.wait_for_selector("#sources .retrieved.active details[open]", timeout=5000)
        p.ask("What does Celcomen do? speculate")
        un = page.locator("#chat .unsupported")
        assert un.count() == 1 and "not found in the sources" in un.inner_text()
        color = un.evaluate("e => getComputedStyle(e).color")
        assert color != page.locator("#chat .answer-text").last.evaluate("e => getComputedStyle(e).color")
        p.shot("ui-refusal.png")


def test_second_question_typed_while_first_streams(open_page):
    eng = FakeEngine(token_delay=0.03)
    with running_app(eng) as (url, _):
        p = open_page(url)
        page = p.page
        p.wait_ready()
        page.fill("#question textarea", "What does Celcomen do?")
        page.press("#question textarea", "Enter")
        page.wait_for_selector("#chat .answer-text.streaming", timeout=T)
        page.fill("#question textarea", "How was it validated?")
        page.press("#question textarea", "Enter")
        page.wait_for_function(
            "document.querySelectorAll('#chat .turn').length == 2 && "
            "!document.querySelector('#chat .bubble.pending') && "
            "document.querySelectorAll('#chat .turn .answer-text').length == 2",
            timeout=T,
        )
        assert [c.question for c in eng.calls] == ["What does Celcomen do?", "How was it validated?"]
        assert [m["content"] for m in eng.calls[1].history if m["role"] == "user"] == [
            "What does Celcomen do?"
        ]


def test_new_chat_in_the_middle_of_an_answer(open_page):
    eng = FakeEngine(token_delay=0.03)
    with running_app(eng) as (url, _):
        p = open_page(url)
        page = p.page
        p.wait_ready()
        # the answer in flight does not leak into the new chat
        page.fill("#question textarea", "What is ProtPainter used for?")
        page.press("#question textarea", "Enter")
        page.wait_for_selector("#chat .answer-text.streaming", timeout=T)
        page.click("#new-chat")
        page.wait_for_selector("#chat .empty-state", timeout=T)
        # a streamed update already on its way must not bring the old turn back once things settle
        page.wait_for_timeout(1500)
        assert page.locator("#chat .turn").count() == 0 and page.locator("#chat .empty-state").count() == 1
        p.ask("What is RA-TTA?")
        assert eng.calls[-1].history == []
        assert page.locator("#chat .turn").count() == 1


def test_switching_model_profile_loads_it_once_with_a_visible_state(open_page):
    eng = FakeEngine(token_delay=0, profile_load_delay=1.5)
    with running_app(eng) as (url, _):
        p = open_page(url)
        page = p.page
        p.wait_ready()
        page.get_by_text("Settings", exact=True).click()
        page.locator("#profile input").click()
        page.get_by_role("option", name="smollm2").click()
        page.wait_for_selector(".status-banner.loading", timeout=T)
        assert "smollm2" in page.locator(".status-banner").inner_text()
        page.wait_for_selector(".status-banner.ready", timeout=T)
        assert "smollm2" in page.locator(".status-banner").inner_text()
        p.ask("What does Celcomen do?")
        assert eng.calls[-1].llm == "smollm2"
        assert page.locator("#chat a.cite-chip").count() >= 1
