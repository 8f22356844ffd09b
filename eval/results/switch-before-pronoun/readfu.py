"""Reading of every follow-up row (no generation): how it was read and whether `left` is set.
usage: cd TREE && python readfu.py SCALE OUT.jsonl"""
import json, glob, os, sys
scale, out = sys.argv[1], sys.argv[2]
os.environ["RAG_STORAGE__DATA_DIR"] = "/work/seedsidx" if scale == "seeds" else "/work/full"
os.environ["RAG_STORAGE__COLLECTION"] = "iclr" if scale == "seeds" else "iclr2025"
sys.path.insert(0, os.getcwd())
from rag.answer import Engine
from rag.settings import Settings
from eval.rows import history_msgs
e = Engine(Settings())
with open(out, "w") as o:
    for f in sorted(glob.glob(sys.argv[3] + "/*.jsonl") if len(sys.argv) > 3 else glob.glob("/work/scratch/fu/*.jsonl")):
        for l in open(f):
            q = json.loads(l)
            if q.get("scale", "seeds") != scale:
                continue
            r = e.read(q["question"], history_msgs(q))
            o.write(json.dumps({"file": os.path.basename(f), "id": q["id"], "type": q["type"], "subtype": q.get("subtype"),
                                "q": q["question"], "h": q["history"], "how": r.how, "gain": r.gain,
                                "left": r.left[0].label if r.left else None, "base": r.base}) + "\n")
