"""The workload stage's entry point: `workload_view(resource, kind_rule, context)`, the view
that policies query.

One shape for every kind (docs/workload-view.md describes it), so one policy covers a
Deployment, a PyTorchJob and a JobSet alike. The pods come from pods.pods_of as records, become
dicts (podview.py), and the workload's own fields are summed up from them here; then the facts of
the registry (facts/). Views are plain dicts and lists; the raw pod specs and containers inside them
are the parsed objects themselves, and every view carries `key_paths` (core/keypaths.py), so a
policy's `at:` locates the node it names (engine/locate.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from kubegap_lint.core.coerce import as_count, as_dict, as_list
from kubegap_lint.input.read import Resource
from kubegap_lint.workloads.context import ViewContext
from kubegap_lint.workloads.facts import COSTLY, add_facts
from kubegap_lint.workloads.kinds import KindRule, get_path
from kubegap_lint.workloads.pods import pods_of
from kubegap_lint.workloads.podview import pod_view
from kubegap_lint.workloads.records import Pod
from kubegap_lint.workloads.shape import serving_replicas
from kubegap_lint.workloads.trainjob import runtime_of

if TYPE_CHECKING:  # the view's types cost nothing at run time (workloads/viewtypes.py)
    from kubegap_lint.workloads.viewtypes import WorkloadView

__all__ = ["COSTLY", "ViewContext", "WorkloadView", "workload_view"]

_DISTRIBUTED_ENV = ("MASTER_ADDR", "WORLD_SIZE")
_DISTRIBUTED_KINDS = frozenset(("PyTorchJob", "TrainJob", "ElasticJob", "HyperPodPyTorchJob"))


def _torch_env(env: dict[str, Any]) -> bool:
    """The pod sets a variable of torch.distributed (MASTER_ADDR, WORLD_SIZE, PET_*)."""
    if _DISTRIBUTED_ENV[0] in env or _DISTRIBUTED_ENV[1] in env:
        return True
    # Names are text (views: env entries' names, ConfigMap keys, command lines); one scan of
    # them joined finds a PET_ at a name's start, checked name by name only then.
    return "\0PET_" in "\0" + "\0".join(env) and any(name.startswith("PET_") for name in env)


def _summary(resource: Resource, rule: KindRule, context: ViewContext) -> dict[str, Any]:
    """The workload's scalar fields that do not depend on its pods (each pod's `workload`)."""
    runtime = runtime_missing = None
    found = runtime_of(resource, context.index) if rule.merge == "trainer-runtime" else None
    if found is not None:
        ref = {"kind": found[0][0], "name": found[0][1]}
        runtime, runtime_missing = (ref, None) if found[1] is not None else (None, ref)
    return {
        "kind": resource.kind,
        "apiVersion": resource.api_version,
        "name": resource.name,
        "namespace": resource.namespace,
        "class": rule.workload_class,
        "training": rule.workload_class == "training",
        "serving": rule.workload_class == "serving",
        "found_by": rule.found_by,
        "class_from": rule.class_from,
        "class_sign": rule.shape_sign,
        "runtime": runtime,
        "runtime_missing": runtime_missing,
    }


def _claim_templates(data: dict[str, Any], rule: KindRule) -> list[Any]:
    claim_templates = as_list(get_path(data, rule.claim_templates)) if rule.claim_templates else []
    if rule.claim_policies:
        for policy in as_list(get_path(data, rule.claim_policies)):
            claim_templates = claim_templates + as_list(as_dict(policy).get("templates"))
    return claim_templates


def _replicas(data: dict[str, Any], rule: KindRule, records: list[Pod], pods: list[dict[str, Any]],
              pods_total: int | None) -> int | None:
    """The workload's replica count: the kind's own paths, else its counted templates' pods
    (a serving kind classified by its shape: its largest GPU template's, shape.py)."""
    if rule.class_from == "shape" and rule.workload_class == "serving":
        return serving_replicas(data, pods)
    if rule.replicas:
        replicas: int | None = 1
        for path in rule.replicas:
            raw = get_path(data, path)
            value = 1 if raw is None else as_count(raw)
            replicas = None if value is None or replicas is None else replicas * value
        return replicas
    if any(t.counts_as_replicas for t in rule.templates):
        counted = [view["replicas"] for record, view in zip(records, pods, strict=True) if record.counted]
        return None if any(c is None for c in counted) else sum(cast(list[int], counted))
    return pods_total


def _totals(pods: list[dict[str, Any]]) -> tuple[int | None, int | None]:
    """Pods and accelerators over every template (Trainer's initializers finish first: not counted)."""
    pods_total: int | None = 0
    gpus_total: int | None = 0
    for pod in pods:
        if str(pod["role"]).endswith("initializer"):
            pass
        elif pod["replicas"] is None or pods_total is None:
            pods_total = None
        else:
            pods_total += pod["replicas"]
        if pod["has_gpu"]:
            if pod["replicas"] is None or pod["gpus"] is None or gpus_total is None:
                gpus_total = None
            else:
                gpus_total += pod["replicas"] * pod["gpus"]
    return pods_total, gpus_total


def _unrendered(records: list[Pod]) -> list[dict[str, Any]]:
    """Each count that is an unrendered placeholder, once per field and node (KG008)."""
    found: list[dict[str, Any]] = []
    for entry in (e for record in records for e in record.placeholders):
        if not any(e["field"] == entry["field"] and e["node"] is entry["node"] for e in found):
            found.append(entry)
    return found


def _classify(summary: dict[str, Any], pods: list[dict[str, Any]], workload_class: str) -> bool:
    """Every GPU pod only runs a diagnostic or idles: class diagnostic (the checkpoint and
    restart rules skip it); `training` and `serving` still say what the kind is."""
    leading = [p for p in pods if not p["follows"]]
    if leading and all(p["diagnostic"] for p in leading):
        for pod in pods:  # MPI workers that only run sshd do what the launcher runs
            pod["diagnostic"] = True
    gpu_pods = [p for p in pods if p["has_gpu"]]
    diagnostic = bool(gpu_pods) and all(p["diagnostic"] for p in gpu_pods)
    if diagnostic:
        summary["class"] = "diagnostic"
    for pod in pods:
        pod["class"] = "diagnostic" if pod["diagnostic"] else workload_class
    return diagnostic


def workload_view(resource: Resource, rule: KindRule, context: ViewContext) -> WorkloadView | None:
    """The view of a workload; None when it holds no pod."""
    records = pods_of(resource, rule, context)
    if not records:
        return None
    data = resource.data
    summary = _summary(resource, rule, context)
    claim_templates = _claim_templates(data, rule)
    claim_names = {str(as_dict(as_dict(c).get("metadata")).get("name")) for c in claim_templates}
    pods: list[dict[str, Any]] = []
    backends: set[str | None] = set()  # of every container of the GPU pods
    for record in records:
        pod, chosen = pod_view(context, record, resource.namespace, summary, claim_names)
        pods.append(cast("dict[str, Any]", pod))
        if pod["has_gpu"]:
            backends.update(chosen)
    pods_total, gpus_total = _totals(pods)
    has_gpu = any(p["has_gpu"] for p in pods)
    diagnostic = _classify(summary, pods, rule.workload_class)
    max_pod_gpus = max((p["gpus"] for p in pods if p["has_gpu"] and p["gpus"] is not None), default=0)
    unknown_gpus = any(p["has_gpu"] and p["gpus"] is None for p in pods)
    launchers = sorted({name for p in pods for name in p["launchers"]})
    pytorch = resource.kind in _DISTRIBUTED_KINDS or bool(launchers) or any(_torch_env(p["env"]) for p in pods)
    many = pods_total is None or pods_total > 1 or max_pod_gpus > 1 or unknown_gpus
    summary.update({
        "replicas": _replicas(data, rule, records, pods, pods_total),
        "pods_total": pods_total,
        "gpus_total": gpus_total if has_gpu else 0,
        "has_gpu": has_gpu,
        "nccl_gpu": any(p["nccl_gpu"] for p in pods),
        "multi_pod": None if pods_total is None else pods_total > 1,
        "distributed_pytorch": pytorch and many,
        "launchers": launchers,
        "diagnostic": diagnostic,
        "unrendered_counts": _unrendered(records),
        # An explicit `--backend gloo` on every GPU pod means PyTorch's NCCL watchdog and flight
        # recorder are not in play; any other choice (or none) leaves them in scope.
        "torch_backend": backends.pop() if len(backends) == 1 else None,
    })
    view = dict(summary)
    base = resource.base
    view.update({
        "labels": as_dict(resource.metadata.get("labels")),
        "annotations": as_dict(resource.metadata.get("annotations")),
        "pods": pods,
        "claim_templates": claim_templates,
        "resource": data,
        "key_paths": {".": base, "resource": base, "labels": (*base, "metadata", "labels"),
                      "annotations": (*base, "metadata", "annotations")},
    })
    add_facts(view, context)
    return cast("WorkloadView", view)
