"""The PNG plots of an eval run (matplotlib, Agg): metrics by question type, recall@k, latency."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from eval.report_markdown import get


def write_plots(out: Path, report: dict, rows: Sequence[dict], configs: Sequence[str]) -> list[str]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    reports = report.get("compare") or {report["config"]["primary"]: report}
    written = []

    # 1. per-type metric bars (primary config)
    by_type = report["by_type"]
    metrics = [
        ("hit@1", "retrieval", "hit_at_1"),
        ("hit@5", "retrieval", "hit_at_5"),
        ("MRR", "retrieval", "mrr"),
        ("cit P", "citations", "precision"),
        ("cit R", "citations", "recall"),
        ("supported", "citations", "supported_rate_all"),
        ("facts", "answers", "fact_recall"),
    ]
    metrics = [m for m in metrics if any(get(t, m[1], m[2]) is not None for t in by_type.values())]
    types = list(by_type)
    fig, ax = plt.subplots(figsize=(max(7, 1.3 * len(types) + 2), 4.2))
    width = 0.8 / max(1, len(metrics) + 1)
    for i, (label, sec, key) in enumerate(metrics):
        vals = [get(by_type[t], sec, key) for t in types]
        ax.bar(
            [x + i * width for x in range(len(types))],
            [v if v is not None else 0 for v in vals],
            width,
            label=label,
        )
    refused = [
        by_type[t]["unanswerable"]["refusal_rate"]
        if t == "unanswerable"
        else by_type[t]["answerable"]["false_refusal_rate"]
        for t in types
    ]
    ax.bar(
        [x + len(metrics) * width for x in range(len(types))],
        [v or 0 for v in refused],
        width,
        label="refused",
        color="black",
        alpha=0.6,
    )
    ax.set_xticks([x + 0.4 - width / 2 for x in range(len(types))])
    ax.set_xticklabels([f"{t}\n(n={by_type[t]['n']})" for t in types], fontsize=8)
    ax.set_ylim(0, 1.05)
    ax.set_title(f"Metrics by question type — {report['config']['primary']}")
    ax.legend(fontsize=7, ncol=4, loc="upper center", bbox_to_anchor=(0.5, -0.18))
    fig.tight_layout()
    fig.savefig(out / "by_type.png", dpi=110)
    plt.close(fig)
    written.append("by_type.png")

    # 2. recall@k curve, one line per config
    fig, ax = plt.subplots(figsize=(6, 4))
    for name, rep in reports.items():
        curve = rep["retrieval"].get("recall_at_k") or []
        if curve and any(v is not None for v in curve):
            ax.plot(range(1, len(curve) + 1), [v or 0 for v in curve], marker="o", ms=3, label=name)
    from matplotlib.ticker import MaxNLocator

    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.axvline(report["config"]["top_k"], color="grey", ls=":", lw=1)
    ax.set_xlabel("k (papers)")
    ax.set_ylabel("recall@k (answerable questions)")
    ax.set_ylim(0, 1.02)
    ax.grid(alpha=0.3)
    ax.legend()
    ax.set_title("Gold-paper recall by rank")
    fig.tight_layout()
    fig.savefig(out / "recall_at_k.png", dpi=110)
    plt.close(fig)
    written.append("recall_at_k.png")

    # 3. latency histogram, one series per config
    fig, ax = plt.subplots(figsize=(6, 4))
    key = "retrieve_s" if report["config"]["retrieval_only"] else "total_s"
    for name in reports:
        vals = [
            r["timings"].get(key)
            for r in rows
            if r["config"] == name and r.get("timings", {}).get(key) is not None
        ]
        if vals:
            ax.hist(vals, bins=min(20, max(5, len(vals) // 2)), alpha=0.55, label=f"{name} (n={len(vals)})")
    ax.set_xlabel(f"{key} (seconds)")
    ax.set_ylabel("questions")
    ax.set_title("Answer latency" if key == "total_s" else "Retrieval latency")
    ax.legend()
    fig.tight_layout()
    fig.savefig(out / "latency.png", dpi=110)
    plt.close(fig)
    written.append("latency.png")
    return written
