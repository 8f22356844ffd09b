# runs3 with the variant's rows put in place of the same question ids (number questions only re-run)
import json, glob, shutil, os
from pathlib import Path
src, var, out = "/work/scratch/runs3", "/work/scratch/num/runs", "/work/scratch/num/merged"
shutil.rmtree(out, ignore_errors=True)
for d in glob.glob(f"{src}/*/"):
    run = Path(d).name
    if not (Path(d) / "rows.jsonl").exists():
        continue
    o = Path(out) / run; o.mkdir(parents=True)
    shutil.copy(Path(d) / "report.json", o / "report.json")
    new = {}
    vf = Path(var) / run / "rows.jsonl"
    if vf.exists():
        for l in open(vf):
            r = json.loads(l); new[r["id"]] = l
    with open(o / "rows.jsonl", "w") as w:
        for l in open(Path(d) / "rows.jsonl"):
            r = json.loads(l); w.write(new.get(r["id"], l))
print("merged", len(os.listdir(out)))
