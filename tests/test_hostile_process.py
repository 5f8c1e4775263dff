"""Process behaviour: Ctrl-C is exit 130, --jobs workers die with the parent."""

from __future__ import annotations

import importlib.util
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import REPO

ENV = {**os.environ, "PYTHONPATH": str(REPO)}


def test_ctrl_c_exits_130_in_one_line() -> None:
    # Reading stdin from a pipe nobody writes: the run waits until interrupted.
    # An earlier test may leave SIGINT ignored in this process, and a child inherits that.
    proc = subprocess.Popen([sys.executable, "-m", "kubegap_lint", "-"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    _wait_blocked_on_stdin(proc.pid)  # a loaded machine may take seconds to import
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert err.decode().strip().splitlines()[-1] == "kubegap-lint: interrupted"
    assert b"Traceback" not in err


def _wait_blocked_on_stdin(pid: int, limit: float = 60.0) -> None:
    """Until the process sleeps reading its pipe (Linux /proc), else a fixed pause."""
    wchan = Path(f"/proc/{pid}/wchan")
    if not wchan.exists():
        time.sleep(3)
        return
    # Blocked on a pipe with no child for a whole second: reading stdin, not waiting on git
    # (the run asks git for the work tree's top level first).
    deadline = time.monotonic() + limit
    steady = 0
    while time.monotonic() < deadline and steady < 10:
        try:
            blocked = "pipe" in wchan.read_text() and not _children(pid)
        except OSError:
            return
        steady = steady + 1 if blocked else 0
        time.sleep(0.1)


def _children(pid: int) -> list[int]:
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return []
    return [int(p) for p in text.split()]


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="needs Linux /proc")
def test_workers_die_with_a_killed_parent(tmp_path) -> None:
    job = (REPO / "examples" / "KG201-training-checkpoint-volume" / "bad-job-no-volumes.yaml").read_text()
    with open(tmp_path / "big.yaml", "w", encoding="utf-8") as handle:
        for i in range(6000):
            handle.write("---\n" + job.replace("name: finetune", f"name: finetune-{i}"))
    proc = subprocess.Popen([sys.executable, "-m", "kubegap_lint", str(tmp_path / "big.yaml"), "--jobs", "2"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=ENV)
    workers: list[int] = []
    for _ in range(1200):  # wait (up to 2 minutes on a loaded machine) for both workers
        workers = _children(proc.pid)
        if len(workers) >= 2 or proc.poll() is not None:
            break
        time.sleep(0.1)
    if len(workers) < 2:
        proc.kill()
        pytest.skip("the run ended before its workers could be seen")
    proc.kill()
    proc.wait()
    for _ in range(100):
        if not any(_alive(w) for w in workers):
            break
        time.sleep(0.05)
    assert not any(_alive(w) for w in workers)


def test_no_temp_file_lands_in_the_current_folder(tmp_path) -> None:
    # No usable temp folder at all: Python's tempfile would fall back to the current folder.
    work = tmp_path / "work"
    work.mkdir()
    env = {**ENV, "TMPDIR": str(tmp_path / "missing"), "KUBEGAP_LINT_NO_CACHE": "1"}
    code = ("import os, sys\n"
            "import kubegap_lint.core.tempdir as t\n"
            "t._candidates = lambda: [os.environ['TMPDIR']]\n"
            "from kubegap_lint.store.spill import _write_run\n"
            "handle = _write_run(range(10))\n"
            "print(type(handle).__name__, sorted(os.listdir('.')))\n")
    result = subprocess.run([sys.executable, "-c", code], cwd=work, env=env, capture_output=True, text=True)
    assert result.stdout == "BytesIO []\n", result.stderr
    # With one, the file is in a private folder made for the run and gone after it.
    code = ("import os, stat\n"
            "from kubegap_lint.core.tempdir import private_temp_dir\n"
            "from kubegap_lint.store.spill import _write_run\n"
            "handle = _write_run(range(10))\n"
            "folder = private_temp_dir()\n"
            "print(stat.S_IMODE(os.stat(folder).st_mode) == 0o700, os.path.dirname(folder), folder)\n")
    result = subprocess.run([sys.executable, "-c", code], cwd=work, env={**env, "TMPDIR": str(tmp_path)},
                            capture_output=True, text=True)
    private, parent, folder = result.stdout.split()
    assert (private, parent) == ("True", str(tmp_path)), result.stderr
    assert not os.path.exists(folder)
    assert os.listdir(work) == []


_RENDER_SPY = """
import os, sys, tempfile
import kubegap_lint.core.tempdir as t
import kubegap_lint.cli.main as m
import kubegap_lint.engine.inputs as inputs
if sys.argv[1] == "none":
    t._candidates = lambda: []  # no usable temp folder
    tempfile.tempdir = os.getcwd()  # stand-in for Python's fallback to the current folder then
real = inputs.render_charts
def spy(charts, scratch, *rest):
    print("scratch", scratch, t.private_temp_dir(), sorted(os.listdir(".")), flush=True)
    return real(charts, scratch, *rest)
inputs.render_charts = spy
sys.argv = ["kubegap-lint", "--select", "KG201", "chart"]
m.cli()
"""


@pytest.mark.skipif(importlib.util.find_spec("helm_python") is None, reason="the Helm engine is not installed")
def test_rendered_charts_go_to_the_private_temp_folder_or_nowhere(tmp_path: Path) -> None:
    import shutil

    work = tmp_path / "work"
    shutil.copytree(REPO / "examples" / "helm" / "gpu-train", work / "chart")
    env = {**ENV, "TMPDIR": str(tmp_path), "KUBEGAP_LINT_NO_CACHE": "1"}
    result = subprocess.run([sys.executable, "-c", _RENDER_SPY, "private"], cwd=work, env=env,
                            capture_output=True, text=True)
    _, scratch, private, *cwd_then = result.stdout.splitlines()[0].split(" ", 3)
    assert os.path.dirname(scratch) == private and os.path.dirname(private) == str(tmp_path), result.stdout
    assert os.path.basename(scratch).startswith("charts-") and cwd_then == ["['chart']"]
    assert result.returncode == 1, result.stderr  # the chart's findings
    # No private temp folder: each chart is one input error, and nothing is written here.
    result = subprocess.run([sys.executable, "-c", _RENDER_SPY, "none"], cwd=work, env=env,
                            capture_output=True, text=True)
    assert "scratch" not in result.stdout and result.returncode == 2, result.stdout
    assert "kubegap-lint: chart: cannot be rendered: no private temporary folder" in result.stderr
    assert os.listdir(work) == ["chart"]
