"""action.yml and examples/github/code-scanning.yml, run as GitHub would run them: the steps'
scripts execute in bash with the inputs as environment variables, a stand-in `helm` that prints
real-format `helm template` output, and kubegap-lint from this checkout."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import EXAMPLES, REPO
from sarif_checks import SCHEMA, github_problems, schema_problems

ACTION = REPO / "action.yml"
WORKFLOW = REPO / "examples" / "github" / "code-scanning.yml"
GPU_JOB = EXAMPLES / "KG201-training-checkpoint-volume" / "bad-job-no-volumes.yaml"
_EXPRESSION = re.compile(r"\$\{\{\s*([^}]*?)\s*\}\}")


def _load(path: Path) -> Any:
    from ruamel.yaml import YAML

    return YAML(typ="safe").load(path.read_text(encoding="utf-8"))


def _step(steps: list[dict[str, Any]], **match: str) -> dict[str, Any]:
    for step in steps:
        if all(str(step.get(k, "")).startswith(v) for k, v in match.items()):
            return step
    raise AssertionError(f"no step with {match}")


def _expand(value: str, context: dict[str, dict[str, str]]) -> str:
    """Just enough of GitHub's expressions for these files: `${{ scope.name }}`."""
    def lookup(match: re.Match[str]) -> str:
        scope, _, name = match.group(1).partition(".")
        return context[scope][name]
    return _EXPRESSION.sub(lookup, value)


@pytest.fixture()
def workspace(tmp_path: Path) -> dict[str, Any]:
    """A repository checkout with manifests and the example chart, a stand-in helm that prints the
    chart's recorded `helm template` output, and kubegap-lint from this checkout on PATH."""
    root = tmp_path / "repo"
    (root / "k8s").mkdir(parents=True)
    (root / "k8s" / "job.yaml").write_text(GPU_JOB.read_text())
    shutil.copytree(EXAMPLES / "helm" / "gpu-train", root / "charts" / "gpu-train")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    helm = bin_dir / "helm"
    helm.write_text(f"#!/bin/sh\ncase \"$1\" in\n  dependency) exit 0 ;;\n"
                    f"  template) cat '{EXAMPLES / 'helm' / 'rendered.yaml'}' ;;\n"
                    "  *) echo \"stand-in helm: $*\" >&2; exit 1 ;;\nesac\n")
    lint = bin_dir / "kubegap-lint"
    lint.write_text(f"#!/bin/sh\nPYTHONPATH='{REPO}' exec '{sys.executable}' -m kubegap_lint \"$@\"\n")
    for tool in (helm, lint):
        tool.chmod(0o755)
    output = tmp_path / "github_output"
    output.write_text("")
    env = {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "GITHUB_OUTPUT": str(output),
           "HOME": str(tmp_path), "LANG": "C.UTF-8"}
    return {"root": root, "env": env, "output": output}


def _run_script(script: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", "-e", "-c", script], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=600)


def _action_lint(workspace: dict[str, Any], **inputs: str) -> subprocess.CompletedProcess[str]:
    action = _load(ACTION)
    step = _step(action["runs"]["steps"], id="lint")
    defaults = {name: str(spec.get("default", "")) for name, spec in action["inputs"].items()}
    context = {"inputs": {**defaults, **inputs}}
    env = {key: _expand(str(value), context) for key, value in step["env"].items()}
    workspace["output"].write_text("")
    return _run_script(step["run"], workspace["root"], {**workspace["env"], **env})


def _outputs(workspace: dict[str, Any]) -> dict[str, str]:
    return dict(line.split("=", 1) for line in workspace["output"].read_text().splitlines())


def test_action_is_a_composite_that_installs_and_lints() -> None:
    action = _load(ACTION)
    assert action["runs"]["using"] == "composite"
    steps = action["runs"]["steps"]
    install = _step(steps, name="Install")
    assert "pip install" in install["run"] and "$ACTION_PATH" in install["run"]
    assert set(action["inputs"]) >= {"paths", "sarif-file", "category", "args", "fail-on-findings"}
    assert action["outputs"]["sarif-file"]["value"] == "${{ steps.lint.outputs.sarif-file }}"
    for step in steps:
        if "run" in step:
            assert "${{" not in step["run"], f"step {step.get('name')} pastes an expression into its script"
            assert step["shell"] == "bash"


def test_action_writes_sarif_and_passes_on_findings(workspace: dict[str, Any]) -> None:
    proc = _action_lint(workspace, paths="k8s\n", category="gpu")
    assert proc.returncode == 0, proc.stderr
    assert _outputs(workspace) == {"sarif-file": "kubegap-lint.sarif", "exit-code": "1"}
    log = json.loads((workspace["root"] / "kubegap-lint.sarif").read_text())
    run = log["runs"][0]
    assert run["automationDetails"] == {"id": "gpu/"}
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in run["results"]}
    assert uris == {"k8s/job.yaml"}
    if SCHEMA.is_file():
        assert schema_problems(log) == [] and github_problems(log) == []


