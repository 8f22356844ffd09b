"""Screenshot of "Summarize them" after a list: python shot_summarize_them.py SEEDS_INDEX (from the repo root;
writes OUT/turn-2.png, collection iclr). The browser part is ../chat-list-requests/shot.py."""

import os
import runpy
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.argv = [
    "shot.py", sys.argv[1], "iclr", os.environ.get("OUT", "."),
    "Which papers are about diffusion models?", "Summarize them",
]  # fmt: skip
runpy.run_path(os.path.join(here, "..", "chat-list-requests", "shot.py"), run_name="__main__")
