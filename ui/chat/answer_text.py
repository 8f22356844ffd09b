"""An Answer as text: its sentence segments, citation labels and the copy-Markdown.

Nothing here emits HTML; `ui.chat.render` and `ui.chat.sources_html` escape what they take from here.
"""

from __future__ import annotations

import re

from rag.export import NUMBERS, cited_paper, retrieved_papers
from rag.prompts import REFUSAL
from rag.types import Answer

_TRAILING_MARKERS_RE = re.compile(rf"(?:[ \t]*\[{NUMBERS}\])+")


def refusal_text(indexed: str | None = None) -> str:
    """The refusal headline, naming what is indexed: "The 38 seed abstracts don't answer this question."."""
    if not indexed or indexed == "nothing indexed":
        return REFUSAL
    verb = "doesn't" if indexed.startswith("1 ") else "don't"
    return f"The {indexed} {verb} answer this question."


Segment = tuple[str, bool | None, list[int]]  # (text, supported, citation numbers)


def segments(answer: Answer) -> list[Segment]:
    """Split answer.answer into (text, supported, citations) pieces, keeping its layout.

    Each Sentence is located in the answer text in order; text between sentences is kept
    with supported=None. Sentences that can't be located are appended after the text.
    """
    text = answer.answer or ""
    segs: list[Segment] = []
    pos = 0
    missing = []
    for sent in answer.sentences or []:
        st = (sent.text or "").strip()
        if not st:
            continue
        i = text.find(st, pos)
        if i < 0:
            missing.append(sent)
            continue
        if i > pos:
            segs.append((text[pos:i], None, []))
        end = i + len(st)
        # markers written just after the sentence ("… data. [1]") belong to it
        trail = _TRAILING_MARKERS_RE.match(text, end)
        if trail:
            end = trail.end()
        segs.append((text[i:end], bool(sent.supported), list(sent.citations or [])))
        pos = end
    if pos < len(text):
        segs.append((text[pos:], None, []))
    for sent in missing:
        segs.append((" " + sent.text.strip(), bool(sent.supported), list(sent.citations or [])))
    return segs


def citation_labels(answer: Answer) -> dict[int, str]:
    papers = retrieved_papers(answer)
    return {c.n: f"[{c.n}] {cited_paper(c, papers).label}" for c in answer.citations}


def _one_line(text: str) -> str:
    return " ".join(text.split())


def answer_markdown(answer: Answer, indexed: str | None = None) -> str:
    """The answer as Markdown with a numbered reference list, for copying elsewhere (the renderer
    the chat export, `rag summarize --markdown` and `rag list` share: rag/export.py). `indexed`
    names the corpus in a refusal ("The 38 seed abstracts don't answer …")."""
    from rag.export import answer_markdown as render_answers

    md = render_answers([answer], chat=False)
    return md.replace(REFUSAL, refusal_text(indexed), 1) if answer.refused and indexed else md
