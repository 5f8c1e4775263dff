"""The workload table: which kinds hold pod templates, where, and how many pods each makes.

The table is data (`policies/workloads.yaml`, schema `workloads.schema.json`); users extend it
in their configuration with entries of the same shape.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from pathlib import Path
from typing import Any

from kubegap_lint.catalog.datafile import load_validated, schema_errors
from kubegap_lint.core.coerce import as_count
from kubegap_lint.core.datapaths import policies_dir
from kubegap_lint.core.errors import DataFileError
from kubegap_lint.core.record import record, replace
from kubegap_lint.input.parse import PositionIndex
from kubegap_lint.workloads.discover import holds_pod_template
from kubegap_lint.workloads.shape import shape_class

Path_ = tuple[str, ...]


def split_path(text: str) -> Path_:
    return tuple(text.split("."))


def get_path(obj: Any, path: Path_) -> Any:
    """Follow dotted keys; None where any step is missing or not a mapping."""
    for key in path:
        if not isinstance(obj, dict):
            return None
        obj = obj.get(key)
    return obj


@record(frozen=True)
class TemplateRule:
    role: str | None
    role_key: Path_ | None
    each_key: Path_ | None
    each_item: Path_ | None
    template: Path_ | None
    spec: Path_ | None
    container: Path_ | None
    replicas: tuple[Path_, ...]
    default_replicas: int | None  # None: the manifest does not say (an Argo template's pods)
    less_one_when: Path_ | None
    counts_as_replicas: bool
    resource: Path_ | None = None  # an embedded resource read by its own kind entry (Katib)
    model: Path_ | None = None  # a container-like mapping in the inline spec (KServe predictor.model)
    root_replicas: tuple[Path_, ...] = ()  # counts read from the resource root, not the entry
    gpus: Path_ | None = None  # total GPUs the operator spreads over the pods (MPIJob v1alpha1)
    partial: bool = False  # the pod spec is completed elsewhere (an Argo containerSet's template)
    strip_resources: bool = False  # the operator clears the first container's resources (MPIJob v1alpha1 launcher)
    completion: str | None = None  # dynamo-component: the operator completes the pod (dynamo.py)
    metadata: Path_ | None = None  # (with spec) the pod's metadata in the entry (Dynamo extraPodMetadata); (): the entry


@record(frozen=True)
class KindRule:
    group: str
    kind: str
    workload_class: str  # training | serving | other
    replicas: tuple[Path_, ...]
    claim_templates: Path_ | None
    templates: tuple[TemplateRule, ...]
    claim_policies: Path_ | None = None  # JobSet volumeClaimPolicies: [{templates: [...]}]
    version: str | None = None  # only this apiVersion version (MPIJob kubeflow.org/v1alpha1)
    merge: str | None = None  # trainer-runtime: judged merged with the runtime it names (trainjob.py)
    replicas_by_role: bool = False  # replicas: the most replicas of one GPU role (views._replicas)
    # Where the class comes from: `table`, `shape` (an unknown kind its fields classify,
    # shape.py; `shape_sign` names the field), or None (an unknown kind the shape leaves open).
    class_from: str | None = "table"
    shape_sign: str | None = None

    @property
    def found_by(self) -> str:
        """How the JSON names this entry as the finder of a pod template."""
        group = f"{self.group}/" if self.group else ""
        version = f"{self.version}/" if self.version else ""
        return f"table:{group}{version}{self.kind}" if self.kind != "*" else "walk"


def declared_replicas(data: dict[str, Any], rule: KindRule) -> int | None:
    """The replica count the kind's own paths give (missing: 1); None when one is unreadable."""
    replicas: int | None = 1
    for path in rule.replicas:
        raw = get_path(data, path)
        value = 1 if raw is None else as_count(raw)
        replicas = None if value is None or replicas is None else replicas * value
    return replicas


def _opt_path(entry: dict[str, Any], key: str) -> Path_ | None:
    value = entry.get(key)
    return split_path(value) if isinstance(value, str) else None


def _default_replicas(entry: dict[str, Any]) -> int | None:
    value = entry.get("default_replicas", 1)
    return None if value is None else int(value)


