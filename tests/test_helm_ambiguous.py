"""Piped Helm output whose `# Source:` chart name two charts answer: --chart-dir wins, else the
nearest chart below the current folder, else the first of the equally near, marked approximate
with the reason in the message. From the filesystem's root outside a repository, no search."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import GPU_DEPLOYMENT, run_cli

STREAM = "---\n# Source: demo/templates/deploy.yaml\n" + GPU_DEPLOYMENT


def _chart(folder: Path) -> None:
    (folder / "templates").mkdir(parents=True)
    (folder / "Chart.yaml").write_text("apiVersion: v2\nname: demo\nversion: 0.1.0\n")
    (folder / "templates" / "deploy.yaml").write_text(GPU_DEPLOYMENT)


def _kg103(tmp_path: Path, *args: str) -> tuple[str, int, bool, str]:
    proc = run_cli("--format", "json", "--select", "KG103", *args, "out.yaml", cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    [f] = json.loads(proc.stdout)["findings"]
    return f["location"]["path"], f["location"]["line"], f["approximate"], f["message"]


def test_equally_near_charts_are_a_marked_guess(tmp_path: Path) -> None:
    _chart(tmp_path / "a" / "demo")
    _chart(tmp_path / "b" / "demo")
    (tmp_path / "out.yaml").write_text(STREAM)
    path, line, approximate, message = _kg103(tmp_path)
    assert (path, line, approximate) == ("a/demo/templates/deploy.yaml", 11, True)
    assert message.endswith("(chart 'demo' is ambiguous (equally near: a/demo, b/demo); the first is"
                            " assumed: name the chart with --chart-dir)")
    path, line, approximate, message = _kg103(tmp_path, "--chart-dir", "b/demo")
    assert (path, line, approximate) == ("b/demo/templates/deploy.yaml", 11, False)
    assert "ambiguous" not in message


def test_the_nearest_chart_is_taken_as_found(tmp_path: Path) -> None:
    _chart(tmp_path / "demo")
    _chart(tmp_path / "vendor" / "demo")
    (tmp_path / "out.yaml").write_text(STREAM)
    path, line, approximate, message = _kg103(tmp_path)
    assert (path, line, approximate) == ("demo/templates/deploy.yaml", 11, False)
    assert "ambiguous" not in message


def test_no_chart_search_from_the_filesystem_root(tmp_path: Path) -> None:
    _chart(tmp_path / "demo")
    (tmp_path / "out.yaml").write_text(STREAM)
    proc = run_cli("--format", "json", "--select", "KG103", str(tmp_path / "out.yaml"), cwd=Path("/"))
    assert proc.returncode == 1, proc.stderr
    [f] = json.loads(proc.stdout)["findings"]
    assert (f["location"]["path"], f["location"]["line"]) == (str(tmp_path / "out.yaml"), 13)  # not mapped
