"""The settings object: seven groups (`settings.retrieval.rrf_k`, env RAG_RETRIEVAL__RRF_K); the flat names of
the previous release (`Settings(rrf_k=3)`, env RAG_RRF_K) still work for one release, with a warning."""

from __future__ import annotations

import json
import logging
import warnings

import pytest

from rag import settings as settings_mod
from rag.settings import FIELDS, GROUP_OF, GROUPS, RetrievalSettings, Settings, env_name, nest


@pytest.fixture(autouse=True)
def _no_rag_env(monkeypatch):
    import os

    for k in list(os.environ):
        if k.upper().startswith("RAG_"):
            monkeypatch.delenv(k)
    monkeypatch.setattr(settings_mod, "_warned_env", set())


def test_groups_hold_every_setting_once_with_its_default():
    s = Settings()
    assert list(GROUPS) == [
        "storage",
        "retrieval",
        "grounding",
        "generation",
        "conversation",
        "lists",
        "serving",
    ]
    assert len(GROUP_OF) == sum(len(m.model_fields) for m in GROUPS.values())  # no name in two groups
    assert not set(GROUP_OF) & set(GROUPS)  # a group is never named like a setting
    for name, group in GROUP_OF.items():
        f = FIELDS[name]
        if not f.default_factory:
            assert s.value(name) == f.default == getattr(getattr(s, group), name), name
    assert (
        s.retrieval.rrf_k == 10 and s.lists.lister_min_score == 0.5 and s.storage.chroma_path.name == "chroma"
    )
    assert env_name("rrf_k") == "RAG_RETRIEVAL__RRF_K"
    assert [r[:2] for r in Settings.describe()] == [(g, n) for n, g in GROUP_OF.items()]


def test_nested_env_and_keywords(monkeypatch, tmp_path):
    monkeypatch.setenv("RAG_RETRIEVAL__RRF_K", "7")
    monkeypatch.setenv("RAG_STORAGE__DATA_DIR", str(tmp_path))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        s = Settings()
        assert (s.retrieval.rrf_k, s.storage.data_dir) == (7, tmp_path)
        s = Settings(retrieval={"top_k": 3})  # a partial group keeps the env's and the defaults
        assert (s.retrieval.top_k, s.retrieval.rrf_k, s.retrieval.mode) == (3, 7, "hybrid")
        s = Settings(retrieval=RetrievalSettings(top_k=4))  # a whole group replaces it
        assert (s.retrieval.top_k, s.retrieval.rrf_k) == (4, 10)
        assert Settings(**nest({"top_k": 5, "llm": "smollm2"})).retrieval.top_k == 5


def test_flat_keywords_are_moved_with_a_warning(monkeypatch):
    monkeypatch.setenv("RAG_RETRIEVAL__RRF_K", "7")
    with pytest.warns(DeprecationWarning, match=r"rrf_k is now retrieval\.rrf_k") as w:
        s = Settings(rrf_k=3, llm="smollm2", retrieval={"top_k": 2})
    assert (s.retrieval.rrf_k, s.retrieval.top_k, s.generation.llm) == (
        3,
        2,
        "smollm2",
    )  # a keyword beats env
    assert len(w) == 1 and w[0].filename == __file__  # one warning, naming the caller


def test_flat_env_vars_are_read_with_a_warning(monkeypatch, caplog):
    monkeypatch.setenv("RAG_RRF_K", "7")
    monkeypatch.setenv("RAG_TOP_K", "9")
    monkeypatch.setenv("RAG_RETRIEVAL__TOP_K", "3")  # the nested name wins
    monkeypatch.setenv("RAG_REFUSE_MODEL", json.dumps({"cosine": [0.5, 0.1, -0.3]}))
    with caplog.at_level(logging.WARNING, logger="rag.settings"):
        s = Settings()
        Settings()
    assert (s.retrieval.rrf_k, s.retrieval.top_k) == (7, 3)
    assert s.grounding.refuse_model == {"cosine": (0.5, 0.1, -0.3)}  # JSON, as the env source reads it
    said = [r.getMessage() for r in caplog.records]
    assert any("RAG_RRF_K is deprecated: set RAG_RETRIEVAL__RRF_K" in m for m in said)
    assert len([m for m in said if "RAG_RRF_K" in m]) == 1  # once per process
    assert Settings(rrf_k=1).retrieval.rrf_k == 1  # a keyword beats a flat env var too
    with pytest.raises(ValueError, match="top_k"):
        monkeypatch.delenv("RAG_RETRIEVAL__TOP_K")
        monkeypatch.setenv("RAG_TOP_K", "abc")
        Settings()


def test_copies(monkeypatch):
    s = Settings()
    t = s.replace(retrieval={"top_k": 3}, storage={"collection": "other"})
    assert (t.retrieval.top_k, t.retrieval.rrf_k, t.storage.collection) == (3, 10, "other")
    assert (s.retrieval.top_k, s.storage.collection) == (5, "iclr")  # the original is untouched
    assert s.model_copy(update={"lists": {"lister_candidates": 4}}).lists.lister_max_candidates == 4800
    with pytest.warns(DeprecationWarning, match=r"lister_candidates is now lists\.lister_candidates"):
        u = s.model_copy(update={"lister_candidates": 4})
    assert (u.lists.lister_candidates, u.lists.lister_max_candidates) == (4, 4800)
    with pytest.raises(TypeError, match="not a settings group"):
        s.replace(rrf_k=3)


def test_a_dump_rebuilds_the_same_settings(tmp_path):
    s = Settings(**nest({"data_dir": tmp_path, "top_k": 7}))
    d = s.model_dump(mode="json")
    assert d["retrieval"]["top_k"] == 7 and d["storage"]["data_dir"] == str(tmp_path)
    assert Settings(**json.loads(json.dumps(d))) == s
    assert (
        Settings(**nest(dict(d, top_k=2))).retrieval.top_k == 2
    )  # a flat override on a dump (bench workers)
