"""report.json, report.md, rows.jsonl and PNG plots for an eval run (write_all), and the one-line
headline the CLI prints. The Markdown is eval/report_markdown.py, the plots eval/report_plots.py."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from eval.report_markdown import fmt, markdown
from eval.report_plots import write_plots


def headline(rep: dict) -> str:
    r, c, a = rep["retrieval"], rep["citations"], rep["answers"]
    parts = [
        f"{rep['config']['primary']}: hit@1 {fmt(r['hit_at_1'])} hit@5 {fmt(r['hit_at_5'])} "
        f"MRR {fmt(r['mrr'])} nDCG@10 {fmt(r['ndcg_at_10'])}"
    ]
    if not rep["config"]["retrieval_only"]:
        parts.append(
            f"cit P/R {fmt(c['precision'])}/{fmt(c['recall'])} supported {fmt(c['supported_rate'])} "
            f"facts {fmt(a['fact_recall'])} p50 {fmt(rep['latency']['p50_s'], 1)}s"
        )
    parts.append(
        f"refusal {fmt(rep['unanswerable']['refusal_rate'])} false-refusal "
        f"{fmt(rep['answerable']['false_refusal_rate'])}"
    )
    return " | ".join(parts)


def write_all(
    out: Path, report: dict, rows: Sequence[dict], configs: Sequence[str], plots: bool = True
) -> None:
    out = Path(out)
    (out / "report.json").write_text(
        json.dumps(report, indent=2, ensure_ascii=False, default=str), encoding="utf-8"
    )
    with open(out / "rows.jsonl", "w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False, default=str) + "\n")
    written = write_plots(out, report, rows, configs) if plots else []
    (out / "report.md").write_text(markdown(report, rows, configs, written), encoding="utf-8")
