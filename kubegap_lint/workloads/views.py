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

from kubegap_lint.core.coerce import as_dict, as_list
from kubegap_lint.input.read import Resource
from kubegap_lint.workloads.context import ViewContext
from kubegap_lint.workloads.facts import COSTLY, add_facts
from kubegap_lint.workloads.kinds import KindRule, declared_replicas, get_path
from kubegap_lint.workloads.pods import pods_of
from kubegap_lint.workloads.podview import pod_view
from kubegap_lint.workloads.records import Pod
from kubegap_lint.workloads.shape import serving_replicas
from kubegap_lint.workloads.trainjob import runtime_of

if TYPE_CHECKING:  # the view's types cost nothing at run time (workloads/viewtypes.py)
    from kubegap_lint.workloads.viewtypes import WorkloadView

__all__ = ["COSTLY", "ViewContext", "WorkloadView", "workload_view"]

_DISTRIBUTED_ENV = ("MASTER_ADDR", "WORLD_SIZE")
_DISTRIBUTED_KINDS = frozenset(("PyTorchJob", "ElasticJob", "HyperPodPyTorchJob"))
# A Kubeflow Trainer runtime whose mlPolicy names `torch`: its torch plugin gives the trainer
# containers torchrun's PET_* variables (research/env-vars.md), whatever their command says.
# A TrainJob is what its runtime is (Trainer runs MPI, Flux, JAX too); without the runtime in
# the input, only its own command and env can tell.
_RUNTIME_KINDS = frozenset(("TrainingRuntime", "ClusterTrainingRuntime"))


def _torch_policy(resource: Resource, rule: KindRule, context: ViewContext) -> bool:
    """A Trainer runtime, or a TrainJob's runtime in the input, whose mlPolicy names torch."""
    if resource.kind in _RUNTIME_KINDS:
        runtime: dict[str, Any] | None = resource.data
    else:
        found = runtime_of(resource, context.index) if rule.merge == "trainer-runtime" else None
        runtime = found[1] if found is not None else None
    ml_policy = as_dict(as_dict(as_dict(runtime).get("spec")).get("mlPolicy"))
    return isinstance(ml_policy.get("torch"), dict)


def _torch_env(env: dict[str, Any]) -> bool:
    """The pod sets a variable of torch.distributed (MASTER_ADDR, WORLD_SIZE, PET_*)."""
    if _DISTRIBUTED_ENV[0] in env or _DISTRIBUTED_ENV[1] in env:
        return True
    # Names are text (views: env entries' names, ConfigMap keys, command lines); one scan of
    # them joined finds a PET_ at a name's start, checked name by name only then.
    return "\0PET_" in "\0" + "\0".join(env) and any(name.startswith("PET_") for name in env)


def workload_class(rule: KindRule, records: list[Pod]) -> str:
    """The kind's class; for a kind that only holds whole resources (an AppWrapper's
    components, a Katib trial), theirs when they agree: a wrapped Deployment serves, a
    wrapped PyTorchJob trains. Mixed classes keep the kind's."""
    if not rule.templates or any(t.resource is None for t in rule.templates):
        return rule.workload_class
    found = {str(r.embedded["class"]) for r in records if r.embedded is not None}
    return found.pop() if len(found) == 1 else rule.workload_class


