"""Hostile charts and chart settings (issue 35): a chart is read as Helm reads it and no further.

Through the real CLI and the real Helm engine (`helm_python`): links out of the chart, links
`.helmignore` hides, devices and FIFOs in a chart, and a repository's `charts:` entries naming
files outside it. What is refused is an error at the chart's Chart.yaml or the configuration's
line, and the rest is linted.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import time
from pathlib import Path

import pytest
from conftest import run_cli

pytestmark = pytest.mark.skipif(importlib.util.find_spec("helm_python") is None,
                                reason="needs the Helm engine (pip install -e '.[helm]')")

SECRET = "kg-secret-token-4711"
ENV = {"KG_TEST_TOKEN": SECRET, "KUBEGAP_LINT_NO_CACHE": "1"}

# A GPU Deployment (findings: KG103 among them) that publishes a chart file in an annotation.
DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: infer
  annotations:
    leak: {{ .Files.Get "env" | quote }}
spec:
  replicas: 2
  selector:
    matchLabels: {app: infer}
  template:
    metadata:
      labels: {app: infer}
    spec:
      containers:
        - name: server
          image: vllm/vllm-openai:v0.6.3
          resources:
            limits: {nvidia.com/gpu: 1}
"""


def _chart(root: Path, name: str = "c") -> Path:
    chart = root / name
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text(f"apiVersion: v2\nname: {name}\nversion: 0.1.0\n")
    (chart / "templates" / "deploy.yaml").write_text(DEPLOYMENT)
    return chart


@pytest.fixture()
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


def _json(proc: subprocess.CompletedProcess[bytes]) -> dict:
    assert b"Traceback" not in proc.stderr and b"internal error" not in proc.stderr, proc.stderr
    return json.loads(proc.stdout)


def test_a_link_out_of_the_chart_is_refused_at_chart_yaml_and_the_rest_linted(repo: Path, tmp_path: Path) -> None:
    chart = _chart(repo)
    os.symlink("/proc/self/environ", chart / "env")
    kept = tmp_path / "kept"
    for fmt in ("text", "sarif", "github"):
        proc = run_cli("lint", ".", "--format", fmt, cwd=repo, env=ENV)
        assert SECRET.encode() not in proc.stdout + proc.stderr, fmt
        assert proc.returncode == 2, (fmt, proc.stderr)
    for args in (("lint", "."), ("helm", "c", "--keep-rendered", str(kept))):
        proc = run_cli(*args, "--format", "json", cwd=repo, env=ENV)
        assert SECRET.encode() not in proc.stdout + proc.stderr and proc.returncode == 2
        document = _json(proc)
        assert [(e["path"], e["line"], e["message"]) for e in document["errors"]] == [
            ("c/Chart.yaml", 1, "chart file env: symbolic link out of the chart folder: not read")]
        assert "KG103" in {f["rule"] for f in document["findings"]}  # the rest is linted
    assert SECRET not in (kept / "c.yaml").read_text()
    assert 'leak: ""' in (kept / "c.yaml").read_text()


def test_a_link_inside_the_chart_is_read(repo: Path, tmp_path: Path) -> None:
    chart = _chart(repo)
    (chart / "files").mkdir()
    (chart / "files" / "real.txt").write_text("inside")
    os.symlink("files/real.txt", chart / "env")
    kept = tmp_path / "kept"
    document = _json(run_cli("helm", "c", "--keep-rendered", str(kept), "--format", "json", cwd=repo, env=ENV))
    assert document["errors"] == []
    assert 'leak: "inside"' in (kept / "c.yaml").read_text()


def test_special_files_in_a_chart_are_refused_and_helmignored_ones_never_opened(repo: Path) -> None:
    chart = _chart(repo)
    os.mkfifo(chart / "pipe")  # Helm's loader would block on it for ever
    os.symlink("/dev/zero", chart / "zero")
    (chart / "ignored").mkdir()
    os.mkfifo(chart / "ignored" / "pipe")
    os.symlink("/dev/zero", chart / "ignored" / "zero")
    os.symlink(".", chart / "ignored" / "loop")  # a copy following it would never end
    os.symlink("..", chart / "ignored" / "up")
    (chart / ".helmignore").write_text("# hidden from Helm\nignored/\n")
    started = time.monotonic()
    document = _json(run_cli("lint", ".", "--format", "json", cwd=repo, env=ENV))
    assert time.monotonic() - started < 120
    assert [(e["path"], e["line"], e["message"]) for e in document["errors"]] == [
        ("c/Chart.yaml", 1, "chart file pipe: not read: not a regular file (FIFO, device or socket)"),
        ("c/Chart.yaml", 1, "chart file zero: symbolic link out of the chart folder: not read")]
    # The exact template lines still hold: the marked copy was made the same way.
    finding = next(f for f in document["findings"] if f["rule"] == "KG103")
    assert (finding["location"]["path"], finding["location"]["line"], finding["approximate"]) == (
        "c/templates/deploy.yaml", 13, False)


