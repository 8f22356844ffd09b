"""Summaries over the gold list topics: the papers a summary quotes against the judged lists (recall of the
relevant, precision over judged). Run with cwd = a checkout, so its rag/ is the one measured."""
import json, sys, os
sys.path.insert(0, os.getcwd())
from pathlib import Path
from rag.answer import Engine
from rag.models.embedder import get_embedder
from rag.settings import Settings
from tests.conftest import FakeLLM, make_settings
sys.path.insert(0, '/work/main')
from eval.lists import load_topics, topic_filters
from rag.retrieval.filters import Filters

files = ['eval/data/list_topics.jsonl', 'eval/data/list_topics_fresh.jsonl', 'eval/data/list_topics_fresh2.jsonl']
eng = Engine(make_settings(data_dir=Path('/work/full')), embedder=get_embedder(Settings()), llm=FakeLLM())
out = []
for f in files:
    for t in load_topics('/work/main/' + f):
        fl = topic_filters(t)
        ans = eng.ask(f"Summarize the work on {t['topic']}", task="summarize", filters=fl)
        cited = {c.paper_id for c in ans.citations}
        rel, neg = set(t['relevant']), set(t['judged_not_relevant'])
        judged = cited & (rel | neg)
        out.append(dict(id=t['id'], split=t.get('split'), n=len(cited), listed=ans.listed, recall=len(cited & rel) / len(rel) if rel else None,
                        precision=len(cited & rel) / len(judged) if judged else None, s=ans.timings.get('total_s')))
        print(json.dumps(out[-1]), flush=True)
for half in ('calibration', 'heldout', None):
    rs = [r for r in out if half is None or r['split'] == half]
    m = lambda k: sum(r[k] for r in rs if r[k] is not None) / max(1, sum(r[k] is not None for r in rs))
    print(half or 'all', len(rs), 'recall %.3f precision %.3f shown %.1f' % (m('recall'), m('precision'), m('n')))
