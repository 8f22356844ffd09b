"""How the first message of a chat is read, with the engine's reader at conference scale (its retrieval check
included): the shape against the writer's intent (list | which | explain). Run from a checkout's root:

    python eval/results/list-followups/first.py eval/data/first_messages.jsonl OUT.json

Messages are the file's "message" (else "first", else "question"); with no "intent", a list is meant.
The index is /work/full (collection iclr2025), as `rag ingest --conference` builds it."""
import json, os, sys, collections
os.environ.setdefault("RAG_STORAGE__COLLECTION", "iclr2025")
sys.path.insert(0, '.')
from pathlib import Path
from rag.answer import Engine
from rag.settings import Settings
s = Settings(); s.storage.data_dir = Path('/work/full')
eng = Engine(s)
rows = [json.loads(l) for l in open(sys.argv[1])]
out, conf = [], collections.Counter()
for x in rows:
    q = x.get('message') or x.get('first') or x.get('question')
    r = eng.read(q, [])
    got = {'list': 'list', 'which': 'which', 'summary': 'list'}.get(r.shape, 'explain')
    conf[(x.get('intent', 'list'), got)] += 1
    out.append((x['id'], x.get('intent', 'list'), got, r.topic, q))
for k in sorted({a for a, _ in conf}):
    print(k, {g: n for (a, g), n in sorted(conf.items()) if a == k})
json.dump(out, open(sys.argv[2], 'w'), indent=0)
