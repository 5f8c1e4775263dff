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


HANG = '{{- range until 100000 }}{{- range until 100000 }}{{- end }}{{- end }}\n'
# A real Go-runtime abort, not a stand-in: a string of 3 GB is past the child's address-space
# limit, and the Go allocator ends the process ("fatal error: out of memory"), which no
# recover() can catch.
ABORT = 'x: {{ repeat 3000000000 "x" | len }}\n'


def test_a_render_that_never_ends_is_stopped_at_the_timeout_and_the_rest_linted(repo: Path) -> None:
    _chart(repo, "good")
    hung = _chart(repo, "hung")
    (hung / "templates" / "hang.yaml").write_text(HANG)
    (repo / ".kubegap-lint.yaml").write_text("render_timeout: 2\n")
    started = time.monotonic()
    for args in (("lint", "."), ("helm", "hung", "good"), ("helm", "--render-timeout", "1.5", "hung", "good")):
        proc = run_cli(*args, "--format", "json", "--select", "KG103", cwd=repo, env=ENV)
        document = _json(proc)
        limit = "1.5" if "--render-timeout" in args else "2"
        # The wall-clock limit, or the CPU limit of the same seconds (Go's threads can spend CPU
        # time faster than the clock runs): either stops the render.
        reasons = (f"did not finish in {limit} s (--render-timeout)",
                   f"was killed by SIGXCPU (more than {limit} s of CPU time)")
        messages = [f"helm template hung failed: the Helm engine process {reason}; the chart was not rendered"
                    for reason in reasons]
        # `lint` and `helm`: the chart not rendered is a KG009 finding (engine/inputs.py)
        assert proc.returncode == 1, proc.stderr
        ((path, message),) = [(f["location"]["path"], f["message"]) for f in document["findings"]
                              if f["rule"] == "KG009"]
        assert path == "hung/Chart.yaml" and message.removeprefix("chart hung was not linted: ") in messages
        assert {f["location"]["path"] for f in document["findings"] if f["rule"] != "KG009"} == {
            "good/templates/deploy.yaml"}
    assert time.monotonic() - started < 60


def test_a_go_runtime_abort_is_an_error_for_that_chart_never_the_end_of_the_run(repo: Path) -> None:
    bad = _chart(repo, "bad")
    (bad / "templates" / "big.yaml").write_text(ABORT)
    _chart(repo, "good")
    import resource

    cores = resource.getrlimit(resource.RLIMIT_CORE)
    resource.setrlimit(resource.RLIMIT_CORE, (cores[1], cores[1]))  # as on a machine that keeps cores
    try:
        proc = run_cli("lint", ".", "--format", "json", "--select", "KG103", cwd=repo, env=ENV)
    finally:
        resource.setrlimit(resource.RLIMIT_CORE, cores)
    assert sorted(p.name for p in repo.iterdir()) == [".git", "bad", "good"]  # no core file
    assert proc.returncode == 1, proc.stderr
    document = _json(proc)
    # The chart that aborted the engine is a KG009 error; the next chart rendered in a new engine
    # process, with its exact template lines.
    assert [(f["rule"], f["location"]["path"], f["location"]["line"], f["approximate"], f["message"])
            for f in document["findings"]] == [
        ("KG009", "bad/Chart.yaml", 1, False, "chart bad was not linted: helm template bad failed: the Helm"
         " engine process aborted (SIGABRT): fatal error: out of memory; the chart was not rendered"),
        ("KG103", "good/templates/deploy.yaml", 13, False, document["findings"][1]["message"])]
    assert b"goroutine" not in proc.stderr  # the Go traceback is not passed on


