"""The workload view's types (workloads/viewtypes.py, with the facts of the registry in
workloads/facts/) hold what views are built with: every key a built view has is declared, every
declared key and every registered fact is built, on every example and the shared corpus; and
docs/workload-view.md is the text generated from them."""

from __future__ import annotations

import types
import typing
from pathlib import Path
from typing import Any

import pytest
from conftest import CORPUS, EXAMPLES, REPO, requires_shared

from kubegap_lint.config.settings import Settings
from kubegap_lint.engine.run import Linter
from kubegap_lint.workloads import viewtypes
from kubegap_lint.workloads.facts import FACTS
from kubegap_lint.workloads.viewtypes import WorkloadView, fields_of, render_view_markdown


def test_reference_is_generated_from_the_types() -> None:
    actual = (REPO / "docs" / "workload-view.md").read_text(encoding="utf-8")
    assert actual == render_view_markdown(), "docs/workload-view.md is stale: run `bash scripts/regenerate.sh`"


def _is_view_type(hint: Any) -> bool:
    return isinstance(hint, type) and typing.is_typeddict(hint)


def _check(value: Any, hint: Any, where: str, problems: list[str], seen: dict[type, set[str]]) -> None:
    """Hold a built value to its declared type, as far as the view types describe it."""
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        choices = [a for a in typing.get_args(hint) if a is not type(None)]
        if value is not None and len(choices) == 1:
            _check(value, choices[0], where, problems, seen)
        return
    if origin is list and isinstance(value, list):
        (item,) = typing.get_args(hint)
        for position, element in enumerate(value):
            _check(element, item, f"{where}[{position}]", problems, seen)
        return
    if not _is_view_type(hint):
        return
    if not isinstance(value, dict):
        problems.append(f"{where}: {type(value).__name__}, not a {hint.__name__}")
        return
    declared = fields_of(hint)
    extra = sorted(set(value) - set(declared))
    missing = sorted((hint.__required_keys__ | _facts_made(hint, value)) - set(value))  # type: ignore[attr-defined]
    if extra:
        problems.append(f"{where}: built but not declared in {hint.__name__}: {extra}")
    if missing:
        problems.append(f"{where}: declared in {hint.__name__} but not built: {missing}")
    seen.setdefault(hint, set()).update(value)
    for key, (key_hint, _) in declared.items():
        if key in value:
            _check(value[key], key_hint, f"{where}.{key}", problems, seen)


def _facts_made(hint: Any, value: dict[str, Any]) -> set[str]:
    """The registry's facts a kept view (every fact made) holds on this dict: those of its level,
    and on an init container only those made for init containers too."""
    level = {WorkloadView: "workload", viewtypes.PodView: "pod", viewtypes.ContainerView: "container"}.get(hint)
    init = level == "container" and value.get("init") and not value.get("sidecar")
    return {f.name for f in FACTS.values() if f.level == level and (f.init_containers or not init)}


def _views(folder: Path) -> list[dict[str, Any]]:
    return Linter(Settings(select=["KG001"])).lint_paths([str(folder)], keep_views=True).views


@pytest.mark.parametrize("folder", [pytest.param(EXAMPLES, id="examples"),
                                    pytest.param(CORPUS, id="corpus", marks=requires_shared)])
def test_every_built_key_is_declared_and_every_declared_key_built(folder: Path) -> None:
    views = _views(folder)
    assert len(views) > 50
    problems: list[str] = []
    seen: dict[type, set[str]] = {}
    for number, view in enumerate(views):
        _check(view, WorkloadView, f"view {number} ({view['kind']} {view['name']})", problems, seen)
    assert problems[:10] == []
    if folder == EXAMPLES:  # the examples reach every table of the reference
        assert set(seen) == {typed for _, typed in viewtypes.SECTIONS} | {viewtypes.WorkloadSummary}


def test_a_key_the_types_do_not_declare_is_found() -> None:
    """The check itself: a view with a key too many and one too few fails it."""
    view = dict(_views(EXAMPLES / "KG201-training-checkpoint-volume")[0])
    view["surprise"] = 1
    del view["gpu_pods"]
    problems: list[str] = []
    _check(view, WorkloadView, "view", problems, {})
    assert problems == ["view: built but not declared in WorkloadView: ['surprise']",
                        "view: declared in WorkloadView but not built: ['gpu_pods']"]


def test_needs_are_the_registrys_and_name_workload_keys() -> None:
    """A policy's `needs:` means what the registry's NEEDS says: the schema allows those names
    and no other, each names a key the workload view declares, and every policy's needs is one."""
    import json

    from kubegap_lint.catalog.policies import load_catalog
    from kubegap_lint.workloads.facts.registry import NEEDS

    schema = json.loads((REPO / "schemas" / "policy.schema.json").read_text(encoding="utf-8"))
    assert schema["properties"]["needs"]["items"]["enum"] == list(NEEDS)
    declared = fields_of(WorkloadView)
    assert all(need.lacking in declared for need in NEEDS.values())
    used = {need for policy in load_catalog().policies for need in policy.needs}
    assert used and used <= set(NEEDS)
    section = render_view_markdown().split("## What `needs:` and `at:` can name")[1]
    assert all(f"| `{name}` |" in section for name in NEEDS)
