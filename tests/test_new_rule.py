"""A new rule costs its policy file, its examples and one regeneration command (CONTRIBUTING.md).

In a scratch copy of the repository, add a data-only rule that is on by default and fires on
most GPU workloads of the examples and the corpus, run scripts/regenerate.py, and check that
the regeneration touched only the rule's own generated text, and that the tests a new rule used
to break (the generated files, the examples, and the tests that lint shared fixtures) pass.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO

RULE = "KG599-gpu-workload-unlabelled"

POLICY = """\
id: KG599
name: gpu-workload-unlabelled
title: A GPU workload carries no team label
severity: warning
precision: high
applies_to: "has_gpu && !(labels.team)"
violation: "`true`"
at: ["resource.metadata", "resource"]
message: requests GPUs and has no team label
evidence: [k8s-gpu-limits-rule]
tags: [gpu]
help: |
  A rule that tests/test_new_rule.py adds to a scratch copy, never shipped.
"""

BAD = """\
# A GPU Deployment without a team label.
apiVersion: apps/v1
kind: Deployment
# expect: KG599
metadata:
  name: server
spec:
  template:
    spec:
      containers:
        - name: server
          image: registry.example/server:1
          resources:
            limits: {nvidia.com/gpu: 1}
"""

GOOD = BAD.replace("# expect: KG599\n", "").replace("  name: server\n", "  name: server\n  labels: {team: a}\n", 1)

# The tests that count findings over shared fixtures, which a new default rule used to break
# (now pinned to their rules), and the tests of every generated file.
TESTS = [
    "tests/test_docs.py",
    "tests/test_viewtypes.py::test_reference_is_generated_from_the_types",
    "tests/test_examples.py::test_every_policy_has_good_and_bad_examples",
    f"tests/test_examples.py::test_example[{RULE}/bad-no-label.yaml]",
    f"tests/test_examples.py::test_example[{RULE}/good-labelled.yaml]",
    "tests/test_sarif.py::test_golden_sarif_of_the_helm_example",
    f"tests/test_sarif.py::test_golden_sarif_of_each_example_folder[{RULE}]",
    "tests/test_sarif.py::test_golden_sarif_of_each_example_folder[KG201-training-checkpoint-volume]",
]
PINNED = [
    "tests/test_config.py::test_config_option_overrides_and_no_config_ignores",
    "tests/test_config.py::test_severity_override",
    "tests/test_workload_spill.py::test_stdin_past_the_budget_is_spilled_and_read_once",
    "tests/test_github_format.py::test_findings_become_annotations_with_file_line_column_and_title",
    "tests/test_sarif.py::test_two_different_findings_never_share_a_fingerprint",
    "tests/test_suppress.py::test_baseline_reports_only_new_findings",
    "tests/test_sarif.py::test_no_golden_without_an_example_folder",
    "tests/test_sarif.py::test_help_uris_point_at_sections_of_docs_rules_md",
]


def _copy(scratch: Path) -> Path:
    repo = scratch / "repo"
    ignore = shutil.ignore_patterns(".venv", "__pycache__", "node_modules", ".git", "out", "*.egg-info")
    for name in ("kubegap_lint", "policies", "schemas", "examples", "docs", "tests", "scripts", "bench"):
        shutil.copytree(REPO / name, repo / name, ignore=ignore, symlinks=True)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(REPO / name, repo / name)
    shared = REPO.parent / "shared"
    if shared.exists():
        (scratch / "shared").symlink_to(shared.resolve())  # tests read ../shared as from here
    return repo


def _generated(repo: Path) -> dict[str, bytes]:
    files = [repo / "docs" / "rules.md", repo / "docs" / "workload-view.md",
             *sorted((repo / "tests" / "golden" / "sarif").glob("*.sarif"))]
    return {str(path.relative_to(repo)): path.read_bytes() for path in files}


@pytest.mark.slow
@pytest.mark.skipif(sys.platform == "win32", reason="symlinks")
def test_a_new_default_rule_needs_only_its_files_and_the_regeneration(tmp_path: Path) -> None:
    repo = _copy(tmp_path)
    before = _generated(repo)
    (repo / "policies" / f"{RULE}.yaml").write_text(POLICY, encoding="utf-8")
    examples = repo / "examples" / RULE
    examples.mkdir()
    (examples / "bad-no-label.yaml").write_text(BAD, encoding="utf-8")
    (examples / "good-labelled.yaml").write_text(GOOD, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(repo), "KUBEGAP_LINT_NO_CACHE": "1"}

    regenerated = subprocess.run([sys.executable, "scripts/regenerate.py"], cwd=repo, env=env,
                                 capture_output=True, text=True, timeout=600)
    assert regenerated.returncode == 0, regenerated.stderr

    after = _generated(repo)
    changed = sorted(name for name in after if before.get(name) != after[name])
    assert changed == ["docs/rules.md", f"tests/golden/sarif/{RULE}.sarif"]
    assert set(before) - set(after) == set()
    assert b"## KG599 gpu-workload-unlabelled" in after["docs/rules.md"]

    tests = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-x",
                            *TESTS, *PINNED], cwd=repo, env=env, capture_output=True, text=True, timeout=900)
    assert tests.returncode == 0, tests.stdout[-3000:]
    assert " passed" in tests.stdout and "failed" not in tests.stdout
