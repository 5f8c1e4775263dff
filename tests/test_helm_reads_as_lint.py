"""`kubegap-lint helm` reads the repository as `lint` does: the PodDisruptionBudget in k8s/ that
selects the chart's pods counts (no KG103), and a baseline made by `baseline create .` matches
its findings (`--baseline`). With the real Helm engine."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from conftest import GPU_DEPLOYMENT, PDB, run_cli

pytest.importorskip("helm_python", reason="the Helm engine is not installed (pip install -e '.[helm]')")


@pytest.fixture
def repository(tmp_path: Path) -> Path:
    (tmp_path / "chart" / "templates").mkdir(parents=True)
    (tmp_path / "k8s").mkdir()
    (tmp_path / "chart" / "Chart.yaml").write_text("apiVersion: v2\nname: demo\nversion: 0.1.0\n")
    (tmp_path / "chart" / "templates" / "deploy.yaml").write_text(GPU_DEPLOYMENT)
    (tmp_path / "k8s" / "pdb.yaml").write_text(PDB)
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    subprocess.run(["git", "add", "-A"], cwd=tmp_path, check=True)
    return tmp_path


def _rules(proc: subprocess.CompletedProcess[bytes]) -> list[tuple[str, str, int]]:
    return [(f["rule"], f["location"]["path"], f["location"]["line"]) for f in json.loads(proc.stdout)["findings"]
            if f["suppressed"] is None]


def test_helm_sees_the_pdb_lint_sees(repository: Path) -> None:
    args = ("--format", "json", "--select", "KG103")
    assert _rules(run_cli("lint", ".", *args, cwd=repository)) == []
    assert _rules(run_cli("helm", "chart", *args, cwd=repository)) == []
    assert _rules(run_cli("helm", "chart", "--no-repo-facts", *args, cwd=repository)) == [
        ("KG103", "chart/templates/deploy.yaml", 11)]


def test_helm_takes_the_baseline_that_baseline_create_makes(repository: Path) -> None:
    made = run_cli("baseline", "create", ".", cwd=repository)
    assert made.returncode == 0, made.stderr
    (repository / "b.json").write_bytes(made.stdout)
    assert run_cli("helm", "chart", cwd=repository).returncode == 1  # findings, without the baseline
    proc = run_cli("helm", "chart", "--format", "json", "--baseline", "b.json", cwd=repository)
    assert proc.returncode == 0, proc.stdout
    report = json.loads(proc.stdout)
    assert report["summary"]["suppressed"] >= 1 and _rules(proc) == []
