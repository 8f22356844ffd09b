"""Row-by-row: two eval roots over the same files. Means of per-row scores over rows in both, and the rows
whose outcome changed (refused, caveat codes, cited papers)."""
import json, glob, sys, collections
A, B = sys.argv[1], sys.argv[2]
def load(d):
    out = {}
    for f in glob.glob(f"{d}/*/rows.jsonl"):
        run = f.split("/")[-2]
        for l in open(f):
            r = json.loads(l); out[(run, r["id"])] = r
    return out
a, b = load(A), load(B)
keys = sorted(set(a) & set(b))
print("rows", len(keys))
tot = collections.defaultdict(lambda: [0.0, 0.0, 0])
changed = collections.Counter()
for k in keys:
    x, y = a[k], b[k]
    for m in ("fact_recall", "cit_precision", "gold_cited", "defective", "handled", "caveat_on_asked", "hard_refused"):
        u, v = x["scores"].get(m), y["scores"].get(m)
        if u is None or v is None: continue
        t = tot[m]; t[0] += u; t[1] += v; t[2] += 1
    codes = lambda r: sorted(c["code"] for c in r.get("caveats") or [])
    cited = lambda r: sorted(c.get("paper_id") or c.get("id") or str(c) for c in (r.get("cited") or []))
    if x["refused"] != y["refused"]: changed["refused"] += 1
    if codes(x) != codes(y): changed["caveats"] += 1
    if cited(x) != cited(y): changed["cited"] += 1
    if x["answer"] != y["answer"]: changed["answer"] += 1
    fr = (x["scores"].get("fact_recall"), y["scores"].get("fact_recall"))
    if len(sys.argv) > 3 and fr[0] is not None and fr[0] != fr[1]:
        print(f"  fact {fr[0]}->{fr[1]} {k[0][:20]} {k[1]} | {x['question'][:70]}")
for m, (u, v, n) in tot.items(): print(f"{m:16s} n={n:4d} before {u/n:.3f} after {v/n:.3f}")
print("rows changed:", dict(changed))
