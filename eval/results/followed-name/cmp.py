import json, glob, sys, collections
A, B = sys.argv[1], sys.argv[2]   # before, after
def load(d):
    out = {}
    for f in glob.glob(f"{d}/*/rows.jsonl"):
        run = f.split("/")[-2]
        for l in open(f):
            r = json.loads(l); out[(run, r["id"])] = r
    return out
a, b = load(A), load(B)
keys = sorted(set(a) & set(b))
print("rows", len(keys), "only before", len(set(a) - set(b)), "only after", len(set(b) - set(a)))
tot = collections.defaultdict(lambda: [0, 0, 0])
for k in keys:
    for m in ("handled", "caveat_on_asked", "hard_refused", "gold_cited", "cit_precision"):
        x, y = a[k]["scores"].get(m), b[k]["scores"].get(m)
        if x is None or y is None: continue
        t = tot[m]; t[0] += x; t[1] += y; t[2] += 1
        if x != y and m != "cit_precision":
            print(f"{m:16s} {x}->{y} {k[0][:22]:22s} {a[k].get('subtype')!s:22s} | {' || '.join(a[k]['history'])[:50]} => {a[k]['question'][:80]}")
for m, (x, y, n) in tot.items(): print(f"{m}: n={n} before {x/n:.3f} after {y/n:.3f}")
