"""The pods of a workload as plain records: what the manifest holds and where, before any fact.

Every pod source (the kind table's templates and the resources embedded in them: pods.py; the
generic walk: walked.py; a TrainJob merged with its runtime: trainjob.py) returns `Pod`s made by
`pod_record`, and the view (podview.py, views.py) is built from them. Each record carries its
raw node and its key path (core/keypaths.py), so a policy's `at:` can point at it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kubegap_lint.core.coerce import as_count, as_dict, as_list
from kubegap_lint.core.keypaths import Where, sub
from kubegap_lint.workloads.dynamo import DYNAMO_COMPONENT, MAIN_CONTAINER, component_spec
from kubegap_lint.workloads.kinds import TemplateRule, get_path
from kubegap_lint.workloads.kuberay import KUBERAY, ray_pod_spec
from kubegap_lint.workloads.placeholders import is_placeholder


@dataclass(frozen=True, slots=True, kw_only=True)
class Container:
    raw: dict[str, Any]  # as the pod spec holds it (a made-up copy for a lone container or a model)
    index: int  # its position in `containers` or `initContainers`
    init: bool  # an init container (a native sidecar too: it sits with the main containers)
    where: Where  # its key path


@dataclass(frozen=True, slots=True, kw_only=True)
class Pod:
    role: str
    path: str  # view path of the template (`spec.pytorchReplicaSpecs.Worker.template`)
    node: Any  # the template, inline pod spec or lone container the pod stands for
    spec: dict[str, Any]  # the pod spec (made up around a lone container, completed by a model)
    metadata: dict[str, Any]
    where: Where  # key path of `node`
    spec_where: Where | None  # None: the spec is made up around a lone container
    metadata_where: Where | None
    replicas: int | None  # pods made from it; None when unknown
    containers: tuple[Container, ...]  # main containers, then native sidecars
    init_containers: tuple[Container, ...]
    found_by: str  # the table entry that read it, or `walk`
    partial: bool = False  # the spec is completed elsewhere (a TrainJob without its runtime)
    gpu_share: bool = False  # the kind gives its pods a share of spec.gpus (rule.gpus)
    counted: bool = False  # its pods count as the workload's replicas (the template's counts_as_replicas)
    embedded: dict[str, Any] | None = None  # the inner resource it was read from (Katib)
    label: str | None = None  # for messages; None: from the role
    runtime: dict[str, Any] | None = None  # a merged TrainJob pod's runtime
    placeholders: tuple[dict[str, Any], ...] = ()  # counts that are unrendered placeholders (KG008)
    instances: int | None = None  # replicas of its role alone, before any group size (replicas_by_role)


def _containers(spec: dict[str, Any], spec_where: Where | None, model_where: Where | None,
                lone_where: Where | None) -> tuple[tuple[Container, ...], tuple[Container, ...]]:
    """The main containers (native sidecars after them: they run for the pod's whole life) and
    the init containers, each with its key path."""
    def at(key: str, number: int) -> Where:
        if lone_where is not None:
            return lone_where
        assert spec_where is not None
        if key == "containers" and model_where is not None:  # the model stands first
            return model_where if number == 0 else sub(spec_where, key, number - 1)
        return sub(spec_where, key, number)

    main = [Container(raw=c, index=i, init=False, where=at("containers", i))
            for i, c in enumerate(as_list(spec.get("containers"))) if isinstance(c, dict)]
    init: list[Container] = []
    for i, c in enumerate(as_list(spec.get("initContainers"))):
        if isinstance(c, dict):
            record = Container(raw=c, index=i, init=True, where=at("initContainers", i))
            (main if c.get("restartPolicy") == "Always" else init).append(record)
    return tuple(main), tuple(init)


def _model_spec(spec: dict[str, Any], rule: TemplateRule) -> dict[str, Any] | None:
    """KServe's predictor.model: one container-like mapping beside the pod spec fields, the
    predictor's main container before any others written there; the spec completed with it."""
    model = get_path(spec, rule.model) if rule.model is not None else None
    if not isinstance(model, dict):
        return None
    synthetic = dict(model)
    synthetic.setdefault("name", MAIN_CONTAINER if rule.completion == DYNAMO_COMPONENT else "kserve-container")
    return dict(spec, containers=[synthetic] + list(as_list(spec.get("containers"))))


def _without_resources(spec: dict[str, Any]) -> dict[str, Any]:
    """The spec with its first container's limits and requests cleared, as the MPI operator
    (v1alpha1) makes its launcher pod from the workers' template."""
    containers = list(as_list(spec.get("containers")))
    if containers and isinstance(containers[0], dict):
        containers[0] = {k: v for k, v in containers[0].items() if k != "resources"}
    return dict(spec, containers=containers)


def pod_record(rule: TemplateRule, role: str, base: str, holder: dict[str, Any], where: Where, *,
               replicas: int | None, found_by: str, placeholders: tuple[dict[str, Any], ...] = (),
               gpu_share: bool = False, root: dict[str, Any] | None = None) -> Pod | None:
    """The pod `rule` reads in `holder` (whose key path is `where`), in the resource `root`;
    None when it holds none."""
    metadata: dict[str, Any] = {}
    metadata_where = spec_where = model_where = lone_where = None
    partial = rule.partial
    if rule.template is not None:
        node = get_path(holder, rule.template)
        spec = node.get("spec") if isinstance(node, dict) else None
        if not isinstance(spec, dict):
            return None
        metadata = as_dict(node.get("metadata"))
        if rule.strip_resources:
            spec = _without_resources(spec)
        node_where = sub(where, *rule.template)
        spec_where, metadata_where = sub(node_where, "spec"), sub(node_where, "metadata")
        rel = rule.template
    elif rule.spec is not None:
        node = spec = get_path(holder, rule.spec)
        if not isinstance(spec, dict):
            return None
        if rule.spec == ("spec",):
            metadata, metadata_where = as_dict(holder.get("metadata")), sub(where, "metadata")
        elif rule.metadata is not None:
            metadata, metadata_where = as_dict(get_path(holder, rule.metadata)), sub(where, *rule.metadata)
        node_where = spec_where = sub(where, *rule.spec)
        completed = _model_spec(spec, rule)
        if completed is not None:
            assert rule.model is not None
            model_where, spec = sub(spec_where, *rule.model), completed
        rel = rule.spec
    else:
        assert rule.container is not None
        node = get_path(holder, rule.container)
        if not isinstance(node, dict):
            return None
        synthetic = dict(node)
        synthetic.setdefault("name", role)
        if "resources" not in synthetic and isinstance(node.get("resourcesPerNode"), dict):
            synthetic["resources"] = node["resourcesPerNode"]
        spec, partial = {"containers": [synthetic]}, True
        node_where = lone_where = sub(where, *rule.container)
        rel = rule.container
    if rule.completion == DYNAMO_COMPONENT:
        spec = component_spec(spec, holder, main_first=model_where is not None, graph=root)
    elif rule.completion == KUBERAY and rule.template is not None:
        spec = ray_pod_spec(spec, as_dict(get_path(holder, rule.template[:-1])) if len(rule.template) > 1 else holder)
    containers, init_containers = _containers(spec, spec_where, model_where, lone_where)
    return Pod(role=role, path=".".join(p for p in (base, ".".join(rel)) if p), node=node, spec=spec,
               metadata=metadata, where=node_where, spec_where=spec_where, metadata_where=metadata_where,
               replicas=replicas, containers=containers, init_containers=init_containers, found_by=found_by,
               partial=partial, gpu_share=gpu_share, counted=rule.counts_as_replicas,
               placeholders=placeholders)


def role_instances(rule: TemplateRule, entry: dict[str, Any], root: dict[str, Any]) -> int | None:
    """The replicas of one role: its entry's first count times the group counts above it
    (root_replicas), a multi-node group's size not multiplied in; None when one is not a number."""
    raw = get_path(entry, rule.replicas[0]) if rule.replicas else None
    total = rule.default_replicas if raw is None else as_count(raw)
    for path in rule.root_replicas:
        above = get_path(root, path)
        count = 1 if above is None else as_count(above)
        total = None if total is None or count is None else total * count
    return total


def table_count(rule: TemplateRule, source: dict[str, Any], root: dict[str, Any],
                base: str, root_base: str = "") -> tuple[int | None, tuple[dict[str, Any], ...]]:
    """The pods a table template makes (its counts multiplied; None when one is unknown), and
    the counts that are unrendered placeholders (`field` is a view path below `base`, unless
    read from `root`, the resource, whose own view path is `root_base`: "" at the top, the
    holder's path for a resource embedded in another)."""
    placeholders: list[dict[str, Any]] = []

    def count(holder: dict[str, Any], path: tuple[str, ...], default: int | None) -> int | None:
        raw = get_path(holder, path)
        value = default if raw is None else as_count(raw)
        if value is None and is_placeholder(raw):
            parent = get_path(holder, path[:-1]) if len(path) > 1 else holder
            prefix = root_base if holder is root else base
            placeholders.append({"field": ".".join(p for p in (prefix, ".".join(path)) if p),
                                 "value": str(raw), "node": parent})
        return value

    # No count path and no default: the manifest does not say how many (an Argo template)
    total: int | None = None if not rule.replicas and rule.default_replicas is None else 1
    for path in rule.replicas:
        value = count(source, path, rule.default_replicas)
        total = None if value is None or total is None else total * value
    for path in rule.root_replicas:
        value = count(root, path, 1)
        total = None if value is None or total is None else total * value
    if rule.less_one_when is not None and total is not None and get_path(root, rule.less_one_when) is not None:
        groups = None
        if rule.replicas:
            first = get_path(source, rule.replicas[0])
            groups = rule.default_replicas if first is None else as_count(first)
        total = None if groups is None else total - groups
    return total, tuple(placeholders)
