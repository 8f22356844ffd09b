"""LOFO with each left-out file scored per scale (seeds / full), and pooled over files per scale."""
import sys, numpy as np
from pathlib import Path
sys.path.insert(0, '/work/main')
import eval.fit as F
root = Path(sys.argv[1]); F.CAVEAT = tuple(sys.argv[2].split(',')); budget = float(sys.argv[3])
rows = []
for d in sorted(d for d in root.iterdir() if d.is_dir()):
    for r in F.load([d]):
        r['scale_'] = d.name.rsplit('-', 1)[1]; rows.append(r)
files = sorted({r['file'] for r in rows})
pool = {'seeds': [], 'full': []}
for f in files:
    m = F.fit([r for r in rows if r['file'] != f], 0.01, budget)
    for sc in pool:
        rs = [r for r in rows if r['file'] == f and r['scale_'] == sc]
        d = {id(r): F.decide(m, r) for r in rs}
        pool[sc] += [(r['answerable'], d[id(r)], r.get('split') or '') for r in rs]
for sc, xs in pool.items():
    for ho in (False, True):
        ys = [x for x in xs if not ho or x[2] == 'heldout' or x[2].endswith('-ho')]
        ans = [d for a, d, _ in ys if a]; una = [d for a, d, _ in ys if not a]
        print(sc, 'heldout' if ho else 'all', 'n', len(ys), 'refused %.3f caveat %.3f handled %.3f' % (
            np.mean([d[0] for d in ans]), np.mean([d[1] for d in ans]), np.mean([d[0] or d[1] for d in una])))
if len(sys.argv) > 4:
    for f in files:
        m = F.fit([r for r in rows if r['file'] != f], 0.01, budget)
        for sc in ('seeds', 'full'):
            rs = [r for r in rows if r['file'] == f and r['scale_'] == sc]
            if not rs: continue
            d = {id(r): F.decide(m, r) for r in rs}
            ans = [d[id(r)] for r in rs if r['answerable']]; una = [d[id(r)] for r in rs if not r['answerable']]
            print(f'{f:22s} {sc:5s} caveat %s handled %s' % (f'{np.mean([x[1] for x in ans]):.3f}' if ans else '  -  ', f'{np.mean([x[0] or x[1] for x in una]):.3f} ({len(una)})' if una else '-'))
