"""Per-chart render settings in the configuration (`charts:`, docs/helm-and-pre-commit.md): a
chart that needs values gets them from the configuration when `kubegap-lint PATH` renders it.

The configurations are written from the render settings the charts' authors document
(../shared/charts/renders.yaml, SOURCES.md) and rendered by the real Helm engine; no stand-in.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest
from conftest import CHARTS, requires_shared, run_cli

RECIPES = "AI-Hypercomputer__gpu-recipes"

pytestmark = [requires_shared, pytest.mark.skipif(importlib.util.find_spec("helm_python") is None,
                                                  reason="needs the Helm engine (pip install -e '.[helm]')")]


def _renders(repository: str) -> list[dict[str, Any]]:
    from ruamel.yaml import YAML

    renders = YAML(typ="safe").load((CHARTS / "renders.yaml").read_text(encoding="utf-8"))
    return [r for r in renders if r["chart"].startswith(f"{repository}/")]


def _entry(render: dict[str, Any]) -> str:
    """One `charts:` entry, paths absolute (the file is written outside the charts' folder)."""
    def files(items: list[str]) -> str:
        return json.dumps([str(CHARTS / item) for item in items])

    set_files = [f"{key}={CHARTS / path}" for key, _, path in (s.partition("=") for s in render["set_file"])]
    return (f"  - path: {json.dumps(str(CHARTS / render['chart']))}\n"
            f"    values: {files(render['values_files'])}\n"
            f"    set: {json.dumps(render['set'])}\n"
            f"    set_string: {json.dumps(render['set_string'])}\n"
            f"    set_file: {json.dumps(set_files)}\n"
            f"    release: {render['release']}\n"
            f"    namespace: {render['namespace']}\n")


def _lint(config: Path, *args: str) -> tuple[int, list[dict[str, Any]], str]:
    proc = run_cli("--config", str(config), "--format", "json", *args, cwd=CHARTS)
    assert b"Traceback" not in proc.stderr
    findings = json.loads(proc.stdout)["findings"] if proc.stdout else []
    return proc.returncode, findings, proc.stderr.decode()


def _placed(findings: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    return [(f["rule"], f["location"]["path"], f["location"]["line"], f["location"]["column"], f["approximate"])
            for f in findings]


def test_without_values_the_charts_that_need_them_are_kg009_errors(tmp_path: Path) -> None:
    config = tmp_path / ".kubegap-lint.yaml"
    config.write_text("select: [KG201]\n", encoding="utf-8")  # KG009 is on whatever select names
    code, findings, stderr = _lint(config, RECIPES)
    assert code == 1 and stderr == ""
    assert len(findings) == 6  # every gpu-recipes chart needs its recipe's values
    for f in findings:
        assert f["rule"] == "KG009" and f["severity"] == "error"
        assert f["location"]["path"].startswith(f"{RECIPES}/src/helm-charts/")
        assert " failed: " in f["message"]
        assert f["message"].endswith("; give it values under `charts:` in the configuration (docs/helm-and-pre-commit.md)")


def test_the_configuration_gives_each_chart_its_values(tmp_path: Path) -> None:
    """Every gpu-recipes render of renders.yaml as `charts:` entries (the jobset chart three
    times): each renders, and its findings are those of `kubegap-lint helm` with the same flags."""
    renders = _renders(RECIPES)
    assert len(renders) == 8
    config = tmp_path / ".kubegap-lint.yaml"
    config.write_text("charts:\n" + "".join(_entry(r) for r in renders), encoding="utf-8")
    code, findings, stderr = _lint(config, RECIPES)
    assert stderr == "" and code == 1
    by_stream: dict[str, list[dict[str, Any]]] = {}
    for finding in findings:
        by_stream.setdefault(finding["rendered_location"]["path"], []).append(finding)
    jobset = f"{RECIPES}/src/helm-charts/a3mega/jobset"
    expected = {f"<helm template {r['chart']}>" for r in renders if r["chart"] != jobset}
    expected |= {f"<helm template {jobset} ({config}:{line})>" for line in (2, 9, 16)}
    assert set(by_stream) <= expected and len(by_stream) == len(expected) - 1  # supervisor: none
    for number, render in enumerate(renders):
        flags = [*(a for v in render["values_files"] for a in ("-f", v)), *(a for s in render["set"] for a in ("--set", s)),
                 *(a for s in render["set_file"] for a in ("--set-file", s)),
                 "--release", render["release"], "-n", render["namespace"]]
        proc = run_cli("helm", render["chart"], *flags, "--no-config", "--format", "json", cwd=CHARTS)
        alone = json.loads(proc.stdout)["findings"]
        assert alone or proc.returncode == 0, proc.stderr
        shown = (f"<helm template {jobset} ({config}:{2 + 7 * number})>" if render["chart"] == jobset
                 else f"<helm template {render['chart']}>")
        assert _placed(by_stream.get(shown, [])) == _placed(alone), render["id"]


def test_kubegap_lint_helm_takes_the_configuration_without_render_flags(tmp_path: Path) -> None:
    """The pre-commit hook passes changed files only: the configuration says how to render."""
    render = next(r for r in _renders(RECIPES) if r["id"] == "gr-a3ultra-job-nccl")
    config = tmp_path / ".kubegap-lint.yaml"
    config.write_text("charts:\n" + _entry(render), encoding="utf-8")
    changed = f"{render['chart']}/templates/workload-job.yaml"
    proc = run_cli("helm", "--from-files", changed, "--config", str(config), "--format", "json", cwd=CHARTS)
    assert proc.returncode == 1, proc.stderr
    configured = json.loads(proc.stdout)["findings"]
    assert configured and {f["rendered_location"]["path"] for f in configured} == {f"<helm template {render['chart']}>"}
    # Flags on the command line win over the configuration: without values it cannot render.
    proc = run_cli("helm", render["chart"], "--release", "x", "--config", str(config), "--format", "json", cwd=CHARTS)
    assert proc.returncode == 1, proc.stderr  # as `lint`: the chart not rendered is a KG009 error
    (unrendered,) = [f for f in json.loads(proc.stdout)["findings"] if f["rule"] == "KG009"]
    assert unrendered["severity"] == "error" and " failed: " in unrendered["message"]


def test_a_wrong_entry_is_a_one_line_error_with_its_place(tmp_path: Path) -> None:
    config = tmp_path / ".kubegap-lint.yaml"
    config.write_text("charts:\n  - path: nowhere\n    values: [missing.yaml]\n    set_file: [nokey, k=absent.txt]\n"
                      "  - values: [x.yaml]\n", encoding="utf-8")
    proc = run_cli("--config", str(config), RECIPES, cwd=CHARTS)
    assert proc.returncode == 2
    assert proc.stderr.decode().splitlines() == [
        f"kubegap-lint: {config}:5:5: charts[1]: missing key path"]
    config.write_text("charts:\n  - path: nowhere\n    values: [missing.yaml]\n    set_file: [nokey, k=absent.txt]\n",
                      encoding="utf-8")
    proc = run_cli("--config", str(config), RECIPES, cwd=CHARTS)
    assert proc.returncode == 2
    assert proc.stderr.decode().splitlines() == [
        f"kubegap-lint: {config}:2:5: charts[0].path: expected a chart folder (holding Chart.yaml),"
        f" {tmp_path}/nowhere is not one",
        f"kubegap-lint: {config}:3:14: charts[0].values[0]: expected a file, {tmp_path}/missing.yaml is not one",
        f"kubegap-lint: {config}:4:16: charts[0].set_file[0]: expected KEY=PATH",
        f"kubegap-lint: {config}:4:23: charts[0].set_file[1]: expected a file, {tmp_path}/absent.txt is not one",
    ]
