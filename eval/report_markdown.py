"""report.md of an eval run: summary and per-type tables, where it fails, calibration tables.
`fmt` and `get` (a value formatted / looked up by section and key) also serve the plots, the
headline and the bench report."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

# (label, section, key) rows of the summary table
SUMMARY = [
    ("hit@1", "retrieval", "hit_at_1"),
    ("hit@5", "retrieval", "hit_at_5"),
    ("MRR", "retrieval", "mrr"),
    ("nDCG@10", "retrieval", "ndcg_at_10"),
    ("recall@5", "retrieval", "recall_at_5"),
    ("specific hit@5", "specific", "hit_at_5"),
    ("specific MRR", "specific", "mrr"),
    ("answerable hard-refused", "outcome", "answerable_hard_refused"),
    ("unanswerable refused or caveated", "outcome", "unanswerable_handled"),
    ("answerable with a caveat on what was asked", "outcome", "answerable_caveat_on_asked"),
    ("answers with a defective cited sentence (independent check)", "outcome", "defective_answers"),
    ("a gold paper cited", "outcome", "gold_cited"),
    ("citation precision", "citations", "precision"),
    ("citation recall", "citations", "recall"),
    ("supported rate", "citations", "supported_rate"),
    ("fallback rate", "citations", "fallback_rate"),
    ("fact recall", "answers", "fact_recall"),
    ("refusal rate (unanswerable)", "unanswerable", "refusal_rate"),
    ("refusal or abstain (unanswerable)", "unanswerable", "refusal_or_abstain_rate"),
    ("false refusal (answerable)", "answerable", "false_refusal_rate"),
    ("latency p50 s", "latency", "p50_s"),
    ("latency p95 s", "latency", "p95_s"),
    ("retrieve p50 s", "latency", "retrieve_p50_s"),
    ("first token p50 s", "latency", "first_token_p50_s"),
    ("decode tok/s p50", "latency", "tokens_per_s_p50"),
    ("first visible text p50 s", "latency", "first_text_p50_s"),
    ("prompt tokens p50", "latency", "prompt_tokens_p50"),
    ("topic switch answered about the new paper", "shapes", "topic_switch_new_paper"),
    ("list questions: gold papers named", "shapes", "list_gold_named"),
]
TYPE_COLS = [
    ("hit@1", "retrieval", "hit_at_1"),
    ("hit@5", "retrieval", "hit_at_5"),
    ("MRR", "retrieval", "mrr"),
    ("nDCG@10", "retrieval", "ndcg_at_10"),
    ("cit P", "citations", "precision"),
    ("cit R", "citations", "recall"),
    ("supported", "citations", "supported_rate_all"),
    ("facts", "answers", "fact_recall"),
    ("refused", None, None),
    ("p50 s", "latency", "p50_s"),
]


def fmt(v, digits: int = 3) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "–"
    if isinstance(v, float):
        return f"{v:.{digits}f}"
    return str(v)


def get(rep: dict, section: str | None, key: str | None):
    return (rep.get(section) or {}).get(key) if section else None


# ------------------------------------------------------------------ markdown


def markdown(report: dict, rows: Sequence[dict], configs: Sequence[str], pngs: Sequence[str] = ()) -> str:
    cfg = report["config"]
    reports = report.get("compare") or {cfg["primary"]: report}
    L = [f"# iclr-rag eval — {cfg['date']}", ""]
    corpus = cfg["corpus"]
    L.append(
        f"- questions: `{cfg['questions']['file']}` ({cfg['questions']['n']}); corpus: "
        f"{', '.join(Path(f).name for f in corpus['files'])} ({corpus['papers']:,} papers, "
        f"{corpus['chunks']:,} chunks indexed in `{cfg['data_dir']}`)"
    )
    m = cfg["models"]
    L.append(
        f"- models: embedder {m['embedder']}, LLM {m['llm'] or '(retrieval only)'}"
        f"{' int8' if m['int8'] and m['llm'] else ''}; top_k {cfg['top_k']}; ranking depth {cfg['depth']}; "
        f"configs {', '.join(configs)}; wall {cfg['wall_s']} s"
    )
    if m.get("baseline"):
        L.append(f"- baseline: {m['baseline']}")
    if cfg["retrieval_only"]:
        L.append("- retrieval only: no answer was made; refusals and caveats are not measured.")
    L += ["", "## Summary", "", "| metric | " + " | ".join(reports) + " |", "|---|" + "---:|" * len(reports)]
    for label, sec, key in SUMMARY:
        vals = [get(r, sec, key) for r in reports.values()]
        if all(v is None for v in vals):
            continue
        digits = 2 if sec == "latency" else 3
        L.append(f"| {label} | " + " | ".join(fmt(v, digits) for v in vals) + " |")
    if report.get("errors"):
        L += [
            "",
            f"**{len(report['errors'])} question(s) failed:** "
            + "; ".join(f"{e['id']}: {e['error']}" for e in report["errors"][:10]),
        ]

    for name, rep in reports.items():
        L += [
            "",
            f"## By type — {name}",
            "",
            "| type | n | " + " | ".join(c[0] for c in TYPE_COLS) + " |",
            "|---|---:|" + "---:|" * len(TYPE_COLS),
        ]
        for t, tr in rep["by_type"].items():
            cells = []
            for label, sec, key in TYPE_COLS:
                if label == "refused":
                    v = (
                        tr["unanswerable"]["refusal_rate"]
                        if t == "unanswerable"
                        else tr["answerable"]["false_refusal_rate"]
                    )
                    cells.append(fmt(v, 2))
                else:
                    cells.append(fmt(get(tr, sec, key), 2 if sec == "latency" else 3))
            L.append(f"| {t} | {tr['n']} | " + " | ".join(cells) + " |")
    L.append("")
    L.append(
        "`refused` is the refusal rate for `unanswerable` and the false-refusal rate for the other types; "
        "`supported` counts every non-refused answer of that type (for `unanswerable` it is the share of "
        "sentences of answers that should not exist)."
    )

    for png in pngs:
        L += ["", f"![{png}]({png})"]

    primary_rows = [r for r in rows if r["config"] == cfg["primary"] and not r.get("error")]
    L += ["", "## Where it fails", ""]
    misses = [r for r in primary_rows if r.get("answerable") and r.get("scores", {}).get("hit_at_5") == 0.0]
    L.append(f"### Retrieval misses (no gold paper in the top 5), {cfg['primary']}: {len(misses)}")
    L.append("")
    for r in misses:
        L.append(
            f"- `{r['id']}` ({r['type']}, gold ranks {r['scores'].get('gold_ranks')}): {r['question']}"
            + (f" — searched as: _{r['standalone']}_" if r.get("standalone") != r["question"] else "")
        )
    una_answered = [r for r in primary_rows if not r.get("answerable") and not r.get("refused")]
    L += ["", f"### Unanswerable questions answered anyway: {len(una_answered)}", ""]
    for r in una_answered:
        f = r.get("features", {})
        why = f" — {f['answerability_reason']}" if f.get("answerability_reason") else ""
        L.append(
            f"- `{r['id']}` (refusal signal {fmt(f.get('refusal'))}{why}): {r['question']}"
            + (f" → _{_clip(r.get('answer', ''), 160)}_" if r.get("generated") else "")
        )
    false_ref = [r for r in primary_rows if r.get("answerable") and r.get("refused")]
    L += ["", f"### Answerable questions refused: {len(false_ref)}", ""]
    for r in false_ref:
        f = r.get("features", {})
        L.append(
            f"- `{r['id']}` ({r['type']}, refusal signal {fmt(f.get('refusal'))}"
            f"{' — ' + f['answerability_reason'] if f.get('answerability_reason') else ''}, gold ranks "
            f"{r.get('scores', {}).get('gold_ranks')}): {r['question']}"
        )
    if any(r.get("generated") for r in primary_rows):
        uns = [
            (r["id"], s)
            for r in primary_rows
            if not r.get("refused") and not r.get("fallback")
            for s in r.get("sentences", [])
            if not s.get("supported")
        ]
        fb = [r["id"] for r in primary_rows if r.get("fallback")]
        L += [
            "",
            f"### Unsupported answer sentences: {len(uns)}; extractive fallbacks: {len(fb)} "
            f"({', '.join(fb) or 'none'})",
            "",
        ]
        for qid, s in uns[:25]:
            L.append(f"- `{qid}` (score {fmt(s.get('support_score'))}): {_clip(s['text'], 200)}")
        missed = [
            (r["id"], f)
            for r in primary_rows
            if r.get("answerable") and not r.get("refused")
            for f, ok in zip(r.get("facts", []), r.get("scores", {}).get("facts_found", []))
            if not ok
        ]
        L += ["", f"### Facts not found in answers: {len(missed)}", ""]
        L.append(", ".join(f"`{qid}`: {f}" for qid, f in missed[:40]))

    cal = report.get("calibration") or {}
    sweeps = cal.get("refusal_sweeps") or {}
    if sweeps:
        keys = list(sweeps)
        L += [
            "",
            "## Calibration",
            "",
            f"Current: {cal['current']}",
            "",
            "### Refusal threshold sweep",
            "",
            "Refusal rate on unanswerable / false-refusal rate on answerable questions (answer task; summaries "
            "excluded) if the engine refused below each threshold of a signal: `refusal` = the engine's own "
            f"signal ({cal.get('refusal_signal')}), `relevance` = the best evidence sentence's score over the top-k. "
            "Separation (AUC, 1 = perfect, 0.5 = chance): "
            + ", ".join(f"{k} {fmt((cal.get('refusal_auc') or {}).get(k))}" for k in keys)
            + ".",
            "",
            "| threshold | " + " | ".join(keys) + " |",
            "|---:|" + "---:|" * len(keys),
        ]
        for i, x in enumerate(sweeps[keys[0]]):
            cells = [
                f"{fmt(sweeps[k][i]['refusal_rate'], 2)} / {fmt(sweeps[k][i]['false_refusal_rate'], 2)}"
                for k in keys
            ]
            L.append(f"| {x['threshold']:.3f} | " + " | ".join(cells) + " |")
    if cal.get("fusion_grid"):
        L += [
            "",
            "### Fusion grid (the retriever's traced side rankings re-fused offline)",
            "",
            "| bm25_weight | rrf_k | named_boost | hit@1 | hit@5 | MRR | nDCG@10 |",
            "|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for g in cal["fusion_grid"]:
            L.append(
                f"| {g['bm25_weight']} | {g['rrf_k']} | {g.get('named_boost', 0)} | {fmt(g['hit_at_1'])} | {fmt(g['hit_at_5'])} | "
                f"{fmt(g['mrr'])} | {fmt(g['ndcg_at_10'])} |"
            )
    L += ["", "Metric definitions: eval/README.md. Per-question detail: rows.jsonl.", ""]
    return "\n".join(L)


def _clip(s: str, n: int) -> str:
    s = " ".join(str(s).split())
    return s if len(s) <= n else s[: n - 1] + "…"
