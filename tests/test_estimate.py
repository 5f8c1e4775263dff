"""The expected-interruption estimate at Llama 3's published per-GPU-day rate."""

from __future__ import annotations

import json

from conftest import run_cli

from kubegap_lint.engine.estimate import interval_text

JOB = """
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: big, namespace: ml}
spec:
  pytorchReplicaSpecs:
    Worker: {replicas: 16, template: {spec: {containers: [{name: w, resources: {limits: {nvidia.com/gpu: 8}}}]}}}
---
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: unknown}
spec:
  pytorchReplicaSpecs:
    Worker: {replicas: $N, template: {spec: {containers: [{name: w, resources: {limits: {nvidia.com/gpu: 8}}}]}}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: serving}
spec: {replicas: 4, template: {spec: {containers: [{name: s, resources: {limits: {nvidia.com/gpu: 8}}}]}}}
"""


def test_128_gpus_expect_one_interruption_every_16_days() -> None:
    proc = run_cli("--format", "json", "--select", "KG201", "-", stdin=JOB.encode())
    estimates = json.loads(proc.stdout)["estimates"]
    assert [(e["resource"]["name"], e["gpus"]) for e in estimates] == [("big", 128)]
    # 54 days * 16,384 GPUs / (419 interruptions * 128 GPUs) = 16.496 days
    assert estimates[0]["interval_days"] == 16.496
    assert "419 unexpected interruptions in 54 days on up to 16,384 GPUs" in estimates[0]["basis"]
    text = run_cli("--select", "KG201", "-", stdin=JOB.encode()).stdout.decode()
    assert "PyTorchJob ml/big: 128 GPUs: one interruption every ~16 days" in text


def test_interval_text_units() -> None:
    assert interval_text(66.0) == "~66 days"
    assert interval_text(2.25) == "~2.2 days"
    assert interval_text(54 / 419) == "~3.1 hours"
    assert interval_text(0.01) == "~14 minutes"


def test_estimates_come_in_path_order_whatever_order_the_paths_are_named(tmp_path) -> None:
    big = JOB.split("---")[0]
    (tmp_path / "a.yaml").write_text(big.replace("name: big", "name: first"))
    (tmp_path / "b.yaml").write_text(big.replace("name: big", "name: second") + "---" + big)
    wanted = ["  a.yaml:2:1: PyTorchJob ml/first: 128 GPUs: one interruption every ~16 days",
              "  b.yaml:2:1: PyTorchJob ml/second: 128 GPUs: one interruption every ~16 days",
              "  b.yaml:9:1: PyTorchJob ml/big: 128 GPUs: one interruption every ~16 days"]
    for order in (("b.yaml", "a.yaml"), ("a.yaml", "b.yaml")):
        for jobs in ("1", "2"):
            text = run_cli("--select", "KG201", "--jobs", jobs, *order, cwd=tmp_path).stdout.decode()
            assert [line for line in text.splitlines() if line.startswith("  ")] == wanted, (order, jobs, text)
            listed = json.loads(run_cli("--format", "json", "--select", "KG201", *order, cwd=tmp_path).stdout)
            assert [e["resource"]["name"] for e in listed["estimates"]] == ["first", "second", "big"]
