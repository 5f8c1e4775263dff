"""Stage 4: evaluate the compiled policies against workload views, and turn input faults
into findings. Each finding is located at the node a policy's `at` names (locate.py), or at the
nearest existing parent when that node is a missing field, which the finding then names."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from kubegap_lint.catalog.policies import Policy
from kubegap_lint.core.model import Finding, Location, Severity
from kubegap_lint.engine.locate import Tracker, own, path_of
from kubegap_lint.input.parse import KeyPath, dotted
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


@dataclass(frozen=True)
class Place:
    """Where a finding points: its location, the node's key path in the document, the `at:`
    text that chose it, and the field that is missing when the location is its parent."""

    location: Location
    key_path: KeyPath
    matched: str
    missing: str | None


def _element_places(policy: Policy, view: Mapping[str, Any], tracker: Any) -> list[Any]:
    """The path maps of the for_each elements, in the order `_elements` gives them."""
    if not policy.for_each:
        return [own(view)]
    try:
        value, where = tracker.track(policy.for_each.parsed, view, own(view))
    except Exception:  # as the plain evaluation did not fail, not expected: the elements' own paths
        return []
    if isinstance(value, list):
        return list(where) if isinstance(where, list) else [own(v) for v in value]
    return [where] if truthy(value) else []


def _place(resource: Resource, path: KeyPath | None, matched: str) -> Place:
    positions = resource.positions
    if path is None:
        path = resource.base
    found = positions.nearest(path)
    start = positions.key(found) or resource.start
    missing = None if found == path else dotted(path[len(found):])
    # The region: from the key to the end of the value. A block ends where the next token
    # starts (column 1 of a later line): it then ends with the line before, wherever that
    # line ends (end_column None). A missing field's parent is marked on its first line only.
    end = positions.end(found) if missing is None else None
    end_line, end_column = (end.line, end.column) if end else (start.line, None)
    if end is not None and end.column == 1 and end.line > start.line:
        end_line, end_column = end.line - 1, None
    location = Location(resource.path, start.line, start.column, end_line, end_column)
    return Place(location, found, matched, missing)


def locate(policy: Policy, element: Any, element_where: Any, resource: Resource, tracker: Any) -> Place:
    """The node a finding is about: the first `at:` that names a node present in the manifest;
    else the first that names a missing field (located at its nearest existing parent); else
    the element itself, else the resource."""
    first_missing: Place | None = None
    for text, expression in policy.at:
        try:
            _, where = tracker.track(expression.parsed, element, element_where)
        except Exception:  # a custom function refused its input: try the next place
            continue
        path = path_of(where)
        if path is not None:
            place = _place(resource, path, text)
            if place.missing is None:
                return place
            first_missing = first_missing or place
    return first_missing or _place(resource, path_of(element_where), "")


def evaluate_workload(
    policies: Iterable[Policy], view: Mapping[str, Any], resource: Resource, interpreter: Any,
    tracker: Tracker | None = None,
) -> Iterator[Finding]:
    """Every finding of the given policies on one workload view; `interpreter` is the run's
    functions.PolicyInterpreter. `tracker` locates the findings (one per resource serves every
    policy; made here when not given)."""
    # The run calls this once per policy: what only a finding needs is made at the first one.
    ref: Any = None
    found_by_role: dict[Any, Any] | None = None
    search = interpreter.search
    on_view = getattr(interpreter, "search_view", search)  # shared by the rules that ask the same
    for policy in policies:
        if not truthy(on_view(policy.applies_to, view)):
            continue  # nothing else of the policy is evaluated
        elements = _elements(on_view(policy.for_each, view)) if policy.for_each else [view]
        places: list[Any] | None = None
        for number, element in enumerate(elements):
            if not truthy(search(policy.violation, element)):
                continue
            if tracker is None:
                tracker = Tracker(interpreter.visit, resource.data, resource.base)
            # An element that is a view or a record carries its paths; one the for_each builds
            # (`{node: ..., why: ...}`) gets them from evaluating the for_each again, with paths.
            element_where = own(element)
            if element_where is None:
                if places is None:
                    places = _element_places(policy, view, tracker)
                element_where = places[number] if number < len(places) else None
            place = locate(policy, element, element_where, resource, tracker)
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
            if not isinstance(found_by, str) and isinstance(role, str):
                if found_by_role is None:
                    found_by_role = {p.get("role"): p.get("found_by") for p in view.get("pods") or []
                                     if isinstance(p, dict)}
                found_by = found_by_role.get(role)
            if not isinstance(found_by, str):
                found_by = view.get("found_by")
            if ref is None:
                ref = resource.ref()
            yield Finding(
                rule_id=policy.id,
                rule_name=policy.name,
                severity=severity,
                message=message,
                location=place.location,
                resource=ref,
                role=role if isinstance(role, str) else None,
                container=container if isinstance(container, str) else None,
                document_index=resource.document_index,
                template=resource.helm_source,
                node_path=f"{_element_path(element, number)}|{place.matched}",
                evidence=policy.evidence,
                key_path=place.key_path,
                missing=place.missing,
                found_by=found_by if isinstance(found_by, str) else None,
            )


def view_needs(policies: Iterable[Policy]) -> frozenset[str] | None:
    """The keys the policies' expressions name, for the view builder to compute only the facts
    they read (workloads/viewfacts.py: FACTS); None, every fact, when a policy is not one of the
    built-in catalog's, as an expression of a user's could read a view whole (`keys(@)`,
    `to_string(pods[0])`), which no name shows. tests/test_views.py checks each built-in policy
    alone gives the same findings with its facts only."""
    from pathlib import Path

    from kubegap_lint.catalog.compile import names_read
    from kubegap_lint.core.datapaths import _data_dir

    builtin = _data_dir("policies").resolve()
    names: set[str] = set()
    for policy in policies:
        try:
            if Path(policy.path).resolve().parent != builtin:
                return None
        except (OSError, ValueError):
            return None
        expressions = [policy.applies_to, policy.for_each, policy.violation, policy.severity_expr]
        expressions += [expression for _, expression in policy.at]
        if policy.message is not None:
            expressions += [part for part in policy.message.parts if not isinstance(part, str)]
        for expression in expressions:
            if expression is not None:
                names_read(expression.parsed, names)
    return frozenset(names)


def key_path_of(resource: Resource, finding: Finding) -> tuple[Any, ...]:
    """The finding's key path as template_lines.locate reads it: list indexes become (index,
    the item's `name` or None), so a template's items, which a loop writes without an index,
    are matched by name. Only a finding that moves to a chart template needs it, so the
    mapper asks for it then."""
    if resource.helm_source is None:
        return tuple(finding.key_path)
    steps: list[Any] = [(s, None) if isinstance(s, int) else s for s in finding.key_path[:len(resource.base)]]
    node: Any = resource.data
    for segment in finding.key_path[len(resource.base):]:
        if isinstance(segment, int):
            node = node[segment] if isinstance(node, list) and segment < len(node) else None
            name = node.get("name") if isinstance(node, dict) else None
            steps.append((segment, name if isinstance(name, str) else None))
        else:
            node = node.get(segment) if isinstance(node, dict) else None
            steps.append(segment)
    return tuple(steps)


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
