"""Shipped models (rag/settings.py of the tree it runs from) replayed over the rows of run folders."""
import sys
from pathlib import Path
import numpy as np
sys.path.insert(0, sys.argv[1])
import eval.fit as F
from rag.settings import Settings
def as_model(m, i, b):
    return (np.array([v[0] for v in m.values()]), np.array([v[1] for v in m.values()]), np.array([v[2] for v in m.values()])), i, b
g = Settings().grounding
F.CAVEAT = tuple(g.caveat_model)
m = {"refuse": as_model(g.refuse_model, g.refuse_intercept, g.refuse_bar),
     "caveat": as_model(g.caveat_model, g.caveat_intercept, g.caveat_bar),
     "which": as_model(g.which_caveat_model, g.which_caveat_intercept, g.which_caveat_bar)}
root = Path(sys.argv[2])
for scale in ("seeds", "full"):
    for ho in (False, True):
        rows = F.load([d for d in root.glob(f"*-{scale}") if d.is_dir() and "external" not in d.name])
        if ho: rows = [r for r in rows if 'heldout' in (r.get('split') or '') or (r.get('split') or '').endswith('-ho')]
        print(scale, 'heldout' if ho else 'all', {k: round(v, 3) for k, v in F.score(m, rows).items() if v is not None})
ext = F.load([root / "external_descriptions-full"])
print("human descriptions", {k: round(v, 3) for k, v in F.score(m, ext).items() if v is not None})
