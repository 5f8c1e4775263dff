"""Every SARIF result has a physical location (GitHub refuses one without): the template line,
else the rendered stream's line when it is kept in a file, else the chart's Chart.yaml; and
--stdin-filename names the artifact of piped input, whether or not that file exists yet.
Checked with the OASIS schema, GitHub's rules and Microsoft's multitool."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from conftest import GPU_JOB, run_cli
from sarif_checks import SCHEMA, github_problems, multitool_binary, multitool_problems, schema_problems


def _valid(log: dict[str, Any], tmp_path: Path) -> None:
    assert github_problems(log) == []
    if SCHEMA.is_file():
        assert schema_problems(log) == []
    binary = multitool_binary()  # installed by scripts/test.sh (npm ci in tools/sarif-multitool)
    if binary is not None:
        path = tmp_path / "log.sarif"
        path.write_text(json.dumps(log), encoding="utf-8")
        assert multitool_problems(binary, path, tmp_path) == []


def _uri(result: dict[str, Any]) -> str:
    return str(result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"])


def test_stdin_filename_of_a_file_not_yet_written_names_the_artifact(tmp_path: Path) -> None:
    proc = run_cli("--format", "sarif", "--sarif-root", ".", "--stdin-filename", "k8s/job.yaml", "-",
                   "--select", "KG201", stdin=GPU_JOB.encode(), cwd=tmp_path)
    assert (proc.returncode, proc.stderr) == (1, b"")
    log = json.loads(proc.stdout)
    [result] = log["runs"][0]["results"]
    assert _uri(result) == "k8s/job.yaml"
    assert result["locations"][0]["physicalLocation"]["region"]["startLine"] == 8  # the pod spec
    assert "unplacedLocation" not in result["properties"]
    _valid(log, tmp_path)


def test_a_rendered_finding_without_a_template_line_is_placed_at_chart_yaml(tmp_path: Path) -> None:
    """A finding on a rendered stream that no template line holds and that was kept nowhere
    (`<helm template chart>`: here the chart's templates are not where `# Source:` says, so
    nothing maps) points at the chart's Chart.yaml, line 1, and says where it really is."""
    from kubegap_lint.config.settings import Settings
    from kubegap_lint.engine.run import Linter
    from kubegap_lint.report.sarif import render_sarif

    chart = tmp_path / "chart"
    chart.mkdir()
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: demo\nversion: 0.1.0\n")
    stream = "---\n# Source: demo/templates/job.yaml\n" + GPU_JOB
    result = Linter(Settings(select=["KG201"])).lint_texts([("<helm template chart>", stream)])
    assert [(f.rule_id, f.location.path, f.location.line) for f in result.findings] == [
        ("KG201", "<helm template chart>", 10)]
    log = json.loads(render_sarif(result, tmp_path, cwd=str(tmp_path)).text)
    [found] = log["runs"][0]["results"]
    assert _uri(found) == "chart/Chart.yaml"
    assert found["locations"][0]["physicalLocation"]["region"]["startLine"] == 1
    assert found["properties"]["unplacedLocation"] == {"path": "<helm template chart>", "line": 10, "column": 5}
    assert found["message"]["text"].endswith("(at <helm template chart>:10:5)")
    _valid(log, tmp_path)
