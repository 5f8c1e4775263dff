"""Resilience facts added to a finished workload view, for what JMESPath cannot express cleanly:
label-selector matching against the view's own pods, PodDisruptionBudget arithmetic, torchrun
flags inside shell scripts, and request/limit comparison per accelerator. Each fact is
described in docs/workload-view.md; policies decide what a fact means.

Kept apart from views.py (which builds the view) so that the view's core stays small; the
builder calls `add_resilience_facts` once per workload.
"""

from __future__ import annotations

import fnmatch
import math
import re
from typing import Any

from kubegap_lint.core.coerce import as_count, as_dict, as_list
from kubegap_lint.workloads.index import selector_matches

# torchrun flags accept both spellings (`--max-restarts`, `--max_restarts`) and `=` or a space.
_FLAG_RE = {
    name: re.compile(r"(?:^|\s)--" + pattern + r"(?:=|\s+)(\"[^\"]*\"|'[^']*'|[^\s;&|)]+)")
    for name, pattern in (
        ("nnodes", r"nnodes"),
        ("rdzv_backend", r"rdzv[-_]backend"),
        ("max_restarts", r"max[-_]restarts"),
    )
}
_TORCHRUN_LAUNCHERS = frozenset(("torchrun", "torch.distributed.run", "torch.distributed.launch"))
_ELASTIC_BACKENDS = frozenset(("c10d", "etcd", "etcd-v2"))
_ELASTIC_KINDS = frozenset(("ElasticJob",))
_UNRENDERED_RE = re.compile(r"\$\(?\{?[A-Za-z_]")


def _unquote(text: str) -> str:
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
        return text[1:-1]
    return text


# -- spreading ------------------------------------------------------------------------------

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
                   if isinstance(e, dict) and e.get("key") in labels]
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


# -- disruption budgets ---------------------------------------------------------------------

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


# -- elastic launch -------------------------------------------------------------------------

def torchrun_flags(text: str) -> dict[str, str | None]:
    """The last value of each torchrun flag we read from a command line; None when a flag is
    given an unrendered value ($N)."""
    found: dict[str, str | None] = {}
    for name, pattern in _FLAG_RE.items():
        matches = pattern.findall(text)
        if matches:
            value = _unquote(matches[-1])
            found[name] = None if _UNRENDERED_RE.search(value) else value
    return found


def _nodes_range(value: str | None) -> tuple[int | None, int | None]:
    if value is None:
        return None, None
    low, _, high = value.partition(":")
    return as_count(low), as_count(high or low)


def elastic_facts(view: dict[str, Any]) -> dict[str, Any] | None:
    """How the workload restarts and resizes itself when it is elastic: a PyTorchJob
    elasticPolicy, an ElasticJob, or a torchrun with `--nnodes MIN:MAX` or a c10d/etcd
    rendezvous. `max_restarts` is the effective worker-group restart budget (torchrun's flag
    wins over PET_MAX_RESTARTS, which wins over elasticPolicy.maxRestarts; 0 when none is set,
    torchrun's default; null when set to an unknown value). None when not elastic."""
    spec = as_dict(as_dict(view.get("resource")).get("spec"))
    policy = spec.get("elasticPolicy") if view.get("kind") == "PyTorchJob" else None
    source = "elasticPolicy" if isinstance(policy, dict) else None
    if view.get("kind") in _ELASTIC_KINDS:
        source = "kind"
    flags: dict[str, str | None] = {}
    env_restarts: Any = "unset"
    for pod in view.get("pods") or []:
        if not pod.get("has_gpu"):
            continue
        for container in pod.get("containers") or []:
            if _TORCHRUN_LAUNCHERS & set(container.get("launchers") or []):
                for name, value in torchrun_flags(container.get("command_line") or "").items():
                    flags.setdefault(name, value)
            env = container.get("env") or {}
            for flag, variable in (("nnodes", "PET_NNODES"), ("rdzv_backend", "PET_RDZV_BACKEND")):
                if variable in env:
                    flags.setdefault(flag, env[variable])
            if "PET_MAX_RESTARTS" in env and env_restarts == "unset":
                env_restarts = env["PET_MAX_RESTARTS"]
    min_nodes, max_nodes = _nodes_range(flags.get("nnodes"))
    ranged = isinstance(flags.get("nnodes"), str) and ":" in str(flags.get("nnodes"))
    if source is None and (ranged or flags.get("rdzv_backend") in _ELASTIC_BACKENDS):
        source = "torchrun"
    if source is None:
        return None
    policy = as_dict(policy)
    if source == "elasticPolicy" and not ranged:
        min_nodes = as_count(policy.get("minReplicas")) if "minReplicas" in policy else min_nodes
        max_nodes = as_count(policy.get("maxReplicas")) if "maxReplicas" in policy else max_nodes
    if "max_restarts" in flags:
        restarts: Any = flags["max_restarts"]
    elif env_restarts != "unset":
        restarts = env_restarts
    elif "maxRestarts" in policy:
        restarts = policy["maxRestarts"]
    else:
        restarts = 0
    return {
        "source": source,
        "min_nodes": min_nodes,
        "max_nodes": max_nodes,
        "max_restarts": as_count(restarts),
    }


