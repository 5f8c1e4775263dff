"""The package's folders are the pipeline: no import cycle between modules, and no module
imports a subpackage that comes later in LAYERS (a stage never reaches ahead of itself).

Imports are read from the source with `ast`, function-level ones included, so a lazy import
cannot hide a cycle."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "kubegap_lint"

# Lower first. A module may import its own subpackage and any earlier one.
LAYERS = ["core", "store", "input", "catalog", "workloads", "config", "suppress", "helm", "kustomize",
          "engine", "fix", "report", "serve", "cli"]


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports() -> dict[str, set[str]]:
    modules = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                targets = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                continue
            found.update(t for t in targets if t in modules and t != name)
        graph[name] = found
    return graph


def _layer(module: str) -> int | None:
    parts = module.split(".")
    return LAYERS.index(parts[1]) if len(parts) > 2 and parts[1] in LAYERS else None


def test_every_subpackage_has_a_layer() -> None:
    folders = {p.parent.name for p in PACKAGE.glob("*/__init__.py")}
    assert folders == set(LAYERS)


def test_no_module_imports_a_later_layer() -> None:
    upward = []
    for module, targets in _imports().items():
        here = _layer(module)
        for target in targets:
            there = _layer(target)
            if here is not None and there is not None and there > here:
                upward.append(f"{module} -> {target}")
    assert upward == []


def test_no_import_cycle() -> None:
    graph = _imports()
    # Package __init__ modules are edges of `from pkg import mod`, not code: leave them out.
    graph = {m: {t for t in ts if not _is_package(t)} for m, ts in graph.items() if not _is_package(m)}
    state: dict[str, int] = {}
    cycles: list[list[str]] = []

    def visit(node: str, trail: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                cycles.append(trail[trail.index(nxt):] + [nxt] if nxt in trail else [node, nxt])
            elif nxt not in state:
                visit(nxt, trail + [nxt])
        state[node] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])
    assert cycles == []


def _is_package(module: str) -> bool:
    return (PACKAGE.parent / module.replace(".", "/") / "__init__.py").exists()


@pytest.mark.parametrize("layer", LAYERS)
def test_layer_has_a_docstring_that_says_what_it_holds(layer: str) -> None:
    init = PACKAGE / layer / "__init__.py"
    assert ast.get_docstring(ast.parse(init.read_text())), f"{init} says nothing of its room"


# What engine/ may import from workloads/: the stage's entry points, not its internals. The
# run loop builds views (views: workload_view, ViewContext, the costly facts' names and the
# view's type), keeps the cross-resource index (index), reads the kind table (kinds) and the
# repository's facts (repofacts); locating a finding needs none of them.
WORKLOAD_ENTRY_POINTS = {
    "kubegap_lint.workloads.index": {"kubegap_lint.engine.run", "kubegap_lint.engine.parallel",
                                     "kubegap_lint.engine.decided"},
    "kubegap_lint.workloads.kinds": {"kubegap_lint.engine.run"},
    "kubegap_lint.workloads.repofacts": {"kubegap_lint.engine.decided", "kubegap_lint.engine.inputs"},
    "kubegap_lint.workloads.views": {"kubegap_lint.engine.run", "kubegap_lint.engine.result"},
    # What a policy's `needs:` names and which view key says it is lacking (KG008's notes).
    "kubegap_lint.workloads.facts.registry": {"kubegap_lint.engine.notes"},
}


def test_engine_reaches_the_workload_stage_only_through_its_entry_points() -> None:
    reached = sorted(f"{module} -> {target}" for module, targets in _imports().items()
                     if module.startswith("kubegap_lint.engine.")
                     for target in targets if target.startswith("kubegap_lint.workloads.")
                     and module not in WORKLOAD_ENTRY_POINTS.get(target, ()))
    assert reached == []
