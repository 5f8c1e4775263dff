"""Linting in worker processes must give the serial run's output, byte for byte."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import CORPUS, EXAMPLES, load_bench_generator, requires_shared, run_cli, run_cli_subprocess

from kubegap_lint.engine import parallel
from kubegap_lint.input.sources import discover
from kubegap_lint.report.jsonfmt import render_json

CROSS_FILE_A = """\
apiVersion: v1
kind: ConfigMap
metadata: {name: nccl, namespace: team}
data: {TORCH_NCCL_TRACE_BUFFER_SIZE: "0"}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: pdb, namespace: team}
spec: {maxUnavailable: 0, selector: {matchLabels: {app: train}}}
---
a: [broken
---
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Pod
  metadata: {name: p, namespace: team}
  spec:
    containers:
    - name: c
      image: x
      resources: {limits: {nvidia.com/gpu: 8}}
"""

CROSS_FILE_B = """\
# Source: chart/templates/job.yaml
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: train, namespace: team}
spec:
  pytorchReplicaSpecs:
    Worker:
      replicas: 4
      template:
        metadata: {labels: {app: train}}
        spec:
          containers:
          - name: trainer
            image: x  # kubegap:ignore KG501 the runtime class mounts /dev/shm
            command: [torchrun, train.py]  # kubegap:ignore KG999
            envFrom: [{configMapRef: {name: nccl}}]
            resources: {limits: {nvidia.com/gpu: 8}}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: {{ .Values.name }}}
"""


@pytest.fixture(scope="module")
def many_files(tmp_path_factory) -> Path:
    """A folder of generated streams (over the parallel threshold) plus cross-file facts and faults."""
    folder = tmp_path_factory.mktemp("many")
    generate = load_bench_generator()
    for number, count in enumerate((150, 40, 220, 5)):
        with open(folder / f"stream-{number}.yaml", "w", encoding="utf-8", newline="\n") as handle:
            generate.write_stream(count, number, handle)
    (folder / "a-facts.yaml").write_text(CROSS_FILE_A, encoding="utf-8")
    (folder / "z-workload.yaml").write_text(CROSS_FILE_B, encoding="utf-8")
    (folder / "latin1.yaml").write_bytes(b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: caf\xe9}\n")
    (folder / "empty.yaml").write_bytes(b"")
    return folder


def test_shares_are_contiguous_and_cover_every_document(many_files) -> None:
    sources, _ = discover([str(many_files)])
    units = []
    for source in sources:
        text = source.read_bytes().decode("utf-8", "replace")
        units.append(parallel._Unit(source.display, list(parallel.split_documents(text.splitlines(True))), []))
    shares = parallel._split(units, 2)
    assert len(shares) == 2
    flat = [(u.display, c.index) for share in shares for u in share for c in u.chunks]
    assert flat == [(u.display, c.index) for u in units for c in u.chunks]
    sizes = [sum(len(c.text) for u in share for c in u.chunks) for share in shares]
    assert min(sizes) > 0.4 * sum(sizes)


@pytest.mark.parametrize("fmt", ["json", "text", "junit"])  # junit: a case for every workload
def test_cli_jobs_two_prints_what_jobs_one_prints(many_files, fmt) -> None:
    serial = run_cli("--format", fmt, "--jobs", "1", str(many_files), "does-not-exist.yaml")
    forked = run_cli_subprocess("--format", fmt, "--jobs", "2", str(many_files), "does-not-exist.yaml")
    assert serial.returncode == forked.returncode == 2  # the missing file
    assert forked.stdout == serial.stdout
    assert forked.stderr == serial.stderr
    if fmt == "json":
        assert b'"KG001"' in serial.stdout and b'"KG003"' in serial.stdout


def _json(result, linter) -> str:
    return render_json(result, linter.params)


def test_workers_really_run_and_agree_in_process(many_files, linter_factory, monkeypatch) -> None:
    linter = linter_factory()
    sources, errors = discover([str(many_files)])
    serial = linter.lint_sources(sources, errors)

    def refuse(*args, **kwargs):
        raise AssertionError("the one-process path ran")

    monkeypatch.setattr(parallel, "_serial", refuse)
    monkeypatch.setattr(linter, "lint_sources", refuse)
    forked = parallel.lint_sources(linter, sources, errors, jobs=2)
    assert _json(forked, linter) == _json(serial, linter)
    assert forked.estimates == serial.estimates
    assert forked.workloads == serial.workloads > 100
    assert list(forked.iter_workloads()) == list(serial.iter_workloads())


@pytest.mark.parametrize("folder", [pytest.param(EXAMPLES, id="examples"),
                                    pytest.param(CORPUS, id="corpus", marks=requires_shared)])
def test_small_threshold_forks_on_examples_and_corpus(folder, linter_factory, monkeypatch) -> None:
    monkeypatch.setattr(parallel, "MIN_PARALLEL_BYTES", 0)
    linter = linter_factory()
    sources, errors = discover([str(folder)])
    assert _json(parallel.lint_sources(linter, sources, errors, jobs=2), linter) == \
        _json(linter.lint_sources(sources, errors), linter)


def test_a_run_with_exemptions_is_judged_whole_and_prints_the_same(many_files, tmp_path) -> None:
    config = tmp_path / "kubegap.yaml"
    config.write_text("exemptions:\n  - rules: [KG501]\n    namespaces: [research]\n"
                      "    reason: checked by hand\n  - rules: [KG201]\n    names: [nothing-*]\n"
                      "    reason: matches nothing\n", encoding="utf-8")
    serial = run_cli("--format", "json", "--jobs", "1", "--config", str(config), str(many_files))
    forked = run_cli_subprocess("--format", "json", "--jobs", "2", "--config", str(config), str(many_files))
    assert serial.returncode == forked.returncode
    assert forked.stdout == serial.stdout and forked.stderr == serial.stderr
    assert b'"KG005"' in serial.stdout  # the exemption that matched nothing, once


def test_chart_templates_keep_files_whole(tmp_path, linter_factory, monkeypatch) -> None:
    chart = EXAMPLES / "helm"
    if not chart.is_dir():
        pytest.skip("no Helm example here")
    monkeypatch.chdir(chart)
    monkeypatch.setattr(parallel, "MIN_PARALLEL_BYTES", 0)
    linter = linter_factory()
    sources, errors = discover(["."])
    units = [parallel._Unit(s.display, list(parallel.split_documents(
        s.read_bytes().decode("utf-8").splitlines(True))), []) for s in sources]
    assert parallel._maps_to_charts(linter, units)
    assert all(len({u.display for u in share}) == len(share) for share in parallel._split(units, 2, True))
    assert _json(parallel.lint_sources(linter, sources, errors, jobs=2), linter) == \
        _json(linter.lint_sources(sources, errors), linter)