def test_ctrl_c_and_sigterm_stop_a_render_at_once_and_leave_no_temporary_file(repo: Path, tmp_path: Path) -> None:
    import signal
    import sys

    from conftest import REPO

    hung = _chart(repo, "hung")
    (hung / "templates" / "hang.yaml").write_text(HANG)
    temp = tmp_path / "temp"
    temp.mkdir()
    for sig, code in ((signal.SIGINT, 130), (signal.SIGTERM, 143)):
        env = dict(os.environ, PYTHONPATH=str(REPO), TMPDIR=str(temp), **ENV)
        # SIGINT at its default, as a terminal's Ctrl-C finds it: a test run started in the
        # background (and an earlier test) leaves it ignored, and a child inherits that.
        proc = subprocess.Popen([sys.executable, "-m", "kubegap_lint", "helm", "hung"], cwd=repo, env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        time.sleep(4)  # the engine is rendering by now
        started = time.monotonic()
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=30)
        assert time.monotonic() - started < 5
        assert proc.returncode == code, err
        assert b"Traceback" not in err
        assert list(temp.iterdir()) == []  # the private folder, with the chart's copy, is gone


def test_helm_log_lines_are_prefixed_and_name_the_chart_as_given(tmp_path: Path, capsys) -> None:
    """Helm logs each symbolic link it follows (the chart copy resolves them, so a run through the
    CLI never shows one: this renders a folder holding one through the worker directly)."""
    from kubegap_lint.helm import worker
    from kubegap_lint.helm.render import RenderOptions

    chart = _chart(tmp_path)
    (chart / "files").mkdir()
    (chart / "files" / "real.txt").write_text("inside")
    os.symlink("files/real.txt", chart / "env")
    assert 'leak: "inside"' in worker.render(str(chart), RenderOptions(), shown="c")
    lines = capsys.readouterr().err.splitlines()
    assert lines and set(lines) == {"kubegap-lint: helm: INFO found symbolic link in path. Contents of linked"
                                    " file included and used path=c/env resolved=c/files/real.txt"}


def test_schema_errors_come_in_one_order(repo: Path) -> None:
    chart = _chart(repo)
    (chart / "values.yaml").write_text("a: 1\nb: 2\nc: 3\nd: 4\ne: 5\n")
    keys = "abcde"
    (chart / "values.schema.json").write_text(json.dumps(
        {"type": "object", "properties": {k: {"type": "string"} for k in keys}, "required": ["zz"]}))
    messages = set()
    for _ in range(4):  # the engine's order changed from run to run
        document = _json(run_cli("helm", "c", "--format", "json", cwd=repo, env=ENV))
        messages.update(f["message"] for f in document["findings"] if f["rule"] == "KG009")
    assert messages == {"chart c was not linted: helm template c failed: c: - at '': missing property 'zz'" + "".join(
                            f" - at '/{k}': got number, want string" for k in keys)}


def test_the_engine_process_never_imports_a_package_planted_in_the_repository(repo: Path) -> None:
    import sys

    script = Path(sys.executable).parent / "kubegap-lint"
    if not script.is_file():
        pytest.skip("needs the installed console script")
    _chart(repo)
    planted = repo / "kubegap_lint"
    (planted / "helm").mkdir(parents=True)
    marker = repo / "planted-code-ran"
    for name in ("__init__.py", "helm/__init__.py", "helm/worker.py"):
        (planted / name).write_text(f"open({str(marker)!r}, 'w').close()\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.run([str(script), "lint", ".", "--format", "json", "--select", "KG103"], cwd=repo,
                          env={**env, **ENV}, capture_output=True, timeout=600)
    assert not marker.exists()
    assert proc.returncode == 1 and "KG103" in {f["rule"] for f in _json(proc)["findings"]}


def test_a_render_printing_too_much_is_refused_for_that_chart(repo: Path, monkeypatch) -> None:
    from kubegap_lint.helm import worker
    from kubegap_lint.helm.render import HelmError, RenderOptions

    chart = _chart(repo)
    (chart / "templates" / "big.yaml").write_text('x: {{ repeat 3000000 "x" }}\n')  # 3 MB of text
    monkeypatch.setattr(worker, "MAX_REPLY", 1024 * 1024)  # a smaller bound, for a quick test
    with pytest.raises(HelmError) as caught:
        worker.render(str(chart), RenderOptions(), shown="c")
    assert str(caught.value) == (f"helm template {chart} failed: the Helm engine process printed more than 1 MiB;"
                                 " the chart was not rendered")
    monkeypatch.setattr(worker, "MAX_REPLY", 256 * 1024 * 1024)
    assert len(worker.render(str(chart), RenderOptions(), shown="c")) > 3_000_000  # a new child, the whole text
