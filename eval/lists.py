"""`rag eval-lists`: `rag list` quality on the gold topics of eval/data/list_topics.jsonl.

Each topic is listed once (with its filters) with no score bar, so every candidate's score is kept and the
bar (`lister_min_score`) can be swept afterwards without listing again. Per topic:

- recall: relevant papers listed / relevant papers;
- precision over judged papers: listed ∩ relevant / listed ∩ (relevant ∪ judged_not_relevant);
  listed papers nobody judged are counted apart as `unjudged` (not as wrong);
- seconds: the wall time of `list_papers` (no generation; the first topic also pays the BM25 load,
  so a warm-up list runs first).

The bar is chosen on split=calibration only: the issue's targets are two floors (recall ≥ 0.8 and judged
precision ≥ 0.8), so the bar maximises the worse of mean recall and mean precision (`balance`; ties to
the higher bar). Both halves are reported at it, the held-out half being the figure that counts.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from eval.lists_report import headline, to_markdown  # noqa: F401  (headline: `rag eval-lists` prints it)
from eval.metrics import percentile
from rag.errors import UserError
from rag.ingest.corpus import iter_jsonl

DEFAULT_TOPICS = Path("eval/data/list_topics.jsonl")
DEFAULT_ABSENT = Path("eval/data/list_absent_topics.jsonl")
SWEEP = [round(0.20 + 0.01 * i, 2) for i in range(51)]  # 0.20 .. 0.70


def load_topics(path: Path | str = DEFAULT_TOPICS, split: str | None = None) -> list[dict]:
    if not Path(path).is_file():
        raise UserError(f"{path}: topic file not found (default: {DEFAULT_TOPICS}).")
    out = []
    for lineno, t in iter_jsonl(Path(path)):
        for k in ("id", "topic", "relevant"):
            if k not in t:
                raise UserError(f"{path}:{lineno}: topic has no '{k}'")
        t.setdefault("judged_not_relevant", [])
        t.setdefault("filters", {})
        out.append(t)
    if split and split != "all":
        out = [t for t in out if t.get("split") == split]
    return out


def topic_filters(topic: dict):
    """A gold topic's filters (decision, area, author) as rag.retrieval.filters.Filters."""
    from rag.retrieval.filters import Filters

    fs = topic.get("filters") or {}
    return Filters.of(*(fs.get(k) for k in ("decision", "area", "author")))


def run_topics(retriever, settings, topics: list[dict], progress: bool = True) -> tuple[list[dict], float]:
    """List every topic with no bar: rows of (paper id, score) best first, candidates and seconds."""
    from rag.shapes.lister import list_papers

    t0 = time.perf_counter()
    list_papers(retriever, settings, "warm-up topic")  # BM25 load and first-call costs, not a list's time
    warm = time.perf_counter() - t0
    rows = []
    for t in topics:
        # every candidate with its score (no bar), from the pool as deep as the settings' bar takes it
        res = list_papers(
            retriever, settings, t["topic"], topic_filters(t), check_coverage=False, bar=float("-inf")
        )
        rows.append(
            {
                "id": t["id"],
                "split": t.get("split"),
                "topic": t["topic"],
                "filters": t["filters"],
                "candidates": res.candidates,
                "seconds": round(res.seconds, 3),
                "scored": [[x.paper.paper_id, round(x.score, 4)] for x in res.papers],
            }
        )
        if progress:
            print(f"{t['id']}: {res.candidates} candidates, {res.seconds:.2f}s", flush=True)
    return rows, warm


def _label(paper, rel: set[str], neg: set[str], f) -> float:
    """A candidate's gold label: 1 relevant, 0 judged not, nan unjudged or outside the topic's filter."""
    if f and not f.matches(paper):
        return float("nan")
    return 1.0 if paper.paper_id in rel else 0.0 if paper.paper_id in neg else float("nan")


