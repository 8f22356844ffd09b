"""eval/lists.py: judged precision of a list and the score bar chosen on the calibration half."""

from __future__ import annotations


def test_list_eval_scores_judged_precision_and_chooses_bar():
    from eval.lists import choose_bar, score_topic, summarize

    topic = {"id": "t", "relevant": ["a", "b"], "judged_not_relevant": ["x"], "split": "calibration"}
    row = {"id": "t", "seconds": 0.5, "scored": [["a", 0.9], ["u", 0.8], ["x", 0.6], ["b", 0.4]]}
    s = score_topic(row, topic, 0.5)
    assert (s["found"], s["recall"], s["precision"], s["unjudged"]) == (
        1,
        0.5,
        0.5,
        1,
    )  # u: unjudged, not wrong
    assert score_topic(row, topic, 0.85)["precision"] == 1.0
    rep = summarize([row], {"t": topic}, 0.3)
    assert rep["recall"] == 1.0 and rep["candidate_recall"] == 1.0 and rep["seconds_p50"] == 0.5
    bar, table = choose_bar([row], {"t": topic}, sweep=[0.3, 0.5, 0.85])
    assert bar == 0.3 and len(table) == 3  # F1 0.8 at 0.3 beats 0.5 (0.5) and 0.67 (0.85)
