"""The generator's int8 cache: built once, one Linear at a time, from the fp32 safetensors; later starts
load it into an empty skeleton (no fp32 copy ever exists)."""

from __future__ import annotations

import collections
import contextlib
import ctypes
import gc
import hashlib
import json
import logging
import os
import warnings
from pathlib import Path

from rag.settings import Settings

log = logging.getLogger(__name__)


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


# Quantizing the fp32 model at every start held fp32 and int8 copies at once (6 GB peak, issue 14). Instead the
# int8 state is built once, one Linear at a time from the fp32 safetensors (peak ~ the int8 model plus one
# layer), saved in the model cache, and later starts build the architecture with empty (meta) weights, swap in
# empty int8 Linears and assign the saved state: no fp32 copy ever exists.

INT8_FORMAT = 1  # bump when the layout of the saved int8 state changes
_QUANT = {"dtype": "qint8", "modules": ["Linear"], "api": "torch.ao.quantization.quantize_dynamic"}


def trim(collect: bool = True) -> None:
    """Return freed heap to the OS (glibc keeps it otherwise and settled RSS stays at the peak).

    collect=False skips gc.collect, which costs ~0.5 s with transformers imported: per layer, refcounts free.
    """
    if collect:
        gc.collect()
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6").malloctrim(0)


@contextlib.contextmanager
def _params_on_meta():
    """Modules built inside get meta parameters (no memory) but real buffers (rotary inv_freq etc.)."""
    import torch

    register = torch.nn.Module.register_parameter

    def on_meta(module, name, param):
        register(module, name, param)
        if param is not None:
            p = module._parameters[name]
            module._parameters[name] = torch.nn.Parameter(p.to("meta"), requires_grad=p.requires_grad)

    torch.nn.Module.register_parameter = on_meta
    try:
        yield
    finally:
        torch.nn.Module.register_parameter = register


def _skeleton(folder: Path):
    """The model's architecture with meta parameters, its config and generation config from `folder`."""
    from transformers import AutoConfig, AutoModelForCausalLM, GenerationConfig

    config = AutoConfig.from_pretrained(str(folder))
    with _params_on_meta():
        model = AutoModelForCausalLM.from_config(config, dtype="float32")
    if (folder / "generation_config.json").exists():
        model.generation_config = GenerationConfig.from_pretrained(str(folder))
    return model.eval()


def _linears(model):
    """(parent, child name, Linear) for every plain nn.Linear: exactly what quantize_dynamic swaps."""
    import torch

    return [
        (parent, name, child)
        for parent in model.modules()
        for name, child in parent.named_children()
        if type(child) is torch.nn.Linear
    ]


def _int8_key(folder: Path, gguf_sha256: str | None = None) -> str:
    """What the saved int8 state depends on: the source weights (and the GGUF they were converted from),
    torch/transformers, the quantization."""
    import torch
    import transformers

    files = sorted(
        (f.name, f.stat().st_size, f.stat().st_mtime_ns)
        for f in folder.iterdir()
        if f.suffix in (".json", ".safetensors", ".bin", ".gguf")
    )
    source = {"files": files}
    if gguf_sha256:
        source["gguf_sha256"] = gguf_sha256
    material = {
        "format": INT8_FORMAT,
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "engine": torch.backends.quantized.engine,
        "quant": _QUANT,
        "source": source,
    }
    return hashlib.sha256(json.dumps(material, sort_keys=True).encode()).hexdigest()[:20]


def int8_cache_path(folder: Path, settings: Settings, gguf_sha256: str | None = None) -> Path:
    return Path(settings.storage.model_cache) / "int8" / f"{folder.name}-{_int8_key(folder, gguf_sha256)}.pt"


_ST_DTYPES = {"F32": "float32", "F16": "float16", "BF16": "bfloat16"}


