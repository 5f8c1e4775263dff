"""Disruption budget facts of a workload: the PodDisruptionBudgets that select any of its pods,
and how many evictions each allows.
"""

from __future__ import annotations

import math
from typing import Any

from kubegap_lint.workloads.context import ViewContext
from kubegap_lint.workloads.facts.registry import fact


def _scaled(value: Any, total: int) -> int | None:
    """An int-or-percent of `total`, rounded up as the disruption controller does."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.endswith("%") and value[:-1].strip().isdigit():
        return math.ceil(int(value[:-1].strip()) * total / 100)
    return None


def disruptions_allowed(min_available: Any, max_unavailable: Any, pods: int | None) -> int | None:
    """How many of `pods` healthy pods the budget lets a drain evict; None when unknown."""
    if pods is None:
        return None
    if max_unavailable is not None:
        allowed = _scaled(max_unavailable, pods)
        return None if allowed is None else max(0, min(allowed, pods))
    if min_available is not None:
        desired = _scaled(min_available, pods)
        return None if desired is None else max(0, pods - desired)
    return None


def budget_facts(pods: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The PodDisruptionBudgets that select any pod of the workload (from each pod's `budgets`),
    with `pods`: how many of the workload's pods each selects (null when a count is unknown),
    `selects_gpu_pods`, and `disruptions_allowed` for that many healthy pods."""
    found: dict[tuple[Any, Any, Any], dict[str, Any]] = {}
    for pod in pods:
        for budget in pod.get("budgets") or []:
            key = (budget.get("name"), budget.get("path"), budget.get("line"))
            entry = found.setdefault(key, {**budget, "pods": 0, "selects_gpu_pods": False})
            if entry["pods"] is not None:
                entry["pods"] = None if pod.get("replicas") is None else entry["pods"] + pod["replicas"]
            entry["selects_gpu_pods"] = entry["selects_gpu_pods"] or bool(pod.get("has_gpu"))
    budgets = []
    for key in sorted(found, key=lambda k: (str(k[1]), k[2] or 0, str(k[0]))):
        entry = found[key]
        entry["disruptions_allowed"] = disruptions_allowed(
            entry.get("min_available"), entry.get("max_unavailable"), entry["pods"])
        budgets.append(entry)
    return budgets


@fact("budgets", "workload", "list[WorkloadBudget]", "the PodDisruptionBudgets (from the whole input) that select any pod of the workload")
def _budgets(view: dict[str, Any], context: ViewContext) -> list[dict[str, Any]]:
    return budget_facts(view.get("pods") or [])
