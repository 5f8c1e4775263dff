"""Helm: findings on `helm template` output point at the template lines that produced them, and
`kubegap-lint helm` renders with a helm binary (here a stand-in that plays back a recording)."""

from __future__ import annotations

import importlib.util
import json
import os
import stat
import sys
from pathlib import Path

import pytest
from conftest import EXAMPLES, REPO, run_cli

HELM = EXAMPLES / "helm"
CHART = HELM / "gpu-train"
RENDERED = HELM / "rendered.yaml"
RULES = ("--select", "KG201,KG303,KG501")  # the rules the chart was written for; others may land
STANDIN = REPO / "tests" / "helm_standin" / "helm.py"
ENGINE = importlib.util.find_spec("helm_python") is not None

# (rule, template, template line, approximate, rendered line): the example chart's findings.
EXPECTED = [
    ("KG501", "charts/inference/templates/_helpers.tpl", 8, False, 51),  # inside the included define
    ("KG501", "templates/job.yaml", 23, False, 83),
    ("KG303", "templates/job.yaml", 32, False, 92),
    ("KG201", "templates/job.yaml", 47, False, 103),
    # No KG201 on the preflight hook: it only runs `nvidia-smi -L` (class diagnostic).
    ("KG501", "templates/preflight-hook.yaml", 16, False, 124),
]
# What each expected template line holds: the key the finding is about (for the subchart's
# container, in the define that `include "inference.podTemplate"` writes the pod template with).
LINE_TEXT = {
    ("KG501", "charts/inference/templates/_helpers.tpl"): "- name: server",
    ("KG501", "templates/job.yaml"): "- name: trainer",
    ("KG303", "templates/job.yaml"): "env:",
    ("KG201", "templates/job.yaml"): "volumes:",
    ("KG501", "templates/preflight-hook.yaml"): "- name: gpu-check",
}


def _findings(proc) -> list[dict]:
    return json.loads(proc.stdout)["findings"]


def _summary(findings: list[dict], prefix: str) -> list[tuple]:
    return sorted(
        (f["rule"], f["location"]["path"].removeprefix(prefix), f["location"]["line"], f["approximate"],
         f["rendered_location"]["line"] if f["rendered_location"] else None)
        for f in findings
    )


def test_findings_on_rendered_output_point_at_template_lines() -> None:
    proc = run_cli("--format", "json", *RULES, str(RENDERED.relative_to(REPO)))
    assert proc.returncode == 1, proc.stderr
    findings = _findings(proc)
    assert _summary(findings, "examples/helm/gpu-train/") == sorted(EXPECTED)
    for f in findings:
        assert f["rendered_location"]["path"] == "examples/helm/rendered.yaml"
        assert f["template"].startswith("gpu-train/")
        path = f["location"]["path"]
        text = (REPO / path).read_text().splitlines()[f["location"]["line"] - 1]
        expected = LINE_TEXT[(f["rule"], path.removeprefix("examples/helm/gpu-train/"))]
        assert text.strip().startswith(expected), (path, text)
        assert text[f["location"]["column"] - 1:].lstrip("- ").startswith(expected.lstrip("- ")[:4])


def test_rendered_lines_are_the_located_nodes() -> None:
    # The kept rendered location is the one a plain lint of the output reports.
    lines = RENDERED.read_text().splitlines()
    assert lines[83 - 1].strip() == "- name: trainer"
    assert lines[92 - 1].strip() == "env:"
    assert lines[103 - 1].strip() == "volumes:"


def test_text_output_shows_both_locations_and_approximate(tmp_path: Path) -> None:
    # A resources block that toYaml writes from values the chart's values.yaml does not hold
    # (a piped stream names no -f files): the action line, flagged.
    chart = tmp_path / "c"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: c\nversion: 0.1.0\n")
    (chart / "templates" / "pod.yaml").write_text(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: gpu\nspec:\n  containers:\n    - name: main\n"
        "      image: cuda:12\n      resources:\n        {{- toYaml .Values.resources | nindent 8 }}\n")
    (tmp_path / "out.yaml").write_text(
        "---\n# Source: c/templates/pod.yaml\napiVersion: v1\nkind: Pod\nmetadata:\n  name: gpu\nspec:\n"
        "  containers:\n    - name: main\n      image: cuda:12\n      resources:\n        limits:\n"
        "          nvidia.com/gpu: 1\n        requests:\n          nvidia.com/gpu: 2\n")
    proc = run_cli("out.yaml", "--select", "KG503", "--no-color", cwd=tmp_path)
    assert proc.stdout.decode().splitlines()[0].startswith("c/templates/pod.yaml:10:9: error KG503")
    assert proc.stdout.decode().splitlines()[0].endswith("(rendered at out.yaml:15:11) [line approximate]")

    proc = run_cli(str(RENDERED.relative_to(REPO)), "--select", "KG501")
    lines = proc.stdout.decode().splitlines()
    assert lines[0].startswith(
        "examples/helm/gpu-train/charts/inference/templates/_helpers.tpl:8:7: warning KG501")
    assert lines[0].endswith("(rendered at examples/helm/rendered.yaml:51:11)")
    assert lines[1].startswith("examples/helm/gpu-train/templates/job.yaml:23:11: warning KG501")
    assert lines[1].endswith("(rendered at examples/helm/rendered.yaml:83:11)")


