"""Scaling facts of a workload: the autoscalers in the input that name it, how far it scales
and where its floor is set, and a KServe predictor's model download.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Sequence
from typing import Any

from kubegap_lint.core.coerce import as_count, as_dict, as_list
from kubegap_lint.workloads.commandline import UNRENDERED_RE as _UNRENDERED_RE
from kubegap_lint.workloads.context import ViewContext
from kubegap_lint.workloads.facts.registry import fact


def _bound(value: Any, default: int | None) -> int | None:
    return default if value is None else as_count(value)


def scaling_facts(view: dict[str, Any]) -> dict[str, Any]:
    """How far the workload scales and where its floor is set: `max` (the highest of the
    replica count and every autoscaler's maximum; null when none is known) and `floors`, one per
    autoscaler: `source`, `min`, `max`, `node` (where a finding points). HPA minReplicas defaults
    to 1; a KEDA ScaledObject's unset bounds and a KServe predictor's unset maxReplicas are
    unknown; a KServe predictor's unset minReplicas is 1 (its documented default)."""
    floors: list[dict[str, Any]] = []
    resource = as_dict(view.get("resource"))
    spec = as_dict(resource.get("spec"))
    for scaler in view.get("autoscalers") or []:
        default_min = 1 if scaler["kind"] == "HorizontalPodAutoscaler" else None
        floors.append({
            "source": f"{scaler['kind']} {scaler['name']} ({scaler['path']}:{scaler['line']})",
            "min": _bound(scaler["min_replicas"], default_min),
            "min_set": scaler["min_replicas"] is not None,
            "max": _bound(scaler["max_replicas"], None),
            "node": resource.get("metadata") if isinstance(resource.get("metadata"), dict) else resource,
        })
    if view.get("kind") == "InferenceService":
        predictor = as_dict(spec.get("predictor"))
        if predictor:
            floors.append({"source": "the KServe predictor", "min": _bound(predictor.get("minReplicas"), 1),
                           "min_set": predictor.get("minReplicas") is not None,
                           "max": _bound(predictor.get("maxReplicas"), None), "node": predictor})
    if view.get("kind") == "RayService":
        cluster = as_dict(spec.get("rayClusterConfig"))
        if cluster.get("enableInTreeAutoscaling") is True:
            for position, group in enumerate(as_list(cluster.get("workerGroupSpecs"))):
                group = as_dict(group)
                pod = next((p for p in view.get("pods") or []
                            if p.get("path") == f"spec.rayClusterConfig.workerGroupSpecs[{position}].template"), None)
                if pod is None or not pod.get("has_gpu"):
                    continue
                floors.append({"source": f"Ray worker group {group.get('groupName')}",
                               "min": _bound(group.get("minReplicas"), None),
                               "min_set": group.get("minReplicas") is not None,
                               "max": _bound(group.get("maxReplicas"), None), "node": group})
    if view.get("kind") == "Service" and str(view.get("apiVersion") or "").startswith("serving.knative.dev/"):
        floors.extend(_knative_floor(spec))
    highest = view.get("replicas") if isinstance(view.get("replicas"), int) else None
    for floor in floors:
        if floor["max"] is not None:
            highest = floor["max"] if highest is None else max(highest, floor["max"])
    return {"max": highest, "floors": floors}


# Knative's scale bounds: annotations of the revision template, `min-scale` / `max-scale` (the
# older `minScale` / `maxScale` too). Unset, the floor is the cluster's (0 with scale to zero,
# else 1) and there is no ceiling: both unknown here.
_KNATIVE_MIN = ("autoscaling.knative.dev/min-scale", "autoscaling.knative.dev/minScale")
_KNATIVE_MAX = ("autoscaling.knative.dev/max-scale", "autoscaling.knative.dev/maxScale")


def _knative_floor(spec: dict[str, Any]) -> list[dict[str, Any]]:
    metadata = as_dict(as_dict(spec.get("template")).get("metadata"))
    annotations = as_dict(metadata.get("annotations"))
    low = next((annotations[k] for k in _KNATIVE_MIN if k in annotations), None)
    high = next((annotations[k] for k in _KNATIVE_MAX if k in annotations), None)
    if low is None and high is None:
        return []
    return [{"source": "the Knative revision's min-scale", "min": _bound(low, None),
             "min_set": low is not None, "max": _bound(high, None), "node": annotations}]


def kserve_predictor(view: dict[str, Any], gpu_patterns: Sequence[str],
                     model_cached: Callable[[str], bool] | None = None) -> dict[str, Any] | None:
    """A KServe InferenceService predictor: `uri` (its storageUri, on the predictor or its
    model), `downloads` (the storage initializer copies the model into the pod at every start:
    any known URI but `pvc://` and `oci://`, which mount instead, and one a LocalModelCache in
    the input keeps on the nodes), `gpu` (the predictor or its model asks for an accelerator)
    and `node`; `kind` the resource's. An LLMInferenceService's model likewise. None for other
    kinds."""
    spec = as_dict(as_dict(view.get("resource")).get("spec"))
    if view.get("kind") == "LLMInferenceService":
        return _llm_model(spec, gpu_patterns)
    if view.get("kind") != "InferenceService":
        return None
    predictor = as_dict(spec.get("predictor"))
    if not predictor:
        return None
    model = as_dict(predictor.get("model"))
    holder = next((h for h in (model, predictor) if isinstance(h.get("storageUri"), str)), None)
    uri = holder["storageUri"] if holder is not None else None
    downloads = isinstance(uri, str) and not uri.startswith(("pvc://", "oci://")) \
        and not _UNRENDERED_RE.search(uri) and not (model_cached is not None and model_cached(uri))
    containers = [model] + [as_dict(c) for c in as_list(predictor.get("containers"))]
    return {"kind": "InferenceService", "uri": uri, "downloads": downloads,
            "gpu": _asks_accelerator(containers, gpu_patterns), "node": holder if holder is not None else predictor}


def _llm_model(spec: dict[str, Any], gpu_patterns: Sequence[str]) -> dict[str, Any]:
    """An LLMInferenceService's `spec.model.uri`: KServe's controller (attachModelArtifacts,
    llmisvc v1alpha1 and v1alpha2) adds its storage initializer for `hf://` and `s3://` URIs,
    which downloads the model into every pod at start, unless `spec.storageInitializer.enabled`
    is false; `pvc://` mounts a claim and `oci://` a modelcar."""
    model = as_dict(spec.get("model"))
    uri = model.get("uri") if isinstance(model.get("uri"), str) else None
    disabled = as_dict(spec.get("storageInitializer")).get("enabled") is False
    downloads = uri is not None and uri.startswith(("hf://", "s3://")) and not disabled \
        and not _UNRENDERED_RE.search(uri)
    prefill = as_dict(spec.get("prefill"))
    pods = (spec.get("template"), spec.get("worker"), prefill.get("template"), prefill.get("worker"))
    containers = [as_dict(c) for pod in pods for c in as_list(as_dict(pod).get("containers"))]
    return {"kind": "LLMInferenceService", "uri": uri, "downloads": downloads,
            "gpu": _asks_accelerator(containers, gpu_patterns), "node": model or spec}


def _asks_accelerator(containers: list[dict[str, Any]], gpu_patterns: Sequence[str]) -> bool:
    return any(fnmatch.fnmatchcase(str(name), pattern)
               for c in containers
               for part in ("limits", "requests")
               for name in as_dict(as_dict(c.get("resources")).get(part))
               for pattern in gpu_patterns)


@fact("autoscalers", "workload", "Any", "the HorizontalPodAutoscalers and KEDA ScaledObjects in the input whose `scaleTargetRef` names this workload (kind and name; a ScaledObject's kind defaults to Deployment; the namespaces must agree when both say one): `kind`, `name`, `min_replicas`, `max_replicas` as written (null when unset), `path`, `line`. The lookup is in `kubegap_lint/workloads/index.py`, like the budgets'", costly=False)
def _autoscalers(view: dict[str, Any], context: ViewContext) -> list[dict[str, Any]]:
    return [{"kind": a.kind, "name": a.name, "min_replicas": a.min_replicas, "max_replicas": a.max_replicas,
             "path": a.path, "line": a.line}
            for a in context.index.autoscalers_for(view.get("namespace"), view["kind"], view.get("name"))]


@fact("scaling", "workload", "Any", "`max`: the highest of `replicas` and every known autoscaler maximum (null when none is known); `floors`: one entry per autoscaler, `source` (for messages), `min`, `min_set`, `max`, `node`. From `autoscalers` (an HPA's unset `minReplicas` is 1, its documented default; a ScaledObject's unset bounds are unknown), a KServe InferenceService predictor (`minReplicas`, 1 when unset; `maxReplicas`), each GPU worker group of a RayService under `enableInTreeAutoscaling` (`minReplicas`, `maxReplicas`) and a Knative Service's revision annotations (`autoscaling.knative.dev/min-scale`, `max-scale`; unset: unknown)")
def _scaling(view: dict[str, Any], context: ViewContext) -> dict[str, Any]:
    return scaling_facts(view)


@fact("kserve", "workload", "Any", "for an InferenceService predictor: `kind`, `uri` (the `storageUri` of the predictor or its `model`), `downloads` (the storage initializer copies it into every pod at start: any URI but `pvc://` and `oci://`, which mount, and one whose `sourceModelUri` a LocalModelCache in the input caches on the nodes), `gpu` (the predictor, its model or a container asks for an accelerator), `node`; for an LLMInferenceService the same of `spec.model.uri` (`downloads`: an `hf://` or `s3://` URI, unless `spec.storageInitializer.enabled` is false; `gpu`: a container of `template`, `worker` or `prefill` asks for one); null for other kinds")
def _kserve(view: dict[str, Any], context: ViewContext) -> dict[str, Any] | None:
    return kserve_predictor(view, context.gpu_patterns, context.index.model_cached)
