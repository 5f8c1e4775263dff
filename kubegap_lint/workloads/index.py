"""Cross-resource facts that JMESPath cannot join: which PodDisruptionBudgets select a pod,
which PersistentVolumeClaims, ConfigMaps and DRA claims exist. Built from the whole input of
a run (all files together) before any policy is evaluated. Lookups are by key, so linting
stays linear in the input; the facts live in facts.py's stores."""

from __future__ import annotations

from typing import Any

from kubegap_lint.core.record import record as value_record
from kubegap_lint.input.read import Resource
from kubegap_lint.store.facts import DiskFacts, MemoryFacts

MAX_ENV_VALUE_CHARS = 1024


@value_record(frozen=True)
class DisruptionBudget:
    name: str | None
    namespace: str | None
    selector: dict[str, Any] | None
    min_available: Any
    max_unavailable: Any
    path: str
    line: int


@value_record(frozen=True)
class Autoscaler:
    """An HPA or KEDA ScaledObject, by the workload its scaleTargetRef names."""
    kind: str
    name: str | None
    namespace: str | None
    target_kind: str
    target_name: str
    min_replicas: Any  # as written; None when unset
    max_replicas: Any
    path: str
    line: int


_AUTOSCALER_KINDS = frozenset(("HorizontalPodAutoscaler", "ScaledObject"))


