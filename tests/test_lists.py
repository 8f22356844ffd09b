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
    # the worse of recall and precision: 0.67 at 0.3 (recall 1.0), 0.5 at 0.5, 0.5 at 0.85 (precision 1.0)
    assert bar == 0.3 and len(table) == 3
    row2 = {
        "id": "t",
        "seconds": 0.5,
        "scored": [["a", 0.9], ["x", 0.8], ["b", 0.7], ["c", 0.6], ["y", 0.55], ["d", 0.5]],
    }
    topic2 = {"id": "t", "relevant": ["a", "b", "c", "d"], "judged_not_relevant": ["x", "y"]}
    # 0.45: recall 1.0, precision 0.67 (F1 0.8); 0.58: both 0.75 (F1 0.75): the floors pick 0.58, not F1's bar
    assert choose_bar([row2], {"t": topic2}, sweep=[0.45, 0.58, 0.65])[0] == 0.58


def test_fit_model_fits_on_the_given_topics_and_chooses_its_bar_leaving_one_out(
    sample_retriever, sample_settings, sample_papers
):
    """Topics judged by a rule a reader could apply (the topic word in the title: relevant; in the abstract
    only: not): the fitted model lists the title papers above the others, and its settings run the lister."""
    from eval.lists import balance, fit_model
    from rag.shapes.list_score import FEATURES
    from rag.shapes.lister import list_papers

    topics = []
    for i, word in enumerate(("reinforcement", "diffusion", "graph")):
        rel = [p.paper_id for p in sample_papers if word in (p.title or "").lower()]
        neg = [p.paper_id for p in sample_papers if word in p.text.lower() and p.paper_id not in rel]
        assert rel and neg
        topics.append(
            {"id": f"x{i}", "topic": word, "relevant": rel, "judged_not_relevant": neg, "filters": {}}
        )
    fitted = fit_model(sample_retriever, sample_settings, topics, progress=False)
    assert set(fitted["lister_model"]) == set(FEATURES)
    assert fitted["lister_min_score"] in [row["bar"] for row in fitted["leave_one_topic_out"]]
    best = max(fitted["leave_one_topic_out"], key=balance)
    assert balance(best) > 0.5 and best["f1"] > 0.5
    s = sample_settings.replace(
        lists={k: fitted[k] for k in ("lister_model", "lister_model_intercept", "lister_min_score")}
    )
    listed = list_papers(sample_retriever, s, "diffusion").papers
    assert listed and all(0.0 <= x.score <= 1.0 and x.score >= s.lists.lister_min_score for x in listed)
    titled = sum(1 for x in listed if "diffusion" in (x.paper.title or "").lower())
    assert titled / len(listed) > 0.5


def test_coverage_counts_gold_topics_emptied_and_absent_topics_listing_nothing(
    sample_retriever, sample_settings, tmp_path
):
    from eval.lists import coverage, load_absent

    path = tmp_path / "absent.jsonl"
    path.write_text('{"id": "a1", "topic": "knitting pattern generation with diffusion models"}\n')
    gold = [{"id": "g1", "topic": "diffusion models", "filters": {}}]
    c = coverage(sample_retriever, sample_settings, gold, load_absent(path))
    assert c["gold_n"] == 1 and c["gold_emptied"] == {}
    assert c["absent_n"] == 1 and c["absent_emptied"] == 1 and "knitting" in c["absent"]["a1"]
