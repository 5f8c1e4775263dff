"""The class of a kind the workload table does not know, read from its shape where the shape
decides it; the table always wins (kinds.py asks here only for a kind it does not know).

A controller whose pods run to completion says so in its own fields: a Job's `completions`,
`backoffLimit` or `ttlSecondsAfterFinished`, a training operator's `*ReplicaSpecs` and
`runPolicy`, a CronJob's `schedule`, or a `restartPolicy` of `Never`, `OnFailure` or
`ExitCode` (a Deployment's pods must be `Always`). Such a kind is training (the catalog's batch
class). Without any of them, a `replicas` field means a controller that keeps that many copies
running: serving. With neither, the shape does not decide, and KG008 says which rules did not
judge the workload (engine/notes.py).
"""

from __future__ import annotations

import re
from typing import Any

from kubegap_lint.core.coerce import as_count, as_dict
from kubegap_lint.workloads.discover import is_template_spec

# Fields a controller of run-to-completion pods has and a long-running one does not (batch/v1
# Job and CronJob, JobSet, Kubeflow's training operators, Volcano, KubeRay's RayJob).
BATCH_FIELDS = frozenset((
    "completions", "completionMode", "backoffLimit", "backoffLimitPerIndex", "ttlSecondsAfterFinished",
    "activeDeadlineSeconds", "runPolicy", "successPolicy", "schedule",
))
# Kubeflow's training operators name their pod groups `<framework>ReplicaSpecs`.
BATCH_SUFFIX = "ReplicaSpecs"
# Pod restart policies of pods that finish (and the training operators' ExitCode).
BATCH_RESTART = frozenset(("Never", "OnFailure", "ExitCode"))
# Keys below which no controller field sits.
_SKIPPED = frozenset(("metadata", "status"))
_MAX_DEPTH = 40  # as discover.py: bounds the walk on hostile input


def _batch_restart(value: Any) -> bool:
    return isinstance(value, str) and value in BATCH_RESTART


def _batch_sign(name: str, value: Any, pod_spec: bool) -> bool:
    """The field says the pods run to completion. In an inline pod spec (a kind that writes its
    controller fields beside the pod's) `activeDeadlineSeconds` is the pod's own field."""
    if name == "restartPolicy":
        return _batch_restart(value)
    if name == "schedule":
        return isinstance(value, str)  # a cron line, not a scheduler's settings
    if name in BATCH_FIELDS:
        return not (pod_spec and name == "activeDeadlineSeconds")
    return name.endswith(BATCH_SUFFIX) and isinstance(value, dict)


def shape_class(data: Any) -> tuple[str, str] | None:
    """(`training` or `serving`, the field that decided it), or None when the shape does not
    decide. A pod spec is not entered: its own fields are read, as a kind may write its
    controller's fields beside an inline pod spec, but not its containers or volumes."""
    replicas: str | None = None
    stack: list[tuple[Any, str, int]] = [(as_dict(data).get("spec"), "spec", 0)]
    while stack:
        node, path, depth = stack.pop()
        if depth > _MAX_DEPTH:
            continue
        if isinstance(node, list):
            stack.extend((item, f"{path}[{i}]", depth + 1) for i, item in reversed(list(enumerate(node))))
            continue
        if not isinstance(node, dict):
            continue
        pod_spec = is_template_spec(node)
        children: list[tuple[Any, str, int]] = []
        for key, value in node.items():
            name = str(key)
            if _batch_sign(name, value, pod_spec):
                return "training", f"{path}.{name}" + (f": {value}" if name == "restartPolicy" else "")
            if name == "replicas" and replicas is None:
                replicas = f"{path}.replicas"
            if not pod_spec and name not in _SKIPPED and isinstance(value, (dict, list)):
                children.append((value, f"{path}.{name}", depth + 1))
        stack.extend(reversed(children))
    return ("serving", replicas) if replicas is not None else None


def serving_replicas(data: Any, pods: list[dict[str, Any]]) -> int | None:
    """The replicas of a serving workload classified by its shape: the most pods any one GPU
    template makes (any template when none has a GPU), each template's own count times the
    `replicas` of every mapping above the one holding it (a role of each copy: StormService-like
    `spec.replicas`, a Seldon predictor's `replicas` above its `componentSpecs`). Not the pods of
    all templates together: one prefill and one decode pod are not 2 replicas."""
    chosen = [p for p in pods if p.get("has_gpu")] or pods
    most = 0
    for pod in chosen:
        count = pod.get("replicas")
        if count is None:
            return None
        for holder in _above(data, str(pod.get("path") or "")):
            copies = 1 if holder.get("replicas") is None else as_count(holder.get("replicas"))
            if copies is None:
                return None
            count *= copies
        most = max(most, count)
    return most


_STEP = re.compile(r"([^.\[\]]+)|\[(\d+)\]")


def _above(data: Any, path: str) -> list[dict[str, Any]]:
    """The mappings on a template's view path (`spec.predictors[0].componentSpecs[0]`) above it,
    but its parent when that is a mapping: the walk counted the parent's `replicas` already
    (discover.py); a list between (`componentSpecs`) counts nothing."""
    node, above = data, []
    steps = [int(index) if index else key for key, index in _STEP.findall(path)]
    for step in steps[:-1]:
        if isinstance(step, int):
            node = node[step] if isinstance(node, list) and step < len(node) else None
        else:
            node = node.get(step) if isinstance(node, dict) else None
        above.append(node)
    if above and isinstance(above[-1], dict):
        above.pop()
    return [n for n in above if isinstance(n, dict)]
