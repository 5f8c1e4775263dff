"""Every policy's examples: bad files must produce exactly the annotated findings, at the
annotated lines; good files must produce none. Each workload policy runs alone, so one
policy's examples never depend on another's; the input rules about suppressions run with the
default set, since they judge the other rules' findings (kubegap_lint.catalog.expectations)."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import EXAMPLES

from kubegap_lint.catalog.expectations import check_example, example_folders, example_paths, example_selection
from kubegap_lint.engine.inputs import lint_tree

POLICY_DIRS = example_folders(EXAMPLES)
CASES = [(d, f) for d in POLICY_DIRS for f in example_paths(d)]


def _policy_id(folder: Path) -> str:
    return folder.name.split("-", 1)[0]


@pytest.mark.parametrize("folder,path", CASES, ids=[f"{d.name}/{f.name}" for d, f in CASES])
def test_example(folder: Path, path: Path, linter_factory) -> None:
    from kubegap_lint.catalog.policies import load_catalog

    rule = _policy_id(folder)
    policy = load_catalog().find(rule)
    assert policy is not None, f"{folder.name}: no policy {rule}"
    selection = example_selection(policy)
    linter = linter_factory(tuple(selection) if selection else None)
    outcome = check_example(path, rule, linter, lint_tree)
    assert not outcome.problems, f"{path.name}: " + "; ".join(outcome.problems)


def test_every_policy_has_good_and_bad_examples() -> None:
    from kubegap_lint.catalog.policies import load_catalog

    catalog = load_catalog()
    folders = {d.name: d for d in POLICY_DIRS}
    for policy in catalog.policies:
        name = f"{policy.id}-{policy.name}"
        assert name in folders, f"examples/{name}/ is missing"
        files = [f.name for f in example_paths(folders[name])]
        assert any(f.startswith("bad") for f in files), f"{name} has no bad example"
        assert any(f.startswith("good") for f in files), f"{name} has no good example"
    known = {f"{p.id}-{p.name}" for p in catalog.policies}
    assert set(folders) <= known, f"example folders without a policy: {set(folders) - known}"