def test_action_options(workspace: dict[str, Any]) -> None:
    proc = _action_lint(workspace, paths="k8s", **{"fail-on-findings": "true", "args": "--select KG501"})
    assert proc.returncode == 1
    log = json.loads((workspace["root"] / "kubegap-lint.sarif").read_text())
    assert {r["ruleId"] for r in log["runs"][0]["results"]} == {"KG501"}
    proc = _action_lint(workspace, paths="k8s missing", **{"sarif-file": "out/x.sarif"})
    assert proc.returncode == 2  # the folder out/ does not exist: cannot write
    assert "::error title=kubegap-lint::" in proc.stdout
    (workspace["root"] / "out").mkdir()
    proc = _action_lint(workspace, paths="k8s missing", **{"sarif-file": "out/x.sarif"})
    assert proc.returncode == 2 and "missing: no such file or folder" in proc.stderr
    assert _outputs(workspace) == {"sarif-file": "out/x.sarif", "exit-code": "2"}  # still uploadable


def test_workflow_example_renders_lints_and_uploads(workspace: dict[str, Any]) -> None:
    workflow = _load(WORKFLOW)
    assert set(workflow["on"]) >= {"push", "pull_request"}
    (job,) = workflow["jobs"].values()
    assert job["permissions"]["security-events"] == "write"
    steps = job["steps"]
    from kubegap_lint.report.sarif import REPOSITORY_URL

    lint = _step(steps, uses=REPOSITORY_URL.removeprefix("https://github.com/") + "@")
    upload = _step(steps, uses="github/codeql-action/upload-sarif@")
    assert upload["with"]["sarif_file"] == f"${{{{ steps.{lint['id']}.outputs.sarif-file }}}}"
    assert "always()" in upload["if"]
    render = _step(steps, name="Render")
    assert "helm template" in render["run"]

    # Run the render step with the stand-in helm on the example chart, then the action as the
    # lint step calls it.
    job_env = {**{k: str(v) for k, v in job["env"].items()}, "CHART": "charts/gpu-train", "RELEASE": "demo"}
    proc = _run_script(render["run"], workspace["root"], {**workspace["env"], **job_env})
    assert proc.returncode == 0, proc.stderr
    inputs = {k: _expand(str(v), {"env": job_env}) for k, v in lint["with"].items()}
    inputs["args"] = "--select KG201,KG303,KG501"  # the rules the example chart was written for
    proc = _action_lint(workspace, **inputs)
    assert proc.returncode == 0, proc.stderr
    sarif_file = workspace["root"] / _outputs(workspace)["sarif-file"]
    log = json.loads(sarif_file.read_text())
    results = log["runs"][0]["results"]
    primary = sorted({r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in results})
    assert primary == ["charts/gpu-train/charts/inference/templates/deployment.yaml",
                       "charts/gpu-train/templates/job.yaml", "charts/gpu-train/templates/preflight-hook.yaml",
                       "k8s/job.yaml"]
    related = {r["relatedLocations"][0]["physicalLocation"]["artifactLocation"]["uri"]
               for r in results if "relatedLocations" in r}
    assert related == {"rendered/demo.yaml"}
    assert log["runs"][0]["automationDetails"] == {"id": "kubegap-lint/"}
    if SCHEMA.is_file():
        assert schema_problems(log) == [] and github_problems(log) == []
