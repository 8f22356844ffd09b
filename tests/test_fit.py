"""eval/fit.py: replaying the outcome's decisions from a row's signals."""

from __future__ import annotations

import numpy as np

from eval.fit import CAVEAT, REFUSE, WHICH, decide, fit, score


def _model(refuse_bar: float = 0.9, caveat_bar: float = 0.9) -> dict:
    zero = lambda n: (np.zeros(n), np.ones(n), np.zeros(n))  # noqa: E731 - every p is 0.5
    return {
        "refuse": (*[zero(len(REFUSE))], 0.0, refuse_bar),
        "caveat": (*[zero(len(CAVEAT))], 0.0, caveat_bar),
    }


def test_caveats_no_bar_decides_count_as_said():
    """A name no abstract mentions, and a follow-up's paper that never mentions what is asked, are said
    whatever the fitted bars; a part's caveat only when its bar is cleared."""
    row = {
        "signals": {k: 0.5 for k in REFUSE},
        "parts": [{"signals": {k: 0.5 for k in CAVEAT}}],
        "caveats": [],
    }
    assert decide(_model(), row) == (False, False)
    assert decide(_model(caveat_bar=0.4), row) == (False, True)
    for code in ("term_absent", "not_in_followed"):
        assert decide(_model(), {**row, "caveats": [{"code": code}]}) == (False, True)
    assert decide(_model(refuse_bar=0.4), {**row, "caveats": [{"code": "term_absent"}]}) == (True, False)


def test_a_description_is_decided_by_its_own_model_when_one_was_fitted():
    """A row whose parts carry the `which` signal is replayed with the description model; without one
    fitted, with the shared model, as before."""
    which_row = {
        "signals": {k: 0.5 for k in REFUSE},
        "parts": [{"signals": {**{k: 0.5 for k in CAVEAT}, "which": 1.0}}],
        "caveats": [],
    }
    zero = (np.zeros(len(WHICH)), np.ones(len(WHICH)), np.zeros(len(WHICH)))
    assert decide(_model(caveat_bar=0.4), which_row) == (False, True)
    assert decide({**_model(caveat_bar=0.4), "which": (zero, 0.0, 0.9)}, which_row) == (False, False)
    assert decide({**_model(caveat_bar=0.9), "which": (zero, 0.0, 0.4)}, which_row) == (False, True)


def test_fit_gives_descriptions_a_model_of_their_own():
    """`fit` adds the description model when description rows of both labels exist; its bar keeps the
    answerable descriptions' caveats within the budget."""
    rng = np.random.default_rng(0)
    rows = []
    for i in range(80):
        answerable = i % 2 == 0
        which = i % 4 < 2
        cover = float(rng.uniform(0.6, 1.0) if answerable else rng.uniform(0.0, 0.5))
        sig = {**{k: cover for k in CAVEAT}, "which": float(which)}
        rows.append(
            {"answerable": answerable, "signals": {k: 0.5 for k in REFUSE}, "parts": [{"signals": sig}]}
        )
    model = fit(rows, 0.0, 0.05)
    assert "which" in model and len(model["which"][0][0]) == len(WHICH)
    descriptions = [r for r in rows if r["parts"][0]["signals"]["which"] == 1.0]
    assert score(model, descriptions)["answerable_caveat_on_asked"] <= 0.05
    assert score(model, descriptions)["unanswerable_handled"] >= 0.9
    assert "which" not in fit([r for r in rows if r not in descriptions], 0.0, 0.05)