def _rule(entry: dict[str, Any]) -> KindRule:
    templates = tuple(
        TemplateRule(
            role=t.get("role"),
            role_key=_opt_path(t, "role_key"),
            each_key=_opt_path(t, "each_key"),
            each_item=_opt_path(t, "each_item"),
            template=_opt_path(t, "template"),
            spec=_opt_path(t, "spec"),
            container=_opt_path(t, "container"),
            replicas=tuple(split_path(p) for p in t.get("replicas", [])),
            default_replicas=_default_replicas(t),
            less_one_when=_opt_path(t, "less_one_when"),
            counts_as_replicas=bool(t.get("counts_as_replicas", False)),
            resource=_opt_path(t, "resource"),
            model=_opt_path(t, "model"),
            root_replicas=tuple(split_path(p) for p in t.get("root_replicas", [])),
            gpus=_opt_path(t, "gpus"),
            partial=bool(t.get("partial", False)),
            strip_resources=bool(t.get("strip_resources", False)),
            completion=t.get("completion"),
            metadata=() if t.get("metadata") == "." else _opt_path(t, "metadata"),
        )
        for t in entry["templates"]
    )
    return KindRule(
        group=entry["group"],
        kind=entry["kind"],
        workload_class=entry["class"],
        replicas=tuple(split_path(p) for p in entry.get("replicas", [])),
        claim_templates=_opt_path(entry, "claim_templates"),
        claim_policies=_opt_path(entry, "claim_policies"),
        templates=templates,
        version=entry.get("version"),
        merge=entry.get("merge"),
        replicas_by_role=bool(entry.get("replicas_by_role", False)),
    )


# An unknown kind that holds a pod template somewhere: discover.py finds the templates, the
# class is other, and the counts are what the walk reads (a sibling `replicas`, else 1).
_RESOURCE_KEYS = frozenset(("limits", "requests"))  # what asks for an accelerator


def _asks_resources(data: Any, depth: int = 0) -> bool:
    """A `limits` or `requests` key anywhere in `data` (bounded: hostile depth reads as none)."""
    if depth > 12:
        return False
    if isinstance(data, dict):
        return any(key in _RESOURCE_KEYS or _asks_resources(value, depth + 1) for key, value in data.items())
    if isinstance(data, list):
        return any(_asks_resources(item, depth + 1) for item in data)
    return False
GENERIC = KindRule(group="*", kind="*", workload_class="other", replicas=(), claim_templates=None,
                   templates=(), class_from=None)


def shaped(data: dict[str, Any]) -> KindRule:
    """The generic rule for an unknown kind, with the class its shape decides (shape.py)."""
    found = shape_class(data)
    if found is None:
        return GENERIC
    return replace(GENERIC, workload_class=found[0], class_from="shape", shape_sign=found[1])


def api_group(api_version: Any) -> str:
    if not isinstance(api_version, str) or "/" not in api_version:
        return ""
    return api_version.rsplit("/", 1)[0]


def api_version_part(api_version: Any) -> str:
    if not isinstance(api_version, str):
        return ""
    return api_version.rsplit("/", 1)[-1]


