"""Pool the per-request rows of measure.py: how many requests are read as lists, and how their lists compare with
the list of the bare topic (Jaccard) and, where judged, with the gold lists (recall, precision)."""

import json
import sys

import numpy as np


def mean(xs):
    xs = [x for x in xs if x is not None]
    return float(np.mean(xs)) if xs else float("nan")


def summary(path):
    rows = [json.loads(line) for line in open(path)]
    gold = [r for r in rows if "recall" in r]
    absent = [r for r in rows if "recall" not in r and r["topic_id"].startswith("a")]
    is_list = [r["shape"] == "list" for r in rows]
    out = {
        "requests": len(rows),
        "read as a list": mean(is_list),
        "Jaccard with the bare topic's list (0 when not read as a list)": mean(
            [r["jaccard_bare"] if r["shape"] == "list" else 0.0 for r in rows]
        ),
    }
    if gold:
        out["gold recall (0 when not read as a list)"] = mean(
            [r["recall"] if r["shape"] == "list" else 0.0 for r in gold]
        )
        out["gold precision, read as a list"] = mean([r["precision"] for r in gold if r["shape"] == "list"])
    if absent:
        out["absent topics: list read and empty"] = mean([r["shape"] == "list" and r["n"] == 0 for r in absent])
    return out


if __name__ == "__main__":
    runs = {p: summary(p) for p in sys.argv[1:]}
    keys = list(next(iter(runs.values())))
    print("| | " + " | ".join(runs) + " |")
    print("|---|" + "---:|" * len(runs))
    for k in keys:
        print(f"| {k} | " + " | ".join(f"{v[k]:.3f}" if isinstance(v[k], float) else str(v[k]) for v in runs.values()) + " |")
