"""A Kubeflow Trainer TrainJob judged merged with the (Cluster)TrainingRuntime it names.

A TrainJob alone is one container-like `trainer` block; the pods are the runtime's JobSet
template with the TrainJob's changes applied, as the Trainer controller does:
- the trainer job (the replicated job labelled `trainer.kubeflow.org/trainjob-ancestor-step:
  trainer`, else the one named `node`) runs `numNodes` pods (the TrainJob's, else the runtime's
  `mlPolicy.numNodes`, else 1), and its `node` container takes the trainer's image, command,
  args, env (by name, over the runtime's) and `resourcesPerNode`;
- `podTemplateOverrides` (and the older flat `podSpecOverrides`) add volumes, volume mounts
  and env to the pod specs of their `targetJobs`, and set the other pod fields they carry;
- `runtimePatches` (`trainingRuntimeSpec.template.spec.replicatedJobs[]`, by job name) do the
  same to the pod spec under `template.spec.template.spec`.
Layouts read from kubeflow/trainer's examples/yaml (01-multi-node, 02-runtime-patches) and
manifests/base/runtimes, and the Trainer SDK's PodSpecOverride reference.

The merged pods stand, for locations, for the TrainJob's override of their job when it has one,
else its `spec.trainer` (where a fix in the TrainJob goes); their label names the TrainJob and
the runtime, so every message says both.
"""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

from kubegap_lint.core.coerce import as_count, as_dict, as_list
from kubegap_lint.core.keypaths import KeyPath, Pinned
from kubegap_lint.input.read import Resource
from kubegap_lint.workloads.index import InputIndex
from kubegap_lint.workloads.kinds import TemplateRule
from kubegap_lint.workloads.records import Pod, pod_record

_ANCESTOR = "trainer.kubeflow.org/trainjob-ancestor-step"
_AS_TEMPLATE = TemplateRule("pod", None, None, None, (), None, None, (), 1, None, False)
_LISTS_BY_NAME = ("volumes", "containers", "initContainers")


def override_nodes(data: dict[str, Any]) -> list[Any]:
    """The TrainJob's override entries: shaped like pod templates, they are not pods (the walk
    skips them)."""
    spec = as_dict(data.get("spec"))
    return [e for key in ("podTemplateOverrides", "podSpecOverrides", "runtimePatches")
            for e in as_list(spec.get(key))]


def runtime_ref(data: dict[str, Any]) -> tuple[str, str] | None:
    ref = as_dict(as_dict(data.get("spec")).get("runtimeRef"))
    name = ref.get("name")
    if not isinstance(name, str):
        return None
    kind = ref.get("kind") if isinstance(ref.get("kind"), str) else "ClusterTrainingRuntime"
    return str(kind), name


def runtime_of(resource: Resource, index: InputIndex) -> tuple[tuple[str, str], dict[str, Any] | None] | None:
    """The (kind, name) of the runtime a TrainJob names, and the runtime when the input holds
    it; None when it names none."""
    ref = runtime_ref(resource.data)
    if ref is None:
        return None
    return ref, index.training_runtime(ref[0], resource.namespace, ref[1])


def _by_name(items: list[Any], extra: list[Any]) -> list[Any]:
    """`items` with each named entry of `extra` replacing (mappings: merged into) the one of
    the same name, and the others added."""
    out = [copy.copy(i) for i in items]
    for entry in extra:
        if not isinstance(entry, dict):
            continue
        same = next((i for i, o in enumerate(out) if isinstance(o, dict) and o.get("name") == entry.get("name")), None)
        if same is None:
            out.append(entry)
        else:
            out[same] = _merge_container(out[same], entry)
    return out


