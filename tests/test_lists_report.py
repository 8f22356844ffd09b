"""eval/lists_report.py: the headline and report.md of `rag eval-lists`, from a small synthetic run."""

from __future__ import annotations


def test_report_shows_both_halves_the_sweep_and_the_empty_list_check():
    from eval.lists import choose_bar, summarize
    from eval.lists_report import headline, to_markdown

    topics = {
        "c": {"id": "c", "relevant": ["a"], "judged_not_relevant": ["x"], "split": "calibration"},
        "h": {"id": "h", "relevant": ["b"], "judged_not_relevant": ["y"], "split": "heldout"},
    }
    rows = [
        {"id": "c", "split": "calibration", "seconds": 0.3, "scored": [["a", 0.9], ["x", 0.4]]},
        {"id": "h", "split": "heldout", "seconds": 0.2, "scored": [["y", 0.8], ["b", 0.6]]},
    ]
    chosen, sweep = choose_bar(rows[:1], topics)
    rep = {
        "settings": {"lister_min_score": 0.5},
        "papers": 2,
        "chunks": 4,
        "bar_used": 0.5,
        "bar_chosen_on_calibration": chosen,
        "calibration_sweep": sweep,
        "halves": {
            sp: summarize([r for r in rows if r["split"] == sp], topics, 0.5)
            for sp in ("calibration", "heldout")
        },
        "all": summarize(rows, topics, 0.5),
        "coverage": {
            "gold_n": 2,
            "gold_emptied": {"h": ["knitting"]},
            "absent_n": 3,
            "absent_emptied": 2,
            "absent": {},
        },
    }
    line = headline(rep)
    assert "bar 0.5" in line and "heldout: recall 1.0, precision 0.5" in line
    md = to_markdown(rep)
    assert "| heldout | 1 | 1.0 | 0.5 |" in md and "| calibration | 1 | 1.0 | 1.0 |" in md
    assert "list nothing: **2 of 3**; gold topics emptied: 1 of 2 (h (knitting))" in md
    assert "list nothing" not in to_markdown(rep | {"coverage": None})
