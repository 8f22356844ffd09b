"""Static import checks (ast): rag/ is the bottom layer, its stage packages import only lower stages, and no
project modules import each other in a circle."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("rag", "ui", "eval", "iclr_rag")


def _module(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    """Every module of the packages, subpackages included (eval/results holds run outputs, not code)."""
    return {
        _module(p): p
        for pkg in PACKAGES
        for p in sorted((ROOT / pkg).rglob("*.py"))
        if "results" not in p.relative_to(ROOT).parts
    }


def _imports(name: str, path: Path, known: set[str], type_only: bool = False) -> set[str]:
    """Project modules imported anywhere in the file (module and function level; TYPE_CHECKING excluded
    unless `type_only`)."""
    tree = ast.parse(path.read_text(), str(path))
    skip: set[int] = set()
    for node in ast.walk(tree):  # `if TYPE_CHECKING:` blocks never run
        if not type_only and isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skip |= {id(n) for stmt in node.body for n in ast.walk(stmt)}
    pkg = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(
                    pkg.split(".")[: len(pkg.split(".")) - node.level + 1] + ([base] if base else [])
                )
            targets = [f"{base}.{a.name}" for a in node.names] + [base]
        else:
            continue
        for t in targets:
            while t and t not in known:
                t = t.rpartition(".")[0]
            if t and t != name:
                out.add(t)
    return out


def _graph(type_only: bool = False) -> dict[str, set[str]]:
    mods = _modules()
    return {m: _imports(m, p, set(mods), type_only) for m, p in mods.items()}


def test_modules_include_subpackages():
    mods = _modules()
    assert {"rag.retrieval", "rag.retrieval.bm25", "rag.models.generator", "rag.answer"} <= set(mods)
    assert not any(m.startswith("eval.results") for m in mods)


def test_rag_imports_no_upper_layer():
    bad = {
        (m, d)
        for m, deps in _graph().items()
        if m.split(".")[0] == "rag"
        for d in deps
        if d.split(".")[0] in ("ui", "eval", "iclr_rag")
    }
    assert not bad, bad


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    found, state, stack = [], {}, []

    def dfs(n):
        state[n] = "open"
        stack.append(n)
        for d in sorted(graph.get(n, ())):
            if state.get(d) == "open":
                found.append(stack[stack.index(d) :] + [d])
            elif d not in state:
                dfs(d)
        stack.pop()
        state[n] = "done"

    for n in sorted(graph):
        if n not in state:
            dfs(n)
    return found


def test_the_cycle_finder_finds_cycles():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c", "a"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


# Known, owned elsewhere: check_question moves out of rag/answer.py (engine rewrite, issue 14).
KNOWN_CYCLES: set[frozenset[str]] = set()


def test_no_import_cycles():
    cycles = [c for c in _cycles(_graph()) if frozenset(c) not in KNOWN_CYCLES]
    assert not cycles, cycles


# rag/ by stage, lowest first: a stage imports only itself, the stages below it, the models (usable by any)
# and the root helpers. The root's export and answer (the Engine) sit above every stage.
STAGES = ("ingest", "index", "retrieval", "reading", "grounding", "shapes")
HELPERS = {"rag", "rag.settings", "rag.types", "rag.errors", "rag.text", "rag.prompts"}


def _layer(module: str) -> str:
    """rag.retrieval.bm25 -> "retrieval", rag.settings -> "settings", rag -> ""."""
    return module.split(".")[1] if module.count(".") else ""


def _arrows_back_up(graph: dict[str, set[str]]) -> set[tuple[str, str]]:
    """(importer, imported) pairs inside rag/ that break the stage order."""
    bad = set()
    for m, deps in graph.items():
        if m.split(".")[0] != "rag":
            continue
        layer = _layer(m)
        for d in deps:
            if d.split(".")[0] != "rag":
                continue
            dl = _layer(d)
            below = d in HELPERS or dl == "models"
            if layer in STAGES:
                ok = below or (dl in STAGES and STAGES.index(dl) <= STAGES.index(layer))
            elif layer == "models":
                ok = below
            elif m in HELPERS:
                ok = d in HELPERS
            else:  # rag.export, rag.answer: above every stage
                ok = d != "rag.answer"
            if not ok:
                bad.add((m, d))
    return bad


def test_the_stage_check_finds_arrows_back_up():
    graph = {
        "rag.ingest.corpus": {"rag.types", "rag.models.embedder"},
        "rag.retrieval.bm25": {"rag.index.index", "rag.retrieval.names", "rag.ingest.chunk"},
        "rag.index.index": {"rag.retrieval.bm25"},  # up a stage
        "rag.models.embedder": {"rag.ingest.corpus"},  # models use no stage
        "rag.text": {"rag.retrieval.names"},  # helpers use no stage
        "rag.shapes.summarize": {"rag.export"},  # a stage never uses the root's export
        "rag.export": {"rag.retrieval.filters"},
    }
    assert _arrows_back_up(graph) == {
        ("rag.index.index", "rag.retrieval.bm25"),
        ("rag.models.embedder", "rag.ingest.corpus"),
        ("rag.text", "rag.retrieval.names"),
        ("rag.shapes.summarize", "rag.export"),
    }


def test_stages_import_only_lower_stages():
    mods = _modules()
    stages = {
        _layer(m)
        for m, p in mods.items()
        if m.startswith("rag.") and m.count(".") == 1 and p.name == "__init__.py"
    }
    assert stages == {*STAGES, "models"}, stages  # a new stage package takes its place in STAGES
    assert not _arrows_back_up(_graph()), sorted(_arrows_back_up(_graph()))


def test_only_the_front_ends_import_the_engine():
    """rag/answer.py (the Engine) is imported by ui/, eval/ and the CLI only, not even for type hints in rag/."""
    users = {m for m, deps in _graph(type_only=True).items() if "rag.answer" in deps}
    assert users, "nothing imports the Engine: the check reads the wrong modules"
    assert all(m.split(".")[0] in ("ui", "eval", "iclr_rag") for m in users), sorted(users)


# ui/ by feature: each tab's package (ui.chat, ui.find) imports nothing from the other, and the shared
# HTML helpers (ui.html) import neither; what both tabs use lives in ui.html or at the ui root.
UI_FEATURES = ("ui.chat", "ui.find")


def _ui_crossings(graph: dict[str, set[str]]) -> set[tuple[str, str]]:
    """(importer, imported) pairs where one UI feature package reaches into the other, or the shared HTML
    helpers into either."""

    def feature(m: str) -> str | None:
        return next((f for f in (*UI_FEATURES, "ui.html") if m == f or m.startswith(f + ".")), None)

    bad = set()
    for m, deps in graph.items():
        mine = feature(m)
        if mine is None:
            continue
        for d in deps:
            theirs = feature(d)
            if theirs in UI_FEATURES and theirs != mine:
                bad.add((m, d))
    return bad


def test_the_ui_check_finds_crossings():
    graph = {
        "ui.chat.render": {"ui.html.safe", "ui.chat.session", "ui.filters"},
        "ui.chat.sources_html": {"ui.find.papers"},  # a tab into the other
        "ui.find.handlers": {"ui.chat", "ui.engine_holder"},
        "ui.html.safe": {"ui.chat.render"},  # the shared helpers into a tab
        "ui.events": {"ui.chat.handlers", "ui.find.handlers"},  # the root joins both
    }
    assert _ui_crossings(graph) == {
        ("ui.chat.sources_html", "ui.find.papers"),
        ("ui.find.handlers", "ui.chat"),
        ("ui.html.safe", "ui.chat.render"),
    }


def test_ui_tabs_do_not_import_each_other():
    graph = _graph(type_only=True)  # type hints count too: a tab names no type of the other
    assert {"ui.chat.handlers", "ui.find.handlers", "ui.html.safe"} <= set(graph), "the ui packages moved"
    assert not _ui_crossings(graph), sorted(_ui_crossings(graph))
