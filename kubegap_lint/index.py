"""Cross-resource facts that JMESPath cannot join: which PodDisruptionBudgets select a pod,
which PersistentVolumeClaims, ConfigMaps and DRA claims exist. Built from the whole input of
a run (all files together) before any policy is evaluated."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kubegap_lint.read import Resource

MAX_ENV_VALUE_CHARS = 1024


@dataclass(frozen=True)
class DisruptionBudget:
    name: str | None
    namespace: str | None
    selector: dict[str, Any] | None
    min_available: Any
    max_unavailable: Any
    path: str
    line: int


@dataclass
class InputIndex:
    budgets: list[DisruptionBudget] = field(default_factory=list)
    claims: set[tuple[str | None, str]] = field(default_factory=set)  # PVCs: (namespace, name)
    config_maps: dict[tuple[str | None, str], dict[str, str | None]] = field(default_factory=dict)
    # DRA: (namespace, name) -> device class names of a ResourceClaim(Template), with counts
    device_claims: dict[tuple[str, str | None, str], list[tuple[str, Any]]] = field(default_factory=dict)
    # Budgets by one of their matchLabels pairs, built at a lookup when budgets were added since.
    _budget_buckets: dict[tuple[Any, str], list[int]] = field(default_factory=dict, repr=False)
    _unbucketed: list[int] = field(default_factory=list, repr=False)
    _bucketed_count: int = field(default=0, repr=False)
    # (kind, name) -> the first (namespace, name) key met: a workload without a namespace
    # finds a PVC, ConfigMap or DRA claim by name without a scan of every one.
    _first_by_name: dict[tuple[str, str], tuple[Any, ...]] = field(default_factory=dict, repr=False)

    def add(self, resource: Resource) -> None:
        kind = resource.kind
        data = resource.data
        spec = data.get("spec") if isinstance(data.get("spec"), dict) else {}
        name = resource.name
        if name is None:
            return
        namespace = resource.namespace
        if kind == "PodDisruptionBudget":
            selector = spec.get("selector")
            if selector == {} and resource.api_version == "policy/v1beta1":
                selector = None  # policy/v1beta1: an empty selector selects no pods (v1: all)
            self.budgets.append(
                DisruptionBudget(
                    name, namespace, selector if isinstance(selector, dict) else None,
                    spec.get("minAvailable"), spec.get("maxUnavailable"),
                    resource.path, resource.start.line,
                )
            )
        elif kind == "PersistentVolumeClaim":
            self.claims.add((namespace, name))
            self._first_by_name.setdefault((kind, name), (namespace, name))
        elif kind == "ConfigMap":
            values = data.get("data")
            if isinstance(values, dict):
                # Only what `envFrom` can make of it: a value too long for any setting a policy
                # reads (a script, a config file) is kept as "set, value unknown", so a large
                # ConfigMap costs no memory past its document.
                self.config_maps[(namespace, name)] = {
                    str(k): (v if len(v) <= MAX_ENV_VALUE_CHARS else None)
                    for k, v in values.items() if isinstance(v, str)
                }
                self._first_by_name.setdefault((kind, name), (namespace, name))
        elif kind in ("ResourceClaimTemplate", "ResourceClaim"):
            claim_spec = spec.get("spec", {}) if kind == "ResourceClaimTemplate" else spec
            self.device_claims[(kind, namespace, name)] = _device_requests(claim_spec)
            self._first_by_name.setdefault((kind, name), (kind, namespace, name))

    def merge(self, part: InputIndex) -> None:
        """Add the index of a later part of the input, as adding its resources one by one would."""
        self.budgets.extend(part.budgets)
        self.claims.update(part.claims)
        self.config_maps.update(part.config_maps)
        self.device_claims.update(part.device_claims)
        for key, first in part._first_by_name.items():
            self._first_by_name.setdefault(key, first)

    def budgets_for(self, namespace: str | None, labels: dict[str, Any]) -> list[DisruptionBudget]:
        """The budgets that select pods with these labels, in input order. Budgets are bucketed
        by a matchLabels pair, so a workload is compared with the few that could select it, not
        with every budget of the input (which made a large stream quadratic)."""
        if self._bucketed_count != len(self.budgets):
            self._bucket_budgets()
        candidates = list(self._unbucketed)
        for key, value in labels.items():
            candidates += self._budget_buckets.get((key, str(value)), ())
        found = []
        for number in sorted(set(candidates)):
            budget = self.budgets[number]
            if budget.namespace is not None and namespace is not None and budget.namespace != namespace:
                continue
            if selector_matches(budget.selector, labels):
                found.append(budget)
        return found

    def _bucket_budgets(self) -> None:
        self._budget_buckets = {}
        self._unbucketed = []
        self._bucketed_count = len(self.budgets)
        for number, budget in enumerate(self.budgets):
            if budget.selector is None:
                continue  # selects nothing
            match_labels = budget.selector.get("matchLabels")
            if isinstance(match_labels, dict) and match_labels:
                # Every pair must match: a pod that lacks the first one cannot be selected.
                key, value = next(iter(match_labels.items()))
                self._budget_buckets.setdefault((key, str(value)), []).append(number)
            else:
                self._unbucketed.append(number)

    def config_map(self, namespace: str | None, name: str) -> dict[str, str | None] | None:
        found = self.config_maps.get((namespace, name))
        if found is None and namespace is None and ("ConfigMap", name) in self._first_by_name:
            found = self.config_maps.get(self._first_by_name[("ConfigMap", name)])
        if found is None:
            found = self.config_maps.get((None, name))
        return found

    def claim_exists(self, namespace: str | None, name: str) -> bool:
        if (namespace, name) in self.claims or (None, name) in self.claims:
            return True
        return namespace is None and ("PersistentVolumeClaim", name) in self._first_by_name

    def device_claim(self, kind: str, namespace: str | None, name: str) -> list[tuple[str, Any]] | None:
        found = self.device_claims.get((kind, namespace, name))
        if found is None:
            found = self.device_claims.get((kind, None, name))
        if found is None and namespace is None and (kind, name) in self._first_by_name:
            found = self.device_claims.get(self._first_by_name[(kind, name)])
        return found


def _device_requests(claim_spec: Any) -> list[tuple[str, Any]]:
    """(deviceClassName, count) for each request of a DRA claim spec (v1beta1 and v1 shapes)."""
    found: list[tuple[str, Any]] = []
    devices = claim_spec.get("devices") if isinstance(claim_spec, dict) else None
    requests = devices.get("requests") if isinstance(devices, dict) else None
    for request in requests if isinstance(requests, list) else []:
        if not isinstance(request, dict):
            continue
        exact = request.get("exactly") if isinstance(request.get("exactly"), dict) else request
        device_class = exact.get("deviceClassName")
        if isinstance(device_class, str):
            count = exact.get("count", 1) if exact.get("allocationMode", "ExactCount") == "ExactCount" else None
            found.append((device_class, count))
    return found


def selector_matches(selector: dict[str, Any] | None, labels: dict[str, Any]) -> bool:
    """Kubernetes label-selector semantics; an empty selector selects everything, a null none."""
    if selector is None:
        return False
    match_labels = selector.get("matchLabels") or {}
    if not isinstance(match_labels, dict):
        return False
    for key, value in match_labels.items():
        if str(labels.get(key)) != str(value) or key not in labels:
            return False
    expressions = selector.get("matchExpressions") or []
    for expression in expressions if isinstance(expressions, list) else []:
        if not isinstance(expression, dict):
            return False
        key = expression.get("key")
        operator = expression.get("operator")
        values = [str(v) for v in expression.get("values") or []]
        present = key in labels
        if operator == "In" and not (present and str(labels[key]) in values):
            return False
        if operator == "NotIn" and present and str(labels[key]) in values:
            return False
        if operator == "Exists" and not present:
            return False
        if operator == "DoesNotExist" and present:
            return False
    return True