def _fp32_tensors(folder: Path) -> dict[str, tuple[Path, int, dict]] | None:
    """Tensor name -> (safetensors file, data start, header entry); None without plain safetensors weights.

    Read with seek+read, not safetensors' mmap: mmapped pages count in RSS, so an mmap read of the whole
    2.5 GB fp32 file would put it all in the process's peak.
    """
    index = folder / "model.safetensors.index.json"
    if index.exists():
        files = sorted({folder / f for f in json.loads(index.read_text())["weight_map"].values()})
    elif (folder / "model.safetensors").exists():
        files = [folder / "model.safetensors"]
    else:
        return None
    out = {}
    for file in files:
        with open(file, "rb") as f:
            n = int.from_bytes(f.read(8), "little")
            header = json.loads(f.read(n))
        header.pop("__metadata__", None)
        if any(h["dtype"] not in _ST_DTYPES for h in header.values()):
            return None
        out.update({k: (file, 8 + n, h) for k, h in header.items()})
    return out


def _read_tensor(f, start: int, h: dict):
    import torch

    lo, hi = h["data_offsets"]
    buf = torch.empty(hi - lo, dtype=torch.uint8)
    f.seek(start + lo)
    if f.readinto(memoryview(buf.numpy())) != hi - lo:
        raise OSError(f"short read in {f.name}")
    return buf.view(getattr(torch, _ST_DTYPES[h["dtype"]])).reshape(h["shape"]).to(torch.float32)


def _full_load_int8(folder: Path) -> dict:
    """Fallback build: the whole fp32 model, quantized in place (each fp32 Linear is freed as it is swapped)."""
    import torch
    from transformers import AutoModelForCausalLM

    model = quantize_inplace(AutoModelForCausalLM.from_pretrained(str(folder), dtype=torch.float32).eval())
    return {"state": model.state_dict(), "buffers": dict(model.named_buffers())}


def _build_int8(folder: Path) -> dict:
    """The int8 state from the fp32 folder, one Linear at a time: read, quantize, keep only the int8 state.

    The peak is the int8 model plus one fp32 layer, never the whole fp32 model.
    """
    import torch

    tensors = _fp32_tensors(folder)
    if tensors is None:  # e.g. pytorch_model.bin
        return _full_load_int8(folder)
    model = _skeleton(folder)
    groups: dict[int, list[str]] = {}  # a tied lm_head's weight is stored once, under the embedding's name
    for n, p in model.named_parameters(remove_duplicate=False):
        groups.setdefault(id(p), []).append(n)
    source = {}
    for group in groups.values():
        stored = [n for n in group if n in tensors]
        if not stored:  # checkpoint names differ from the module's (renamed keys): load it whole
            log.info("int8 build: %s not in the checkpoint; loading the fp32 model whole", group[0])
            return _full_load_int8(folder)
        source.update(dict.fromkeys(group, stored[0]))
    prefix = {id(m): n for n, m in model.named_modules()}
    keys = set(model.state_dict())
    buffers = dict(model.named_buffers())  # real (not meta): non-persistent ones (rotary) are saved too
    state = {n: b for n, b in buffers.items() if n in keys}
    with contextlib.ExitStack() as stack:
        handles: dict[Path, object] = {}

        def fp32(name: str):
            file, start, h = tensors[source[name]]
            if file not in handles:
                handles[file] = stack.enter_context(open(file, "rb"))
            return torch.nn.Parameter(_read_tensor(handles[file], start, h), requires_grad=False)

        linear_params = set()
        for parent, cname, lin in _linears(model):
            full = f"{prefix[id(parent)]}.{cname}".lstrip(".")
            real = torch.nn.Linear(1, 1, bias=lin.bias is not None, device="meta")
            real.in_features, real.out_features = lin.in_features, lin.out_features
            real.weight = fp32(f"{full}.weight")
            if lin.bias is not None:
                real.bias = fp32(f"{full}.bias")
            state.update(quantize_inplace(torch.nn.Sequential(real))[0].state_dict(prefix=full + "."))
            linear_params.update({f"{full}.weight", f"{full}.bias"})
            del real
            trim(collect=False)  # this layer's fp32 weight back to the OS before the next is read
        for n, _ in model.named_parameters(remove_duplicate=False):  # embeddings, norms
            if n not in linear_params and n in keys:
                state[n] = fp32(n).data
    return {"state": state, "buffers": buffers}


