"""The workload stage's pod records (workloads/records.py): `pods_of` gives frozen `Pod` and
`Container` records whose key paths name the very nodes they carry, from every pod source (the
table, an embedded resource, the generic walk, a TrainJob merged with its runtime)."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from conftest import EXAMPLES, GPU_JOB

from kubegap_lint.config.settings import Settings
from kubegap_lint.core.keypaths import Pinned
from kubegap_lint.engine.run import Linter, _Run
from kubegap_lint.input.read import ReadStats, Resource
from kubegap_lint.input.readers import TextReader
from kubegap_lint.workloads.pods import pods_of
from kubegap_lint.workloads.records import Pod


def _pods(text: str) -> dict[str, tuple[Resource, list[Pod]]]:
    """Every workload of the text by name: its resource and pods_of, with a run's context."""
    run = _Run(Linter(Settings()), [], keep_views=False)
    taken = [(item, run.take(item)) for _, item in TextReader([("m.yaml", text)]).read(ReadStats(), [])]
    return {item.name or "": (item, pods_of(item, rule, run.context))
            for item, rule in taken if rule is not None and isinstance(item, Resource)}


def _at(data: Any, resource: Resource, where: tuple[Any, ...]) -> Any:
    """The node at a key path of the document."""
    node = data
    for step in where[len(resource.base):]:
        node = node[step]
    return node


def test_each_record_carries_the_node_its_key_path_names() -> None:
    text = (EXAMPLES / "KG008-workload-not-judged" / "good-rendered-and-runtime-present.yaml").read_text()
    resource, pods = _pods(text)["llama3-1-8b-fsdp"]
    [worker] = pods
    assert (worker.role, worker.path, worker.replicas, worker.found_by) == (
        "Worker", "spec.pytorchReplicaSpecs.Worker.template", 4, "table:kubeflow.org/PyTorchJob")
    assert _at(resource.data, resource, worker.where) is worker.node
    assert worker.spec_where is not None and _at(resource.data, resource, worker.spec_where) is worker.spec
    [container] = worker.containers
    assert _at(resource.data, resource, container.where) is container.raw
    with pytest.raises(dataclasses.FrozenInstanceError):
        worker.replicas = 5  # type: ignore[misc]


def test_a_trainjob_merged_with_its_runtime_is_pinned_to_its_trainer() -> None:
    text = (EXAMPLES / "KG008-workload-not-judged" / "good-rendered-and-runtime-present.yaml").read_text()
    resource, [node] = _pods(text)["multi-node-example"]
    assert (node.role, node.replicas, node.runtime) == (
        "node", 2, {"kind": "ClusterTrainingRuntime", "name": "torch-distributed-gpu"})
    assert isinstance(node.where, Pinned) and node.where.path == (*resource.base, "spec", "trainer")
    [container] = node.containers
    assert container.where == node.where  # everything below stands for the trainer
    assert container.raw["command"] == ["torchrun", "/workspace/train.py"]  # the trainer's, merged


def test_an_unknown_kind_is_walked_and_a_sidecar_sits_with_the_main_containers() -> None:
    text = """\
apiVersion: example.com/v1
kind: Trainer
metadata: {name: t}
spec:
  workers:
    replicas: 3
    template:
      spec:
        initContainers:
          - {name: setup, image: busybox}
          - {name: proxy, image: envoy, restartPolicy: Always}
        containers:
          - {name: main, image: "registry.example/t:1", resources: {limits: {nvidia.com/gpu: 1}}}
"""
    resource, [pod] = _pods(text)["t"]
    assert (pod.role, pod.found_by, pod.replicas) == ("workers", "walk", 3)
    assert [(c.raw["name"], c.init, c.index) for c in pod.containers] == [("main", False, 0), ("proxy", True, 1)]
    assert [c.raw["name"] for c in pod.init_containers] == ["setup"]
    assert _at(resource.data, resource, pod.containers[1].where) is pod.containers[1].raw


def test_an_unrendered_count_is_carried_by_the_pod_that_reads_it() -> None:
    _, [pod] = _pods(GPU_JOB.replace("spec:\n  template:", "spec:\n  parallelism: $N\n  template:"))["train"]
    assert pod.replicas is None
    assert [(p["field"], p["value"]) for p in pod.placeholders] == [("spec.parallelism", "$N")]
