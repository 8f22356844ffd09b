"""The web UI: a Gradio page over `rag.answer.Engine` (entry points in `ui.app`)."""

import os

import rag.settings  # noqa: F401  (offline env vars for the HF libraries)

# Set here, before any module of the package imports gradio: no calls to api.gradio.app.
os.environ["GRADIO_ANALYTICS_ENABLED"] = "False"
