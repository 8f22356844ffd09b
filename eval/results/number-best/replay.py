"""Shipped models replayed over run rows: before (7d58bdd's models over runs at 13e6c75) and after (this
change's models over the same runs with the number-question rows re-run at the change). Paths are this
session's scratch folders."""

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, "/work/main")
import eval.fit as F  # noqa: E402
from rag.settings import Settings  # noqa: E402


def as_model(m, i, b):
    return (np.array([v[0] for v in m.values()]), np.array([v[1] for v in m.values()]), np.array([v[2] for v in m.values()])), i, b


g = Settings().grounding
new = {
    "refuse": as_model(g.refuse_model, g.refuse_intercept, g.refuse_bar),
    "caveat": as_model(g.caveat_model, g.caveat_intercept, g.caveat_bar),
    "which": as_model(g.which_caveat_model, g.which_caveat_intercept, g.which_caveat_bar),
}
old_cav = {"cover": (0.6302, 0.29844, -0.06948), "thing": (0.80439, 0.35202, -0.17229), "score": (0.50659, 0.18192, -0.28607), "missing": (7.40622, 6.90333, -0.2705), "elsewhere": (2.28002, 3.99015, -0.0087), "no_number": (0.07902, 0.26977, 0.31461), "which": (0.21594, 0.41147, -0.41852), "aspect": (0.04223, 0.20112, 0.50401)}
old_which = {"cover": (0.5663, 0.28242, -1.28435), "thing": (0.73831, 0.36654, 0.39132), "score": (0.46748, 0.17586, 0.09197), "missing": (11.79769, 7.2938, -0.72829), "elsewhere": (4.97492, 5.51977, -1.16453), "aspect": (0.21802, 0.4129, 1.1743)}
old = {"refuse": new["refuse"], "caveat": as_model(old_cav, -0.14998, 0.69563), "which": as_model(old_which, -0.87522, 0.75621)}
BEFORE, AFTER = Path(sys.argv[1]), Path(sys.argv[2])
for label, root, m in (("before", BEFORE, old), ("after", AFTER, new)):
    for scale in ("seeds", "full"):
        rows = F.load([d for d in root.glob(f"*-{scale}") if d.is_dir() and "external" not in d.name])
        print(label, scale, {k: round(v, 3) for k, v in F.score(m, rows).items() if v is not None})
    ext = F.load([root / "external_descriptions-full"])
    print(label, "human descriptions", {k: round(v, 3) for k, v in F.score(m, ext).items() if v is not None})
