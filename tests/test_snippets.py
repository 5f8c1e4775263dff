"""Every pre-commit and workflow snippet of the README and the docs, checked against the files
they configure: workflow YAML parses and its kubegap-lint step's `with:` keys are inputs of
action.yml; pre-commit snippets name hooks of .pre-commit-hooks.yaml and a `rev` that can exist;
one owner name everywhere. (tests/test_pre_commit.py runs the pre-commit snippets for real.)"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from conftest import REPO

DOCUMENTS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
WORKFLOWS = sorted((REPO / "examples" / "github").glob("*.yml"))
_FENCE = re.compile(r"^```ya?ml\n(.*?)^```", re.M | re.S)
PLACEHOLDER_REV = "FULL_COMMIT_SHA"


def _yaml(text: str) -> Any:
    from ruamel.yaml import YAML

    return YAML(typ="safe").load(text)


def yaml_snippets() -> list[tuple[str, Any]]:
    """(document:line, parsed YAML) of every ```yaml block of the README and docs/ that is
    pre-commit configuration or a workflow (others may show broken YAML on purpose)."""
    found = []
    for document in DOCUMENTS:
        text = document.read_text(encoding="utf-8")
        for match in _FENCE.finditer(text):
            line = text.count("\n", 0, match.start()) + 1
            if not re.search(r"^\s*(repos:|- uses:|uses:)", match.group(1), re.M):
                continue
            found.append((f"{document.relative_to(REPO)}:{line}", _yaml(match.group(1))))
    return found


def pre_commit_snippets() -> list[tuple[str, dict[str, Any]]]:
    return [(where, data) for where, data in yaml_snippets() if isinstance(data, dict) and "repos" in data]


def _steps(data: Any) -> list[dict[str, Any]]:
    """The steps of a workflow, of a job, or of a fragment that is a job's body."""
    if not isinstance(data, dict):
        return []
    if "jobs" in data:
        return [s for job in data["jobs"].values() for s in job.get("steps", [])]
    return list(data.get("steps", []))


def workflow_snippets() -> list[tuple[str, list[dict[str, Any]]]]:
    found = [(where, _steps(data)) for where, data in yaml_snippets() if _steps(data)]
    found += [(str(path.relative_to(REPO)), _steps(_yaml(path.read_text(encoding="utf-8")))) for path in WORKFLOWS]
    return found


def _owner() -> str:
    from kubegap_lint.report.sarif import REPOSITORY_URL

    return REPOSITORY_URL.removeprefix("https://github.com/")


def test_the_docs_have_the_snippets_these_tests_check() -> None:
    places = {where.split(":")[0] for where, _ in pre_commit_snippets()}
    assert {"README.md", "docs/helm-and-pre-commit.md"} <= places
    places = {where.split(":")[0] for where, _ in workflow_snippets()}
    assert {"README.md", "docs/github-action.md", "examples/github/code-scanning.yml"} <= places


def test_workflow_snippets_use_the_action_with_its_inputs() -> None:
    action = _yaml((REPO / "action.yml").read_text(encoding="utf-8"))
    inputs = set(action["inputs"])
    required = {name for name, spec in action["inputs"].items() if spec.get("required")}
    outputs = set(action["outputs"])
    checked = 0
    for where, steps in workflow_snippets():
        ids = {}
        for step in steps:
            uses = str(step.get("uses", ""))
            if uses.split("@")[0].endswith("/kubegap-lint"):
                checked += 1
                assert uses.split("@")[0] == _owner(), f"{where}: {uses}: the owner is {_owner()}"
                given = set(step.get("with") or {})
                assert given <= inputs, f"{where}: not inputs of action.yml: {sorted(given - inputs)}"
                assert required <= given, where
                if "id" in step:
                    ids[step["id"]] = True
        for step in steps:  # later steps read only outputs the action declares
            for text in map(str, [step.get("if", ""), *(step.get("with") or {}).values()]):
                for step_id, output in re.findall(r"steps\.([\w-]+)\.outputs\.([\w-]+)", text):
                    if step_id in ids:
                        assert output in outputs, f"{where}: steps.{step_id}.outputs.{output}"
    assert checked >= 4


def test_pre_commit_snippets_name_real_hooks_and_a_pinnable_rev() -> None:
    from kubegap_lint.report.sarif import REPOSITORY_URL

    hooks = {h["id"]: h for h in _yaml((REPO / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))}
    for where, data in pre_commit_snippets():
        for repo in data["repos"]:
            assert repo["repo"] == REPOSITORY_URL, where
            # No release tag exists: a tag-like rev (the old `v0.1.0`) would not resolve.
            assert repo["rev"] == PLACEHOLDER_REV or re.fullmatch(r"[0-9a-f]{40}", repo["rev"]), where
            for hook in repo["hooks"]:
                assert hook["id"] in hooks, f"{where}: no hook {hook['id']}"


@pytest.mark.parametrize("path", [*DOCUMENTS, *WORKFLOWS, REPO / "action.yml"], ids=lambda p: p.name)
def test_one_owner_name_everywhere(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert "OWNER/" not in text
    for owner in re.findall(r"github\.com/([\w.-]+)/kubegap-lint\b", text) + \
            re.findall(r"uses: ([\w.-]+)/kubegap-lint@", text):
        assert f"{owner}/kubegap-lint" == _owner(), f"{path.name}: {owner}"
