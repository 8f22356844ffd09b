"""rag/models/int8.py: the int8 cache: built once from the fp32 folder, loaded back with the same logits; a corrupt,
partial or stale cache file is rebuilt, never fatal. A tiny random Qwen2 model, no packaged weights."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from rag.models import int8  # noqa: E402
from tests.conftest import make_settings  # noqa: E402


def tiny_folder(path, tied=False):
    torch.manual_seed(0)
    cfg = transformers.Qwen2Config(
        vocab_size=256,
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        tie_word_embeddings=tied,
    )
    model = transformers.Qwen2ForCausalLM(cfg).eval()
    model.save_pretrained(path)
    return model


def reference_int8(folder):
    """The old path: the whole fp32 model from the folder, then quantize_dynamic."""
    fp32 = transformers.AutoModelForCausalLM.from_pretrained(str(folder), dtype=torch.float32).eval()
    return torch.ao.quantization.quantize_dynamic(fp32, {torch.nn.Linear}, dtype=torch.qint8)


def logits(model, ids):
    with torch.no_grad():
        return model(ids).logits


@pytest.mark.parametrize("tied", [False, True])
def test_int8_cache_round_trip_matches_quantizing_at_start(tmp_path, tied):
    folder = tmp_path / "hf-tiny"
    tiny_folder(folder, tied)
    s = make_settings(model_cache=tmp_path / "cache")
    ids = torch.randint(0, 256, (2, 12), generator=torch.Generator().manual_seed(1))
    ref = logits(reference_int8(folder), ids)

    built = int8.load_int8(folder, s)  # no cache: built layer by layer, saved, loaded back
    path = int8.int8_cache_path(folder, s)
    assert path.exists() and not list(path.parent.glob("*.tmp*"))
    assert torch.equal(logits(built, ids), ref)

    loaded = int8.load_int8(folder, s)  # from the cache file
    assert torch.equal(logits(loaded, ids), ref)
    assert not any(p.is_meta for p in loaded.parameters())
    out = loaded.generate(ids[:1], max_new_tokens=5, do_sample=False, pad_token_id=0)
    assert out.shape[1] == 17


@pytest.mark.parametrize("damage", ["truncate", "garbage", "stale_key", "flip"])
def test_corrupt_int8_cache_is_rebuilt(tmp_path, damage, caplog):
    folder = tmp_path / "hf-tiny"
    tiny_folder(folder)
    s = make_settings(model_cache=tmp_path / "cache")
    ids = torch.randint(0, 256, (1, 8), generator=torch.Generator().manual_seed(2))
    ref = logits(int8.load_int8(folder, s), ids)
    path = int8.int8_cache_path(folder, s)
    data = path.read_bytes()
    if damage == "truncate":
        path.write_bytes(data[: len(data) // 2])
    elif damage == "garbage":
        path.write_bytes(b"not a torch file")
    elif damage == "flip":  # a byte inside the tensor data: only a checksum notices
        mid = len(data) // 2
        path.write_bytes(data[:mid] + bytes([data[mid] ^ 0xFF]) + data[mid + 1 :])
    else:  # a file written for other settings under this name
        payload = torch.load(path, weights_only=True)
        payload["key"] = "other"
        torch.save(payload, path)
    with caplog.at_level("WARNING", logger="rag.models.int8"):
        again = int8.load_int8(folder, s)
    assert "rebuilding" in caplog.text
    assert torch.equal(logits(again, ids), ref)
    assert int8.load_int8(folder, s) is not None  # the rebuilt file loads


def test_cache_key_follows_the_source_and_stale_files_go(tmp_path):
    folder = tmp_path / "hf-tiny"
    tiny_folder(folder)
    other = tmp_path / "hf-tiny-2"  # a folder whose name extends this one's: its cache must survive
    tiny_folder(other)
    s = make_settings(model_cache=tmp_path / "cache")
    int8.load_int8(other, s)
    int8.load_int8(folder, s)
    first = int8.int8_cache_path(folder, s)
    (folder / "config.json").write_text((folder / "config.json").read_text() + " ")  # source changed
    second = int8.int8_cache_path(folder, s)
    assert second != first
    int8.load_int8(folder, s)
    left = sorted(f.name for f in second.parent.iterdir())
    assert left == sorted(
        [second.name, second.name + ".sha256"]
        + [int8.int8_cache_path(other, s).name, int8.int8_cache_path(other, s).name + ".sha256"]
    )


def test_the_gguf_a_folder_came_from_is_part_of_the_key(tmp_path):
    from pathlib import Path

    from rag.models import generator as models

    folder = tmp_path / "hf-tiny"
    tiny_folder(folder)
    s = make_settings(model_cache=tmp_path / "cache")
    assert int8.int8_cache_path(folder, s, "a" * 64) != int8.int8_cache_path(folder, s, "b" * 64)
    spec = models.GGUFS["qwen0.5b"]
    assert models.gguf_source(Path(f"hf-{Path(spec.file).stem}-{spec.size}")) == spec.sha256
    assert models.gguf_source(folder) is None
