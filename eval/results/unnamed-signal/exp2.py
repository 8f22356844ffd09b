"""Offline LOFO: the part-caveat model as gradient-boosted trees instead of a logistic model."""
import sys, json, copy
from pathlib import Path
from collections import defaultdict
import numpy as np
sys.path.insert(0, "/work/main")
import eval.fit as F
from rag.reading.reader import number_asked, asked_thing
from rag.grounding import outcome as O
from rag.text import content_words
from sklearn.ensemble import HistGradientBoostingClassifier, RandomForestClassifier
from sklearn.linear_model import LogisticRegression

root = Path(sys.argv[1])
dirs = [d for d in root.iterdir() if d.is_dir() and (d.name.endswith("-seeds") or d.name.endswith("-full"))]
rows = F.load(dirs)
def vacuous(text):
    number = number_asked(text)
    thing = number or asked_thing(text)
    return not (content_words(thing) - O.FRAME - O.HEADS)
for r in rows:
    for p in r.get("parts") or []:
        s = p.get("signals")
        if s: s["vacuous"] = float(vacuous(p["text"]))
KEYS = tuple(sys.argv[2].split(",")) if len(sys.argv) > 2 else F.CAVEAT + ("missing", "elsewhere", "vacuous")
MAKE = {
    "logistic": lambda: LogisticRegression(max_iter=1000),
    "gbt": lambda: HistGradientBoostingClassifier(max_depth=3, max_iter=100, learning_rate=0.05, random_state=0),
    "rf": lambda: RandomForestClassifier(n_estimators=200, min_samples_leaf=10, random_state=0, n_jobs=1),
}
def xs(r, keys): return F.part_xs(r, keys)

def run(kind, keys):
    by = defaultdict(list)
    for r in rows: by[r["file"]].append(r)
    res = {}
    for f in sorted(by):
        train = [r for r in rows if r["file"] != f]
        base = F.fit(train, 0.01, 0.06)
        rm, ri, rbar = base["refuse"]
        y = np.array([0 if r["answerable"] else 1 for r in train])
        refused = lambda r: float(F._p(rm, ri, np.array([[r["signals"].get(k, 1.0) for k in F.REFUSE]]))[0]) >= rbar
        tr = [r for r in train if not F.is_which(r)]
        X = np.array([x for r in tr for x in xs(r, keys)]); Y = np.array([0 if r["answerable"] else 1 for r in tr for _ in xs(r, keys)])
        m = MAKE[kind](); m.fit(X, Y)
        standing = [r for r in tr if xs(r, keys) and not refused(r)]
        worst = np.array([m.predict_proba(np.array(xs(r, keys)))[:, 1].max() for r in standing])
        ys = np.array([0 if r["answerable"] else 1 for r in standing])
        bar = F._bar(worst, ys, 0.06)
        out = []
        for r in by[f]:
            rf_, cav = F.decide(base, r)
            if not F.is_which(r) and xs(r, keys) and not rf_:
                terms = any(c["code"] in ("term_absent", "not_in_followed") for c in r.get("caveats") or [])
                cav = terms or m.predict_proba(np.array(xs(r, keys)))[:, 1].max() >= bar
            out.append((r["answerable"], rf_, cav))
        ans = [o for o in out if o[0]]; una = [o for o in out if not o[0]]
        res[f] = (np.mean([o[1] for o in ans]) if ans else None, np.mean([o[2] for o in ans]) if ans else None,
                  np.mean([o[1] or o[2] for o in una]) if una else None)
    for i, name in enumerate(("refused", "caveat_on_asked", "unans_handled")):
        v = [x[i] for x in res.values() if x[i] is not None]
        print(f"{kind:9s} {name}: mean {np.mean(v):.3f} worst {(min if i == 2 else max)(v):.3f}", end=" | ")
    print()
for kind in ("logistic", "gbt", "rf"):
    run(kind, KEYS)
run("logistic", F.CAVEAT)