def _merge_container(base: dict[str, Any], patch: dict[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in patch.items():
        if key in ("env", "volumeMounts") and isinstance(value, list):
            merged[key] = _by_name(as_list(base.get(key)), value) if key == "env" else \
                as_list(base.get(key)) + value
        else:
            merged[key] = value
    return merged


def _patch_spec(spec: dict[str, Any], patch: dict[str, Any]) -> dict[str, Any]:
    merged = dict(spec)
    for key, value in patch.items():
        if key in _LISTS_BY_NAME and isinstance(value, list):
            merged[key] = _by_name(as_list(spec.get(key)), value)
        elif key not in ("targetJobs", "metadata"):
            merged[key] = value
    return merged


def _overrides(data: dict[str, Any]) -> list[tuple[list[str], dict[str, Any], KeyPath]]:
    """(target job names, pod spec patch, the key path (below the resource) of the node a fix
    goes to) for each override."""
    spec = as_dict(data.get("spec"))
    found: list[tuple[list[str], dict[str, Any], KeyPath]] = []
    for key in ("podTemplateOverrides", "podSpecOverrides"):
        for number, entry in enumerate(as_list(spec.get(key))):
            if not isinstance(entry, dict):
                continue
            targets = [str(as_dict(t).get("name")) for t in as_list(entry.get("targetJobs"))]
            patch = as_dict(entry.get("spec")) if isinstance(entry.get("spec"), dict) else entry
            found.append((targets, patch, ("spec", key, number)))
    for number, entry in enumerate(as_list(spec.get("runtimePatches"))):
        jobs = as_list(as_dict(as_dict(as_dict(as_dict(entry).get("trainingRuntimeSpec")).get("template"))
                               .get("spec")).get("replicatedJobs"))
        for position, job in enumerate(jobs):
            pod_spec = as_dict(as_dict(as_dict(as_dict(as_dict(job).get("template")).get("spec"))
                                       .get("template")).get("spec"))
            if pod_spec:
                found.append(([str(as_dict(job).get("name"))], pod_spec,
                              ("spec", "runtimePatches", number, "trainingRuntimeSpec", "template", "spec",
                               "replicatedJobs", position)))
    return found


def _is_trainer_job(job: dict[str, Any], jobs: list[Any]) -> bool:
    labels = as_dict(as_dict(as_dict(job.get("template")).get("metadata")).get("labels"))
    if any(_ANCESTOR in as_dict(as_dict(as_dict(j).get("template")).get("metadata")).get("labels", {})
           for j in jobs if isinstance(j, dict)):
        return labels.get(_ANCESTOR) == "trainer"
    return job.get("name") == "node"


def merged_pods(resource: Resource, index: InputIndex) -> list[Pod] | None:
    """The pods of a TrainJob merged with its runtime; None when the input does not hold the
    runtime (or the TrainJob names none): the table reads the TrainJob alone."""
    found = runtime_of(resource, index)
    if found is None or found[1] is None:
        return None
    (runtime_kind, runtime_name), runtime = found[0], found[1]
    data = resource.data
    spec = as_dict(data.get("spec"))
    trainer = as_dict(spec.get("trainer"))
    runtime_spec = as_dict(runtime.get("spec"))
    jobs = as_list(as_dict(as_dict(runtime_spec.get("template")).get("spec")).get("replicatedJobs"))
    overrides = _overrides(data)
    nodes = trainer.get("numNodes", as_dict(runtime_spec.get("mlPolicy")).get("numNodes", 1))
    pods: list[Pod] = []
    for position, job in enumerate(jobs):
        if not isinstance(job, dict):
            continue
        name = str(job.get("name", position))
        job_template = as_dict(as_dict(job.get("template")).get("spec"))
        template = as_dict(job_template.get("template"))
        pod_spec = as_dict(template.get("spec"))
        if not pod_spec:
            continue
        anchor: KeyPath = ("spec", "trainer") if trainer else ("spec",)
        is_trainer = _is_trainer_job(job, jobs)
        if is_trainer:
            pod_spec = dict(pod_spec, containers=[_trainer_container(c, trainer) for c in as_list(pod_spec.get("containers"))])
        for targets, patch, node_at in overrides:
            if name in targets:
                pod_spec = _patch_spec(pod_spec, patch)
                anchor = node_at
        merged = {"metadata": template.get("metadata") or {}, "spec": pod_spec}
        replicas: int | None
        if is_trainer:
            replicas = as_count(nodes)
        else:
            counts = [as_count(job.get("replicas", 1)), as_count(job_template.get("parallelism", 1))]
            replicas = None if None in counts else counts[0] * counts[1]  # type: ignore[operator]
        pod = pod_record(_AS_TEMPLATE, name, f"runtime:{runtime_name}.{name}", merged,
                         Pinned((*resource.base, *anchor)), replicas=replicas,
                         found_by="table:trainer.kubeflow.org/TrainJob+runtime")
        if pod is not None:
            pods.append(dataclasses.replace(
                pod, label=f"{name} pods of TrainJob {resource.name} with {runtime_kind} {runtime_name}",
                runtime={"kind": runtime_kind, "name": runtime_name}))
    return pods


def _trainer_container(container: Any, trainer: dict[str, Any]) -> Any:
    """The runtime's `node` container with the trainer's image, command, args, env and
    resourcesPerNode; any other container as it is."""
    if not isinstance(container, dict) or container.get("name") != "node":
        return container
    return _merge_container(container, {
        k: v for k, v in (("image", trainer.get("image")), ("command", trainer.get("command")),
                          ("args", trainer.get("args")), ("env", trainer.get("env")),
                          ("resources", trainer.get("resourcesPerNode")))
        if v is not None})
