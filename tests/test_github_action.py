"""action.yml and examples/github/code-scanning.yml, run as GitHub would run them: the steps'
scripts execute in bash with the inputs as environment variables, a stand-in `helm` that prints
real-format `helm template` output, and kubegap-lint from this checkout."""

from __future__ import annotations

import importlib.util
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
    chart's recorded `helm template` output, and GitHub's files for outputs and the summary."""
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
    helm.chmod(0o755)
    files = {name: tmp_path / name for name in ("github_output", "github_step_summary", "github_env",
                                                 "github_path")}
    for path in files.values():
        path.write_text("")
    env = {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "GITHUB_OUTPUT": str(files["github_output"]),
           "GITHUB_STEP_SUMMARY": str(files["github_step_summary"]), "GITHUB_ENV": str(files["github_env"]),
           "GITHUB_PATH": str(files["github_path"]), "GITHUB_WORKSPACE": str(root),
           "GITHUB_SERVER_URL": "https://github.com", "GITHUB_REPOSITORY": "acme/models",
           "GITHUB_SHA": "0123456789abcdef0123456789abcdef01234567", "RUNNER_TEMP": str(tmp_path / "runner-temp"),
           "HOME": str(tmp_path), "LANG": "C.UTF-8", "KUBEGAP_LINT_NO_CACHE": "1"}
    (tmp_path / "runner-temp").mkdir()
    return {"root": root, "env": env, "output": files["github_output"], "summary": files["github_step_summary"],
            "files": files, "tmp": tmp_path}


def _run_script(script: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", "-e", "-c", script], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=600)


def _context(workspace: dict[str, Any], inputs: dict[str, str], python: str) -> dict[str, dict[str, str]]:
    action = _load(ACTION)
    defaults = {name: str(spec.get("default", "")) for name, spec in action["inputs"].items()}
    unknown = set(inputs) - set(defaults)
    assert not unknown, f"inputs action.yml does not declare: {unknown}"
    return {"inputs": {**defaults, **inputs},
            "github": {"action_path": str(REPO), "action_repository": "", "action_ref": ""},
            "steps": {"install.outputs.python": python,
                      "env.outputs.venv": str(Path(workspace["env"]["RUNNER_TEMP"]) / "kubegap-lint-venv")}}


def _action_lint(workspace: dict[str, Any], python: str = sys.executable, github: dict[str, str] | None = None,
                 **inputs: str) -> subprocess.CompletedProcess[str]:
    """The lint step as the runner runs it: its env (expressions expanded), then its script. By
    default `python` is this checkout's interpreter, a stand-in for the Action's own virtual
    environment (test_action_install_is_isolated runs the real install)."""
    step = _step(_load(ACTION)["runs"]["steps"], id="lint")
    context = _context(workspace, inputs, python)
    context["github"].update(github or {})
    env = {key: _expand(str(value), context) for key, value in step["env"].items()}
    for name in ("output", "summary"):
        workspace[name].write_text("")
    return _run_script(step["run"], workspace["root"], {**workspace["env"], **env})


def _outputs(workspace: dict[str, Any]) -> dict[str, str]:
    return dict(line.split("=", 1) for line in workspace["output"].read_text().splitlines())


def test_action_is_a_composite_that_installs_in_its_own_environment() -> None:
    action = _load(ACTION)
    assert action["runs"]["using"] == "composite"
    steps = action["runs"]["steps"]
    # A `uses:` step such as setup-python would change the caller's Python: only the cache.
    assert [s["uses"] for s in steps if "uses" in s] == ["actions/cache@v4"]
    cache = _step(steps, uses="actions/cache@")
    assert cache["with"] == {"path": "${{ steps.env.outputs.venv }}", "key": "${{ steps.env.outputs.key }}"}
    assert action["inputs"]["helm"]["default"] == "true"
    install = _step(steps, id="install")
    assert '"$ACTION_PATH[helm]"' in install["run"]
    assert "-m venv" in install["run"] and "--constraint \"$ACTION_PATH/requirements/action-constraints.txt\"" \
        in install["run"]
    assert set(action["inputs"]) >= {"paths", "select", "ignore", "sarif-file", "category", "args",
                                     "fail-on-findings", "annotations-only", "log-format", "job-summary",
                                     "docs-url", "python"}
    assert action["outputs"]["sarif-file"]["value"] == "${{ steps.lint.outputs.sarif-file }}"
    for step in (s for s in steps if "run" in s):
        assert "${{" not in step["run"], f"step {step.get('name')} pastes an expression into its script"
        assert step["shell"] == "bash"
        assert "GITHUB_ENV" not in step["run"] and "GITHUB_PATH" not in step["run"]


def test_constraints_pin_every_dependency() -> None:
    """requirements/action-constraints.txt (scripts/update-action-lock.sh) pins each dependency
    pyproject.toml names, to one version."""
    tomllib = pytest.importorskip("tomllib")
    pins = {}
    for line in (REPO / "requirements" / "action-constraints.txt").read_text().splitlines():
        if line and not line.startswith("#"):
            name, _, version = line.partition("==")
            assert version and re.fullmatch(r"[0-9][0-9A-Za-z.]*", version), line
            pins[re.sub(r"[-_.]+", "-", name).lower()] = version
    dependencies = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]
    for dependency in dependencies:
        if "python_version < '3.11'" in dependency:
            continue  # not installed where the Action runs (python3 3.12 on GitHub's runners)
        name = re.split(r"[<>=!~;\[ ]", dependency, maxsplit=1)[0]
        assert re.sub(r"[-_.]+", "-", name).lower() in pins, dependency


def test_action_annotates_summarises_and_writes_sarif(workspace: dict[str, Any]) -> None:
    proc = _action_lint(workspace, paths="k8s\n", category="gpu", select="KG201\nKG501")
    assert proc.returncode == 0, proc.stderr
    assert _outputs(workspace) == {"sarif-file": "kubegap-lint.sarif", "exit-code": "1", "findings": "2"}
    # The log: one annotation per finding, at the manifest's line.
    annotations = [line for line in proc.stdout.splitlines() if line.startswith("::")]
    assert annotations == [
        "::error file=k8s/job.yaml,line=9,col=5,title=KG201 training-checkpoint-volume::Job finetune: pods"
        " (1 GPU each) mount no persistent volume and name no object store: checkpoints written there die"
        " with the pod, and a restart starts training over",
        "::warning file=k8s/job.yaml,line=12,col=11,title=KG501 gpu-shm-default::Job finetune: pods (1 GPU"
        " each) have no /dev/shm backed by an emptyDir with medium Memory of at least 1Gi: the runtime"
        ' default is 64 MB, and DataLoader workers die with "Bus error"',
    ]
    assert "kubegap-lint: 2 findings" in proc.stdout
    # The job summary: counts per severity and rule, links to the rules and to the lines.
    summary = workspace["summary"].read_text()
    assert "**2 findings**: 1 error, 1 warning, 0 notes; exit code 1." in summary
    from kubegap_lint.report.sarif import rules_doc_url

    assert f"| [KG201 training-checkpoint-volume]({rules_doc_url()}#kg201-training-checkpoint-volume) | error | 1 |" \
        in summary
    assert "| error | KG201 | [k8s/job.yaml:9](https://github.com/acme/models/blob/" \
        "0123456789abcdef0123456789abcdef01234567/k8s/job.yaml#L9) | Job finetune: pods (1 GPU each)" in summary
    assert summary.index("| error | KG201 |") < summary.index("| warning | KG501 |")  # worst first
    log = json.loads((workspace["root"] / "kubegap-lint.sarif").read_text())
    run = log["runs"][0]
    assert run["automationDetails"] == {"id": "gpu/"}
    assert {r["ruleId"] for r in run["results"]} == {"KG201", "KG501"}
    if SCHEMA.is_file():
        assert schema_problems(log) == [] and github_problems(log) == []
    # The caller's environment is not touched.
    assert workspace["files"]["github_env"].read_text() == "" and workspace["files"]["github_path"].read_text() == ""


def test_action_list_inputs_keep_spaces_and_drop_quotes(workspace: dict[str, Any]) -> None:
    spaced = workspace["root"] / "team a" / "gpu job.yaml"
    spaced.parent.mkdir()
    spaced.write_text(GPU_JOB.read_text())
    proc = _action_lint(workspace, paths='"team a/gpu job.yaml"\n\n  k8s  \n', select='"KG201, KG501"',
                        ignore="KG501", args='--fail-on "error"', **{"log-format": "text"})
    assert proc.returncode == 0, proc.stderr
    log = json.loads((workspace["root"] / "kubegap-lint.sarif").read_text())
    uris = sorted((r["ruleId"], r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"])
                  for r in log["runs"][0]["results"])
    assert uris == [("KG201", "k8s/job.yaml"), ("KG201", "team%20a/gpu%20job.yaml")]
    assert "team a/gpu job.yaml:9:5: error KG201" in proc.stdout  # the text log


def test_action_annotations_only_offers_no_upload(workspace: dict[str, Any]) -> None:
    proc = _action_lint(workspace, paths="k8s", select="KG201", **{"annotations-only": "true"})
    assert proc.returncode == 0, proc.stderr
    assert _outputs(workspace) == {"sarif-file": "", "exit-code": "1", "findings": "1"}
    assert "::error file=k8s/job.yaml," in proc.stdout
    assert "Annotations only" in workspace["summary"].read_text()


def test_action_options_and_errors(workspace: dict[str, Any]) -> None:
    proc = _action_lint(workspace, paths="k8s", select="KG501", **{"fail-on-findings": "true"})
    assert proc.returncode == 1
    log = json.loads((workspace["root"] / "kubegap-lint.sarif").read_text())
    assert {r["ruleId"] for r in log["runs"][0]["results"]} == {"KG501"}
    proc = _action_lint(workspace, paths="k8s\nmissing", **{"sarif-file": "out/x.sarif"})
    assert proc.returncode == 2 and "missing: no such file or folder" in proc.stderr
    assert "::error title=kubegap-lint::kubegap-lint stopped with exit code 2" in proc.stdout
    assert _outputs(workspace) == {"sarif-file": "out/x.sarif", "exit-code": "2", "findings": "2"}  # uploadable
    assert "input or usage error" in workspace["summary"].read_text()
    proc = _action_lint(workspace, paths="k8s", args='--select "KG201')
    assert proc.returncode == 2 and "input args: No closing quotation" in proc.stdout
    proc = _action_lint(workspace, paths="k8s", **{"job-summary": "maybe"})
    assert proc.returncode == 2 and "input job-summary: expected true or false" in proc.stdout


def test_action_help_links_name_the_ref_that_ran(workspace: dict[str, Any]) -> None:
    _action_lint(workspace, paths="k8s", select="KG201",
                 github={"action_repository": "acme/kubegap-lint", "action_ref": "v9.1"})
    log = json.loads((workspace["root"] / "kubegap-lint.sarif").read_text())
    (rule,) = log["runs"][0]["tool"]["driver"]["rules"]
    assert rule["helpUri"] == ("https://github.com/acme/kubegap-lint/blob/v9.1/docs/rules.md"
                               "#kg201-training-checkpoint-volume")
    _action_lint(workspace, paths="k8s", select="KG201", **{"docs-url": "https://docs.example/rules"})
    log = json.loads((workspace["root"] / "kubegap-lint.sarif").read_text())
    assert log["runs"][0]["tool"]["driver"]["rules"][0]["helpUri"] == \
        "https://docs.example/rules#kg201-training-checkpoint-volume"


@pytest.mark.slow
def test_action_install_is_isolated(workspace: dict[str, Any]) -> None:
    """The real install step (a virtual environment from the pinned constraints; pip reads this
    machine's package index), then the lint step with that environment's Python: the caller's
    python3 and its packages are the same afterwards."""
    env = workspace["env"]
    before = _run_script("command -v python3; python3 -m pip --version", workspace["root"], env).stdout
    install = _step(_load(ACTION)["runs"]["steps"], id="install")
    context = _context(workspace, {}, "")
    step_env = {key: _expand(str(value), context) for key, value in install["env"].items()}
    workspace["output"].write_text("")
    proc = _run_script(install["run"], workspace["root"], {**env, **step_env})
    assert proc.returncode == 0, proc.stderr
    python = _outputs(workspace)["python"]
    # The Helm engine is in by default.
    subprocess.run([python, "-c", "import helm_python"], check=True, cwd=workspace["tmp"])
    # Run again over the environment left in RUNNER_TEMP (what actions/cache restores on a
    # hit): only kubegap-lint itself is installed, with no dependency resolved again.
    workspace["output"].write_text("")
    again = _run_script(install["run"].replace("--quiet --no-deps", "--no-deps"), workspace["root"], {**env, **step_env})
    assert again.returncode == 0, again.stderr
    assert "Processing" in again.stdout and "ruamel" not in again.stdout  # pip's log: no dependency
    assert _outputs(workspace)["python"] == python
    assert python == str(workspace["tmp"] / "runner-temp" / "kubegap-lint-venv" / "bin" / "python")
    where = subprocess.run([python, "-c", "import kubegap_lint, ruamel.yaml; print(kubegap_lint.__file__,"
                            " ruamel.yaml.__version__)"], capture_output=True, text=True, check=True,
                           cwd=workspace["tmp"]).stdout.split()
    assert where[0].startswith(str(workspace["tmp"] / "runner-temp"))
    pinned = [line for line in (REPO / "requirements" / "action-constraints.txt").read_text().splitlines()
              if line.startswith("ruamel.yaml==")]
    assert pinned == [f"ruamel.yaml=={where[1]}"]
    proc = _action_lint(workspace, python=python, paths="k8s", select="KG201")
    assert proc.returncode == 0, proc.stderr
    assert "::error file=k8s/job.yaml," in proc.stdout
    after = _run_script("command -v python3; python3 -m pip --version", workspace["root"], env).stdout
    assert after == before
    assert workspace["files"]["github_env"].read_text() == "" and workspace["files"]["github_path"].read_text() == ""


def test_workflow_example_renders_lints_and_uploads(workspace: dict[str, Any]) -> None:
    workflow = _load(WORKFLOW)
    assert set(workflow["on"]) >= {"push", "pull_request"}
    (job,) = workflow["jobs"].values()
    assert job["permissions"]["security-events"] == "write"
    steps = job["steps"]
    from kubegap_lint.report.sarif import REPOSITORY_URL

    lint = _step(steps, uses=REPOSITORY_URL.removeprefix("https://github.com/") + "@")
    assert set(lint["with"]) <= set(_load(ACTION)["inputs"])
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
    inputs["select"] = "KG201\nKG303\nKG501"  # the rules the example chart was written for
    proc = _action_lint(workspace, **inputs)
    assert proc.returncode == 0, proc.stderr
    sarif_file = workspace["root"] / _outputs(workspace)["sarif-file"]
    log = json.loads(sarif_file.read_text())
    results = log["runs"][0]["results"]
    primary = sorted({r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in results})
    assert primary == ["charts/gpu-train/charts/inference/templates/_helpers.tpl",
                       "charts/gpu-train/templates/job.yaml", "charts/gpu-train/templates/preflight-hook.yaml",
                       "k8s/job.yaml"]
    related = {r["relatedLocations"][0]["physicalLocation"]["artifactLocation"]["uri"]
               for r in results if "relatedLocations" in r}
    assert related == {"rendered/demo.yaml"}
    assert log["runs"][0]["automationDetails"] == {"id": "kubegap-lint/"}
    if SCHEMA.is_file():
        assert schema_problems(log) == [] and github_problems(log) == []


def test_action_cache_key_follows_the_lock_file(workspace: dict[str, Any]) -> None:
    """The env step names the cache: the Python, the helm input and the constraints' hash."""
    step = _step(_load(ACTION)["runs"]["steps"], id="env")
    keys = []
    for helm in ("true", "false"):
        context = _context(workspace, {"helm": helm}, "")
        env = {key: _expand(str(value), context) for key, value in step["env"].items()}
        workspace["output"].write_text("")
        proc = _run_script(step["run"], workspace["root"], {**workspace["env"], **env, "RUNNER_OS": "Linux"})
        assert proc.returncode == 0, proc.stderr
        keys.append(_outputs(workspace)["key"])
        assert _outputs(workspace)["venv"] == str(workspace["tmp"] / "runner-temp" / "kubegap-lint-venv")
    import hashlib

    lock = hashlib.sha256((REPO / "requirements" / "action-constraints.txt").read_bytes()).hexdigest()[:16]
    version = f"{sys.version_info[0]}.{sys.version_info[1]}"
    assert keys == [f"kubegap-lint-Linux-py{version}-helmtrue-{lock}", f"kubegap-lint-Linux-py{version}-helmfalse-{lock}"]
    context = _context(workspace, {"helm": "maybe"}, "")
    env = {key: _expand(str(value), context) for key, value in step["env"].items()}
    proc = _run_script(step["run"], workspace["root"], {**workspace["env"], **env})
    assert proc.returncode == 2 and "input helm: expected true or false" in proc.stdout


def _chart_repository(workspace: dict[str, Any]) -> None:
    """A repository of charts only: one renders, one needs a value it is not given."""
    root = workspace["root"]
    shutil.rmtree(root / "k8s")
    broken = root / "charts" / "needs-image"
    (broken / "templates").mkdir(parents=True)
    (broken / "Chart.yaml").write_text("apiVersion: v2\nname: needs-image\nversion: 0.1.0\n")
    (broken / "templates" / "job.yaml").write_text(
        GPU_JOB.read_text().replace("image: ", "image: {{ required \"image is required\" .Values.image }} #", 1))


@pytest.mark.skipif(importlib.util.find_spec("helm_python") is None, reason="the Helm engine is not installed")
def test_action_on_a_chart_repository_reports_its_findings(workspace: dict[str, Any]) -> None:
    _chart_repository(workspace)
    proc = _action_lint(workspace, select="KG201")
    assert proc.returncode == 0, proc.stderr
    outputs = _outputs(workspace)
    assert (outputs["exit-code"], outputs["sarif-file"]) == ("1", "kubegap-lint.sarif")
    annotations = [line.split("::")[1] for line in proc.stdout.splitlines() if line.startswith("::")]
    assert "error file=charts/needs-image/templates/job.yaml,line=13,col=21,title=KG009 input-not-rendered" \
        in annotations
    assert any(a.startswith("error file=charts/gpu-train/templates/job.yaml") and "KG201" in a for a in annotations)
    assert int(outputs["findings"]) == len(annotations)
    summary = workspace["summary"].read_text()
    assert f"**{outputs['findings']} findings**" in summary and "exit code 1." in summary
    assert "**1 input not linted** (could not be rendered; KG009):" in summary
    assert "- [charts/needs-image/templates/job.yaml:13](https://github.com/acme/models/blob/" in summary


def test_action_without_the_engine_still_fails_the_charts(workspace: dict[str, Any]) -> None:
    """`helm: "false"`: the engine's absence, simulated by a stand-in helm_python whose import
    fails, ahead of the installed one on PYTHONPATH. Each chart is a KG009 error, not a pass."""
    _chart_repository(workspace)
    stand_in = workspace["tmp"] / "no-engine"
    stand_in.mkdir()
    (stand_in / "helm_python.py").write_text("raise ImportError('stand-in: the Helm engine is not installed')\n")
    workspace["env"]["PYTHONPATH"] = f"{stand_in}{os.pathsep}{REPO}"
    proc = _action_lint(workspace, select="KG201", helm="false")
    assert proc.returncode == 0, proc.stderr
    assert _outputs(workspace) == {"sarif-file": "kubegap-lint.sarif", "exit-code": "1", "findings": "2"}
    annotations = sorted(line.split("::")[1] for line in proc.stdout.splitlines() if line.startswith("::"))
    assert annotations == ["error file=charts/gpu-train/Chart.yaml,line=1,col=1,title=KG009 input-not-rendered",
                           "error file=charts/needs-image/Chart.yaml,line=1,col=1,title=KG009 input-not-rendered"]
    summary = workspace["summary"].read_text()
    assert "**2 findings**: 2 errors, 0 warnings, 0 notes; exit code 1." in summary
    assert "**2 inputs not linted**" in summary and "no findings" not in proc.stdout


def test_action_says_findings_below_the_threshold(workspace: dict[str, Any]) -> None:
    proc = _action_lint(workspace, paths="k8s", select="KG501", args="--fail-on error")
    assert proc.returncode == 0, proc.stderr
    assert _outputs(workspace)["findings"] == "1" and _outputs(workspace)["exit-code"] == "0"
    assert "kubegap-lint: 1 finding below the fail threshold" in proc.stdout
    assert "no findings" not in proc.stdout


def test_the_job_summary_shows_manifest_text_as_written_never_as_markup() -> None:
    """Names and messages come from manifests: rendered by a CommonMark parser with tables (GitHub's
    Markdown is CommonMark with extensions), they stay literal text: no link with a hidden target,
    no emphasis, no HTML, no cell cut short; the summary's own links keep their targets."""
    from markdown_it import MarkdownIt

    from kubegap_lint.cli.action import summary_markdown

    hostile = "Deployment [click](https://evil.example) a\\[b\\] *x* `y` |z| <b>w</b> \\"
    log = {"runs": [{"tool": {"driver": {"rules": [
        {"id": "KG103", "name": "gpu-serving-without-pdb", "helpUri": "https://docs.example/rules.md#kg103"}]}},
        "results": [{"ruleId": "KG103", "level": "warning", "message": {"text": hostile},
                     "locations": [{"physicalLocation": {"artifactLocation": {"uri": "k8s/a (1).yaml"},
                                                         "region": {"startLine": 3}}}]}]}]}
    env = {"GITHUB_SERVER_URL": "https://github.com", "GITHUB_REPOSITORY": "o/r", "GITHUB_SHA": "abc"}
    html = MarkdownIt("commonmark").enable("table").render(summary_markdown(log, env, 1, False))
    import re

    assert re.findall(r'href="([^"]*)"', html) == [
        "https://docs.example/rules.md#kg103", "https://github.com/o/r/blob/abc/k8s/a%20%281%29.yaml#L3"]
    assert "<em>" not in html and "<code>" not in html and "<b>" not in html
    shown = "Deployment [click](https://evil.example) a\\[b\\] *x* `y` |z| &lt;b&gt;w&lt;/b&gt; \\"
    assert f"<td>{shown}</td>" in html  # one cell, as written
