"""Every policy's examples: bad files must produce exactly the annotated findings, at the
annotated lines; good files must produce none. Each policy runs alone, so one policy's
examples never depend on another's."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import EXAMPLES
from expectations import expected_findings

POLICY_DIRS = sorted(p for p in EXAMPLES.glob("KG[0-9][0-9][0-9]-*") if p.is_dir())
CASES = [(d, f) for d in POLICY_DIRS for f in sorted(d.glob("*.yaml"))]


def _policy_id(folder: Path) -> str:
    return folder.name.split("-", 1)[0]


@pytest.mark.parametrize("folder,path", CASES, ids=[f"{d.name}/{f.name}" for d, f in CASES])
def test_example(folder: Path, path: Path, linter_factory) -> None:
    rule = _policy_id(folder)
    linter = linter_factory((rule,))
    result = linter.lint_paths([str(path)])
    assert not result.errors, result.errors
    actual = {(f.rule_id, f.location.line) for f in result.findings if f.rule_id == rule}
    expected = {(r, line) for r, line in expected_findings(path) if r == rule}
    if path.name.startswith("good"):
        assert actual == set(), f"{path.name} must not trigger {rule}"
        assert not expected, "good examples carry no expect annotations"
    else:
        assert path.name.startswith("bad"), "example files are named bad-*.yaml or good-*.yaml"
        assert expected, f"{path.name} has no '# expect: {rule}' annotation"
        assert actual == expected


def test_every_policy_has_good_and_bad_examples() -> None:
    from kubegap_lint.catalog import load_catalog

    catalog = load_catalog()
    folders = {d.name: d for d in POLICY_DIRS}
    for policy in catalog.policies:
        name = f"{policy.id}-{policy.name}"
        assert name in folders, f"examples/{name}/ is missing"
        files = [f.name for f in folders[name].glob("*.yaml")]
        assert any(f.startswith("bad") for f in files), f"{name} has no bad example"
        assert any(f.startswith("good") for f in files), f"{name} has no good example"
    known = {f"{p.id}-{p.name}" for p in catalog.policies}
    assert set(folders) <= known, f"example folders without a policy: {set(folders) - known}"
