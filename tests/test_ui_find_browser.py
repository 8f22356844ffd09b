"""Find papers in a real browser (Playwright + Debian's headless Chromium): the real lister over the
300-paper conference sample, with conftest's scripted FakeLLM. Screenshots go to tests/artifacts/screenshots/
(`make screenshots`: eval/results/ui-screenshots/); axe-core audits the view in both colour schemes."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest

from tests import test_ui_browser as ui_browser
from tests.test_ui_browser import MOBILE, SCREENSHOTS, SERIOUS, VIEWPORT, axe_violations
from tests.ui_support import running_app

T = 180_000  # ms: a search embeds every candidate sentence, on 2 shared cores
PAGE = 5
browser, open_as = ui_browser.browser, ui_browser.open_as  # the browser tests' fixtures


@pytest.fixture(scope="module")
def sample_engine(sample_data_dir, embedder):
    from rag.answer import Engine
    from tests.conftest import FakeLLM, make_settings

    eng = Engine(make_settings(sample_data_dir, lister_candidates=60), embedder=embedder, llm=FakeLLM())
    eng.retriever.bm25()
    return eng


def _search(page, topic: str, decision: str | None = None):
    page.click("#tab-find-button")
    page.fill("#find-topic textarea", topic)
    page.click("#find-btn")
    page.wait_for_function(
        "document.querySelector('#find-table table.find-table') || document.querySelector('#find-summary .find-error')",
        timeout=T,
    )


def _wait_note(page, text: str):
    """Until the summary's note says `text` (the note before a search says something else)."""
    page.wait_for_function(
        f"(document.querySelector('#find-summary .find-note') || {{}}).textContent?.includes({text!r})",
        timeout=T,
    )


def test_find_papers_table_chart_chips_paging_and_export(sample_engine, open_as):
    with running_app(sample_engine, page_size=PAGE) as (url, _):
        p = open_as(url, scheme="light", accept_downloads=True)
        page = p.page
        p.wait_ready()
        assert "300 abstracts" in page.locator("#indexed").inner_text()
        _search(page, "orals about diffusion models")
        chip = page.locator("#chip-decision")
        assert "orals (from your topic)" in chip.inner_text()
        assert page.locator("#find-topic textarea").input_value() == "diffusion models"
        rows = page.locator("#find-table tbody tr")
        assert 1 <= rows.count() <= PAGE
        assert all(d == "Accept (Oral)" for d in rows.locator("td:nth-child(3)").all_inner_texts())
        link = rows.first.locator("td.title a:not(.like-link)")
        assert link.get_attribute("href").startswith("https://openreview.net/forum?id=")
        chart = page.locator("#find-chart")
        assert "By decision" in chart.inner_text() and "Accept (Oral)" in chart.inner_text()
        # the whole filtered list, downloaded as CSV (built in the server, saved by the page)
        with page.expect_download() as dl:
            page.click("#find-export-csv")
        assert dl.value.suggested_filename == "iclr-papers.csv"
        got = list(csv.reader(io.StringIO(Path(dl.value.path()).read_text())))
        total = int(page.locator("#find-summary strong").inner_text().split()[0].replace(",", ""))
        assert len(got) == total + 1 and {r[2] for r in got[1:]} == {"Accept (Oral)"}
        page.wait_for_function(
            "document.querySelector('#find-export-status .copy-msg').textContent.startsWith('Saved')",
            timeout=T,
        )
        # a new search clears it: "Saved …" belonged to the list it was saved from
        page.click("#find-btn")
        page.wait_for_function(
            "document.querySelector('#find-export-status .copy-msg').textContent === ''", timeout=T
        )
        # removing the chip lists every decision again
        chip.click()
        page.wait_for_function(
            "!document.querySelector('#chip-decision:not([hidden])') || "
            "getComputedStyle(document.querySelector('#chip-decision')).display === 'none'",
            timeout=T,
        )
        page.wait_for_function(
            "document.querySelectorAll('#find-chart table.by-decision tbody tr').length > 1", timeout=T
        )
        assert page.locator("#find-decision input").input_value() == "any"
        # paging
        caption = page.locator("#find-table caption")
        assert "page 1 of" in caption.inner_text()
        page.click("#find-next")
        page.wait_for_function(
            "document.querySelector('#find-table caption').textContent.includes('page 2 of')", timeout=T
        )
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SCREENSHOTS / "ui-find-light.png"), full_page=True)
        found = [v for v in axe_violations(page) if v["impact"] in SERIOUS]
        assert not found, [(v["id"], v["impact"], [n["target"] for n in v["nodes"]]) for v in found]
        # a filter value matching nothing: the valid values, not an empty table
        page.fill("#find-author textarea", "Zzyzx Nobody")
        page.click("#find-btn")
        err = page.locator("#find-summary .find-error")
        err.wait_for(timeout=T)
        assert "author matching 'Zzyzx Nobody'" in err.inner_text()
        assert page.locator("#find-table table").count() == 0
        # a topic no paper is about: the page says which words none of the closest papers covers
        page.fill("#find-author textarea", "")
        page.fill("#find-topic textarea", "knitting pattern generation with diffusion models")
        page.click("#find-btn")
        _wait_note(page, "is about")
        assert "never cover knitting" in page.locator("#find-summary .find-note").inner_text()
        assert page.locator("#find-table table").count() == 0
        # a new search clears it: "Saved …" belonged to the list it was saved from
        page.click("#find-btn")
        page.wait_for_function(
            "document.querySelector('#find-export-status .copy-msg').textContent === ''", timeout=T
        )
        page.wait_for_function("!document.querySelector('#find-topic textarea').disabled", timeout=T)
        # Gradio's loading veils fade out over a moment: wait them out before the screenshot
        page.wait_for_function(
            "Array.from(document.querySelectorAll('#find-summary .wrap.hide, #find-topic .wrap.hide'))"
            ".every(e => getComputedStyle(e).opacity === '0')",
            timeout=T,
        )
        page.screenshot(path=str(SCREENSHOTS / "ui-find-absent.png"), full_page=True)
        assert p.external_requests() == [] and not p.errors, p.errors