class InputIndex:
    """The facts, by key. They are kept in dictionaries; with `facts_in_memory`, past that many
    they move to a database on disk (facts.py), so that memory does not grow with a stream."""

    def __init__(self, facts_in_memory: int | None = None) -> None:
        self.facts: MemoryFacts | DiskFacts = MemoryFacts()
        self.facts_in_memory = facts_in_memory
        self.budget_count = 0
        self.autoscaler_count = 0

    @property
    def on_disk(self) -> bool:
        return isinstance(self.facts, DiskFacts)

    def add(self, resource: Resource) -> None:
        for record in fact_records(resource):
            self.add_record(record, resource.path)

    def add_record(self, record: list[Any], path: str) -> None:
        """Add one fact given as plain data (fact_records); `path` is the file it is from."""
        table = record[0]
        if table == "budget":
            _, name, namespace, selector, min_available, max_unavailable, line = record
            self.add_budget(DisruptionBudget(name, namespace, selector, min_available, max_unavailable,
                                             path, line))
        elif table == "claim":
            self._put("claim", (record[1], record[2]), True, "PersistentVolumeClaim", record[2])
        elif table == "config":
            self._put("config", (record[1], record[2]), record[3], "ConfigMap", record[2])
        elif table == "device":
            _, kind, namespace, name, requests = record
            self._put("device", (kind, namespace, name), [tuple(r) for r in requests], kind, name)
        elif table == "autoscaler":
            _, kind, name, namespace, target_kind, target_name, low, high, line = record
            self.add_autoscaler(Autoscaler(kind, name, namespace, target_kind, target_name, low, high, path, line))
        elif table == "modelcache":
            self._put("modelcache", (record[1],), True, "LocalModelCache", record[2])
        elif table == "runtime":
            _, kind, scope, name, data = record
            self._put("runtime", (kind, scope, name), data, kind, name)

    def _put(self, table: str, key: tuple[Any, ...], value: Any, kind: str, name: str) -> None:
        self.facts.put(table, key, value)
        # The first key met for a kind and name: a workload without a namespace finds the
        # object by name without a scan of every one.
        self.facts.put_first("first", (kind, name), key)
        self._maybe_move()

    def add_budget(self, budget: DisruptionBudget) -> None:
        number = self.budget_count
        self.budget_count += 1
        self.facts.put("budget", number, budget)
        if budget.selector is None:
            return  # selects nothing
        match_labels = budget.selector.get("matchLabels")
        if isinstance(match_labels, dict) and match_labels:
            # Bucketed by one pair: a pod that lacks it cannot be selected, so a workload is
            # compared with the few budgets that could select it, not with every budget.
            key, value = next(iter(match_labels.items()))
            self.facts.append("bucket", (key, str(value)), number)
        else:
            self.facts.append("bucket", None, number)
        self._maybe_move()

    def add_autoscaler(self, autoscaler: Autoscaler) -> None:
        number = self.autoscaler_count
        self.autoscaler_count += 1
        self.facts.put("autoscaler", number, autoscaler)
        # By target kind and name; the namespace is compared on lookup, as for budgets.
        self.facts.append("scales", (autoscaler.target_kind, autoscaler.target_name), number)
        self._maybe_move()

    def _maybe_move(self) -> None:
        if self.facts_in_memory is not None and isinstance(self.facts, MemoryFacts) \
                and self.facts.count > self.facts_in_memory:
            disk = DiskFacts()
            disk.load(self.facts.entries())
            self.facts = disk

    def merge(self, part: InputIndex) -> None:
        """Add the index of a later part of the input, as adding its resources one by one would."""
        assert isinstance(part.facts, MemoryFacts)
        for number in range(part.budget_count):
            self.add_budget(part.facts.get("budget", number))
        for number in range(part.autoscaler_count):
            self.add_autoscaler(part.facts.get("autoscaler", number))
        for table in ("claim", "config", "device", "runtime", "modelcache"):
            for key, value in part.facts.tables.get(table, {}).items():
                self.facts.put(table, key, value)
        for key, first in part.facts.tables.get("first", {}).items():
            self.facts.put_first("first", key, first)

    def budgets_for(self, namespace: str | None, labels: dict[str, Any]) -> list[DisruptionBudget]:
        """The budgets that select pods with these labels, in input order."""
        keys: list[Any] = [None] + [(key, str(value)) for key, value in labels.items()]
        found = []
        for number in self.facts.numbers("bucket", keys):
            budget: DisruptionBudget = self.facts.get("budget", number)
            if budget.namespace is not None and namespace is not None and budget.namespace != namespace:
                continue
            if selector_matches(budget.selector, labels):
                found.append(budget)
        return found

    def autoscalers_for(self, namespace: str | None, kind: str | None, name: str | None) -> list[Autoscaler]:
        """The HPAs and ScaledObjects whose scaleTargetRef names this workload, in input order."""
        if kind is None or name is None:
            return []
        found = []
        for number in self.facts.numbers("scales", [(kind, name)]):
            autoscaler: Autoscaler = self.facts.get("autoscaler", number)
            if autoscaler.namespace is not None and namespace is not None and autoscaler.namespace != namespace:
                continue
            found.append(autoscaler)
        return found

    def _lookup(self, table: str, key: tuple[Any, ...], kind: str, name: str, namespace: str | None) -> Any:
        found = self.facts.get(table, key)
        if found is None and namespace is None:
            first = self.facts.get("first", (kind, name))
            if first is not None:
                found = self.facts.get(table, first)
        return found

    def training_runtime(self, kind: str, namespace: str | None, name: str) -> dict[str, Any] | None:
        """A (Cluster)TrainingRuntime of the input, by the kind and name a TrainJob's runtimeRef gives."""
        scope = None if kind == "ClusterTrainingRuntime" else namespace
        found = self._lookup("runtime", (kind, scope, name), kind, name, scope)
        return found if isinstance(found, dict) else None

    def config_map(self, namespace: str | None, name: str) -> dict[str, str | None] | None:
        found = self._lookup("config", (namespace, name), "ConfigMap", name, namespace)
        if found is None:
            found = self.facts.get("config", (None, name))
        return found

    def model_cached(self, uri: str) -> bool:
        """Whether a KServe LocalModelCache in the input caches this storage URI on the nodes."""
        return self.facts.has("modelcache", (uri,))

    def device_claim(self, kind: str, namespace: str | None, name: str) -> list[tuple[Any, str, Any]] | None:
        """(request name, deviceClassName, count) of each request of a DRA claim or claim
        template in the input; None when it is not there."""
        found = self.facts.get("device", (kind, namespace, name))
        if found is None:
            found = self.facts.get("device", (kind, None, name))
        if found is None and namespace is None:
            first = self.facts.get("first", (kind, name))
            if first is not None:
                found = self.facts.get("device", first)
        return found


