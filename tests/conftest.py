"""Shared test helpers: the repository's folders and a fixture that runs the real CLI."""

from __future__ import annotations

import os
import subprocess
import sys
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = REPO / "examples"
SHARED = REPO.parent / "shared"
CORPUS = SHARED / "corpus"
CHARTS = SHARED / "charts"

# The shared test material (corpus, charts, the SARIF schema) sits beside the clone, not in it:
# a clone without it skips the tests that read it, all with this one reason, and fails none.
SHARED_PRESENT = SHARED.is_dir()
SHARED_MISSING = f"needs the shared test material at ../shared ({SHARED}), which is not there"
requires_shared = pytest.mark.skipif(not SHARED_PRESENT, reason=SHARED_MISSING)


def shared_cases(cases: list[Any]) -> list[Any]:
    """Parameters read from ../shared: without it, one case that skips with SHARED_MISSING (an
    empty list would skip with pytest's "got empty parameter set", which names no cause)."""
    return cases if SHARED_PRESENT else [pytest.param(None, marks=requires_shared, id="no-shared")]


# A GPU training Job with findings (KG201, KG501), shared by the configuration and suppression tests.
GPU_JOB = """\
apiVersion: batch/v1
kind: Job
metadata:
  name: train
  namespace: ml
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: trainer
          image: registry.example/t:1
          resources:
            limits:
              nvidia.com/gpu: 1
"""


# A GPU serving Deployment and the PodDisruptionBudget that selects it (KG103), shared by the
# partial-run tests: pre-commit and repository facts.
GPU_DEPLOYMENT = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: infer
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
PDB = """apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: infer
spec:
  maxUnavailable: 1
  selector:
    matchLabels: {app: infer}
"""


def load_bench_generator():
    """bench/generate.py as a module (bench/ is not a package)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("bench_generate", REPO / "bench" / "generate.py")
    module = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(module)
    return module


def run_cli_subprocess(*args: str, stdin: bytes | None = None, cwd: Path | None = None,
                       env: dict[str, str] | None = None) -> subprocess.CompletedProcess[bytes]:
    """Run `python -m kubegap_lint` as a user would, from this checkout, in a new interpreter: for
    what only a process shows (variables read at interpreter start-up, signals, closed streams,
    worker processes, the exit status the interpreter itself gives)."""
    full_env = dict(os.environ)
    full_env["PYTHONPATH"] = str(REPO) + os.pathsep + full_env.get("PYTHONPATH", "")
    full_env.pop("NO_COLOR", None)
    if env:
        full_env.update(env)
    return subprocess.run(
        [sys.executable, "-m", "kubegap_lint", *args],
        input=stdin if stdin is not None else b"",
        capture_output=True,
        cwd=str(cwd or REPO),
        env=full_env,
        timeout=600,
    )


@dataclass
class CliRun:
    """What run_cli returns: the fields of subprocess.CompletedProcess[bytes] that tests read."""

    args: list[str]
    returncode: int
    stdout: bytes
    stderr: bytes


# Variables the interpreter reads as it starts (PYTHONHASHSEED, PYTHONPATH, the locale): setting
# them in a running process changes nothing, so a test that needs them needs run_cli_subprocess.
_START_UP_VARIABLES = ("PYTHON", "LC_", "LANG")


def _fresh_process_state() -> None:
    """Forget what a run keeps for the rest of its process (a process runs once; in-process runs
    follow each other and other tests): notes said once, the linted trees no cache may be in,
    digests of files read, the validated-schema cache as read from its folder, git's answers,
    loaded baselines."""
    from kubegap_lint.catalog import cache, validcache
    from kubegap_lint.input import git
    from kubegap_lint.suppress import baseline

    cache._noted.clear()
    cache._linted_roots.clear()
    cache._read_digests.clear()
    validcache._known = None
    git._top_level.cache_clear()
    git._by_marker.clear()
    baseline._load.cache_clear()


def run_cli(*args: str, stdin: bytes | None = None, cwd: Path | None = None,
            env: dict[str, str] | None = None) -> CliRun:
    """Run the command line as `python -m kubegap_lint` would, in this process: the same main(),
    arguments, standard streams (bytes, not terminals), environment and current folder, and the
    exit code main() exits with; a third of the time a new interpreter takes (0.2 s against
    0.66 s a run, measured on this 2-core machine under load)."""
    from click.testing import CliRunner

    from kubegap_lint.cli.main import main

    late = sorted(name for name in env or {} if name.startswith(_START_UP_VARIABLES))
    if late:
        raise AssertionError(f"{late} only take effect when an interpreter starts: use run_cli_subprocess")
    argv, here = sys.argv, os.getcwd()
    code: int | str | None = 0
    _fresh_process_state()
    with CliRunner().isolation(input=stdin if stdin is not None else b"",
                               env={"NO_COLOR": None, **(env or {})}) as (out, err, _):
        streams = (sys.stdout, sys.stderr)  # main() may replace sys.stdout (a closed reader)
        sys.argv = ["kubegap-lint", *args]
        os.chdir(cwd or REPO)
        try:
            main()
        except SystemExit as exc:
            code = exc.code
        except Exception:  # what the interpreter would print and exit 1 with
            streams[1].write(traceback.format_exc())
            code = 1
        finally:
            sys.argv = argv
            os.chdir(here)
            for stream in streams:
                stream.flush()
            _fresh_process_state()
    if code is None:
        code = 0
    elif not isinstance(code, int):  # sys.exit("text"): printed, exit status 1
        err.write(f"{code}\n".encode())
        code = 1
    return CliRun(["kubegap-lint", *args], code, out.getvalue(), err.getvalue())


@pytest.fixture(scope="session")
def linter_factory():
    from kubegap_lint.config.settings import Settings
    from kubegap_lint.engine.run import Linter

    cache: dict[tuple[str, ...], Linter] = {}

    def make(select: tuple[str, ...] | None = None) -> Linter:
        key = select or ("*",)
        if key not in cache:
            cache[key] = Linter(Settings(select=list(select) if select else None))
        return cache[key]

    return make
