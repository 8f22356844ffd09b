"""Offline: refit the outcome models leave-one-file-out over stored rows, with variants of the part signals."""
import sys, json, copy
from pathlib import Path
import numpy as np
sys.path.insert(0, "/work/main")
import eval.fit as F
from rag.reading.reader import parts as read_parts, number_asked, asked_thing
from rag.grounding import outcome as O
from rag.text import content_words

root = Path(sys.argv[1])
dirs = [d for d in root.iterdir() if d.is_dir() and (d.name.endswith("-seeds") or d.name.endswith("-full"))]
rows = F.load(dirs)
print(len(rows), "rows")

def vacuous(text):
    number = number_asked(text)
    thing = number or asked_thing(text)
    return not (content_words(thing) - O.FRAME - O.HEADS)

for r in rows:
    for p in r.get("parts") or []:
        s = p.get("signals")
        if s:
            s["vacuous"] = float(vacuous(p["text"]))

def run(name, rows, caveat=F.CAVEAT, budget=0.06):
    old = F.CAVEAT
    F.CAVEAT = caveat
    lofo = F.leave_one_file_out(rows, 0.01, budget)
    F.CAVEAT = old
    ks = ("answerable_hard_refused", "answerable_caveat_on_asked", "unanswerable_handled")
    mean = {k: np.mean([v[k] for v in lofo.values() if v[k] is not None]) for k in ks}
    worst = {k: (max if k != "unanswerable_handled" else min)(v[k] for v in lofo.values() if v[k] is not None) for k in ks}
    print(f"{name:40s} " + "  ".join(f"{k[:22]} {mean[k]:.3f} ({worst[k]:.3f})" for k in ks))
    return lofo

base = run("baseline", rows)
# B: a part asking no thing: its thing share is its cover
rb = copy.deepcopy(rows)
for r in rb:
    for p in r.get("parts") or []:
        s = p.get("signals")
        if s and s["vacuous"]:
            s["thing"] = s["cover"]
run("thing=cover when no thing asked", rb)
run("+ vacuous feature", rb, F.CAVEAT + ("vacuous",))
run("baseline + vacuous feature", rows, F.CAVEAT + ("vacuous",))
run("baseline + missing", rows, F.CAVEAT + ("missing",))
run("B + missing", rb, F.CAVEAT + ("missing",))
if any("unnamed" in (p.get("signals") or {}) for r in rows for p in r.get("parts") or []):
    run("baseline + unnamed", rows, F.CAVEAT + ("unnamed",))
    run("B + unnamed", rb, F.CAVEAT + ("unnamed",))
from rag.grounding.kinds import kinds_asked
for r in rows:
    for p in r.get("parts") or []:
        s = p.get("signals")
        if s and "unnamed" in s:
            thing = number_asked(p["text"]) or asked_thing(p["text"])
            s["unnamed_kind"] = s["unnamed"] * float(bool(kinds_asked(thing)))
if any("unnamed" in (p.get("signals") or {}) for r in rows for p in r.get("parts") or []):
    run("baseline + unnamed_kind", rows, F.CAVEAT + ("unnamed_kind",))
    run("baseline + unnamed_all", rows, F.CAVEAT + ("unnamed_all",))
    import collections
    c = collections.Counter()
    for r in rows:
        for p in r.get("parts") or []:
            s = p.get("signals") or {}
            if "unnamed" in s:
                c[("ans" if r["answerable"] else "UNANS", s["unnamed"], s["unnamed_kind"])] += 1
    print(sorted(c.items()))