def quantize_inplace(model):
    import torch

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return torch.ao.quantization.quantize_dynamic(
            model, {torch.nn.Linear}, dtype=torch.qint8, inplace=True
        )


def _save_int8(built: dict, path: Path, key: str) -> None:
    import torch

    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + f".tmp{os.getpid()}")
    sums = _sum_path(path)
    try:
        torch.save({"format": INT8_FORMAT, "key": key, **built}, tmp)
        _write_atomic(
            sums, sha256_file(tmp)
        )  # the checksum first: a crash in between reads as corrupt, rebuilt
        os.replace(tmp, path)  # atomic: a killed save leaves no partial file under the final name
    finally:
        tmp.unlink(missing_ok=True)
    base = path.name.rsplit("-", 1)[0]
    for old in path.parent.iterdir():  # stale keys of the same folder (not other writers' temp files)
        if old.name.rsplit("-", 1)[0] == base and old.name.endswith((".pt", ".pt.sha256")):
            if old not in (path, sums):
                old.unlink(missing_ok=True)


def _sum_path(path: Path) -> Path:
    return path.with_name(path.name + ".sha256")


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + f".tmp{os.getpid()}")
    tmp.write_text(text)
    os.replace(tmp, path)


def _model_from_state(folder: Path, built: dict):
    """Meta skeleton + 1x1 int8 Linear placeholders, then the saved state assigned: no fp32 copy exists."""
    import torch.ao.nn.quantized.dynamic as nnqd

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = _skeleton(folder)
        for parent, cname, lin in _linears(model):
            q = nnqd.Linear(1, 1, lin.bias is not None)
            q.in_features, q.out_features = lin.in_features, lin.out_features
            setattr(parent, cname, q)
        state = collections.OrderedDict(built["state"])
        state._metadata = model.state_dict()._metadata  # module versions: the skeleton's classes are the same
        model.load_state_dict(state, strict=True, assign=True)
    for n, b in built["buffers"].items():
        mod, _, leaf = n.rpartition(".")
        model.get_submodule(mod)._buffers[leaf] = b
    if any(t.is_meta for t in [*model.parameters(), *model.buffers()]):
        raise ValueError("int8 state lacks some weights")
    return model.eval()


def _load_int8(folder: Path, path: Path, key: str):
    """The int8 model from its cache file; raises on a file that is not a complete cache for `key`."""
    import torch

    sums = _sum_path(path)
    if not sums.exists() or sums.read_text().strip() != sha256_file(
        path
    ):  # truncated, bit-flipped, unfinished
        raise ValueError("checksum mismatch")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        built = torch.load(path, map_location="cpu", weights_only=True, mmap=True)
    if not isinstance(built, dict) or built.get("format") != INT8_FORMAT or built.get("key") != key:
        raise ValueError("int8 cache written for other settings")
    return _model_from_state(folder, built)


def load_int8(folder: Path, settings: Settings, gguf_sha256: str | None = None):
    """The int8 CPU model for an HF folder: from the cache, else built once and cached. `gguf_sha256`:
    the packaged GGUF the folder was converted from (rag.models.generator.gguf_source), part of the cache key.

    A missing, partial, corrupt or stale cache file is rebuilt (with a warning), never fatal.
    """
    path = int8_cache_path(folder, settings, gguf_sha256)
    key = path.stem.rsplit("-", 1)[1]
    if path.exists():
        try:
            return _load_int8(folder, path, key)
        except Exception as e:  # noqa: BLE001  (any unreadable cache is rebuilt)
            log.warning("int8 cache %s unusable (%s: %s); rebuilding it", path, type(e).__name__, e)
            trim()
    built = _build_int8(folder)
    try:
        _save_int8(built, path, key)
    except OSError as e:  # read-only cache: serve anyway, just build again next start
        log.warning("could not save the int8 cache %s: %s", path, e)
        return _model_from_state(folder, built)
    del built
    trim()
    try:
        return _load_int8(folder, path, key)  # the same path as every later start
    except Exception as e:  # noqa: BLE001  (e.g. another process replaced the file meanwhile)
        log.warning("int8 cache %s unreadable right after saving (%s); using a fresh build", path, e)
        return _model_from_state(folder, _build_int8(folder))
