"""Which pods a workload has: `pods_of`, from its pod sources in turn.

A TrainJob whose runtime is in the input is its merged pods (trainjob.py); any other workload
is what its kind table entry reads (below, resources embedded in it included), and then every
other pod template the generic walk finds in it (walked.py).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

from kubegap_lint.core.coerce import as_dict, as_list
from kubegap_lint.core.keypaths import Where, sub
from kubegap_lint.input.read import Resource
from kubegap_lint.workloads.context import ViewContext
from kubegap_lint.workloads.kinds import KindRule, KindTable, TemplateRule, declared_replicas, get_path
from kubegap_lint.workloads.records import Pod, pod_record, role_instances, table_count
from kubegap_lint.workloads.trainjob import merged_pods, override_nodes
from kubegap_lint.workloads.walked import walked_pods


def pods_of(resource: Resource, kind_rule: KindRule, context: ViewContext) -> list[Pod]:
    """Every pod of the workload, in the order findings list them."""
    pods = None
    skip: list[Any] = []  # nodes shaped like pod templates that are none
    if kind_rule.merge == "trainer-runtime":
        skip = override_nodes(resource.data)
        pods = merged_pods(resource, context.index)
    if pods is None:
        pods = table_pods(resource.data, kind_rule, context.kind_table, "", 0, resource.base)
    return pods + walked_pods(resource, pods, skip)


def _templates(data: dict[str, Any], rule: TemplateRule,
               where: Where) -> Iterator[tuple[str, str, dict[str, Any], Where]]:
    """(role, view path, the entry that holds the pod and its counts, the entry's key path) of
    each entry `rule` reads; `where` is the key path of `data`."""
    if rule.each_key is not None:
        for key, entry in as_dict(get_path(data, rule.each_key)).items():
            if isinstance(entry, dict):
                yield str(key), ".".join(rule.each_key + (str(key),)), entry, sub(where, *rule.each_key, key)
    elif rule.each_item is not None:
        assert rule.role_key is not None
        for position, entry in enumerate(as_list(get_path(data, rule.each_item))):
            if isinstance(entry, dict):
                role = get_path(entry, rule.role_key)
                role_text = str(role) if role is not None else str(position)
                if rule.role:  # two templates per entry (kthena entry and worker)
                    role_text = f"{role_text} {rule.role}"
                yield role_text, f"{'.'.join(rule.each_item)}[{position}]", entry, sub(where, *rule.each_item, position)
    else:
        yield str(rule.role), "", data, where


def table_pods(data: dict[str, Any], kind_rule: KindRule, kind_table: KindTable | None, prefix: str,
               depth: int, where: Where) -> list[Pod]:
    """The pods `kind_rule` reads in `data` (a resource, or one embedded at view path `prefix`),
    whose key path is `where`."""
    pods: list[Pod] = []
    for rule in kind_rule.templates:
        if rule.resource is not None:
            pods.extend(_embedded_pods(data, rule, kind_table, prefix, depth, where))
            continue
        per_entry = rule.each_key is not None or rule.each_item is not None
        gpu_share = rule.gpus is not None and get_path(data, rule.gpus) is not None
        for role, base, entry, entry_where in _templates(data, rule, where):
            base = ".".join(p for p in (prefix, base) if p)
            replicas, placeholders = table_count(rule, entry if per_entry else data, data,
                                                 base if per_entry else prefix, prefix)
            pod = pod_record(rule, role, base, entry, entry_where, replicas=replicas, found_by=kind_rule.found_by,
                             placeholders=placeholders, gpu_share=gpu_share, root=data)
            if pod is not None and kind_rule.replicas_by_role:
                pod = dataclasses.replace(pod, instances=role_instances(rule, entry, data))
            if pod is not None:
                pods.append(pod)
    return pods


def _embedded_pods(data: dict[str, Any], rule: TemplateRule, kind_table: KindTable | None, prefix: str,
                   depth: int, where: Where) -> list[Pod]:
    """Pods of whole resources held inside this one (a Katib trial's PyTorchJob or Job; with
    `each_item`, each AppWrapper component's Job, PyTorchJob or Deployment), each read by that
    resource's own entry; paths keep the holder's prefix."""
    assert rule.resource is not None
    if kind_table is None or depth > 3:
        return []
    if rule.each_item is None:
        holders: list[tuple[Any, str, Where]] = [(data, "", where)]
    else:
        items = ".".join(rule.each_item)
        holders = [(entry, f"{items}[{n}]", sub(where, *rule.each_item, n))
                   for n, entry in enumerate(as_list(get_path(data, rule.each_item)))]
    pods: list[Pod] = []
    for holder, base, holder_where in holders:
        inner = get_path(holder, rule.resource)
        inner_rule = kind_table.lookup(inner.get("apiVersion"), inner.get("kind")) if isinstance(inner, dict) else None
        if inner_rule is None:
            continue  # not a resource the table knows: the walk finds its pod templates
        assert isinstance(inner, dict)
        path = ".".join(p for p in (prefix, base, ".".join(rule.resource)) if p)
        embedded = {"path": path, "kind": inner.get("kind"), "class": inner_rule.workload_class,
                    "replicas": declared_replicas(inner, inner_rule) if inner_rule.replicas else None}
        pods.extend(dataclasses.replace(pod, embedded=embedded)
                    for pod in table_pods(inner, inner_rule, kind_table, path, depth + 1,
                                          sub(holder_where, *rule.resource)))
    return pods