class KindTable:
    """Looks up the rule for a resource by (apiVersion group, kind)."""

    def __init__(self, rules: Iterable[KindRule] = ()) -> None:
        self._rules: dict[tuple[str, str], KindRule] = {}
        self._versioned: dict[tuple[str, str, str], KindRule] = {}
        # (apiVersion, kind) -> rule, bounded: a stream repeats a few pairs in every document
        self._found: dict[tuple[str | None, str], KindRule | None] = {}
        self.add(rules)

    def add(self, rules: Iterable[KindRule]) -> None:
        self._found.clear()
        for rule in rules:
            if rule.version:
                self._versioned[(rule.group, rule.version, rule.kind)] = rule
            else:
                self._rules[(rule.group, rule.kind)] = rule

    def lookup(self, api_version: Any, kind: Any) -> KindRule | None:
        if not isinstance(kind, str):
            return None
        key = (api_version, kind) if api_version is None or isinstance(api_version, str) else None
        if key is not None and key in self._found:
            return self._found[key]
        group = api_group(api_version)
        versioned = self._versioned.get((group, api_version_part(api_version), kind)) if self._versioned else None
        rule = versioned or self._rules.get((group, kind))
        if key is not None and len(kind) + len(api_version or "") <= 1024:  # bounded, whatever the input
            if len(self._found) >= 1024:
                self._found.clear()
            self._found[key] = rule
        return rule

    def lookup_or_infer(self, data: dict[str, Any], keys: Collection[Any] | None = None) -> KindRule | None:
        """The table's rule, or for an unknown kind that holds a pod template anywhere (a walk
        of the document, discover.py), the generic rule: templates found by the walk, the class
        its shape decides (shape.py), else other.
        `keys`, when given and not empty, holds every mapping key of `data` (the keys its
        document's position index recorded, input/parse.py): without `containers` among them
        no mapping is a pod spec or template, so the walk is not needed (most documents of
        unknown kinds are ConfigMaps and Services)."""
        rule = self.lookup(data.get("apiVersion"), data.get("kind"))
        if rule is not None:
            return rule
        if keys and "containers" not in keys:
            # No pod template; one that asks for resources may be an operator's workload whose
            # pods it builds (NVIDIA's NIMService): read as such, the run notes it (KG008).
            return GENERIC if any(key in keys for key in _RESOURCE_KEYS) else None
        if holds_pod_template(data):
            return shaped(data)
        asks = any(key in keys for key in _RESOURCE_KEYS) if keys else _asks_resources(data)
        return GENERIC if asks else None

    def __len__(self) -> int:
        return len(self._rules) + len(self._versioned)

    def kinds(self) -> list[tuple[str, str]]:
        return sorted(set(self._rules) | {(g, k) for g, _, k in self._versioned})


def rules_from_entries(entries: list[Any], display: str, positions: PositionIndex) -> list[KindRule]:
    """Validate and convert user-supplied entries (from configuration)."""
    problems = schema_errors({"kinds": entries}, positions, "workloads.schema.json", display)
    if problems:
        raise DataFileError(problems)
    return [_rule(entry) for entry in entries]


def load_kind_table(path: Path | None = None) -> KindTable:
    if path is None:  # the built-in table: kept between runs as plain data (catalog/cache.py)
        from kubegap_lint.catalog import cache

        key = cache.catalog_key("workloads", policies_dir())
        found = cache.load("workloads", key) if key else None
        if isinstance(found, list):
            try:
                return KindTable(_rule(entry) for entry in found)
            except Exception:  # noqa: BLE001 - any fault in cached data: load from the file
                cache.note("the cached workload table does not match its file: loaded from the file")
        entries = _kind_entries(policies_dir() / "workloads.yaml")
        if key:
            cache.store("workloads", key, entries)
        return KindTable(_rule(entry) for entry in entries)
    return _load_kind_table(path)


def _kind_entries(path: Path) -> list[Any]:
    data, _ = load_validated(path, "workloads.schema.json")
    return list(data["kinds"])


def _load_kind_table(path: Path) -> KindTable:
    return KindTable(_rule(entry) for entry in _kind_entries(path))


def render_kinds_markdown() -> str:
    """The built-in table's kinds by class, a section of docs/workload-view.md."""
    by_class: dict[str, set[str]] = {}
    for entry in _kind_entries(policies_dir() / "workloads.yaml"):
        where = entry["group"] or "core"
        if entry.get("version"):
            where += f" {entry['version']}"
        by_class.setdefault(entry["class"], set()).add(f"{entry['kind']} ({where})")
    rows = "".join(f"| {name} | {', '.join(sorted(by_class.get(name, ())))} |\n" for name in ("training", "serving", "other"))
    return ("\n## Known kinds\n\nThe class of each kind the built-in workload table (`policies/workloads.yaml`) knows; a"
            " configuration's `workloads:` adds kinds. A kind that holds only whole resources (an AppWrapper) takes"
            " their class when they share one; a diagnostic workload keeps its kind's class (above).\n\n"
            "| class | kinds (API group) |\n|---|---|\n" + rows)
