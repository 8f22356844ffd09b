"""eval/fit.py: replaying the outcome's decisions from a row's signals."""

from __future__ import annotations

import numpy as np

from eval.fit import CAVEAT, REFUSE, decide


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
