"""Locating: the compiler's tracking closures (catalog/tracked.py) with
engine/locate.Tracker give the value a plain search gives, and the place of each value."""

from __future__ import annotations

from typing import Any

import jmespath
import pytest
from jmespath_reference import ReferenceInterpreter

from kubegap_lint.catalog.functions import PolicyInterpreter
from kubegap_lint.engine import locate

DOCUMENT: dict[str, Any] = {
    "kind": "Job",
    "spec": {"backoffLimit": 0, "template": {"spec": {"containers": [{"name": "a", "image": "x"}]}}},
    "items": [{"name": "n1", "on": True}, {"name": "n2", "on": False}, {"name": "n3"}],
}
VIEW: dict[str, Any] = {"kind": "Job", "resource": DOCUMENT, "key_paths": {".": ("r",), "kind": ("r", "kind")}}

EXPRESSIONS = [
    # a filter over a multi-select list of objects (KG401's shape): only `hit` decides
    "[{hit: kind == 'Job', node: resource.spec.backoffLimit, why: 'a'},"
    " {hit: kind == 'Pod', node: resource.spec, why: join('', ['b', kind])},"
    " {hit: `true`, node: resource.spec.template, why: 'c'}][?hit]",
    # a repeated key: the object holds the last one's value
    "[{hit: `false`, node: resource.spec, hit: kind == 'Job'}, {hit: `true`, node: kind, hit: `false`}][?hit]",
    # the filter reads a key the objects lack, or is no plain field
    "[{node: resource.spec}, {hit: `true`, node: kind}][?missing]",
    "[{hit: `true`, node: resource.spec}, {hit: `false`, node: kind}][?hit == `true`]",
    # entries that are not objects
    "[resource.spec, kind, resource.items[0]][?on]",
    "[resource.items[0], {on: `true`, node: kind}][?on].node",
]


# `xs[?test] | [0].a.b` (KG301's, KG303's, KG501's `at:`s).
FIRST_KEPT = [
    "resource.items[?name] | [0]",
    "resource.items[?on] | [0].name",
    "resource.items[?name == 'n3'] | [0].on",  # a missing field of the first kept item
    "resource.items[?missing] | [0].name",  # none kept
    "resource.spec[?on] | [0]",  # no list
    "items[?@] | [0].name",  # a null item is not kept
    "containers[?has(env, 'X')] | [0].env.X",
    "containers[?name] | [0].raw.env",
    "pods[?on] | [0]",
    "pods[?has(env, 'X')] | [0].env",  # the test raises on the second pod (env is no object)
]
TRACKED_VIEW: dict[str, Any] = {
    "resource": DOCUMENT, "items": [None, {"name": "m"}, {"name": "k"}],
    "containers": [
        {"name": "c0", "env": {}, "raw": DOCUMENT["spec"], "key_paths": {".": ("r", "c0")}},
        {"name": "c1", "env": {"X": "1"}, "raw": {"env": [1]}, "key_paths": {".": ("r", "c1"), "env": ("r", "c1", "env")}},
        {"name": "c2", "env": {"X": "2"}, "key_paths": {".": ("r", "c2")}},
    ],
    "pods": [{"on": True, "env": {"X": 1}}, {"on": True, "env": "text"}],
    "key_paths": {".": ("r",), "items": ("r", "items")},
}


def _tracked(expression: str, value: Any) -> Any:
    interpreter = PolicyInterpreter({})
    tracker = locate.Tracker(interpreter.tracking, DOCUMENT, ("r",))
    try:
        return tracker.track(jmespath.compile(expression).parsed, value, locate.own(value))
    except jmespath.exceptions.JMESPathError as exc:
        return type(exc), str(exc)


def _searched(expression: str, value: Any) -> Any:
    try:
        return ReferenceInterpreter({}).search(jmespath.compile(expression), value)
    except jmespath.exceptions.JMESPathError as exc:
        return type(exc), str(exc)


@pytest.mark.parametrize("expression", EXPRESSIONS + FIRST_KEPT)
@pytest.mark.parametrize("value", [VIEW, TRACKED_VIEW, None, [1, 2]])
def test_a_tracked_expression_has_the_value_of_a_plain_search(expression: str, value: Any) -> None:
    found = _tracked(expression, value)
    if isinstance(found[0], type):
        assert found == _searched(expression, value)  # the same error
    else:
        assert found[0] == _searched(expression, value)


@pytest.mark.parametrize(("expression", "value", "where"), [
    # a filter over a multi-select list of objects (KG401's shape): each kept entry's places
    (EXPRESSIONS[0], VIEW, [{"hit": None, "node": ("r", "spec", "backoffLimit"), "why": None},
                            {"hit": None, "node": ("r", "spec", "template"), "why": None}]),
    (EXPRESSIONS[1], VIEW, [{"hit": None, "node": ("r", "spec")}]),
    (EXPRESSIONS[4], VIEW, [("r", "items", 0)]),  # a manifest mapping met without a path: by identity
    (EXPRESSIONS[5], VIEW, [("r", "kind")]),  # a view's own field
    ("resource.items[?on] | [0].name", VIEW, ("r", "items", 0, "name")),
    ("resource.items[?name == 'n3'] | [0].on", VIEW, ("r", "items", 2, "on")),  # a missing field
    ("items[?@] | [0].name", TRACKED_VIEW, ("r", "items", 1, "name")),  # a null item is not kept
    ("containers[?has(env, 'X')] | [0].env.X", TRACKED_VIEW, ("r", "c1", "env", "X")),
    ("containers[?name] | [0].raw.env", TRACKED_VIEW, ("r", "spec", "env")),  # a fact holding a manifest node
    ("resource.spec.missing.x", VIEW, ("r", "spec", "missing", "x")),
    ("resource.items[].on", VIEW, [("r", "items", 0, "on"), ("r", "items", 1, "on")]),  # nulls dropped
    ("resource.items[?on].name || kind", VIEW, [("r", "items", 0, "name")]),
    ("kind && resource.spec", VIEW, ("r", "spec")),
    ("[kind, resource.spec.backoffLimit]", VIEW, [("r", "kind"), ("r", "spec", "backoffLimit")]),
    ("{a: kind, b: resource.items[0]}.b.name", VIEW, ("r", "items", 0, "name")),
    ("resource.items | [-2]", VIEW, ("r", "items", 1)),
    ("resource.items[?missing] | [0].name", VIEW, None),
    ("pods[?on] | [0]", TRACKED_VIEW, None),  # a view's item with no paths of its own
])
def test_a_tracked_expression_places_its_value(expression: str, value: Any, where: Any) -> None:
    assert _tracked(expression, value)[1] == where