def test_chart_dir_option_from_another_folder(tmp_path: Path) -> None:
    proc = run_cli("--format", "json", *RULES, "--chart-dir", str(CHART), str(RENDERED), cwd=tmp_path)
    findings = _findings(proc)
    assert _summary(findings, str(CHART).replace(os.sep, "/") + "/") == sorted(EXPECTED)


def test_without_the_chart_findings_stay_on_the_rendered_output(tmp_path: Path) -> None:
    proc = run_cli("--format", "json", *RULES, str(RENDERED), cwd=tmp_path)
    findings = _findings(proc)
    assert len(findings) == len(EXPECTED)
    for f in findings:
        assert f["location"]["path"] == str(RENDERED).replace(os.sep, "/")
        assert f["rendered_location"] is None and f["approximate"] is False
    assert sorted(f["location"]["line"] for f in findings) == sorted(e[4] for e in EXPECTED)


def test_chart_matched_by_name_not_folder(tmp_path: Path) -> None:
    # The chart's folder may be named anything: Chart.yaml's `name` decides.
    import shutil

    shutil.copytree(CHART, tmp_path / "some-folder")
    shutil.copy(RENDERED, tmp_path / "out.yaml")
    proc = run_cli("--format", "json", *RULES, "out.yaml", cwd=tmp_path)
    assert _summary(_findings(proc), "some-folder/") == sorted(EXPECTED)


def test_a_changed_template_moves_the_line(tmp_path: Path) -> None:
    # Two comment lines added above `volumes:` move that finding, and only later ones.
    import shutil

    shutil.copytree(CHART, tmp_path / "chart")
    job = tmp_path / "chart" / "templates" / "job.yaml"
    lines = job.read_text().splitlines(True)
    lines.insert(46, "      # checkpoints: see values.checkpoints\n      # (disabled by default)\n")
    job.write_text("".join(lines))
    proc = run_cli("--format", "json", *RULES, "--chart-dir", "chart", str(RENDERED), cwd=tmp_path)
    got = {(f["rule"], f["location"]["path"]): f["location"]["line"] for f in _findings(proc)}
    assert got[("KG201", "chart/templates/job.yaml")] == 49
    assert got[("KG303", "chart/templates/job.yaml")] == 32


# --- kubegap-lint helm, with the stand-in --------------------------------------------------