# -- accelerator requests and limits --------------------------------------------------------

def _same_quantity(a: Any, b: Any) -> bool | None:
    """Equal as Kubernetes quantities; None when either is unrendered or unreadable."""
    from kubegap_lint.core.quantity import parse_quantity

    left, right = parse_quantity(a), parse_quantity(b)
    if left is None or right is None:
        return None
    return left == right


def accelerator_mismatches(raw: dict[str, Any], patterns: list[str]) -> list[dict[str, Any]]:
    """Accelerator resources a container requests without the same limit: `name`, `request`,
    `limit` (null when missing). Extended resources cannot be overcommitted, so the API server
    rejects both; an unrendered value on either side is not compared."""
    resources = as_dict(raw.get("resources"))
    requests = as_dict(resources.get("requests"))
    limits = as_dict(resources.get("limits"))
    found = []
    for name in sorted(requests):
        if not any(fnmatch.fnmatchcase(str(name), p) for p in patterns):
            continue
        if name not in limits:
            found.append({"name": name, "request": requests[name], "limit": None})
        elif _same_quantity(requests[name], limits[name]) is False:
            found.append({"name": name, "request": requests[name], "limit": limits[name]})
    return found


# -- restart policy -------------------------------------------------------------------------

_STEP_RE = re.compile(r"^([^\[\]]+)((?:\[\d+\])*)$")


def _follow(data: Any, dotted: str) -> Any:
    """Follow a view path such as `spec.replicatedJobs[0].template` into the resource."""
    node = data
    for step in dotted.split("."):
        match = _STEP_RE.match(step)
        if match is None or not isinstance(node, dict):
            return None
        node = node.get(match.group(1))
        for index in re.findall(r"\[(\d+)\]", match.group(2)):
            items = as_list(node)
            node = items[int(index)] if int(index) < len(items) else None
    return node


def restart_policy(resource: dict[str, Any], pod: dict[str, Any]) -> Any:
    """The pod's effective restartPolicy as written: a replica spec's own `restartPolicy`
    (Kubeflow kinds set it beside the template, and it wins), else the pod spec's; null when
    neither is set."""
    path = str(pod.get("path") or "")
    if path.endswith(".template"):
        entry = _follow(resource, path[: -len(".template")])
        if isinstance(entry, dict) and entry.get("restartPolicy") is not None:
            return entry["restartPolicy"]
    return as_dict(pod.get("spec")).get("restartPolicy")


# -- the hook -------------------------------------------------------------------------------

def add_resilience_facts(view: dict[str, Any], gpu_patterns: list[str]) -> None:
    """Add the facts above to a workload view in place (docs/workload-view.md)."""
    gpu_pods: int | None = 0
    for pod in view.get("pods") or []:
        pod["spread"] = spread_facts(as_dict(pod.get("spec")), as_dict(pod.get("labels")))
        pod["restart_policy"] = restart_policy(as_dict(view.get("resource")), pod)
        for container in (pod.get("containers") or []) + (pod.get("init_containers") or []):
            mismatches = accelerator_mismatches(as_dict(container.get("raw")), gpu_patterns)
            where = as_dict(container.get("key_paths")).get(".")
            for mismatch in mismatches:  # located at the request that has no equal limit
                mismatch["key_paths"] = {".": (*where, "resources", "requests", mismatch["name"])
                                         if isinstance(where, tuple) else None}
            container["accelerator_mismatches"] = mismatches
        if pod.get("has_gpu"):
            gpu_pods = None if gpu_pods is None or pod.get("replicas") is None else gpu_pods + pod["replicas"]
    view["gpu_pods"] = gpu_pods
    view["budgets"] = budget_facts(view.get("pods") or [])
    view["elastic"] = elastic_facts(view)
