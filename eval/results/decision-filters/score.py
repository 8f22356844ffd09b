"""Decisions read from a message, against what its writer wanted: filter follow-ups after a list and first
messages that ask for a list with a decision. From a tree's root (the tree whose `rag` is read):

    python PATH/score.py eval/results/decision-filters/blind.jsonl OUT.json
    python PATH/score.py --followups OUT.json   # the filter rows of eval/data/list_followups*.jsonl

A row is right when the decision classes read equal the gold classes ("accepted" is oral + spotlight +
poster). A follow-up is read after a simulated 10-paper list on its conversation's first message, and
is right only when it filters that list."""

import json
import os
import sys

sys.path.insert(0, ".")
from rag.reading.reader import Reader  # noqa: E402
from rag.retrieval.filters import Filters, filters_from_question  # noqa: E402
from rag.settings import Settings  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ACCEPTED = {"oral", "spotlight", "poster"}
reader = Reader(Settings().conversation, idf=lambda: lambda w: 1.0)
ids = [f"p{i}" for i in range(10)]


def classes(decision: str | None) -> set[str]:
    if not decision:
        return set()
    out = set()
    for c in ("oral", "spotlight", "poster", "rejected", "withdrawn", "desk_rejected"):
        probe = {
            "oral": "Accept (Oral)",
            "spotlight": "Accept (Spotlight)",
            "poster": "Accept (Poster)",
            "rejected": "Reject",
            "withdrawn": "Withdrawn",
            "desk_rejected": "Desk Rejected",
        }[c]
        if Filters(decision).decision_matches(probe):
            out.add(c)
    return out


def read_followup(first: str, text: str) -> Filters:
    h = [{"role": "user", "content": first}, {"role": "assistant", "content": "list", "papers": ids}]
    r = reader(text, h, lambda q, f: [])
    return r.filters if r.how == "over the list" else Filters()


def read_first(text: str) -> Filters:
    return filters_from_question(text)[0]


if sys.argv[1] == "--followups":
    gold = json.load(open(os.path.join(HERE, "followup_gold.json")))
    rows = []
    for f in ("eval/data/list_followups.jsonl", "eval/data/list_followups_ho.jsonl"):
        for line in open(f):
            x = json.loads(line)
            if x["id"] in gold:
                rows.append(
                    {"kind": "followup", "first": x["first"], "text": x["followup"], "gold": gold[x["id"]]}
                )
    out_path = sys.argv[2]
else:
    rows = [json.loads(line) for line in open(sys.argv[1])]
    out_path = sys.argv[2]
out, right = [], {"followup": [0, 0], "first": [0, 0]}
for x in rows:
    f = (
        read_followup(x.get("first", "papers on diffusion models"), x["text"])
        if x["kind"] == "followup"
        else read_first(x["text"])
    )
    got = classes(f.decision)
    ok = got == set(x["gold"])
    right[x["kind"]][0] += ok
    right[x["kind"]][1] += 1
    out.append({**x, "read": sorted(got), "ok": ok})
for k, (a, n) in right.items():
    if n:
        print(f"{k}: {a}/{n}")
json.dump(out, open(out_path, "w"), indent=0)
