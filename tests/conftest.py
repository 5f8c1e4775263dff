"""Shared test helpers: the repository's folders and a fixture that runs the real CLI."""

from __future__ import annotations

import os
import subprocess
import sys
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


def run_cli(*args: str, stdin: bytes | None = None, cwd: Path | None = None,
            env: dict[str, str] | None = None) -> subprocess.CompletedProcess[bytes]:
    """Run `python -m kubegap_lint` as a user would, from this checkout."""
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
