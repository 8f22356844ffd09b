"""Pooled figures over one set of `rag eval` run folders (RUNS/<file>-<scale>/rows.jsonl): per scale, the human
descriptions apart. Citation precision, fact recall and the independent defect check average the rows that
have them; `gold_cited` is the share of answerable questions citing a gold paper. `--heldout`: only the held-out halves
(splits "heldout" and "*-ho")."""

import glob
import json
import sys
from collections import defaultdict

root = sys.argv[1]
heldout = "--heldout" in sys.argv[2:]
acc = defaultdict(lambda: defaultdict(list))
for f in sorted(glob.glob(f"{root}/*/rows.jsonl")):
    run = f.split("/")[-2]
    group = "human descriptions" if run.startswith("external") else run.rsplit("-", 1)[1]
    for line in open(f):
        r = json.loads(line)
        split = r.get("split") or ""
        if r.get("error") or heldout and not (split == "heldout" or split.endswith("-ho")):
            continue
        for k in (
            "cit_precision",
            "fact_recall",
            "defective",
            "gold_cited",
            "hard_refused",
            "caveat_on_asked",
            "handled",
        ):
            v = r["scores"].get(k)
            if v is not None and not (k == "fact_recall" and not r.get("facts")):
                acc[group][k].append(float(v))
        t = (r.get("timings") or {}).get("first_text_s")
        if t is not None:
            acc[group]["first_text_s"].append(t)
for group, d in acc.items():
    out = {k: (round(sum(v) / len(v), 3), len(v)) for k, v in d.items() if k != "first_text_s"}
    ft = sorted(d.get("first_text_s", []))
    if ft:
        out["first_text_p50"] = (round(ft[len(ft) // 2], 2), len(ft))
    print(group, json.dumps(out))
