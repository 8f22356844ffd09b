"""Screenshots of a chat in the browser: python shot.py INDEX COLLECTION OUT QUESTION... (from the repo root).
Serves INDEX with `rag serve`, asks each question in turn in headless Chromium, and writes OUT/turn-N.png
after the Nth answer (1440 wide, full page)."""

import os
import subprocess
import sys
import time

from playwright.sync_api import sync_playwright

index, collection, out, questions = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
port = 7913
env = dict(os.environ, GRADIO_ANALYTICS_ENABLED="False", HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
serve = [sys.executable, "-m", "iclr_rag", "serve", "--data-dir", index, "--collection", collection]
srv = subprocess.Popen(
    [*serve, "--port", str(port), "--no-ingest-seeds"],
    env=env,
    stdout=open(f"{out}/serve.log", "w"),
    stderr=subprocess.STDOUT,
)
flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]
try:
    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path="/usr/bin/chromium", headless=True, args=[*flags, "--disable-component-update"]
        )
        page = browser.new_context(viewport={"width": 1440, "height": 1000}).new_page()
        for _ in range(120):
            try:
                page.goto(f"http://127.0.0.1:{port}/")
                break
            except Exception:
                time.sleep(2)
        page.wait_for_selector("#send:not([disabled])", timeout=600_000)
        for n, question in enumerate(questions, start=1):
            turns = page.locator("#chat .turn").count()
            page.fill("#question textarea", question)
            page.click("#send")
            done = f"document.querySelectorAll('#chat .turn').length > {turns}"
            page.wait_for_function(f"{done} && !document.querySelector('#chat .bubble.pending')", timeout=600_000)
            time.sleep(1)
            page.screenshot(path=f"{out}/turn-{n}.png", full_page=True)
            print(page.locator("#chat .turn").last.inner_text()[:1500])
        browser.close()
finally:
    srv.terminate()
