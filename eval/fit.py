"""`rag eval-fit`: fit the outcome's bars (rag.grounding.outcome) on eval rows, and score them leave-one-file-out.

Input: run folders of `rag eval` (gate or generated; the decision signals don't depend on the draft), each
holding `rows.jsonl` from one question file. Logistic models over general signals:
- nothing relevant (a hard refusal): the best evidence score, the best chunk cosine, the best paper's
  rarity-weighted share of the question's words; labels: unanswerable (1) vs answerable (0);
- a part not stated (a caveat): the share of what the part asks that its papers' words hold, and its best
  sentence's score; per question the least covered part; labels the same. A "which paper" description's
  parts get a model of their own (WHICH), fitted on those rows only: what a missing description looks like
  differs from what a missing detail of a named paper does.
Each bar is the lowest probability whose answerable rate (hard refusals; caveats on what was asked) stays
within its budget on the files fitted on. Leave-one-file-out: fit on every file but one, score the one.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from pathlib import Path

import numpy as np

REFUSE = ("relevance", "cosine", "cover")
CAVEAT = ("cover", "thing", "score", "no_number", "which", "aspect", "gain")
WHICH = ("cover", "thing", "score", "missing", "elsewhere", "aspect")


def load(dirs: list[Path]) -> list[dict]:
    """Generated answer rows (not summaries or instructions) with their question file."""
    rows = []
    for d in dirs:
        if not (d / "rows.jsonl").exists():  # a scale the file has no questions for
            continue
        rep = json.loads((d / "report.json").read_text())
        name = Path(rep["config"]["questions"]["file"]).stem.replace("_questions", "")
        for line in (d / "rows.jsonl").read_text().splitlines():
            r = json.loads(line)
            if r.get("error") or not r.get("generated") or r.get("task") != "answer":
                continue
            if r.get("refusal_code") == "instruction" or not r.get("signals"):
                continue
            r["file"] = name
            rows.append(r)
    return rows


def part_xs(r: dict, keys: tuple[str, ...] = CAVEAT) -> list[list[float]]:
    """Each part's signals ([] when no part was read, e.g. a list)."""
    return [[p["signals"].get(k, 0.0) for k in keys] for p in r.get("parts") or [] if p.get("signals")]


def is_which(r: dict) -> bool:
    """A "which paper" description (its parts carry the `which` signal)."""
    return any(p["signals"].get("which") == 1.0 for p in r.get("parts") or [] if p.get("signals"))


def _fit(x: np.ndarray, y: np.ndarray) -> tuple[dict, float]:
    from sklearn.linear_model import LogisticRegression

    mean, sd = x.mean(axis=0), x.std(axis=0) + 1e-9
    m = LogisticRegression(C=1.0, class_weight="balanced").fit((x - mean) / sd, y)
    return (mean, sd, m.coef_[0]), float(m.intercept_[0])


def _p(model, intercept: float, x: np.ndarray) -> np.ndarray:
    mean, sd, w = model
    return 1.0 / (1.0 + np.exp(-(intercept + ((x - mean) / sd) @ w)))


def _bar(p: np.ndarray, y: np.ndarray, budget: float) -> float:
    """The lowest bar whose rate on the answerable (y == 0) stays within `budget`."""
    neg = np.sort(p[y == 0])[::-1]
    if not len(neg):
        return 0.5
    k = int(math.floor(budget * len(neg)))
    return float(neg[k] + 1e-6) if k < len(neg) else 0.0


def _caveat_fit(rows: list[dict], y: np.ndarray, standing: list[int], keys, budget: float) -> tuple:
    """A caveat model over every part of `rows`, its bar on each standing question's worst part."""
    xc = np.array([x for r in rows for x in part_xs(r, keys)])
    yc = np.array([y[i] for i, r in enumerate(rows) for _ in part_xs(r, keys)])
    cm, ci = _fit(xc, yc)
    worst = np.array([max(_p(cm, ci, np.array(part_xs(rows[i], keys)))) for i in standing])
    return cm, ci, _bar(worst, y[standing], budget)


def fit(rows: list[dict], refuse_budget: float, caveat_budget: float) -> dict:
    y = np.array([0 if r["answerable"] else 1 for r in rows])
    xr = np.array([[r["signals"].get(k, 1.0) for k in REFUSE] for r in rows])
    rm, ri = _fit(xr, y)
    rbar = _bar(_p(rm, ri, xr), y, refuse_budget)
    # every part of an unanswerable question counts as unstated (which one is not labelled); the caveat
    # budget counts answerable questions the refusal left standing
    standing = [i for i, r in enumerate(rows) if part_xs(r) and _p(rm, ri, xr[i : i + 1])[0] < rbar]
    model = {"refuse": (rm, ri, rbar), "caveat": _caveat_fit(rows, y, standing, CAVEAT, caveat_budget)}
    which = [i for i, r in enumerate(rows) if is_which(r)]
    if len({y[i] for i in which}) == 2:
        pos = {i: k for k, i in enumerate(which)}
        model["which"] = _caveat_fit(
            [rows[i] for i in which], y[which], [pos[i] for i in standing if i in pos], WHICH, caveat_budget
        )
    return model


