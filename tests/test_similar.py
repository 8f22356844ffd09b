"""More like this: the nearest papers by stored paper vector (`rag similar`, Find's like:ID, the card link)."""

from __future__ import annotations

import json

import numpy as np
from typer.testing import CliRunner

from iclr_rag.cli import app
from rag.index.index import Index
from rag.retrieval.filters import Filters
from rag.retrieval.similar import similar
from tests.conftest import make_settings
from ui.chat.sources_html import _paper_meta
from ui.find import papers as find


def _brute_force(data_dir, pid: str, k: int) -> list[str]:
    ids, vecs = Index(make_settings(data_dir).storage).paper_vectors()
    mat = np.asarray(vecs, dtype=np.float32)
    sims = mat @ mat[ids.index(pid)]
    return [ids[i] for i in np.argsort(-sims) if ids[i] != pid][:k]


def test_similar_is_the_nearest_paper_vectors(sample_retriever, sample_data_dir, sample_papers):
    pid = sample_papers[7].paper_id
    paper, near = similar(sample_retriever, pid, k=5)
    assert paper.paper_id == pid and len(near) == 5
    assert [p.paper_id for p, _ in near] == _brute_force(sample_data_dir, pid, 5)
    cos = [c for _, c in near]
    assert cos == sorted(cos, reverse=True) and all(-1 <= c <= 1 for c in cos)
    _, rejected = similar(sample_retriever, pid, k=5, filters=Filters("rejected"))
    assert rejected and all(p.decision == "Reject" for p, _ in rejected)


def test_cli_similar_json_and_an_unknown_id(sample_data_dir, sample_papers):
    pid = sample_papers[7].paper_id
    r = CliRunner().invoke(
        app, ["similar", pid, "--json", "--limit", "4", "--data-dir", str(sample_data_dir)]
    )
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert out["like"]["paper_id"] == pid and out["count"] == 4
    assert [p["paper_id"] for p in out["papers"]] == _brute_force(sample_data_dir, pid, 4)
    r = CliRunner().invoke(app, ["similar", "no-such-id", "--data-dir", str(sample_data_dir)])
    assert r.exit_code != 0 and "No indexed paper has the id 'no-such-id'" in r.output


def test_every_card_offers_more_like_this_and_find_lists_them(
    sample_retriever, sample_settings, sample_papers
):
    p = sample_papers[7]
    link = _paper_meta(p, None, False)
    assert f'data-q="like:{p.paper_id}"' in link and 'data-tab="tab-find-button"' in link
    found = find.find(sample_retriever, sample_settings, f"like:{p.paper_id}", find.ANY, find.ANY, "")
    assert len(found.result.papers) == 20 and p.paper_id not in {
        x.paper.paper_id for x in found.result.papers
    }
    assert "nearest to" in find.render_summary(found)
