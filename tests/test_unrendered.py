"""One verdict whatever is installed: an input the run could not lint (a chart with no Helm
engine, a chart that fails to render) is a KG009 finding of its own, located, in every format,
counted in the summary and the exit code; --allow-unrendered (or `severity: {KG009: note}`)
makes it a note. `baseline create` reads a tree as `lint` does.

The engine's absence is simulated (a stand-in): `sys.modules["helm_python"] = None` in-process, and a
stand-in `helm_python` module that raises ImportError on PYTHONPATH for the engine's child process:
its import fails as it does where the package is not installed. The failing render is the real
engine's (helm_python)."""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import GPU_DEPLOYMENT
from sarif_checks import github_problems, schema_problems

ENGINE = importlib.util.find_spec("helm_python") is not None
needs_engine = pytest.mark.skipif(not ENGINE, reason="the Helm engine is not installed")

CHART = "apiVersion: v2\nname: demo\nversion: 0.1.0\n"
NEEDS_IMAGE = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: server
spec:
  template:
    spec:
      containers:
        - name: s
          image: {{ required "image is required" .Values.image }}
"""
NO_ENGINE = ("chart chart was not linted: the Helm engine is not installed (`pip install 'kubegap-lint[helm]'`),"
             " or run `kubegap-lint helm --helm PATH` with a helm binary")


def _chart(top: Path, template: str = GPU_DEPLOYMENT) -> Path:
    chart = top / "chart"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text(CHART, encoding="utf-8")
    (chart / "templates" / "deploy.yaml").write_text(template, encoding="utf-8")
    return chart


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """The command line in this process (so that the simulated absence holds): exit code, out, err."""
    from kubegap_lint.cli.main import main

    saved = sys.argv
    sys.argv = ["kubegap-lint", *args]
    try:
        with pytest.raises(SystemExit) as ended:
            main()
    finally:
        sys.argv = saved
    out, err = capsys.readouterr()
    return int(ended.value.code or 0), out, err


@pytest.fixture
def no_engine(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
              tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    from kubegap_lint.helm import worker

    # Simulated absence, in this process and in the engine's child process (helm/worker.py),
    # which imports the engine itself: a stand-in module whose import fails comes first.
    stand_in = tmp_path_factory.mktemp("stand-in")
    (stand_in / "helm_python.py").write_text("raise ImportError('stand-in: no engine')\n")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(p for p in (str(stand_in), os.environ.get("PYTHONPATH")) if p))
    monkeypatch.setitem(sys.modules, "helm_python", None)
    worker._stop_child()  # a child an earlier test started has the engine
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("KUBEGAP_LINT_NO_CACHE", "1")
    _chart(tmp_path)
    yield tmp_path
    worker._stop_child()


def test_a_chart_without_the_engine_is_an_error_at_its_chart_yaml_in_every_format(
        no_engine: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(capsys, ".")
    assert (code, err) == (1, "")
    assert out.splitlines() == [
        f"chart/Chart.yaml:1:1: error KG009 input-not-rendered: {NO_ENGINE}",
        "0 files, 0 documents (0 empty, 0 not Kubernetes), 0 resources, 0 workloads: 1 error, 0 warnings, 0 notes"]

    code, out, _ = _run(capsys, "--format", "json", ".")
    report = json.loads(out)
    assert code == 1 and report["summary"]["findings"] == {"error": 1, "warning": 0, "note": 0}
    assert [(f["rule"], f["severity"], f["location"]["path"], f["location"]["line"], f["location"]["column"],
             f["message"]) for f in report["findings"]] == [
        ("KG009", "error", "chart/Chart.yaml", 1, 1, NO_ENGINE)]

    code, out, _ = _run(capsys, "--format", "github", ".")
    assert code == 1
    assert out.splitlines()[0] == (
        "::error file=chart/Chart.yaml,line=1,col=1,title=KG009 input-not-rendered::" + NO_ENGINE)

    code, out, _ = _run(capsys, "--format", "sarif", "--sarif-root", ".", ".")
    log = json.loads(out)
    assert code == 1 and schema_problems(log) == [] and github_problems(log) == []
    [result] = log["runs"][0]["results"]
    assert (result["ruleId"], result["level"]) == ("KG009", "error")
    assert result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "chart/Chart.yaml"
    assert result["locations"][0]["physicalLocation"]["region"]["startLine"] == 1


def test_allow_unrendered_or_the_configuration_makes_it_a_note(
        no_engine: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "--allow-unrendered", ".")
    assert code == 0
    assert out.splitlines()[0] == f"chart/Chart.yaml:1:1: note KG009 input-not-rendered: {NO_ENGINE}"
    (no_engine / ".kubegap-lint.yaml").write_text("severity: {KG009: note}\n", encoding="utf-8")
    code, out, _ = _run(capsys, ".")
    assert code == 0 and out.splitlines()[-1].endswith("0 errors, 0 warnings, 1 note")
    # The configuration's severity wins over --allow-unrendered's default.
    (no_engine / ".kubegap-lint.yaml").write_text("severity: {KG009: warning}\n", encoding="utf-8")
    code, out, _ = _run(capsys, "--allow-unrendered", ".")
    assert code == 1 and out.startswith("chart/Chart.yaml:1:1: warning KG009")


def test_a_chart_beside_manifests_without_the_engine_still_fails(
        no_engine: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (no_engine / "k8s").mkdir()
    (no_engine / "k8s" / "cm.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n")
    code, out, _ = _run(capsys, "--select", "KG009", ".")
    assert code == 1
    assert out.splitlines()[-1] == (
        "1 file, 1 document (0 empty, 0 not Kubernetes), 1 resource, 0 workloads: 1 error, 0 warnings, 0 notes")


@needs_engine
def test_a_chart_that_fails_to_render_is_an_error_at_the_failing_template_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    _chart(tmp_path, NEEDS_IMAGE)
    code, out, err = _run(capsys, "--format", "json", ".")
    assert (code, err) == (1, "")
    [finding] = json.loads(out)["findings"]
    assert (finding["rule"], finding["location"]["path"], finding["location"]["line"],
            finding["location"]["column"]) == ("KG009", "chart/templates/deploy.yaml", 10, 21)  # the `r` of required
    assert finding["message"].startswith(
        "chart chart was not linted: helm template chart failed: execution error at"
        " (demo/templates/deploy.yaml:10:20): image is required")


@needs_engine
def test_baseline_create_reads_a_chart_as_lint_does(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    _chart(tmp_path)
    code, out, _ = _run(capsys, "--format", "json", ".")
    linted = sorted((f["rule"], f["location"]["path"]) for f in json.loads(out)["findings"])
    assert code == 1 and linted and all(path == "chart/templates/deploy.yaml" for _, path in linted)
    code, baseline, _ = _run(capsys, "baseline", "create", ".")
    assert code == 0
    recorded = json.loads(baseline)
    assert "KG003" not in baseline and recorded
    (tmp_path / "baseline.json").write_text(baseline, encoding="utf-8")
    code, out, _ = _run(capsys, "--baseline", "baseline.json", ".")
    assert code == 0, out
