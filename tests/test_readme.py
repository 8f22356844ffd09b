"""README.md: its settings table is `rag settings --common` (so it cannot go stale), it stays a user's page,
and every repository path it names exists."""

from __future__ import annotations

import re
from pathlib import Path

from typer.testing import CliRunner

from iclr_rag.cli import app, setting_flags
from iclr_rag.settings_table import COMMON, markdown
from rag.settings import GROUP_OF

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
START = "<!-- settings table: `rag settings --common`, checked by tests/test_readme.py -->\n"
END = "\n<!-- end of settings table -->"


def test_settings_table_is_generated():
    table = README.split(START, 1)[1].split(END, 1)[0]
    assert table == markdown(setting_flags(), common=True), (
        "run `rag settings --common` and paste it into README.md"
    )


def test_settings_command_prints_every_setting():
    r = CliRunner().invoke(app, ["settings"])
    assert r.exit_code == 0, r.output
    names = re.findall(r"^\| \w+ \| `(\w+)` \|", r.output, flags=re.M)
    assert sorted(names) == sorted(GROUP_OF)
    assert set(COMMON) <= set(names)
    assert (
        "/work/" not in r.output and str(ROOT) not in r.output
    )  # defaults written as computed, not local paths


def test_readme_is_for_users():
    assert 150 <= len(README.splitlines()) <= 250
    commit = r"\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}\b"
    assert not re.search(rf"\bsessions?\b|{commit}", README), "no session numbers or commit hashes in README"
    assert "/work/" not in README
    quality = README.split("## Quality\n", 1)[1].split("\n## ", 1)[0]
    # one table, linked to its runs
    assert "eval/results/outcome-fit/" in quality and quality.count("\n|") >= 5


def test_readme_paths_exist():
    for path in re.findall(r"`((?:rag|eval|seeds|tests|ui|iclr_rag)/[\w./-]+)`", README):
        assert path.startswith("tests/artifacts/") or (ROOT / path).exists(), path  # artifacts: test output
    for path in re.findall(r"\]\(((?:eval|docs)/[^)]+)\)", README):
        assert (ROOT / path).exists(), path
