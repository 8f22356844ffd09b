"""Names and the kinds of thing they name, read off the bundled conference: "CIFAR-10" is a dataset and a
benchmark, "GPT-4" a model and an LLM. A sentence naming an instance of what a question asks for ("which
datasets …?") states it even without the kind's word; a paper naming none does not.

A name is a token with a digit or a capital after its first letter. Its kinds are the content words its
sentences use far more often than sentences do overall. The table is built once from the bundled abstracts
(`python -m rag.grounding.kinds`) and shipped beside them.
"""

from __future__ import annotations

import gzip
import json
from collections import Counter
from functools import lru_cache

import numpy as np

from rag.settings import SEEDS_DIR
from rag.text import WORD, content_words

KINDS_FILE = SEEDS_DIR / "iclr2025.kinds.json.gz"


def is_name(token: str) -> bool:
    """ "CIFAR-10", "ImageNet", "GPT-4", "MMLU": a digit or a capital after the first letter."""
    return (
        len(token) > 1
        and any(c.isdigit() or c.isupper() for c in token[1:])
        and any(c.isalpha() for c in token)
    )


def names_in(text: str) -> set[str]:
    return {t.lower() for t in WORD.findall(text) if is_name(t)}


def build(
    sentences, min_names: int = 5, min_share: float = 0.2, min_lift: float = 4.0
) -> dict[str, list[str]]:
    """name -> its kinds: the content words (stems) in at least `min_share` of the sentences naming it and
    `min_lift` times as often as in all sentences; names in fewer than `min_names` sentences are left out."""
    n_sent, df, named, both = 0, Counter(), Counter(), Counter()
    for s in sentences:
        n_sent += 1
        ws = content_words(s)
        df.update(ws)
        ns = names_in(s)
        named.update(ns)
        for t in ns:
            both.update((t, w) for w in ws if w != t)
    out: dict[str, list[str]] = {}
    for (t, w), k in both.items():
        n = named[t]
        if n >= min_names and k / n >= min_share and (k / n) / (df[w] / n_sent) >= min_lift:
            out.setdefault(t, []).append(w)
    return {t: sorted(ws) for t, ws in sorted(out.items())}


@lru_cache(maxsize=1)
def table() -> dict[str, frozenset[str]]:
    """The shipped table (empty when the file is absent)."""
    if not KINDS_FILE.exists():
        return {}
    with gzip.open(KINDS_FILE, "rt", encoding="utf-8") as f:
        return {t: frozenset(ws) for t, ws in json.load(f).items()}


@lru_cache(maxsize=1)
def instances() -> dict[str, int]:
    """kind -> how many names are of that kind."""
    return Counter(w for ws in table().values() for w in ws)


def kinds_asked(thing: str, min_instances: int = 20) -> set[str]:
    """The kind a question asks for, its head word ("which base LLM" -> {"llm"}, "registration datasets" ->
    {"dataset"}), when enough names are of that kind; else empty."""
    ws = [w for w in WORD.findall(thing) if content_words(w)]
    head = content_words(ws[-1]) if ws else set()
    have = instances()
    return {w for w in head if have.get(w, 0) >= min_instances}


def names_a(text: str, kinds: set[str]) -> bool:
    """Whether the text names an instance of one of `kinds`."""
    t = table()
    return any(t.get(n, frozenset()) & kinds for n in names_in(text))


def naming(thing: str, texts: list[str]) -> tuple[set[str], np.ndarray]:
    """(the kind a question asks for, which of `texts` name an instance of it); no kind: all False."""
    kinds = kinds_asked(thing) if thing else set()
    return kinds, np.array([bool(kinds) and names_a(t, kinds) for t in texts], dtype=bool)


def main() -> None:
    from rag.ingest.corpus import read_file
    from rag.settings import CONFERENCE_FILE
    from rag.text import sentence_spans

    sents = (p.text[a:b] for p in read_file(CONFERENCE_FILE) for a, b in sentence_spans(p.text))
    built = build(sents)
    with gzip.open(KINDS_FILE, "wt", encoding="utf-8") as f:
        json.dump(built, f, separators=(",", ":"), sort_keys=True)
    print(f"{len(built):,} names -> {KINDS_FILE}")


if __name__ == "__main__":
    main()
