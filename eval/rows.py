"""The rows of an eval run: one dict per (question, config), shared by eval/run.py and eval/baseline.py."""

from __future__ import annotations


def _pd(paper, score: float | None = None) -> dict:
    d = {
        "paper_id": paper.paper_id,
        "source_file": paper.source_file,
        "index": paper.index,
        "title": paper.title,
    }
    if score is not None:
        d["score"] = round(float(score), 6)
    return d


def history_msgs(q: dict) -> list[dict]:
    return [{"role": "user", "content": h} for h in q.get("history", []) if str(h).strip()]


def retrieval_query(q: dict, engine, top_k: int | None = None, mode=None) -> str:
    """The standalone question the engine itself searches with (`Engine.read`: history only when the
    question leans on it)."""
    return engine.read(q["question"], history_msgs(q), top_k, mode).query


def base_row(q: dict, config: str, gold: list, task: str) -> dict:
    return {
        "id": q["id"],
        "type": q["type"],
        "subtype": q.get("subtype"),
        "split": q.get("split"),
        "config": config,
        "task": task,
        "question": q["question"],
        "history": q.get("history", []),
        "gold": q.get("gold", []),
        "gold_keys": [sorted(g) for g in gold],
        "answerable": bool(gold),
        "facts": q.get("answer_facts", []),
    }
