import json, sys
a = {(r['file'], r['id']): r for r in map(json.loads, open(sys.argv[1]))}
b = {(r['file'], r['id']): r for r in map(json.loads, open(sys.argv[2]))}
for k in a:
    x, y = a[k], b.get(k)
    if y and (bool(x['left']) != bool(y['left']) or x['how'] != y['how']):
        print(x['type'][:5], k[0][:8], x['how'], bool(x['left']), '->', y['how'], bool(y['left']), '|', x['h'][-1][:40], '=>', x['q'][:90])
