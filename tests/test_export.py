"""Exports: CSV and BibTeX parse back; Markdown escapes corpus HTML."""

from __future__ import annotations

import csv
import io
import re

from rag.export import to_bibtex, to_csv, to_markdown
from rag.lister import Listed
from rag.types import Paper

EVIL = Paper(
    "AbC123xyz",
    "We study {braces} & 100% $x_1$ ~ costs. Second sentence.",
    "iclr2025.jsonl.gz",
    0,
    "<script>alert(1)</script> A {Brace} Title & 50%",
    "Accept (Oral)",
    ["José Núñez", "=cmd Doe"],
    "learning on graphs and other geometries &amp; topologies",
)
REJ = Paper("Zz9", "An abstract.", "iclr2025.jsonl.gz", 1, "Plain", "Reject", ["A B"], "optimization")
ITEMS = [Listed(EVIL, "We study {braces} & 100% $x_1$ ~ costs.", 0.8), Listed(REJ, "An abstract.", 0.6)]


def parse_bibtex(text: str) -> list[dict]:
    """A small parser: @type{key, field = {value with balanced braces}, ...}."""
    entries = []
    for m in re.finditer(r"@(\w+)\{([^,]+),", text):
        pos, fields = m.end(), {"type": m.group(1), "key": m.group(2)}
        while True:
            f = re.compile(r"\s*(\w+) = \{").match(text, pos)
            if not f:
                break
            depth, i = 1, f.end()
            while depth:
                if text[i] == "\\":
                    i += 2
                    continue
                depth += {"{": 1, "}": -1}.get(text[i], 0)
                i += 1
            fields[f.group(1)] = text[f.end() : i - 1]
            pos = i + 1 if text[i : i + 1] == "," else i
        entries.append(fields)
    return entries


def test_bibtex_parses_back():
    entries = parse_bibtex(to_bibtex(ITEMS))
    assert [e["type"] for e in entries] == ["inproceedings", "misc"]
    oral, rej = entries
    assert oral["key"] == "AbC123xyz" and oral["booktitle"] == "ICLR 2025" and oral["year"] == "2025"
    assert oral["author"] == "José Núñez and =cmd Doe"
    assert r"\{Brace\}" in oral["title"] and r"\&" in oral["title"] and r"\%" in oral["title"]
    assert oral["url"] == "https://openreview.net/forum?id=AbC123xyz"
    assert rej["note"] == "ICLR 2025 submission, Reject" and "booktitle" not in rej


def test_csv_parses_back():
    rows = list(csv.DictReader(io.StringIO(to_csv(ITEMS))))
    assert [r["paper_id"] for r in rows] == ["AbC123xyz", "Zz9"]
    assert rows[0]["title"] == EVIL.title and rows[0]["quote"] == ITEMS[0].quote
    assert rows[0]["primary_area"] == "learning on graphs and other geometries & topologies"
    assert rows[0]["authors"] == "José Núñez; =cmd Doe"  # a cell is neutralised only at its start
    assert rows[1]["score"] == "0.6000"


def test_markdown_escapes_html():
    md = to_markdown(ITEMS, heading="Papers on <b>x</b>")
    assert "<script>" not in md and "&lt;script&gt;" in md and "<b>" not in md
    assert md.startswith("# Papers on &lt;b&gt;x&lt;/b&gt;")
    assert "1. **[" in md and "2. **[" in md and "> We study" in md


def test_exporters_take_plain_papers():
    assert to_csv([REJ]).count("\n") == 2
    assert parse_bibtex(to_bibtex([REJ]))[0]["key"] == "Zz9"
