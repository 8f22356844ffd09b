"""`python -m eval.train_embedder`: adapt the packaged MiniLM to the conference as a bi-encoder, then measure it
where the product would use it. An experiment (issue 37's "adapted bi-encoder"): it did not win inside the
product's fusion, so nothing of it ships; eval/results/embedder-adapt/README.md has the figures.

Pairs are mined from the bundled abstracts only (no question or gold list is read), one per paper in a seeded
shuffle: half are a title's descriptive part ("X: <this>") against its abstract without the title, half a
sentence stating the paper's contribution ("we propose …") against the title and the rest of the abstract. The
loss is sentence-transformers' multiple-negatives ranking loss written out (in-batch negatives, scale 20), so
no `datasets` is needed. The word embeddings stay frozen, so a shipped version would need only the layers.
Deterministic for a seed and a thread count (2 by default).

Measured, for the packaged and the adapted model:
- dense alone: each paper's title and abstract as one passage (128 wordpieces), hit@1/5/20 for the external
  human descriptions (eval/data/external_descriptions.jsonl) and the full-scale "which" and paraphrase
  questions of eval/data/questions.jsonl;
- in the product (`--data-dir`, an index of `rag ingest --conference`): the retriever's own trace for each of
  those questions, re-fused (`fuse_ranks`) with a paper-level side from either model at a few weights, or
  with that side in place of the chunk dense side;
- lists: each gold topic without filters against the passages, R-precision, recall@100 and the share relevant
  among judged papers in the top 100.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import random
import sys
import time
from pathlib import Path

import numpy as np

from eval.train_relevance import _subject, load_papers, sha256
from rag.shapes.list_score import STATES

DATA = Path("eval/data")
WEIGHTS = (0.5, 1.0, 2.0)


def mine(papers, n: int, seed: int, hard: int = 0) -> list[tuple[str, ...]]:
    """(query, passage, *negatives) rows, one per paper of a seeded shuffle, until n. `hard`: that many
    negatives per row, papers BM25 ranks 2-10 for the query, in the positive's form."""
    rng = random.Random(seed)
    order = list(range(len(papers)))
    rng.shuffle(order)
    lexical = None
    if hard:
        from eval.train_relevance import Miner

        lexical = Miner(papers, np.zeros((len(papers), 1), dtype=np.float32), seed).lexical
    rows = []
    for i in order[:n]:
        p = papers[i]
        ss = p.sentence_texts
        stated = [s for s in ss if STATES.search(s) and len(s.split()) >= 8]
        if rng.random() < 0.5 or not stated:
            q, form = _subject(p.title), (lambda x: " ".join(x.sentence_texts))
        else:
            q = rng.choice(stated)
            form = lambda x, q=q: f"{x.title}. " + " ".join(y for y in x.sentence_texts if y != q)  # noqa: E731
        negs = []
        if lexical:
            pool = [j for j in lexical(q, 10) if j != i]
            negs = [form(papers[j]) for j in rng.sample(pool, min(hard, len(pool)))]
            if len(negs) < hard:
                continue
        rows.append((q, form(p), *negs))
    return rows


def train(model, pairs, lr: float, batch: int) -> float:
    """One epoch of in-batch-negative ranking loss; linear warm-up over a tenth, then linear decay."""
    import torch

    model[0].auto_model.embeddings.word_embeddings.weight.requires_grad_(False)
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=lr, weight_decay=0.01)
    steps = len(pairs) // batch
    warm = max(1, steps // 10)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min((s + 1) / warm, max(0.0, (steps - s) / (steps - warm)))
    )
    model.train()
    t0 = time.time()
    for s in range(steps):
        chunk = pairs[s * batch : (s + 1) * batch]
        q, *p = (
            torch.nn.functional.normalize(model(model.preprocess(list(x)))["sentence_embedding"], dim=-1)
            for x in zip(*chunk)
        )
        # each query against every row's passage and every hard negative; its own passage is the answer
        loss = torch.nn.functional.cross_entropy(q @ torch.cat(p).T * 20.0, torch.arange(len(chunk)))
        loss.backward()
        opt.step()
        sched.step()
        opt.zero_grad()
        if s % 10 == 0:
            print(f"step {s}/{steps} loss {loss.item():.4f} {time.time() - t0:.0f}s", flush=True)
    model.eval()
    return time.time() - t0


def questions() -> list[tuple[str, str, set[str]]]:
    """(set, question, gold ids): the external human descriptions and the team's full-scale which/paraphrase."""
    out = []
    for line in open(DATA / "external_descriptions.jsonl"):
        r = json.loads(line)
        out.append(("ext", r["question"], {g["id"] for g in r["gold"]}))
    for line in open(DATA / "questions.jsonl"):
        r = json.loads(line)
        if r["scale"] == "full" and r["type"] in ("which", "paraphrase") and r.get("gold"):
            out.append((f"team-{r['type']}", r["question"], {g["id"] for g in r["gold"]}))
    return out


def topics() -> list[tuple[str, str, set[str], set[str]]]:
    out = []
    for name in ("list_topics.jsonl", "list_topics_fresh.jsonl", "list_topics_fresh2.jsonl"):
        for line in open(DATA / name):
            r = json.loads(line)
            if not r.get("filters"):
                out.append(
                    (r["split"], r["topic"], set(r["relevant"]), set(r.get("judged_not_relevant", [])))
                )
    return out