@pytest.fixture()
def standin(tmp_path: Path) -> dict[str, str]:
    """PATH with a `helm` that plays back the recording; the log of its calls."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    helm = bin_dir / "helm"
    helm.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{STANDIN}" "$@"\n')
    helm.chmod(helm.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    log = tmp_path / "helm-calls.jsonl"
    return {"PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}", "HELM_STANDIN_LOG": str(log)}


def _calls(env: dict[str, str]) -> list[list[str]]:
    path = Path(env["HELM_STANDIN_LOG"])
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def test_helm_command_renders_and_maps(standin: dict[str, str]) -> None:
    proc = run_cli("helm", "examples/helm/gpu-train", "--release", "demo", "--namespace", "ml",
                   "-f", "examples/helm/gpu-train/values.yaml", "--set", "nodes=2", "--helm", "helm",
                   "--format", "json", *RULES, env=standin)
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr == b""  # helm's own warnings on stderr are not mixed into the report
    findings = _findings(proc)
    assert _summary(findings, "examples/helm/gpu-train/") == sorted(EXPECTED)
    assert {f["rendered_location"]["path"] for f in findings} == {"<helm template examples/helm/gpu-train>"}
    assert _calls(standin) == [[
        "template", "--namespace", "ml", "--values", "examples/helm/gpu-train/values.yaml",
        "--set", "nodes=2", "--", "demo", "examples/helm/gpu-train"]]


def test_helm_command_text_output(standin: dict[str, str]) -> None:
    proc = run_cli("helm", "examples/helm/gpu-train", "--release", "demo", "-n", "ml", "--helm", "helm",
                   "--select", "KG303", env=standin)
    lines = proc.stdout.decode().splitlines()
    assert lines[0].startswith("examples/helm/gpu-train/templates/job.yaml:32:11: warning KG303")
    assert lines[0].endswith("(rendered at <helm template examples/helm/gpu-train>:92:11)")
    assert lines[-1].startswith("1 file, 5 documents")


def test_helm_failure_is_a_kg009_error_as_lint_says_it(standin: dict[str, str]) -> None:
    proc = run_cli("helm", "no/such/chart", "--release", "demo", "-n", "ml", "--helm", "helm", env=standin)
    assert proc.returncode == 1 and proc.stderr == b""
    assert proc.stdout.decode().splitlines()[0] == (
        'no/such/chart/Chart.yaml:1:1: error KG009 input-not-rendered: chart no/such/chart was not linted: helm template no/such/chart'
        ' failed (exit 1): Error: path "no/such/chart" not found')


def test_no_helm_fails_clearly(tmp_path: Path) -> None:
    env = {"PATH": str(tmp_path)}  # nothing called helm here
    proc = run_cli("helm", "examples/helm/gpu-train", "--helm", "helm", env=env)
    assert proc.returncode == 2
    err = proc.stderr.decode()
    assert err.count("\n") == 1 and err.startswith("kubegap-lint: helm not found at helm: ")
    assert b"Traceback" not in proc.stderr
    proc = run_cli("helm", "examples/helm/gpu-train", "--helm", str(tmp_path / "helm"), env=env)
    assert proc.returncode == 2
    assert proc.stderr.decode().startswith("kubegap-lint: helm not found at ")


def test_no_helm_passes_only_when_allowed(tmp_path: Path) -> None:
    proc = run_cli("helm", "--from-files", "--allow-missing-helm", "--helm", "helm",
                   "examples/helm/gpu-train/values.yaml", env={"PATH": str(tmp_path)})
    assert proc.returncode == 0
    assert b"not linted (--allow-missing-helm)" in proc.stderr


def test_from_files_renders_each_chart_once(standin: dict[str, str]) -> None:
    files = ["examples/helm/gpu-train/templates/job.yaml",
             "examples/helm/gpu-train/values.yaml",
             "examples/helm/gpu-train/charts/inference/templates/deployment.yaml",
             "examples/KG201-training-checkpoint-volume/bad-job-no-volumes.yaml"]  # in no chart
    proc = run_cli("helm", "--from-files", "--release", "demo", "-n", "ml", "--helm", "helm", *files, env=standin)
    assert proc.returncode == 1, proc.stderr
    assert [call[-1] for call in _calls(standin)] == ["examples/helm/gpu-train"]
    proc = run_cli("helm", "--from-files", "examples/KG201-training-checkpoint-volume/bad-job-no-volumes.yaml",
                   env=standin)
    assert proc.returncode == 0 and proc.stdout == b""


def test_skip_chart_templates() -> None:
    template = "examples/helm/gpu-train/templates/job.yaml"
    plain = "examples/KG501-gpu-shm-default/bad-training-no-shm.yaml"
    # A chart's file is not linted as YAML (no KG003): its chart is rendered, or is a KG009 error.
    proc = run_cli("--format", "json", "--select", "KG003,KG201", template, plain)
    rules = {(f["rule"], f["location"]["path"], (f["rendered_location"] or {}).get("path")) for f in _findings(proc)}
    if ENGINE:
        assert rules == {("KG201", plain, None),
                         # (not the preflight hook: it only runs nvidia-smi, class diagnostic)
                         ("KG201", "examples/helm/gpu-train/templates/job.yaml", "<helm template examples/helm/gpu-train>")}
    else:
        assert rules == {("KG201", plain, None), ("KG009", "examples/helm/gpu-train/Chart.yaml", None)}
    proc = run_cli("--format", "json", "--skip-chart-templates", template, plain)
    assert {f["location"]["path"] for f in _findings(proc)} == {plain}
    assert json.loads(proc.stdout)["summary"]["files"] == 1


def test_odd_sources_and_broken_charts_never_crash(tmp_path: Path, monkeypatch) -> None:
    from kubegap_lint.config.settings import Settings
    from kubegap_lint.engine.run import Linter

    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "Chart.yaml").write_bytes(b"\xff\xfe\x00name: [\n")
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "Chart.yaml").write_text("")
    (tmp_path / "dir-as-template" / "templates" / "job.yaml").mkdir(parents=True)
    (tmp_path / "dir-as-template" / "Chart.yaml").write_text("name: gpu-train\n")
    job = (EXAMPLES / "KG201-training-checkpoint-volume" / "bad-job-no-volumes.yaml").read_text()
    stream = "".join(f"---\n# Source: {source}\n{job}" for source in (
        "../../etc/passwd", "gpu-train/templates/job.yaml", "gpu-train", "/abs/templates/x.yaml",
        "gpu-train/charts/nope/templates/x.yaml"))
    monkeypatch.chdir(tmp_path)  # the search below the current folder finds only these charts
    settings = Settings(select=["KG201"], chart_dirs=[str(tmp_path)])
    result = Linter(settings).lint_texts([("out.yaml", stream)])
    assert not result.errors
    # out.yaml is no file: a finding whose chart is found but not its template points at the
    # chart's Chart.yaml, line 1, approximate (SARIF needs a file); the others stay.
    places = sorted((f.location.path, f.location.line, f.approximate, f.template) for f in result.findings)
    chart_yaml = "dir-as-template/Chart.yaml"
    assert places == sorted([
        ("out.yaml", 11, False, "../../etc/passwd"), ("out.yaml", 65, False, "/abs/templates/x.yaml"),
        (chart_yaml, 1, True, "gpu-train/templates/job.yaml"), (chart_yaml, 1, True, "gpu-train"),
        (chart_yaml, 1, True, "gpu-train/charts/nope/templates/x.yaml")])