def fit_model(retriever, settings, topics: list[dict], progress: bool = True, c: float = 1.0) -> dict:
    """The lister's logistic model (rag.shapes.list_score), fitted on the judged candidates of `topics` (the
    calibration half), and its bar chosen by leave-one-topic-out: each topic scored by a model fitted on
    the others, the bar with the best `balance` of mean recall and judged precision. Returns the settings
    (lister_model, lister_model_intercept, lister_min_score) and the leave-one-out table."""
    import numpy as np

    from rag.retrieval.filters import Filters
    from rag.shapes.list_score import FEATURES, fit_logistic, model_of, probability
    from rag.shapes.lister import candidate_features, candidates

    data = []  # per topic: (features, their matrix, labels: 1, 0 or nan, relevant count)
    for t in topics:
        # scored on the unfiltered pool as `rag list` is; a paper outside the topic's filter has no label
        f = topic_filters(t)
        hits = candidates(retriever, settings, t["topic"], Filters())
        feats = candidate_features(retriever, settings, t["topic"], hits)
        rel, neg = set(t["relevant"]), set(t["judged_not_relevant"])
        y = np.array([_label(h.paper, rel, neg, f) for h in hits])
        data.append((feats, np.column_stack([feats[k] for k in FEATURES]), y, len(rel)))
        if progress:
            print(f"{t['id']}: {len(hits)} candidates", flush=True)

    def fit(parts):
        """(lister_model, intercept) fitted on the judged candidates of these topics."""
        x = np.vstack([m[~np.isnan(y)] for _, m, y, _ in parts])
        y = np.concatenate([y[~np.isnan(y)] for *_, y, _ in parts])
        mean, sd = x.mean(axis=0), x.std(axis=0) + 1e-9
        w, b = fit_logistic((x - mean) / sd, y, c)
        return model_of(mean, sd, w), b

    bars = [round(0.2 + 0.05 * i, 2) for i in range(13)]
    loto = {bar: [] for bar in bars}
    for i, (feats, _, y, n_rel) in enumerate(data):
        p = probability(feats, *fit(data[:i] + data[i + 1 :]))
        for bar in bars:
            on = p >= bar
            found, judged = int(np.sum(on & (y == 1))), int(np.sum(on & ~np.isnan(y)))
            loto[bar].append((found / n_rel if n_rel else 0.0, found / judged if judged else 0.0))
    table = [
        {
            "bar": bar,
            "recall": round(float(np.mean([r for r, _ in v])), 4),
            "precision": round(float(np.mean([q for _, q in v])), 4),
            "f1": round(float(np.mean([_f1(r, q) for r, q in v])), 4),
        }
        for bar, v in loto.items()
    ]
    best = max(table, key=lambda x: (balance(x), x["bar"]))
    model, b = fit(data)
    return {
        "lister_model": {k: [round(x, 5) for x in v] for k, v in model.items()},
        "lister_model_intercept": round(b, 5),
        "lister_min_score": best["bar"],
        "topics": [t["id"] for t in topics],
        "leave_one_topic_out": table,
    }


def score_topic(row: dict, topic: dict, bar: float) -> dict:
    listed = {pid for pid, sc in row["scored"] if sc >= bar}
    rel, neg = set(topic["relevant"]), set(topic["judged_not_relevant"])
    judged = listed & (rel | neg)
    cands = {pid for pid, _ in row["scored"]}
    return {
        "id": topic["id"],
        "listed": len(listed),
        "relevant": len(rel),
        "found": len(listed & rel),
        "recall": len(listed & rel) / len(rel) if rel else None,
        "precision": len(listed & rel) / len(judged) if judged else None,
        "unjudged": len(listed - rel - neg),
        "false_positives": len(listed & neg),
        "candidate_recall": len(cands & rel) / len(rel) if rel else None,
    }


def _mean(xs) -> float | None:
    xs = [x for x in xs if x is not None]
    return round(sum(xs) / len(xs), 4) if xs else None


def balance(row: dict) -> float:
    """The worse of a row's mean recall and mean judged precision: what a pair of floors asks for."""
    return min(row["recall"] or 0.0, row["precision"] or 0.0)


def _f1(r: float | None, p: float | None) -> float:
    r, p = r or 0.0, p or 0.0
    return 2 * r * p / (r + p) if r + p else 0.0


def summarize(rows: list[dict], topics: dict[str, dict], bar: float) -> dict:
    per = [score_topic(r, topics[r["id"]], bar) for r in rows]
    secs = [r["seconds"] for r in rows]
    return {
        "n": len(rows),
        "recall": _mean(p["recall"] for p in per),
        "precision": _mean(p["precision"] for p in per),
        "f1": _mean(_f1(p["recall"], p["precision"]) for p in per),
        "candidate_recall": _mean(p["candidate_recall"] for p in per),
        "listed_mean": _mean(p["listed"] for p in per),
        "unjudged_mean": _mean(p["unjudged"] for p in per),
        "seconds_p50": round(percentile(secs, 50), 3) if secs else None,
        "seconds_p95": round(percentile(secs, 95), 3) if secs else None,
        "topics": per,
    }


def choose_bar(rows: list[dict], topics: dict[str, dict], sweep=SWEEP) -> tuple[float, list[dict]]:
    """The bar with the best `balance` on the given (calibration) rows; ties go to the higher bar."""
    table = []
    for bar in sweep:
        s = summarize(rows, topics, bar)
        table.append(
            {k: s[k] for k in ("recall", "precision", "f1", "listed_mean", "unjudged_mean")} | {"bar": bar}
        )
    best = max(table, key=lambda x: (balance(x), x["bar"]))
    return best["bar"], table


