"""`rag eval-lists`'s report: the one-line headline and report.md (tables of both halves, the empty-list
check's counts, the calibration sweep, per topic)."""

from __future__ import annotations

import json


def headline(rep: dict) -> str:
    parts = []
    for split, s in rep["halves"].items():
        parts.append(
            f"{split}: recall {s['recall']}, precision {s['precision']} (judged), "
            f"p50 {s['seconds_p50']}s, p95 {s['seconds_p95']}s"
        )
    return f"bar {rep['bar_used']} (calibration's best: {rep['bar_chosen_on_calibration']}) | " + " | ".join(
        parts
    )


def _coverage_lines(c: dict | None) -> list[str]:
    if not c:
        return []
    emptied = ", ".join(f"{k} ({', '.join(v)})" for k, v in c["gold_emptied"].items()) or "none"
    return [
        f"Empty-list check (`rag list` as run, at the bar): topics no paper is about that list nothing: "
        f"**{c['absent_emptied']} of {c['absent_n']}**; gold topics emptied: {len(c['gold_emptied'])} of "
        f"{c['gold_n']} ({emptied}).",
        "",
    ]


def to_markdown(rep: dict) -> str:
    lines = [
        "# `rag list` on the gold topics",
        "",
        f"Index: {rep['papers']} papers, {rep['chunks']} chunks. Settings: `{json.dumps(rep['settings'])}`.",
        f"Bar used: **{rep['bar_used']}**; best on the calibration half: {rep['bar_chosen_on_calibration']}.",
        "Precision counts judged papers only; listed papers nobody judged are `unjudged`.",
        "",
        *_coverage_lines(rep.get("coverage")),
        "| half | topics | recall | precision (judged) | candidate recall | listed | unjudged | p50 s | p95 s |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for split, s in (*rep["halves"].items(), ("all", rep["all"])):
        lines.append(
            f"| {split} | {s['n']} | {s['recall']} | {s['precision']} | {s['candidate_recall']} | "
            f"{s['listed_mean']} | {s['unjudged_mean']} | {s['seconds_p50']} | {s['seconds_p95']} |"
        )
    lines += ["", "## Per topic", "", "| id | half | relevant | listed | recall | precision | unjudged |"]
    lines.append("|---|---|---|---|---|---|---|")
    for split, s in rep["halves"].items():
        for p in s["topics"]:
            r = None if p["recall"] is None else round(p["recall"], 3)
            pr = None if p["precision"] is None else round(p["precision"], 3)
            lines.append(
                f"| {p['id']} | {split} | {p['relevant']} | {p['listed']} | {r} | {pr} | {p['unjudged']} |"
            )
    lines += [
        "",
        "## Calibration sweep (calibration half only)",
        "",
        "| bar | recall | precision | F1 | listed |",
    ]
    lines.append("|---|---|---|---|---|")
    for x in rep["calibration_sweep"][::2]:
        lines.append(f"| {x['bar']} | {x['recall']} | {x['precision']} | {x['f1']} | {x['listed_mean']} |")
    return "\n".join(lines) + "\n"
