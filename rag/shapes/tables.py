"""Papers side by side, each cell quoted from that paper's abstract or "not stated": a question asked of
every paper of a list ("what data do they use?"), and a comparison (problem, method, data, result).
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from rag import prompts
from rag.grounding.evidence import EvidenceSet, quoted
from rag.grounding.outcome import answer_part
from rag.grounding.turn import Turn
from rag.reading.reader import PICK, Part
from rag.shapes.list_answer import listed_sentence
from rag.shapes.lister import Listed, find
from rag.text import CONTRIBUTION, content_words
from rag.types import Caveat, Table

# what each compare column asks of an abstract, scored like a question against its sentences
COLUMNS = {
    "Problem": "the problem, challenge or limitation of existing methods that this work addresses",
    "Method": "we propose a new method, model or framework that works by",
    "Data or benchmarks": "experiments on datasets and benchmarks, evaluated on tasks",
    "Main result": "results show it outperforms baselines, improves accuracy and achieves state of the art",
}


def _render(table: Table, evset: EvidenceSet) -> str:
    """The table as plain text: each paper, then a line per column."""
    lines = []
    for n, cells in table.rows:
        lines.append(f"[{n}] {evset.hits[n - 1].paper.label}")
        for col, cell in zip(table.columns, cells):
            lines.append(f"  {col}: " + (f"{cell} [{n}]" if cell else "not stated in the abstract"))
    return "\n".join(lines)


def per_paper(turn: Turn) -> Iterator:
    """The question answered for each paper of the list it follows: one row each, the paper's best sentence
    for it, or "not stated in the abstract" where the part's caveat model says the paper doesn't state it
    (rag.outcome.answer_part, the same decision as for any question's part). "Which of them is about X (, and
    what data do they use)?" first keeps the listed papers on X (`_pick`)."""
    reading, evset = turn.reading, turn.evidence
    papers = list(range(1, len(evset.hits) + 1))
    if reading.how == PICK:
        picked = _pick(turn, papers, reading.topic)
        if not picked:
            turn.outcome.caveats.append(
                Caveat("not_stated", prompts.NO_PICK.format(n=len(papers), what=reading.topic), 0)
            )
            yield from turn.outcome.caveats
            yield turn.answer([], text=turn.outcome.caveats[-1].text)
            return
        papers = list(picked)
        if not reading.parts:  # "which of them is about biology?": the sentence that shows it
            cells = [listed_sentence(picked[n], n) for n in papers]
            rows = [(n, [c.text]) for n, c in zip(papers, cells, strict=True)]
            yield from _table(turn, [reading.topic], rows, cells, picked)
            return
    part = reading.parts[0] if reading.parts else Part(reading.asked)
    lexical = turn.retriever.bm25()
    rows, sentences = [], []
    for n in papers:
        pa = answer_part(part, reading, evset, [n], turn.judge, lexical.idf, turn.settings, lexical.known)
        cell = quoted(pa.quotes[0]) if pa.caveat is None and pa.quotes else None
        rows.append((n, [cell.text if cell else None]))
        sentences += [cell] if cell else []
    yield from _table(
        turn,
        [part.text if reading.how == PICK else reading.asked],
        rows,
        sentences,
        papers if reading.how == PICK else None,
    )


def _pick(turn: Turn, papers: list[int], what: str) -> dict[int, Listed]:
    """The listed papers (source numbers) that the one lister finds on `what` and whose abstract uses a word
    of it: the lister's bar alone, on a small index, lets in papers that never do ("cells" of two of the six
    seed papers on diffusion)."""
    hits = turn.evidence.hits
    on = {
        x.paper.paper_id: x
        for x in find(turn.retriever, turn.settings, what).papers
        if content_words(what) & content_words(f"{x.paper.title} {x.paper.text}")
    }
    return {n: on[hits[n - 1].paper.paper_id] for n in papers if hits[n - 1].paper.paper_id in on}


def _table(turn: Turn, columns: list[str], rows, sentences, kept=None) -> Iterator:
    """`kept`: the listed papers a pick kept, which later follow-ups ("the second one", "summarize them") mean."""
    table = Table(columns, rows)
    text = _render(table, turn.evidence)
    yield text
    hits = turn.evidence.hits
    narrowed = {} if kept is None else {"follows_list": [hits[n - 1].paper.paper_id for n in kept]}
    yield turn.answer(sentences, text=text, table=table, **narrowed)


def compare(turn: Turn, positions: list[int]) -> Iterator:
    """Two or more papers as a table: rows are the papers, columns what each is about (COLUMNS), each cell
    the paper's sentence that best says it (each sentence used once), or "not stated"."""
    rows, sentences = [], []
    for n in positions:
        cells, said = _aspects(turn, n)
        if cells is not None:
            rows.append((n, cells))
            sentences += [quoted(e) for e in said]
    yield from _table(turn, list(COLUMNS), rows, sentences)


def overview(turn: Turn) -> Iterator:
    """ "Tell me more about the third one": the paper's sentences on its problem, method, data and result
    (COLUMNS), in the abstract's order, each cited."""
    _, said = _aspects(turn, 1, bar=-np.inf)  # a sentence for each, however weak: the paper's own words
    sentences = [quoted(e) for e in said]
    text = "\n".join(f"{x.text} [{x.citations[0]}]" for x in sentences)
    yield text
    yield turn.answer(sentences, text=text)


def _aspects(turn: Turn, n: int, bar: float | None = None) -> tuple[list[str | None] | None, list]:
    """Paper `n`'s sentence for each of COLUMNS (the best column-sentence pairs first, each sentence once) or
    None (scoring under `bar`, default `compare_min`), and the sentences used, in the abstract's order; (None, [])
    when it has no evidence."""
    g, names = turn.settings.grounding, list(COLUMNS)
    own = [e for e in turn.evidence.every if e.paper_n == n]
    if not own:
        return None, []
    score = np.stack([turn.judge.scores(COLUMNS[c], own) for c in names])  # columns x sentences
    score[names.index("Method")] += g.contribution_bonus * np.array(
        [bool(CONTRIBUTION.search(e.text)) for e in own]
    )
    cells: list[str | None] = [None] * len(names)
    used: set[int] = set()
    for flat in np.argsort(-score, axis=None):
        c, i = divmod(int(flat), len(own))
        if cells[c] is not None or i in used or score[c, i] < (g.compare_min if bar is None else bar):
            continue
        cells[c], used = quoted(own[i]).text, used | {i}
    return cells, [own[i] for i in sorted(used, key=lambda i: own[i].start)]
