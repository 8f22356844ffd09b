"""Per-kind share read as its kind, and how many other follow-ups were read as it: summarize.py OUT.json..."""

import json
import sys

for path in sys.argv[1:]:
    # a new topic is read as an ordinary question: any reading that is no list follow-up ("other:…")
    rows = [
        (i, k, "new_topic" if got.startswith("other") else got, *rest)
        for i, k, got, *rest in json.load(open(path))
    ]
    kinds = sorted({r[1] for r in rows})
    right = {k: sum(r[1] == k and r[2] == k for r in rows) for k in kinds}
    n = {k: sum(r[1] == k for r in rows) for k in kinds}
    wrongly = {k: sum(r[1] != k and r[2] == k for r in rows) for k in kinds}
    cells = " | ".join(f"{right[k]}/{n[k]}" + (f" (+{wrongly[k]})" if wrongly[k] else "") for k in kinds)
    total = sum(right.values()) / len(rows)
    print(f"| {path.split('/')[-1]} | {cells} | {total:.3f} |")
print("kinds:", " | ".join(kinds))