def decide(model: dict, r: dict) -> tuple[bool, bool]:
    """(refused, caveat on what was asked) of one row under a fitted model, replayed from its signals."""
    rm, ri, rbar = model["refuse"]
    refused = float(_p(rm, ri, np.array([[r["signals"].get(k, 1.0) for k in REFUSE]]))[0]) >= rbar
    # caveats no fitted bar decides: a name no abstract mentions, a follow-up's paper that never mentions it
    terms = any(c["code"] in ("term_absent", "not_in_followed") for c in r.get("caveats") or [])
    lists = any(c["code"] == "partial_match" for c in r.get("caveats") or []) and not r.get("parts")
    keys, name = (WHICH, "which") if is_which(r) and "which" in model else (CAVEAT, "caveat")
    px = part_xs(r, keys)
    cm, ci, cbar = model[name]
    part = bool(px) and float(max(_p(cm, ci, np.array(px)))) >= cbar
    return refused, (terms or lists or part) and not refused


def score(model: dict, rows: list[dict]) -> dict:
    ans = [r for r in rows if r["answerable"]]
    una = [r for r in rows if not r["answerable"]]
    d = {id(r): decide(model, r) for r in rows}
    mean = lambda xs: sum(xs) / len(xs) if xs else None  # noqa: E731
    return {
        "n": len(rows),
        "answerable_hard_refused": mean([d[id(r)][0] for r in ans]),
        "answerable_caveat_on_asked": mean([d[id(r)][1] for r in ans]),
        "unanswerable_handled": mean([d[id(r)][0] or d[id(r)][1] for r in una]),
        "unanswerable_refused": mean([d[id(r)][0] for r in una]),
    }


def leave_one_file_out(rows: list[dict], refuse_budget: float, caveat_budget: float) -> dict:
    by = defaultdict(list)
    for r in rows:
        by[r["file"]].append(r)
    out = {}
    for f in sorted(by):
        train = [r for r in rows if r["file"] != f]
        out[f] = score(fit(train, refuse_budget, caveat_budget), by[f])
    return out


def as_settings(model: dict) -> dict:
    """The fitted models in the settings' form: feature -> (mean, sd, weight), intercept, bar."""
    out = {}
    for name, part, keys in (
        ("refuse", "refuse", REFUSE),
        ("caveat", "caveat", CAVEAT),
        ("which_caveat", "which", WHICH),
    ):
        if part not in model:
            continue
        (mean, sd, w), intercept, bar = model[part]
        out[f"{name}_model"] = {
            k: (round(float(m), 5), round(float(s), 5), round(float(x), 5))
            for k, m, s, x in zip(keys, mean, sd, w)
        }
        out[f"{name}_intercept"] = round(intercept, 5)
        out[f"{name}_bar"] = round(bar, 5)
    return out


def main(dirs: list[Path], out: Path, refuse_budget: float = 0.01, caveat_budget: float = 0.06) -> dict:
    rows = load(dirs)
    lofo = leave_one_file_out(rows, refuse_budget, caveat_budget)
    keys = ("answerable_hard_refused", "answerable_caveat_on_asked", "unanswerable_handled")
    summary = {
        k: {
            "mean": float(np.mean([v[k] for v in lofo.values() if v[k] is not None])),
            "worst": (max if k != "unanswerable_handled" else min)(
                v[k] for v in lofo.values() if v[k] is not None
            ),
        }
        for k in keys
    }
    final = fit(rows, refuse_budget, caveat_budget)
    report = {
        "budgets": [refuse_budget, caveat_budget],
        "lofo": lofo,
        "summary": summary,
        "all": score(final, rows),
        "settings": as_settings(final),
    }
    out.mkdir(parents=True, exist_ok=True)
    (out / "fit.json").write_text(json.dumps(report, indent=2))
    lines = [
        "# Outcome fit, leave one question file out",
        "",
        "| file | n | hard-refused | caveat on asked | unanswerable handled |",
        "|---|---:|---:|---:|---:|",
    ]
    fmt = lambda v: "–" if v is None else f"{v:.3f}"  # noqa: E731
    for f, v in lofo.items():
        lines.append(
            f"| {f} | {v['n']} | {fmt(v['answerable_hard_refused'])} | {fmt(v['answerable_caveat_on_asked'])} | {fmt(v['unanswerable_handled'])} |"
        )
    lines.append(
        f"| **mean** | | {fmt(summary[keys[0]]['mean'])} | {fmt(summary[keys[1]]['mean'])} | {fmt(summary[keys[2]]['mean'])} |"
    )
    lines.append(
        f"| **worst** | | {fmt(summary[keys[0]]['worst'])} | {fmt(summary[keys[1]]['worst'])} | {fmt(summary[keys[2]]['worst'])} |"
    )
    lines += [
        "",
        "Fitted on every file (paste into rag/settings.py):",
        "",
        "```",
        json.dumps(report["settings"], indent=1),
        "```",
    ]
    (out / "fit.md").write_text("\n".join(lines) + "\n")
    return report