def test_chart_yaml_linked_to_dev_zero_is_an_error_not_a_crash(repo: Path) -> None:
    (repo / "k8s").mkdir()
    (repo / "k8s" / "other.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")
    chart = _chart(repo)
    (chart / "Chart.yaml").unlink()
    os.symlink("/dev/zero", chart / "Chart.yaml")
    proc = run_cli("lint", ".", "--format", "json", cwd=repo, env=ENV)
    assert b"MemoryError" not in proc.stderr and b"internal error" not in proc.stderr, proc.stderr
    assert proc.returncode in (0, 1, 2) and proc.stdout


def test_config_chart_files_outside_the_repository_are_refused_at_their_line(repo: Path, tmp_path: Path) -> None:
    _chart(repo)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text(SECRET)
    (outside / "values.yaml").write_text(f"token: {SECRET}\n")
    os.symlink(outside / "secret.txt", repo / "inside-link.txt")
    (repo / ".kubegap-lint.yaml").write_text(
        "charts:\n"
        "  - path: c\n"
        "    values: [../outside/values.yaml]\n"
        "    set_file: [a=/proc/self/environ, b=../outside/secret.txt, c=inside-link.txt]\n")
    proc = run_cli("lint", ".", cwd=repo, env=ENV)
    assert proc.returncode == 2 and SECRET.encode() not in proc.stdout + proc.stderr
    assert proc.stderr.decode().splitlines() == [
        f"kubegap-lint: .kubegap-lint.yaml:3:14: charts[0].values[0]: {outside}/values.yaml is outside the"
        f" repository (.): not read",
        "kubegap-lint: .kubegap-lint.yaml:4:16: charts[0].set_file[0]: /proc/self/environ is outside the"
        " repository (.): not read",
        f"kubegap-lint: .kubegap-lint.yaml:4:38: charts[0].set_file[1]: {outside}/secret.txt is outside the"
        f" repository (.): not read",
        f"kubegap-lint: .kubegap-lint.yaml:4:63: charts[0].set_file[2]: {outside}/secret.txt is outside the"
        f" repository (.): not read"]


def test_set_file_of_special_files_is_an_error_for_that_chart(repo: Path) -> None:
    _chart(repo)
    for target in ("/proc/self/pagemap", "/dev/zero", "/proc/self/environ"):
        proc = run_cli("helm", "c", "--set-file", f"x={target}", "--format", "json", cwd=repo, env=ENV)
        document = _json(proc)
        assert proc.returncode == 2 and SECRET.encode() not in proc.stdout
        (error,) = document["errors"]
        assert error["path"] == "c" and f"--set-file x={target}: {target} cannot be read:" in error["message"]


def test_mapping_a_long_line_of_list_dashes_is_linear() -> None:
    """The key check of exact-line mapping backtracked over every split of a run of `- `
    (65 s for 80 KB); 200 KB must take well under a second on any machine."""
    from kubegap_lint.helm.marked import _literal_key

    dashes = "- " * 100_000
    started = time.monotonic()
    assert _literal_key(f"{dashes}x: {{{{ .Values.x }}}}", f"{dashes}x: 1", "x") is True
    assert _literal_key(dashes, dashes + "x", "x") is False
    assert _literal_key("x" + " " * 200_000 + ": {{ .x }}", "x" + " " * 200_000 + ": 1", "x") is True
    assert time.monotonic() - started < 5


def test_a_chart_rendering_lists_nested_past_the_parser_is_kg007_not_an_internal_error(repo: Path) -> None:
    chart = _chart(repo)
    (chart / "templates" / "deep.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: deep}\ndata:\n  x:\n" + "  " + "- " * 40_000 + "x\n")
    document = _json(run_cli("lint", ".", "--format", "json", cwd=repo, env=ENV))
    assert ("KG007", "c/templates/deep.yaml") in {(f["rule"], f["location"]["path"]) for f in document["findings"]}
    assert "KG103" in {f["rule"] for f in document["findings"]}  # the chart's other document is linted


def test_a_schema_ref_outside_the_chart_is_refused_never_fetched(repo: Path, tmp_path: Path) -> None:
    chart = _chart(repo)
    (tmp_path / "local.json").write_text(json.dumps({"type": "object", "description": SECRET}))
    (chart / "values.schema.json").write_text(json.dumps({
        "type": "object", "properties": {
            "a": {"$ref": "http://127.0.0.1:9/schema.json"},
            "b": {"$ref": f"file://{tmp_path}/local.json"},
            "c": {"$ref": "#/definitions/d"}},
        "definitions": {"d": {"type": "string"}}}))
    proc = run_cli("lint", ".", "--format", "json", cwd=repo, env=ENV)
    document = _json(proc)
    assert SECRET.encode() not in proc.stdout + proc.stderr
    assert [(e["path"], e["message"]) for e in document["errors"]] == [
        ("c/Chart.yaml", "chart file values.schema.json: a $ref outside the schema (a URL or another file): not read")]
    assert "KG103" in {f["rule"] for f in document["findings"]}