def _summary(resource: Resource, rule: KindRule, context: ViewContext, kind_class: str) -> dict[str, Any]:
    """The workload's scalar fields that do not depend on its pods (each pod's `workload`)."""
    runtime = runtime_missing = None
    found = runtime_of(resource, context.index) if rule.merge == "trainer-runtime" else None
    if found is not None:
        ref = {"kind": found[0][0], "name": found[0][1]}
        if found[1] is None:
            runtime_missing = ref
        else:  # the runtime's restart budget is the TrainJob's (KG401)
            restarts = get_path(found[1], ("spec", "template", "spec", "failurePolicy", "maxRestarts"))
            runtime = {**ref, "max_restarts": restarts}
    return {
        "kind": resource.kind,
        "apiVersion": resource.api_version,
        "name": resource.name,
        "namespace": resource.namespace,
        "class": kind_class,
        "training": kind_class == "training",
        "serving": kind_class == "serving",
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
    (a serving kind classified by its shape: its largest GPU template's, shape.py); for a kind
    that only holds whole resources, the sum of theirs (an AppWrapper's Deployment)."""
    if rule.class_from == "shape" and rule.workload_class == "serving":
        return serving_replicas(data, pods)
    if rule.replicas:
        return declared_replicas(data, rule)
    if rule.replicas_by_role:  # roles that scale apart: the most replicas of one (GPU) role
        table = [(record, view) for record, view in zip(records, pods, strict=True) if record.found_by == rule.found_by]
        chosen = [record.instances for record, view in table if view["has_gpu"]] or [r.instances for r, _ in table]
        return None if any(c is None for c in chosen) else max(cast(list[int], chosen), default=pods_total)
    if any(t.counts_as_replicas for t in rule.templates):
        counted = [view["replicas"] for record, view in zip(records, pods, strict=True) if record.counted]
        return None if any(c is None for c in counted) else sum(cast(list[int], counted))
    if rule.templates and all(t.resource is not None for t in rule.templates):
        held = {str(r.embedded["path"]): r.embedded.get("replicas") for r in records if r.embedded is not None}
        if held and all(isinstance(c, int) for c in held.values()):
            return sum(cast(list[int], list(held.values())))
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


def _operator_follower(summary: dict[str, Any], pod: dict[str, Any]) -> bool:
    """An MPIJob worker that sets neither command nor args: the MPI operator gives it one that
    only waits for the launcher (v2: `/usr/sbin/sshd -De`; v1: `sleep 365d`, kubeflow/mpi-operator
    and kubeflow/training-operator), so it runs what the launcher runs."""
    if summary["kind"] != "MPIJob" or str(pod["role"]).lower() != "worker" or not pod["containers"]:
        return False
    return not any(c["raw"].get("command") or c["raw"].get("args") for c in pod["containers"])


def _classify(summary: dict[str, Any], pods: list[dict[str, Any]], records: list[Pod], kind_class: str) -> bool:
    """Every GPU pod only runs a diagnostic or idles: class diagnostic (the checkpoint and
    restart rules skip it); `training` and `serving` still say what the kind is."""
    for pod in pods:
        if not pod["follows"] and _operator_follower(summary, pod):
            pod["follows"] = True
    leading = [p for p in pods if not p["follows"]]
    if leading and all(p["diagnostic"] for p in leading):
        for pod in pods:  # MPI workers that only run sshd do what the launcher runs
            pod["diagnostic"] = True
    gpu_pods = [p for p in pods if p["has_gpu"]]
    diagnostic = bool(gpu_pods) and all(p["diagnostic"] for p in gpu_pods)
    if diagnostic:
        summary["class"] = "diagnostic"
    for pod, record in zip(pods, records, strict=True):  # an embedded resource's pods: its class
        own = str(record.embedded["class"]) if record.embedded is not None else kind_class
        pod["class"] = "diagnostic" if pod["diagnostic"] else own
    return diagnostic


def workload_view(resource: Resource, rule: KindRule, context: ViewContext) -> WorkloadView | None:
    """The view of a workload; None when it holds no pod."""
    records = pods_of(resource, rule, context)
    if not records:
        return None
    data = resource.data
    kind_class = workload_class(rule, records)
    summary = _summary(resource, rule, context, kind_class)
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
    diagnostic = _classify(summary, pods, records, kind_class)
    max_pod_gpus = max((p["gpus"] for p in pods if p["has_gpu"] and p["gpus"] is not None), default=0)
    unknown_gpus = any(p["has_gpu"] and p["gpus"] is None for p in pods)
    launchers = sorted({name for p in pods for name in p["launchers"]})
    pytorch = resource.kind in _DISTRIBUTED_KINDS or _torch_policy(resource, rule, context) or bool(launchers) \
        or any(_torch_env(p["env"]) for p in pods)
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
