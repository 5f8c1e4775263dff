"""Generated inputs (hypothesis): the tool never raises, exits 0, 1 or 2, every finding is on a
line of the file, and reports stay valid (tests/fuzz/harness.py holds the checks). Kept small
for CI; the long run is tests/fuzz/ (docs/robustness.md)."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import pytest
from conftest import CORPUS, EXAMPLES
from fuzz.harness import check
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

SETTINGS = settings(max_examples=40, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                           HealthCheck.function_scoped_fixture])


@pytest.fixture(scope="module")
def linter():
    from kubegap_lint.config.settings import Settings
    from kubegap_lint.engine.run import Linter

    return Linter(Settings(select=[p.id for p in Linter().catalog.policies]))


@pytest.fixture(scope="module")
def folder():
    with tempfile.TemporaryDirectory() as tmp:
        yield tmp


# YAML-ish text: the characters that steer the parser, with line ends of every kind.
YAML_ALPHABET = st.sampled_from(list(" -:?[]{},#&*!|>'\"%@`\t\n\r\\") + ["---\n", "...\n", "\ufeff", "\x00",
                                "a", "b", "1", "\u2028", "\x85", "<<", "kind: Job\n", "apiVersion: v1\n"])


@SETTINGS
@given(st.lists(YAML_ALPHABET, max_size=200).map("".join), st.sampled_from(["utf-8", "utf-16", "latin-1"]))
def test_generated_yaml_text(linter, folder, text: str, encoding: str) -> None:
    check(linter, text.encode(encoding, errors="replace"), folder)


SCALARS = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False),
                    st.text(max_size=20), st.sampled_from(["8Gi", "500m", "nvidia.com/gpu", "/dev/shm",
                                                           "Memory", "NCCL_DEBUG", "0", "true"]))
KEYS = st.sampled_from(["name", "image", "env", "value", "resources", "limits", "requests", "nvidia.com/gpu",
                        "volumes", "volumeMounts", "mountPath", "emptyDir", "medium", "sizeLimit", "replicas",
                        "template", "spec", "metadata", "labels", "containers", "command", "args", "x"])
VALUES = st.recursive(SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                       st.dictionaries(KEYS, inner, max_size=5)), max_leaves=30)
KINDS = st.sampled_from([("batch/v1", "Job"), ("apps/v1", "Deployment"), ("apps/v1", "StatefulSet"),
                         ("kubeflow.org/v1", "PyTorchJob"), ("jobset.x-k8s.io/v1alpha2", "JobSet"),
                         ("v1", "Pod"), ("v1", "List"), ("policy/v1", "PodDisruptionBudget"), ("v1", "ConfigMap")])


@st.composite
def kube_objects(draw) -> dict:
    api, kind = draw(KINDS)
    container = draw(st.dictionaries(KEYS, VALUES, max_size=6))
    pod = {"containers": [container], **draw(st.dictionaries(KEYS, VALUES, max_size=3))}
    spec = {"template": {"metadata": draw(st.dictionaries(KEYS, VALUES, max_size=2)), "spec": pod},
            **draw(st.dictionaries(KEYS, VALUES, max_size=3))}
    obj = {"apiVersion": api, "kind": kind, "metadata": {"name": draw(st.text(max_size=10))}, "spec": spec}
    if kind == "List":
        obj["items"] = [dict(obj, kind="Job")]
    return obj


@pytest.mark.slow
@SETTINGS
@given(st.lists(kube_objects(), min_size=1, max_size=3), st.sampled_from([None, 2]))
def test_generated_kubernetes_objects(linter, folder, objects: list, indent: int | None) -> None:
    text = "---\n".join(json.dumps(o, indent=indent) + "\n" for o in objects)
    check(linter, text.encode(), folder)


def _seed_files() -> list[Path]:
    files = sorted(EXAMPLES.rglob("*.yaml"))
    if CORPUS.is_dir():
        corpus = sorted(p for p in CORPUS.rglob("*.yaml") if p.stat().st_size < 30_000)
        files += corpus[:: max(1, len(corpus) // 40)]
    return files


SEEDS = _seed_files()
MUTATION = st.tuples(st.sampled_from(["delete", "insert", "flip", "duplicate", "swap"]),
                     st.integers(0, 1 << 20), st.integers(1, 64),
                     st.binary(min_size=1, max_size=8) | st.sampled_from([b"---\n", b"\t", b"&a ", b"*a", b"[", b"\r"]))


def _mutate(data: bytes, mutations: list) -> bytes:
    for op, at, width, blob in mutations:
        at = at % (len(data) + 1)
        if op == "delete":
            data = data[:at] + data[at + width:]
        elif op == "insert":
            data = data[:at] + blob + data[at:]
        elif op == "flip" and data:
            at = min(at, len(data) - 1)
            data = data[:at] + bytes([data[at] ^ (1 << (width % 8))]) + data[at + 1:]
        elif op == "duplicate":
            data = data[:at] + data[at:at + width * 8] + data[at:]
        elif op == "swap":
            lines = data.splitlines(True)
            if len(lines) > 1:
                i = at % (len(lines) - 1)
                lines[i], lines[i + 1] = lines[i + 1], lines[i]
                data = b"".join(lines)
    return data


@SETTINGS
@given(st.sampled_from(SEEDS), st.lists(MUTATION, min_size=1, max_size=6))
def test_mutated_examples_and_corpus(linter, folder, seed: Path, mutations: list) -> None:
    check(linter, _mutate(seed.read_bytes(), mutations), folder)


def test_seeds_are_there() -> None:
    assert len(SEEDS) > 20
    assert os.path.isdir(EXAMPLES)
