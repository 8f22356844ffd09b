import json,glob,gzip,sys,re
sys.path.insert(0,'.')
from rag.retrieval.names import named_terms
from rag.text import initials_pattern, flatten
terms={}
for f in glob.glob('eval/data/*.jsonl'):
    for l in open(f):
        r=json.loads(l)
        qs=[r.get('question','')]+[h.get('content','') if isinstance(h,dict) else str(h) for h in r.get('history') or []]
        for q in qs:
            for t in named_terms(q):
                if 2<=len(t)<=6 and t.isalpha(): terms.setdefault(t,set()).add(f.split('/')[-1]+':'+r['id'])
docs=[flatten(json.loads(l).get('title','')+' '+json.loads(l).get('abstract','')) for l in gzip.open('seeds/iclr2025.jsonl.gz','rt')]
out={}
for t in sorted(terms):
    p=initials_pattern(t)
    out[t]=sum(1 for d in docs if p and p.search(d))
json.dump({'counts':out,'rows':{t:sorted(v) for t,v in terms.items()}},open(sys.argv[1],'w'))
print(len(terms))
