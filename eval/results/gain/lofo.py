import sys, numpy as np
from pathlib import Path
sys.path.insert(0,'/work/main')
import eval.fit as F
root=Path(sys.argv[1])
F.CAVEAT=tuple(sys.argv[2].split(',')); F.WHICH=tuple(sys.argv[3].split(','))
rows=F.load(sorted(d for d in root.iterdir() if d.is_dir()))
lofo=F.leave_one_file_out(rows,0.01,float(sys.argv[4]) if len(sys.argv)>4 and sys.argv[4]!="-v" else 0.06)
for k in ("answerable_hard_refused","answerable_caveat_on_asked","unanswerable_handled"):
    vs=[v[k] for v in lofo.values() if v[k] is not None]
    print(f"{k:28s} {np.mean(vs):.3f} worst {(min if k=='unanswerable_handled' else max)(vs):.3f}")
if '-v' in sys.argv:
    for f,v in lofo.items(): print(f"{f:12s}", ' '.join(f"{v[k]:.3f}" if v[k] is not None else '  -  ' for k in ("answerable_hard_refused","answerable_caveat_on_asked","unanswerable_handled")))
