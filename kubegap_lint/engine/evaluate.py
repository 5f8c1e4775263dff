"""Stage 4: evaluate the compiled policies against workload views, and turn input faults
into findings. Each finding is located at the node a policy's `at` names, or at the nearest
existing parent when the problem is a missing field."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from kubegap_lint.catalog.policies import Policy
from kubegap_lint.core.model import Finding, Location, Position, Severity
from kubegap_lint.input.read import InputFault, Resource


def truthy(value: Any) -> bool:
    """JMESPath's truth: false, null and empty strings, lists and objects are false; 0 is true."""
    if value is None or value is False:
        return False
    if isinstance(value, (str, list, dict)) and not value:
        return False
    return True


def _elements(value: Any) -> list[Any]:
    if isinstance(value, list):
        return value
    return [value] if truthy(value) else []


def _element_path(element: Any, fallback: int) -> str:
    if isinstance(element, dict):
        path = element.get("path")
        if isinstance(path, str):
            name = element.get("name")
            return f"{path}/{name}" if isinstance(name, str) and "index" in element else path
    return f"#{fallback}"


def _locate(policy: Policy, element: Any, resource: Resource, interpreter: Any) -> tuple[Position, str]:
    positions = resource.positions
    for text, expression in policy.at:
        try:
            target = interpreter.search(expression, element)
        except Exception:  # a custom function refused its input: try the next place
            continue
        if isinstance(target, (dict, list)):
            found = positions.anchor(target)
            if found is not None:
                return found, text
    return positions.anchor(element) or resource.start, ""


def evaluate_workload(
    policies: Iterable[Policy], view: dict[str, Any], resource: Resource, interpreter: Any
) -> Iterator[Finding]:
    """Every finding of the given policies on one workload view; `interpreter` is the run's
    functions.PolicyInterpreter."""
    ref = resource.ref()
    found_by_role = {p.get("role"): p.get("found_by") for p in view.get("pods") or [] if isinstance(p, dict)}
    for policy in policies:
        if not truthy(interpreter.search(policy.applies_to, view)):
            continue
        elements = _elements(interpreter.search(policy.for_each, view)) if policy.for_each else [view]
        for number, element in enumerate(elements):
            if not truthy(interpreter.search(policy.violation, element)):
                continue
            position, matched = _locate(policy, element, resource, interpreter)
            assert policy.message is not None
            message = policy.message.render(element, interpreter)
            severity = policy.severity
            if policy.severity_expr is not None:
                chosen = interpreter.search(policy.severity_expr, element)
                if isinstance(chosen, str) and chosen in ("error", "warning", "note"):
                    severity = Severity(chosen)
            role = element.get("role") if isinstance(element, dict) else None
            container = None
            if isinstance(element, dict):
                # A container view has an index; a per-variable record names its container.
                container = element.get("name") if "index" in element else element.get("container")
            found_by = element.get("found_by") if isinstance(element, dict) else None
            if not isinstance(found_by, str):
                found_by = found_by_role.get(role) if isinstance(role, str) else None
            if not isinstance(found_by, str):
                found_by = view.get("found_by")
            yield Finding(
                rule_id=policy.id,
                rule_name=policy.name,
                severity=severity,
                message=message,
                location=Location(resource.path, position.line, position.column),
                resource=ref,
                role=role if isinstance(role, str) else None,
                container=container if isinstance(container, str) else None,
                document_index=resource.document_index,
                template=resource.helm_source,
                node_path=f"{_element_path(element, number)}|{matched}",
                evidence=policy.evidence,
                key_path=_key_path(resource, position),
                found_by=found_by if isinstance(found_by, str) else None,
            )


def _key_path(resource: Resource, position: Position) -> tuple[Any, ...]:
    """Only Helm output needs the key path (to find the template line): skip the walk otherwise."""
    if resource.helm_source is None:
        return ()
    from kubegap_lint.engine.keypath import key_path_at

    return key_path_at(resource.data, resource.positions, position)


def fault_finding(fault: InputFault, policy: Policy) -> Finding:
    return Finding(
        rule_id=policy.id,
        rule_name=policy.name,
        severity=policy.severity,
        message=fault.message,
        location=Location(fault.path, fault.position.line, fault.position.column),
        document_index=fault.document_index,
        template=fault.helm_source,
        node_path=f"doc{fault.document_index}|{fault.message}",
        evidence=policy.evidence,
    )
