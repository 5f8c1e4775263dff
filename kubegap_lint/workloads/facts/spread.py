"""Spread facts of a pod: the topology keys its pods are spread over, from constraints whose
selector may select the template's own pods.
"""

from __future__ import annotations

from typing import Any

from kubegap_lint.core.coerce import as_dict, as_list
from kubegap_lint.workloads.context import ViewContext
from kubegap_lint.workloads.facts.registry import fact
from kubegap_lint.workloads.index import selector_matches


def selector_may_select(selector: Any, labels: dict[str, Any]) -> bool:
    """Could this label selector select pods made from a template with these labels?

    Controllers add labels the template does not show (`pod-template-hash`,
    `leaderworkerset.sigs.k8s.io/name`, `ray.io/cluster`...), so a requirement on a key that the
    template lacks is given the benefit of the doubt; a requirement that contradicts a label the
    template does set is not. A missing selector selects nothing (Kubernetes' rule for spread
    constraints and affinity terms)."""
    if not isinstance(selector, dict):
        return False
    known = {k: v for k, v in as_dict(selector.get("matchLabels")).items() if k in labels}
    expressions = [e for e in as_list(selector.get("matchExpressions"))
                   if isinstance(e, dict) and isinstance(e.get("key"), str) and e["key"] in labels]
    return selector_matches({"matchLabels": known, "matchExpressions": expressions}, labels)


def spread_facts(spec: dict[str, Any], labels: dict[str, Any]) -> dict[str, list[str]]:
    """Topology keys over which the pods of this template are spread from one another:
    `hard` (topologySpreadConstraints with whenUnsatisfiable DoNotSchedule, its default, or
    required podAntiAffinity) and `soft` (ScheduleAnyway, preferred podAntiAffinity). Only
    constraints whose selector may select the template's own pods count."""
    hard: list[str] = []
    soft: list[str] = []
    for constraint in as_list(spec.get("topologySpreadConstraints")):
        if not isinstance(constraint, dict) or not isinstance(constraint.get("topologyKey"), str):
            continue
        selects = selector_may_select(constraint.get("labelSelector"), labels) or bool(
            as_list(constraint.get("matchLabelKeys")))
        if not selects:
            continue
        target = soft if constraint.get("whenUnsatisfiable") == "ScheduleAnyway" else hard
        target.append(constraint["topologyKey"])
    anti = as_dict(as_dict(spec.get("affinity")).get("podAntiAffinity"))
    for term in as_list(anti.get("requiredDuringSchedulingIgnoredDuringExecution")):
        if isinstance(term, dict) and isinstance(term.get("topologyKey"), str):
            if selector_may_select(term.get("labelSelector"), labels):
                hard.append(term["topologyKey"])
    for weighted in as_list(anti.get("preferredDuringSchedulingIgnoredDuringExecution")):
        term = as_dict(as_dict(weighted).get("podAffinityTerm"))
        if isinstance(term.get("topologyKey"), str) and selector_may_select(term.get("labelSelector"), labels):
            soft.append(term["topologyKey"])
    return {"hard": sorted(set(hard)), "soft": sorted(set(soft))}


@fact("spread", "pod", "Spread", "the topology keys this template's pods are spread over")
def _spread(pod: dict[str, Any], view: dict[str, Any], context: ViewContext) -> dict[str, list[str]]:
    return spread_facts(as_dict(pod.get("spec")), as_dict(pod.get("labels")))
