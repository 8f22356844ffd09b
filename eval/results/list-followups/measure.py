"""How the chat reads list follow-ups: each conversation's follow-up is read after a simulated list answer of
10 papers to its first message, and the reading is labelled (more, entry, compare, per_paper, pick, filter,
narrow, summary, thanks, or other). From the repo root:

    FU=eval/data/list_followups_ho.jsonl python eval/results/list-followups/measure.py [COMMIT] OUT.json

COMMIT (or "" for the working tree): the rag/reading/reader.py read. Prints per kind what it was read as."""

import json, sys, subprocess, types, collections

sys.path.insert(0, ".")
from rag.settings import Settings

if len(sys.argv) > 1 and sys.argv[1]:
    src = subprocess.run(
        ["git", "show", sys.argv[1] + ":rag/reading/reader.py"], capture_output=True, text=True
    ).stdout
    R = types.ModuleType("oldreader")
    sys.modules["oldreader"] = R
    exec(compile(src, "oldreader", "exec"), R.__dict__)
else:
    import rag.reading.reader as R
reader = R.Reader(Settings().conversation, idf=lambda: lambda w: 1.0)
ids = [f"p{i}" for i in range(10)]


def label(first, fu):
    if R.courtesy_only(fu):
        return "thanks", ""
    h = [{"role": "user", "content": first}, {"role": "assistant", "content": "list", "papers": ids}]
    r = reader(fu, h, lambda q, f: [])
    if r.how == "more":
        return "more", str(r.page)
    if r.how == "narrowed":
        return "narrow", r.topic
    if r.how == "list entries":
        return "compare", ",".join(str(ids.index(i) + 1) for i in r.over)
    if r.how == "list entry":
        return "entry", str(ids.index(r.entry) + 1)
    if r.shape == "per_paper":
        return ("pick" if r.how == R.PICK else "per_paper"), r.topic if r.how == R.PICK else ""
    if r.shape == "summary" and r.over:
        return "summary", ""
    if r.shape == "list" and r.how == "over the list":
        return "filter", r.filters.describe()
    return f"other:{r.shape}/{r.how}", r.topic[:40]


rows = [json.loads(l) for l in open(__import__("os").environ.get("FU", "eval/data/list_followups.jsonl"))]
conf = collections.Counter()
out = []
for x in rows:
    got, det = label(x["first"], x["followup"])
    conf[(x["kind"], got.split(":")[0])] += 1
    out.append((x["id"], x["kind"], got, det, x["followup"]))
kinds = sorted({k for k, _ in conf})
for k in kinds:
    print(k, {g: n for (kk, g), n in sorted(conf.items()) if kk == k})
json.dump(out, open(sys.argv[2] if len(sys.argv) > 2 else "/tmp/fu_out.json", "w"), indent=0)