def fact_records(resource: Resource) -> list[list[Any]]:
    """What a resource tells the index, as plain data (lists, strings, numbers, mappings): the
    same for a file linted and for one read for its facts only (repofacts.py caches them as
    JSON). A budget's record leaves out its path, which is the file's."""
    kind = resource.kind
    if kind not in _RECORDED_KINDS:  # most documents: a workload, a Service, ...
        return []
    data = resource.data
    spec: dict[str, Any] = data["spec"] if isinstance(data.get("spec"), dict) else {}
    name = resource.name
    if name is None:
        return []
    namespace = resource.namespace
    if kind == "PodDisruptionBudget":
        selector = spec.get("selector")
        if selector == {} and resource.api_version == "policy/v1beta1":
            selector = None  # policy/v1beta1: an empty selector selects no pods (v1: all)
        return [["budget", name, namespace, selector if isinstance(selector, dict) else None,
                 spec.get("minAvailable"), spec.get("maxUnavailable"), resource.start.line]]
    if kind in _AUTOSCALER_KINDS:
        autoscaler = _autoscaler(resource, spec)
        if autoscaler is None:
            return []
        return [["autoscaler", autoscaler.kind, autoscaler.name, autoscaler.namespace, autoscaler.target_kind,
                 autoscaler.target_name, autoscaler.min_replicas, autoscaler.max_replicas, autoscaler.line]]
    if kind == "LocalModelCache":
        uri = spec.get("sourceModelUri")
        return [["modelcache", uri, name]] if isinstance(uri, str) else []
    if kind == "PersistentVolumeClaim":
        return [["claim", namespace, name]]
    if kind == "ConfigMap":
        values = data.get("data")
        if isinstance(values, dict):
            # Only what `envFrom` can make of it: a value too long for any setting a policy
            # reads (a script, a config file) is kept as "set, value unknown".
            return [["config", namespace, name, {
                str(k): (v if len(v) <= MAX_ENV_VALUE_CHARS else None)
                for k, v in values.items() if isinstance(v, str)
            }]]
        return []
    if kind in ("TrainingRuntime", "ClusterTrainingRuntime") and resource.api_version \
            and resource.api_version.startswith("trainer.kubeflow.org/"):
        # Kept whole: a TrainJob that names it is judged merged with it (trainjob.py).
        scope = None if kind == "ClusterTrainingRuntime" else namespace
        return [["runtime", kind, scope, name, data]]
    if kind in ("ResourceClaimTemplate", "ResourceClaim"):
        claim_spec = spec.get("spec", {}) if kind == "ResourceClaimTemplate" else spec
        return [["device", kind, namespace, name, _device_requests(claim_spec)]]
    return []


# Every kind fact_records makes a record of.
_RECORDED_KINDS = frozenset(("PodDisruptionBudget", "LocalModelCache", "PersistentVolumeClaim", "ConfigMap",
                             "TrainingRuntime", "ClusterTrainingRuntime", "ResourceClaimTemplate",
                             "ResourceClaim")) | _AUTOSCALER_KINDS

# The kinds fact_records reads: a file that names none of them holds no fact.
FACT_KINDS = ("PodDisruptionBudget", "PersistentVolumeClaim", "ConfigMap", "ResourceClaim",
              "TrainingRuntime",  # ClusterTrainingRuntime contains it
              "HorizontalPodAutoscaler", "ScaledObject", "LocalModelCache")


def _autoscaler(resource: Resource, spec: dict[str, Any]) -> Autoscaler | None:
    """The autoscaler's target and bounds. A ScaledObject's target kind defaults to Deployment
    (KEDA's scaleTargetRef); an HPA must name its kind."""
    target = spec.get("scaleTargetRef")
    if not isinstance(target, dict) or not isinstance(target.get("name"), str):
        return None
    if resource.kind == "ScaledObject":
        target_kind = target.get("kind") or "Deployment"
        low, high = spec.get("minReplicaCount"), spec.get("maxReplicaCount")
    else:
        target_kind = target.get("kind")
        low, high = spec.get("minReplicas"), spec.get("maxReplicas")
    if not isinstance(target_kind, str):
        return None
    return Autoscaler(resource.kind, resource.name, resource.namespace, target_kind, target["name"],
                      low, high, resource.path, resource.start.line)


def _device_requests(claim_spec: Any) -> list[tuple[Any, str, Any]]:
    """(request name, deviceClassName, count) for each request of a DRA claim spec (v1beta1 and
    v1 shapes)."""
    found: list[tuple[Any, str, Any]] = []
    devices = claim_spec.get("devices") if isinstance(claim_spec, dict) else None
    requests = devices.get("requests") if isinstance(devices, dict) else None
    for request in requests if isinstance(requests, list) else []:
        if not isinstance(request, dict):
            continue
        exact: dict[str, Any] = request["exactly"] if isinstance(request.get("exactly"), dict) else request
        device_class = exact.get("deviceClassName")
        if isinstance(device_class, str):
            count = exact.get("count", 1) if exact.get("allocationMode", "ExactCount") == "ExactCount" else None
            found.append((request.get("name"), device_class, count))
    return found


def selector_matches(selector: dict[str, Any] | None, labels: dict[str, Any]) -> bool:
    """Kubernetes label-selector semantics; an empty selector selects everything, a null none."""
    if selector is None:
        return False
    match_labels = selector.get("matchLabels") or {}
    if not isinstance(match_labels, dict):
        return False
    key: Any
    for key, value in match_labels.items():
        if str(labels.get(key)) != str(value) or key not in labels:
            return False
    expressions = selector.get("matchExpressions") or []
    for expression in expressions if isinstance(expressions, list) else []:
        if not isinstance(expression, dict):
            return False
        key = expression.get("key")
        if not isinstance(key, str):
            return False  # a requirement Kubernetes would refuse selects nothing
        operator = expression.get("operator")
        listed = expression.get("values")
        values = [str(v) for v in listed] if isinstance(listed, list) else []
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