def test_a_mistyped_topic_is_found_mended_in_one_click(sample_engine, open_as):
    with running_app(sample_engine, page_size=PAGE) as (url, _):
        p = open_as(url, scheme="light")
        page = p.page
        p.wait_ready()
        page.click("#tab-find-button")
        page.fill("#find-topic textarea", "difusion models")
        page.click("#find-btn")
        _wait_note(page, "did you mean")
        assert "did you mean “diffusion”?" in page.locator("#find-summary .find-note").inner_text()
        page.locator("#find-summary a.retry-link").click()
        page.wait_for_selector("#find-table table.find-table", timeout=T)
        assert page.locator("#find-topic textarea").input_value() == "diffusion models"
        assert page.locator("#find-table tbody tr").count() >= 1
        assert p.external_requests() == [] and not p.errors, p.errors


@pytest.mark.parametrize(
    "scheme,viewport,name",
    [("dark", VIEWPORT, "ui-find-dark.png"), ("light", MOBILE, "ui-find-mobile.png")],
    ids=["dark-desktop", "light-mobile"],
)
def test_find_papers_dark_and_mobile_screenshots_and_axe(sample_engine, open_as, scheme, viewport, name):
    with running_app(sample_engine, page_size=PAGE) as (url, _):
        p = open_as(url, scheme=scheme, viewport=viewport)
        page = p.page
        p.wait_ready()
        _search(page, "reinforcement learning")
        assert page.locator("#find-table tbody tr").count() == PAGE
        # the table scrolls inside its box: the page never gets wider than the screen
        assert page.evaluate("document.documentElement.scrollWidth") <= viewport["width"]
        page.screenshot(path=str(SCREENSHOTS / name), full_page=True)
        found = [v for v in axe_violations(page) if v["impact"] in SERIOUS]
        assert not found, [(v["id"], v["impact"], [n["target"] for n in v["nodes"]]) for v in found]
        assert p.external_requests() == [] and not p.errors, p.errors