def main(
    settings,
    topics_path: Path | str | list = DEFAULT_TOPICS,
    out: Path | str = "eval/out/lists",
    bar: float | None = None,
    progress: bool = True,
    fit: bool = False,
    absent: Path | str | None = DEFAULT_ABSENT,
) -> dict:
    """List every topic, choose the bar on the calibration half (unless `bar` is given), report both
    halves; writes OUT/report.json, OUT/report.md and OUT/rows.jsonl. `fit`: first fit the lister's model
    on the calibration topics (`fit_model`, written to OUT/lister_model.json) and report with it."""
    from rag.index.index import Index
    from rag.models.minilm import QueryEmbedder
    from rag.retrieval.retrieve import Retriever

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    paths = topics_path if isinstance(topics_path, list | tuple) else [topics_path]
    topics = [t for p in paths for t in load_topics(p)]
    by_id = {t["id"]: t for t in topics}
    if len(by_id) < len(topics):
        raise UserError("Two topics share an id: give topic files with distinct ids.")
    index = Index(settings.storage)
    index.require()
    # as `rag list` runs
    retriever = Retriever(
        index, QueryEmbedder(settings.storage), settings.retrieval, settings.generation.context_papers
    )
    fitted = None
    if fit:
        fitted = fit_model(
            retriever, settings, [t for t in topics if t.get("split") == "calibration"], progress
        )
        (out / "lister_model.json").write_text(json.dumps(fitted, indent=2) + "\n")
        keep = ("lister_model", "lister_model_intercept", "lister_min_score")
        settings = settings.replace(lists={k: fitted[k] for k in keep} | {"lister_scoring": "model"})
    rows, warm = run_topics(retriever, settings, topics, progress)
    cal = [r for r in rows if r["split"] == "calibration"]
    chosen, sweep = choose_bar(cal, by_id)
    used = settings.lists.lister_min_score if bar is None else bar
    report = {
        "settings": {
            k: settings.value(k)
            for k in (
                "lister_candidates",
                "lister_deepen_share",
                "lister_max_candidates",
                "lister_scoring",
                "lister_min_score",
                "lister_cos_weight",
                "mode",
                "data_dir",
            )
        },
        "fitted": fitted,
        "papers": index.paper_count(),
        "chunks": index.count(),
        "warm_up_s": round(warm, 2),
        "bar_used": used,
        "bar_chosen_on_calibration": chosen,
        "calibration_sweep": sweep,
        "halves": {
            split: summarize([r for r in rows if r["split"] == split], by_id, used)
            for split in ("calibration", "heldout")
        },
        "all": summarize(rows, by_id, used),
    }
    if absent and Path(absent).is_file():
        at = settings.replace(lists={"lister_min_score": used})
        report["coverage"] = coverage(retriever, at, topics, load_absent(absent))
    report["settings"]["data_dir"] = str(report["settings"]["data_dir"])
    (out / "report.json").write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n")
    with (out / "rows.jsonl").open("w") as fh:
        for r in rows:
            fh.write(json.dumps(r, ensure_ascii=False) + "\n")
    (out / "report.md").write_text(to_markdown(report))
    return report


def coverage(retriever, settings, topics: list[dict], absent: list[dict]) -> dict:
    """`rag list` as a user runs it (rag.shapes.lister.find: the bar, then the empty-list check): which gold topics
    come back empty (none should) and which topics no paper is about do (all should); an empty list is
    given with the words its closest papers lack (or "-" when none clears the bar)."""
    from rag.shapes.lister import find

    def lacking(t: dict) -> list[str]:
        res = find(retriever, settings, t["topic"], topic_filters(t))
        return [] if res.papers else (res.lacking or ["-"])

    gold = {t["id"]: lacking(t) for t in topics}
    gone = {t["id"]: lacking(t) for t in absent}
    return {
        "gold_n": len(gold),
        "gold_emptied": {k: v for k, v in gold.items() if v},
        "absent_n": len(gone),
        "absent_emptied": sum(1 for v in gone.values() if v),
        "absent": gone,
    }


def load_absent(path: Path | str) -> list[dict]:
    """Topics no indexed paper is about (id, topic), each checked by grep when written."""
    out = []
    for lineno, t in iter_jsonl(Path(path)):
        if "id" not in t or "topic" not in t:
            raise UserError(f"{path}:{lineno}: an absent topic needs 'id' and 'topic'")
        out.append(t)
    return out
