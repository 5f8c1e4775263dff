"""KG008: say once which rules could not judge a workload, instead of guessing or silence.

A view names what it lacks (the registry's NEEDS, workloads/facts/registry.py: `counts` are
lacking when `unrendered_counts` lists placeholders, `runtime` when `runtime_missing` names a
TrainJob's runtime not in the input); each policy names what it needs (`needs:` in its file). A note lists the rules that are on, need the missing fact, and
could apply to the workload's class (a rule tagged training or serving only to that class).

A kind the workload table does not know that asks for accelerators in a `limits` or `requests`
mapping but holds no pod template the walk finds (an operator's own resource, such as NVIDIA's
NIMService, whose pods the operator builds) gets one note too: no workload rule judged it.

A kind the workload table does not know and whose shape does not decide its class
(workloads/shape.py: `class_from` null) lacks the class itself: its note lists the rules that
judge only training or serving workloads (tagged so, or whose `applies_to` reads `training` or
`serving`), but not those that name the kinds they judge (`kind` in `applies_to`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from kubegap_lint.catalog.policies import Policy
from kubegap_lint.core.model import Finding, Location
from kubegap_lint.input.read import Resource
from kubegap_lint.workloads.facts.registry import NEEDS


def _could_apply(policy: Policy, view: Mapping[str, Any]) -> bool:
    classes = {"training", "serving"} & set(policy.tags)
    if not classes:
        return True
    return bool(view.get("training") and "training" in classes or view.get("serving") and "serving" in classes)


def _silenced(policies: list[Policy], view: Mapping[str, Any], need: str) -> list[str]:
    return [p.id for p in policies if need in p.needs and _could_apply(p, view)]


def _class_gated(policy: Policy) -> bool:
    """The rule judges only training or serving workloads, whatever their kind."""
    from kubegap_lint.catalog.compile import root_fields

    read = root_fields(policy.applies_to.parsed) if policy.applies_to is not None else set()
    if "kind" in read:
        return False
    return bool({"training", "serving"} & (set(policy.tags) | read))


def _unclassified(policies: list[Policy], view: Mapping[str, Any], resource: Resource) -> tuple[str, Any, str, str] | None:
    """The note for a GPU workload of a kind neither the table nor its shape classifies."""
    if "class_from" not in view or view["class_from"] is not None or view.get("diagnostic"):
        return None
    silenced = [p.id for p in policies if _class_gated(p)]
    if not silenced:
        return None
    kind = f"{resource.api_version}/{resource.kind}" if resource.api_version else str(resource.kind)
    return (f"{kind} is not in the workload table and its fields do not tell serving from training (no `replicas`,"
            " and no `completions`, `backoffLimit`, `runPolicy`, `*ReplicaSpecs` or `restartPolicy: Never`/`OnFailure`): "
            f"{', '.join(silenced)} judge only training or serving workloads and did not judge it; add the kind "
            "under `workloads:` in the configuration",
            resource.data, "class", "kind")


def not_judged_notes(note: Policy, policies: list[Policy], view: Mapping[str, Any],
                     resource: Resource) -> Iterator[Finding]:
    if not view.get("has_gpu"):
        return
    unrendered = view.get(NEEDS["counts"].lacking)
    missing = view.get(NEEDS["runtime"].lacking)
    unclassified = _unclassified(policies, view, resource) if view.get("found_by") == "walk" else None
    if not unrendered and not missing and unclassified is None:
        return  # what most workloads lack: nothing
    ref = resource.ref()
    wanted: list[tuple[str, Any, str, str | None]] = [unclassified] if unclassified is not None else []
    counts = _silenced(policies, view, "counts") if unrendered else []
    for entry in unrendered or []:
        if counts:
            wanted.append((
                f"{entry['field']} is {entry['value']!r}, an unrendered placeholder: "
                f"{', '.join(counts)} need this count and did not judge {ref.display()}",
                entry.get("node"), f"counts/{entry['field']}", str(entry["field"]).rsplit(".", 1)[-1]))
    runtime = _silenced(policies, view, "runtime") if missing else []
    if missing and runtime:
        wanted.append((
            f"{missing['kind']} {missing['name']} is not in the input: the pods of {ref.display()} are "
            f"that runtime's template merged with it, so {', '.join(runtime)} did not judge them "
            "(lint the runtime with the TrainJob)",
            (view["resource"].get("spec") or {}).get("runtimeRef"), "runtime", None))
    paths = None
    for message, node, key, field in wanted:
        # At the field (the placeholder count) when it is written there, else the node holding it.
        where = None
        if isinstance(node, (dict, list)):
            from kubegap_lint.engine.locate import node_paths

            paths = paths if paths is not None else node_paths(resource.data, resource.base)
            where = paths.get(id(node))
            if where is not None and field is not None and (*where, field) in resource.positions:
                where = (*where, field)
        position = (resource.positions.key(where) if where is not None else None) or resource.start
        yield Finding(
            rule_id=note.id, rule_name=note.name, severity=note.severity, message=message,
            location=Location(resource.path, position.line, position.column), resource=ref,
            document_index=resource.document_index, template=resource.helm_source,
            node_path=f"note/{key}", evidence=note.evidence,
            key_path=where if where is not None else resource.base)


_RESOURCE_KEYS = frozenset(("limits", "requests"))
_DEEPEST = 12  # deeper than an operator nests its resources: not read (hostile input)


def accelerator_request(data: Any, is_gpu: Any) -> tuple[tuple[str | int, ...], str] | None:
    """The key path and name of the first accelerator a `limits` or `requests` mapping in `data`
    asks for, or None."""
    stack: list[tuple[Any, tuple[str | int, ...]]] = [(data, ())]
    while stack:
        node, path = stack.pop()
        if len(path) > _DEEPEST:
            continue
        if isinstance(node, dict):
            for key, value in reversed(list(node.items())):
                if key in _RESOURCE_KEYS and isinstance(value, dict):
                    name = next((n for n in value if isinstance(n, str) and is_gpu(n)), None)
                    if name is not None:
                        return (*path, key, name), name
                if key not in ("metadata", "status"):
                    stack.append((value, (*path, key)))
        elif isinstance(node, list):
            stack.extend((item, (*path, number)) for number, item in reversed(list(enumerate(node))))
    return None


def podless_note(note: Policy, resource: Resource, is_gpu: Any) -> Finding | None:
    """KG008 for a kind the table does not know that asks for accelerators with no pod template
    in it: the operator builds its pods, which no rule saw."""
    found = accelerator_request(resource.data, is_gpu)
    if found is None:
        return None
    path, name = found
    kind = f"{resource.api_version}/{resource.kind}" if resource.api_version else str(resource.kind)
    where = (*resource.base, *path)
    position = resource.positions.key(where) or resource.start
    return Finding(
        rule_id=note.id, rule_name=note.name, severity=note.severity,
        message=(f"{kind} asks for {name} but holds no pod template that kubegap-lint can read (its operator builds "
                 "the pods): no workload rule judged it; add the kind under `workloads:` in the configuration"),
        location=Location(resource.path, position.line, position.column), resource=resource.ref(),
        document_index=resource.document_index, template=resource.helm_source, node_path="note/podless",
        evidence=note.evidence, key_path=where)
