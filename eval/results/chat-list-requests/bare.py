"""The same gold scores for the bare topics themselves (what `rag list TOPIC` lists): the ceiling the requests
are compared with. Run from a checkout: python eval/results/chat-list-requests/bare.py"""

import sys

import numpy as np

sys.path.insert(0, ".")
from eval.lists import load_topics, score_topic  # noqa: E402
from rag.index.index import Index  # noqa: E402
from rag.models.minilm import QueryEmbedder  # noqa: E402
from rag.retrieval.retrieve import Retriever  # noqa: E402
from rag.settings import Settings  # noqa: E402
from rag.shapes.lister import find  # noqa: E402

settings = Settings(storage={"collection": "iclr2025", "data_dir": "/work/full"})
ret = Retriever(
    Index(settings.storage), QueryEmbedder(settings.storage), settings.retrieval, settings.generation.context_papers
)
rows = []
for f in ["list_topics.jsonl", "list_topics_fresh.jsonl", "list_topics_fresh2.jsonl"]:
    for t in load_topics("eval/data/" + f):
        ids = [x.paper.paper_id for x in find(ret, settings, t["topic"]).papers]
        rows.append(score_topic({"scored": [[p, 1.0] for p in ids]}, t, 0.5))
rec = np.mean([r["recall"] for r in rows if r["recall"] is not None])
prec = np.mean([r["precision"] for r in rows if r["precision"] is not None])
print(f"bare topics: {len(rows)} topics, gold recall {rec:.3f}, gold precision {prec:.3f}")
