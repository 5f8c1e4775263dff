"""Lifecycle facts, cheap and always made (costlier facts read them): a pod's effective restart
policy, grace period and deadline; the workload's GPU pods and owner references.
"""

from __future__ import annotations

import re
from typing import Any

from kubegap_lint.core.coerce import as_dict, as_list
from kubegap_lint.workloads.context import ViewContext
from kubegap_lint.workloads.facts.registry import fact

_STEP_RE = re.compile(r"^([^\[\]]+)((?:\[\d+\])*)$")


_STEPS: dict[str, tuple[tuple[str, tuple[int, ...]] | None, ...]] = {}  # bounded: view paths repeat


def _steps(dotted: str) -> tuple[tuple[str, tuple[int, ...]] | None, ...]:
    """A view path's steps: (key, list indexes), or None for a step that is not one."""
    found = _STEPS.get(dotted)
    if found is None:
        steps = []
        for step in dotted.split("."):
            match = _STEP_RE.match(step)
            steps.append(None if match is None else
                         (match.group(1), tuple(int(i) for i in re.findall(r"\[(\d+)\]", match.group(2)))))
        found = tuple(steps)
        if len(dotted) <= 1024:
            if len(_STEPS) >= 1024:
                _STEPS.clear()
            _STEPS[dotted] = found
    return found


def follow(data: Any, dotted: str) -> Any:
    """Follow a view path such as `spec.replicatedJobs[0].template` into the resource."""
    node = data
    for step in _steps(dotted):
        if step is None or not isinstance(node, dict):
            return None
        node = node.get(step[0])
        for index in step[1]:
            items = as_list(node)
            node = items[index] if index < len(items) else None
    return node


def restart_policy(resource: dict[str, Any], pod: dict[str, Any]) -> Any:
    """The pod's effective restartPolicy as written: a replica spec's own `restartPolicy`
    (Kubeflow kinds set it beside the template, and it wins), else the pod spec's; null when
    neither is set."""
    path = str(pod.get("path") or "")
    if path.endswith(".template"):
        entry = follow(resource, path[: -len(".template")])
        if isinstance(entry, dict) and entry.get("restartPolicy") is not None:
            return entry["restartPolicy"]
    return as_dict(pod.get("spec")).get("restartPolicy")


@fact("restart_policy", "pod", "Any", "the effective `restartPolicy` as written: a Kubeflow replica spec's own field first, then the pod spec's; null when neither is set", costly=False)
def _restart_policy(pod: dict[str, Any], view: dict[str, Any], context: ViewContext) -> Any:
    return restart_policy(as_dict(view.get("resource")), pod)


@fact("grace_seconds", "pod", "Any", "the pod spec's `terminationGracePeriodSeconds` as written; null when unset", costly=False)
def _grace_seconds(pod: dict[str, Any], view: dict[str, Any], context: ViewContext) -> Any:
    return as_dict(pod.get("spec")).get("terminationGracePeriodSeconds")


@fact("active_deadline", "pod", "Any", "the pod spec's `activeDeadlineSeconds` as written; null when unset", costly=False)
def _active_deadline(pod: dict[str, Any], view: dict[str, Any], context: ViewContext) -> Any:
    return as_dict(pod.get("spec")).get("activeDeadlineSeconds")


@fact("gpu_pods", "workload", "int | None", "pods that request an accelerator, over all templates; null when a count is unknown. KG108, KG407 and KG502 read *multi-pod GPU training* as `gpu_pods > 1`, so a CPU launcher or Ray head beside one GPU pod does not count for them; KG401 and KG402 count every pod (`pods_total > 1`), since a job with a CPU launcher or head fails on either pod", costly=False)
def _gpu_pods(view: dict[str, Any], context: ViewContext) -> int | None:
    gpu_pods: int | None = 0
    for pod in view.get("pods") or []:
        if pod.get("has_gpu"):
            gpu_pods = None if gpu_pods is None or pod.get("replicas") is None else gpu_pods + pod["replicas"]
    return gpu_pods


@fact("owner_references", "workload", "Any", "the resource's `metadata.ownerReferences` (a list; empty when none)", costly=False)
def _owner_references(view: dict[str, Any], context: ViewContext) -> list[Any]:
    return as_list(as_dict(as_dict(view.get("resource")).get("metadata")).get("ownerReferences"))