def hits_at(rankings, qs, ks=(1, 5, 20)) -> dict:
    out = {}
    for name in sorted({k for k, _, _ in qs}):
        rows = [i for i, (k, _, _) in enumerate(qs) if k == name]
        for k in ks:
            out[f"{name} hit@{k}"] = round(
                float(np.mean([bool(set(rankings[i][:k]) & qs[i][2]) for i in rows])), 3
            )
        out[f"{name} n"] = len(rows)
    return out


def evaluate(models: dict, papers, out: Path, data_dir: Path | None) -> dict:
    ids = [p.paper_id for p in papers]
    qs, ts = questions(), topics()
    mats, qvecs, result = {}, {}, {"dense": {}, "lists": {}, "fusion": {}}
    for name, model in models.items():
        cache = out / f"passages-{name}.npy"
        if cache.exists():
            mats[name] = np.load(cache)
        else:
            mats[name] = model.encode(
                [f"{p.title}. {p.text}" for p in papers], batch_size=64, normalize_embeddings=True
            )
            np.save(cache, mats[name])
        qvecs[name] = model.encode([q for _, q, _ in qs], normalize_embeddings=True)
        ranked = [[ids[j] for j in np.argsort(-(mats[name] @ v))[:40]] for v in qvecs[name]]
        result["dense"][name] = hits_at(ranked, qs)
        tv = model.encode([t for _, t, _, _ in ts], normalize_embeddings=True)
        for split in ("calibration", "heldout"):
            rp, r100, judged_p = [], [], []
            for i, (sp, _, rel, nrel) in enumerate(ts):
                if sp != split:
                    continue
                order = [ids[j] for j in np.argsort(-(mats[name] @ tv[i]))[:100]]
                rp.append(len(set(order[: len(rel)]) & rel) / len(rel))
                r100.append(len(set(order) & rel) / len(rel))
                judged = [p for p in order if p in rel or p in nrel]
                judged_p.append(sum(p in rel for p in judged) / max(1, len(judged)))
            result["lists"].setdefault(name, {})[split] = {
                "topics": len(rp),
                "R-precision": round(float(np.mean(rp)), 3),
                "recall@100": round(float(np.mean(r100)), 3),
                "judged precision@100": round(float(np.mean(judged_p)), 3),
            }
        print(name, json.dumps(result["dense"][name]), json.dumps(result["lists"][name]), flush=True)
    if data_dir:
        result["fusion"] = replay(qs, ids, mats, qvecs, data_dir)
    return result


def replay(qs, ids, mats, qvecs, data_dir: Path) -> dict:
    """The product's fused ranking for each question, and the same with a paper-level side added or swapped in."""
    from rag.index.index import Index
    from rag.models.embedder import get_embedder
    from rag.retrieval.retrieve import Retriever
    from rag.settings import Settings

    s = Settings()
    s = s.replace(storage={"data_dir": data_dir, "collection": s.storage.conference_collection})
    retriever = Retriever(Index(s.storage), get_embedder(s), s.retrieval)
    configs = [("product", None, 0.0, False)]
    configs += [(f"{m} paper side w{w}", m, w, False) for m in mats for w in WEIGHTS]
    configs += [(f"{m} paper side replaces dense", m, 1.0, True) for m in mats]
    ranked: dict[str, list[list[str]]] = {c[0]: [] for c in configs}
    for i, (_, q, _) in enumerate(qs):
        _, tr = retriever.retrieve(q, trace=True)
        for label, m, w, swap in configs:
            sides = list(tr.sides)
            if m:
                top = np.argsort(-(mats[m] @ qvecs[m][i]))[:40]
                ranks = {ids[j]: r for r, j in enumerate(top, start=1)}
                sides = (
                    [(n, x, ranks) if n == "dense" else (n, x, r) for n, x, r in sides]
                    if swap
                    else sides + [(m, w, ranks)]
                )
            scores = dataclasses.replace(tr, sides=sides).scores()  # the retriever's own fusion and boost
            ranked[label].append(sorted(scores, key=lambda p: -scores[p]))
    out = {label: hits_at(r, qs, ks=(1, 5)) for label, r in ranked.items()}
    for label, figures in out.items():
        print(label, json.dumps(figures), flush=True)
    return out


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, required=True, help="folder: the model, passage vectors, result.json")
    ap.add_argument("--pairs", type=int, default=6000)
    ap.add_argument("--lr", type=float, default=3e-5)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--hard", type=int, default=0, help="hard negatives per pair (BM25 neighbours)")
    ap.add_argument("--data-dir", type=Path, help="an index of `rag ingest --conference`: replay the fusion")
    args = ap.parse_args(argv)

    import torch
    from sentence_transformers import SentenceTransformer

    from rag.models.embedder import embedder_path

    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    args.out.mkdir(parents=True, exist_ok=True)
    papers = load_papers()
    pairs = mine(papers, args.pairs, args.seed, args.hard)
    base = SentenceTransformer(str(embedder_path()), device="cpu")
    adapted = SentenceTransformer(str(embedder_path()), device="cpu")
    for m in (base, adapted):
        m.max_seq_length = 128
    seconds = train(adapted, pairs, args.lr, args.batch)
    adapted.save(str(args.out / "model"))
    card = {
        "command": "python -m eval.train_embedder " + " ".join(argv if argv is not None else sys.argv[1:]),
        "pairs": len(pairs),
        "hard_negatives": args.hard,
        "train_s": round(seconds, 1),
        "threads": args.threads,
        "sha256": sha256(args.out / "model" / "model.safetensors"),
    }
    card |= evaluate({"packaged": base, "adapted": adapted}, papers, args.out, args.data_dir)
    (args.out / "result.json").write_text(json.dumps(card, indent=1))
    return card


if __name__ == "__main__":
    main()
