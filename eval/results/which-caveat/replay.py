import sys
from pathlib import Path
import numpy as np
sys.path.insert(0, "/work/main")
import eval.fit as F
from rag.settings import Settings
def as_model(m, i, b): return (np.array([v[0] for v in m.values()]), np.array([v[1] for v in m.values()]), np.array([v[2] for v in m.values()])), i, b
g = Settings().grounding
new = {"refuse": as_model(g.refuse_model, g.refuse_intercept, g.refuse_bar), "caveat": as_model(g.caveat_model, g.caveat_intercept, g.caveat_bar), "which": as_model(g.which_caveat_model, g.which_caveat_intercept, g.which_caveat_bar)}
old_ref = {"relevance": (0.50305, 0.183, -0.24726), "cosine": (0.56016, 0.13838, -0.31431), "cover": (0.64565, 0.23045, -0.27445)}
old_cav = {"cover": (0.6302, 0.29844, -0.06948), "thing": (0.80439, 0.35202, -0.17229), "score": (0.50659, 0.18192, -0.28607), "missing": (7.40622, 6.90333, -0.2705), "elsewhere": (2.28002, 3.99015, -0.0087), "no_number": (0.07902, 0.26977, 0.31461), "which": (0.21594, 0.41147, -0.41852), "aspect": (0.04223, 0.20112, 0.50401)}
old = {"refuse": as_model(old_ref, -0.08875, 0.75832), "caveat": as_model(old_cav, -0.14998, 0.69563)}
for scale in ("seeds", "full"):
    rows = F.load([d for d in Path("/work/scratch/runs").glob(f"*-{scale}") if d.is_dir()])
    for name, m in (("before", old), ("after", new)):
        sc = F.score(m, rows); print(scale, name, {k: round(v, 3) for k, v in sc.items() if v is not None})
ext = F.load([Path("/work/scratch/runs/external_descriptions-full")])
for name, m in (("before", old), ("after", new)):
    print("ext", name, {k: round(v, 3) for k, v in F.score(m, ext).items() if v is not None})
print("---- variants")
allrows = F.load([d for d in Path("/work/scratch/runs").glob("*-*") if d.is_dir()])
v1 = dict(old); v1["which"] = new["which"]
v2 = F.fit(allrows, 0.01, 0.06); v2.pop("which")
v3 = F.fit(allrows, 0.01, 0.06)
for name, m in (("V1 shipped shared models + description model (shipped)", v1), ("V2 all refit, no description model", v2), ("V3 all refit with the description model", v3)):
    for scale in ("seeds", "full"):
        rows = [r for r in allrows if r in F.load([d for d in Path("/work/scratch/runs").glob(f"*-{scale}") if d.is_dir()])] if False else F.load([d for d in Path("/work/scratch/runs").glob(f"*-{scale}") if d.is_dir()])
        print(name, scale, {k: round(v, 3) for k, v in F.score(m, rows).items() if v is not None and k != "n"})
    print(name, "ext", {k: round(v, 3) for k, v in F.score(m, ext).items() if v is not None and k != "n"})
