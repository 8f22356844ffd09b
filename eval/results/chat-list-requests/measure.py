"""Chat list requests -> (shape, topic, filters) as the Reader reads them -> the one lister -> scored on gold."""
import json, sys
from pathlib import Path
sys.path.insert(0, '.')
from rag.settings import Settings
from rag.index.index import Index
from rag.models.minilm import QueryEmbedder
from rag.retrieval.retrieve import Retriever
from rag.retrieval.filters import filters_from_question
from rag.reading.reader import plain, shape, topic
from rag.reading import reader as R
from rag.shapes.lister import find
from eval.lists import load_topics, score_topic, load_absent

qpath, out = sys.argv[1], sys.argv[2]
settings = Settings(storage={'collection': 'iclr2025', 'data_dir': '/work/full'})
index = Index(settings.storage)
ret = Retriever(index, QueryEmbedder(settings.storage), settings.retrieval, settings.generation.context_papers)
gold = {}
for f in ['list_topics.jsonl', 'list_topics_fresh.jsonl', 'list_topics_fresh2.jsonl']:
    for t in load_topics('eval/data/' + f):
        gold[t['id']] = t
absent = {t['id']: t for t in load_absent('eval/data/list_absent_topics.jsonl')}
qs = [json.loads(l) for l in open(qpath)]
bare = {}
rows = []
for q in qs:
    tid = q['topic_id']
    asked = plain(R.without_venue(q['question'])) if hasattr(R, 'without_venue') else plain(q['question'])
    f, asked = filters_from_question(asked)
    kind, many = shape(asked)
    t = topic(asked)
    res = find(ret, settings, t, f)
    ids = [x.paper.paper_id for x in res.papers]
    row = dict(id=q['id'], topic_id=tid, question=q['question'], shape=kind, topic=t, n=len(ids), ids=ids)
    if tid not in bare:
        g = gold.get(tid) or absent.get(tid) or q
        b = find(ret, settings, g['topic'])
        bare[tid] = [x.paper.paper_id for x in b.papers]
    bs = set(bare[tid])
    row['jaccard_bare'] = len(bs & set(ids)) / len(bs | set(ids)) if bs | set(ids) else 1.0
    if tid in gold:
        s = score_topic({'scored': [[p, 1.0] for p in ids]}, gold[tid], 0.5)
        row.update(recall=s['recall'], precision=s['precision'])
    rows.append(row)
    print(f"{q['id']:8} {kind:8} n={len(ids):3} bare={len(bs):3} J={row['jaccard_bare']:.2f} | {t}", flush=True)
Path(out).write_text('\n'.join(json.dumps(r) for r in rows) + '\n')
import numpy as np
g = [r for r in rows if r['topic_id'] in gold]
a = [r for r in rows if r['topic_id'] in absent]
mean = lambda xs: float(np.mean([x for x in xs if x is not None])) if xs else float('nan')
print(f"list shape {np.mean([r['shape']=='list' for r in rows]):.3f}  gold: recall {mean([r['recall'] if r['shape']=='list' else 0 for r in g]):.3f} precision {mean([r['precision'] for r in g if r['shape']=='list']):.3f} jaccard-to-bare {mean([r['jaccard_bare'] for r in g]):.3f}  absent empty {np.mean([r['n']==0 for r in a]):.3f}")
