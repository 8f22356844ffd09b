"""Score decision questions ("was it accepted?") over the seeds: python eval/results/decision-questions/score.py
SET.jsonl OUT.json [DATA_DIR]. Each conversation is asked turn by turn (quote answers, no generator); its last
turn must be answered from the index's decisions about the papers it names (kinds A, B) or not (kind C)."""

import json
import os
import sys
from pathlib import Path

sys.path.insert(0, ".")
os.environ.setdefault("RAG_STORAGE__COLLECTION", "iclr")
from rag.answer import Engine  # noqa: E402
from rag.errors import UserError  # noqa: E402
from rag.settings import Settings  # noqa: E402

rows = [json.loads(x) for x in open(sys.argv[1]) if x.strip()]
s = Settings()
s.storage.data_dir = Path(sys.argv[3] if len(sys.argv) > 3 else "/work/seedsidx")
eng = Engine(s)
out, tally = [], {}
for r in rows:
    hist = []
    for q in r["turns"]:
        try:
            a = eng.ask(q, hist)
        except UserError as e:  # shown as a clear error; the chat goes on without this turn
            a = None
            print("  error:", e)
            continue
        hist += a.as_turns()
    over = [h.paper.paper_id for h in a.retrieved] if a and a.shape == "decision" else []
    shape = a.shape if a else "error"
    if r["asks_decision"]:
        ok = shape == "decision" and set(r["papers"]) <= set(over)
    else:
        ok = shape != "decision"
    k = tally.setdefault(r["kind"], [0, 0])
    k[0] += ok
    k[1] += 1
    out.append({"id": r["id"], "ok": ok, "shape": shape, "over": over, "last": r["turns"][-1], "answer": a.answer if a else ""})
    print(r["id"], "ok" if ok else "MISS", shape, r["turns"][-1][:70], flush=True)
for kind, (n_ok, n) in sorted(tally.items()):
    print(f"{kind}: {n_ok}/{n}")
json.dump({"tally": tally, "rows": out}, open(sys.argv[2], "w"), indent=1)
