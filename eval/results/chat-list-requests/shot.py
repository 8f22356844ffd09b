import subprocess, time, sys, os
from playwright.sync_api import sync_playwright
port = 7913
env = dict(os.environ, GRADIO_ANALYTICS_ENABLED="False", HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
srv = subprocess.Popen(["/work/main/.venv/bin/python", "-m", "iclr_rag", "serve", "--data-dir", "/work/seedsidx",
                        "--collection", "iclr", "--port", str(port), "--no-ingest-seeds"], cwd="/work/main", env=env,
                       stdout=open("/work/scratch/shots3/serve.log", "w"), stderr=subprocess.STDOUT)
try:
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path="/usr/bin/chromium", headless=True,
            args=["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update"])
        ctx = b.new_context(viewport={"width": 1440, "height": 1000}); page = ctx.new_page()
        for _ in range(120):
            try: page.goto(f"http://127.0.0.1:{port}/"); break
            except Exception: time.sleep(2)
        page.wait_for_selector("#send:not([disabled])", timeout=600_000)
        def ask(t):
            n = page.locator("#chat .turn").count()
            page.fill("#question textarea", t); page.click("#send")
            page.wait_for_function(f"document.querySelectorAll('#chat .turn').length > {n} && !document.querySelector('#chat .bubble.pending')", timeout=600_000)
        ask("Can you find papers that deal with diffusion models? Give me a list.")
        time.sleep(1)
        page.screenshot(path="/work/scratch/shots3/list-request.png", full_page=True)
        ask("Which of them is about cells, and what data do they use?")
        time.sleep(1)
        page.screenshot(path="/work/scratch/shots3/which-of-them.png", full_page=True)
        print(page.locator("#chat .turn").last.inner_text()[:1500])
        b.close()
finally:
    srv.terminate()
