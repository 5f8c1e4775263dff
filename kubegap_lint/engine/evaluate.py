"""Evaluating: the compiled policies against each workload view, and input faults turned
into findings. Each finding is located at the node a policy's `at` names (locate.py), or at the
nearest existing parent when that node is a missing field, which the finding then names."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

from kubegap_lint.catalog.compile import is_true
from kubegap_lint.catalog.policies import Policy
from kubegap_lint.core.model import Finding, Location, Severity
from kubegap_lint.engine.locate import Tracker, own, path_of
from kubegap_lint.input.parse import KeyPath, dotted
from kubegap_lint.input.read import InputFault, Resource


def _elements(value: Any) -> list[Any]:
    if isinstance(value, list):
        return value
    return [value] if is_true(value) else []


def _element_path(element: Any, fallback: int) -> str:
    if isinstance(element, dict):
        path = element.get("path")
        if isinstance(path, str):
            name = element.get("name")
            return f"{path}/{name}" if isinstance(name, str) and "index" in element else path
    return f"#{fallback}"


class Place(NamedTuple):
    """Where a finding points: its location, the node's key path in the document, the `at:`
    text that chose it, and the field that is missing when the location is its parent. (A
    named tuple: one is made for every `at:` a finding tries that names a node.)"""

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
    return [where] if is_true(value) else []


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


def _conjuncts(node: dict[str, Any]) -> list[dict[str, Any]]:
    """`a && b && c` as [a, b, c] (jmespath parses it as ((a && b) && c)): the expression is
    truthy when each is, tried in order until one is not, as `&&` itself stops."""
    found = []
    while node.get("type") == "and_expression":
        found.append(node["children"][1])
        node = node["children"][0]
    found.append(node)
    found.reverse()
    return found


class Plan:
    """The run's workload policies, arranged once for every view: the one evaluation loop.

    Rules ask the same of a view: `serving && has_gpu && ...` opens five of them, and their
    applies_to share leading terms (KG101's is KG103's and one more). Each applies_to is split
    into its `&&` terms, every distinct term (by its parsed tree) is tested at most once a
    view, and a rule whose applies_to is false costs a few list reads. A for_each several
    rules share (`pods[?nccl_gpu]`) is searched once a view too. Each term is its own search,
    with its own value budget (budget.MAX_VALUES), as each expression is; a term that raises
    is not remembered, so every rule that asks it reports the error."""

    def __init__(self, policies: Iterable[Policy], interpreter: Any) -> None:
        self.interpreter = interpreter
        self.budget = interpreter.budget
        self.tests: list[Any] = []  # the distinct applies_to terms, compiled
        self.for_eaches: list[Any] = []  # the distinct for_each expressions, compiled
        # (policy, its terms' numbers, its for_each's number or -1, its violation compiled)
        self.entries: list[tuple[Policy, tuple[int, ...], int, Any]] = []
        self.renderers: dict[int, tuple[Policy, Any]] = {}  # id(policy) -> its message's renderer
        # The terms' answers on the last view asked (kept alive, so its id stays its own):
        # `applies` fills them before the view is evaluated, and the evaluation reads them.
        self._view: Any = None
        self._truth: list[bool | None] = []
        terms: dict[str, int] = {}
        for_eaches: dict[str, int] = {}
        for policy in policies:
            assert policy.applies_to is not None and policy.violation is not None  # the schema's
            numbers = []
            for node in _conjuncts(policy.applies_to.parsed):
                numbers.append(terms.setdefault(repr(node), len(self.tests)))
                if numbers[-1] == len(self.tests):
                    self.tests.append(interpreter.plain_evaluator(node))
            each = -1
            if policy.for_each is not None:
                each = for_eaches.setdefault(repr(policy.for_each.parsed), len(self.for_eaches))
                if each == len(self.for_eaches):
                    self.for_eaches.append(interpreter.plain_evaluator(policy.for_each.parsed))
            self.entries.append((policy, tuple(numbers), each, interpreter.plain_evaluator(policy.violation.parsed)))
        self._entry_of = {id(entry[0]): number for number, entry in enumerate(self.entries)}

    def _answers(self, view: Any) -> list[bool | None]:
        if view is not self._view:
            self._view, self._truth = view, [None] * len(self.tests)
        return self._truth

    def _passes(self, view: Any, numbers: tuple[int, ...], truth: list[bool | None]) -> bool:
        """Are the terms true of the view (`truth`: their answers so far)? Each is asked once
        a view; one that raises is not remembered."""
        for number in numbers:
            passed = truth[number]
            if passed is None:
                self.budget.produced = 0  # each term its own search, with its own budget
                passed = truth[number] = is_true(self.tests[number](view))
            if not passed:
                return False
        return True

    def applies(self, view: Mapping[str, Any], policy: Policy) -> bool:
        """Is the policy's applies_to true of the view? The terms' answers are the ones the
        evaluation of this view then reads (the workload stage asks before it makes the facts
        only such policies read). Raises what the evaluation would raise, remembering nothing."""
        return self._passes(view, self.entries[self._entry_of[id(policy)]][1], self._answers(view))

    def evaluate(self, view: Mapping[str, Any], resource: Resource) -> list[tuple[Policy, list[Finding] | Exception]]:
        """Each policy's findings on one view, or the exception that stopped it, in policy
        order; policies that do not apply or find nothing are left out."""
        results: list[tuple[Policy, list[Finding] | Exception]] = []
        elements_of: list[list[Any] | None] = [None] * len(self.for_eaches)
        budget = self.budget
        truth = self._answers(view)
        workload: _Workload | None = None  # made at the first finding (most views have few)
        for policy, numbers, each, violation in self.entries:
            try:
                if not self._passes(view, numbers, truth):
                    continue
                elements = [view] if each < 0 else elements_of[each]
                if elements is None:
                    budget.produced = 0
                    elements = elements_of[each] = _elements(self.for_eaches[each](view))
                found: list[Finding] = []
                for number, element in enumerate(elements):
                    budget.produced = 0
                    if is_true(violation(element)):
                        workload = workload or _Workload(view, resource, self.interpreter, self.renderers)
                        found.append(workload.finding(policy, elements, number, element))
                if found:
                    results.append((policy, found))
            except Exception as exc:  # noqa: BLE001 - the run reports it, naming the policy
                results.append((policy, exc))
        return results


class _Workload:
    """What the findings of one workload share, made at the first finding that needs it."""

    def __init__(self, view: Mapping[str, Any], resource: Resource, interpreter: Any,
                 renderers: dict[int, tuple[Policy, Any]]) -> None:
        self.view = view
        self.renderers = renderers
        self.resource = resource
        self.interpreter = interpreter
        self.tracker = Tracker(interpreter.tracking, resource.data, resource.base)
        self.ref: Any = None
        self.found_by_role: dict[Any, Any] | None = None
        self.places: dict[int, list[Any]] = {}  # id(policy) -> the for_each elements' path maps

    def finding(self, policy: Policy, elements: list[Any], number: int, element: Any) -> Finding:
        view, resource, interpreter = self.view, self.resource, self.interpreter
        tracker = self.tracker
        # An element that is a view or a record carries its paths; one the for_each builds
        # (`{node: ..., why: ...}`) gets them from evaluating the for_each again, with paths.
        element_where = own(element)
        if element_where is None:
            places = self.places.get(id(policy))
            if places is None:
                places = self.places[id(policy)] = _element_places(policy, view, tracker)
            element_where = places[number] if number < len(places) else None
        place = locate(policy, element, element_where, resource, tracker)
        assert policy.message is not None
        renderer = self.renderers.get(id(policy))
        if renderer is None or renderer[0] is not policy:
            renderer = self.renderers[id(policy)] = (policy, policy.message.renderer(interpreter))
        message = renderer[1](element)
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
            if self.found_by_role is None:
                self.found_by_role = {p.get("role"): p.get("found_by") for p in view.get("pods") or []
                                      if isinstance(p, dict)}
            found_by = self.found_by_role.get(role)
        if not isinstance(found_by, str):
            found_by = view.get("found_by")
        if self.ref is None:
            self.ref = resource.ref()
        shape = None
        if view.get("class_from") == "shape":
            shape = ("training" if view.get("training") else "serving", str(view.get("class_sign")))
        return Finding(
            rule_id=policy.id, rule_name=policy.name, severity=severity, message=message,
            location=place.location, resource=self.ref, role=role if isinstance(role, str) else None,
            container=container if isinstance(container, str) else None,
            document_index=resource.document_index, template=resource.helm_source,
            node_path=f"{_element_path(element, number)}|{place.matched}", evidence=policy.evidence,
            key_path=place.key_path, missing=place.missing, found_by=found_by if isinstance(found_by, str) else None,
            class_from=shape,
        )


def view_needs(policies: Iterable[Policy]) -> frozenset[str] | None:
    """The keys the policies' expressions name, for the workload stage to make only the costly
    facts they read (workloads/facts/registry.py); None, every fact, when a policy is not one of the
    built-in catalog's, as an expression of a user's could read a view whole (`keys(@)`,
    `to_string(pods[0])`), which no name shows. tests/test_views.py checks each built-in policy
    alone gives the same findings with its facts only."""
    from pathlib import Path

    from kubegap_lint.catalog.compile import names_read
    from kubegap_lint.catalog.patterns import expressions
    from kubegap_lint.core.datapaths import _data_dir

    builtin = _data_dir("policies").resolve()
    names: set[str] = set()
    for policy in policies:
        try:
            if Path(policy.path).resolve().parent != builtin:
                return None
        except (OSError, ValueError):
            return None
        for _, expression in expressions(policy):
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
        severity=fault.cap if fault.cap is not None and fault.cap.rank < policy.severity.rank else policy.severity,
        message=fault.message,
        location=Location(fault.path, fault.position.line, fault.position.column),
        document_index=fault.document_index,
        template=fault.helm_source,
        node_path=f"doc{fault.document_index}|{fault.message}",
        evidence=policy.evidence,
    )
