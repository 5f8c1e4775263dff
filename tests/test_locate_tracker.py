"""engine/locate.Tracker's shortcuts give the values and the places the plain tracking gives."""

from __future__ import annotations

from typing import Any

import jmespath
import pytest

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


def _tracked(expression: str, value: Any, where: Any) -> tuple[Any, Any]:
    interpreter = PolicyInterpreter({})
    tracker = locate.Tracker(interpreter.visit, DOCUMENT, ("r",))
    return tracker.track(jmespath.compile(expression).parsed, value, where)


@pytest.mark.parametrize("expression", EXPRESSIONS)
@pytest.mark.parametrize("value", [VIEW, None])
def test_a_filtered_multi_select_tracks_as_without_the_shortcut(
        expression: str, value: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    where = locate.own(value)
    found = _tracked(expression, value, where)
    assert found[0] == jmespath.search(expression, value)
    monkeypatch.setattr(locate, "_selected_test", lambda part, condition: None)
    assert found == _tracked(expression, value, where)


def test_the_shortcut_is_taken_for_a_plain_field_test() -> None:
    parsed = jmespath.compile(EXPRESSIONS[1]).parsed
    parts, condition = parsed["children"][0]["children"], parsed["children"][2]
    assert [locate._selected_test(part, condition) for part in parts] == [
        parts[0]["children"][2]["children"][0], parts[1]["children"][2]["children"][0]]
    plain = jmespath.compile(EXPRESSIONS[3]).parsed
    assert locate._selected_test(plain["children"][0]["children"][0], plain["children"][2]) is None


# `xs[?test] | [0].a.b` (KG301's, KG303's, KG501's `at:`s): placed in one step.
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


@pytest.mark.parametrize("expression", FIRST_KEPT)
@pytest.mark.parametrize("value", [VIEW, TRACKED_VIEW, None, [1, 2]])
def test_the_first_item_of_a_filter_is_placed_as_the_steps_place_it(
        expression: str, value: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    parsed = jmespath.compile(expression).parsed
    assert locate._first_of_filter(parsed["children"])
    where = locate.own(value)

    def tracked() -> Any:
        try:
            return _tracked(expression, value, where)
        except jmespath.exceptions.JMESPathError as exc:
            return type(exc), str(exc)

    found = tracked()
    if not isinstance(found[0], type):  # the value is the plain search's (the policy functions' `has`)
        assert found[0] == PolicyInterpreter({}, compiled=False).search(jmespath.compile(expression), value)
    monkeypatch.setattr(locate, "_first_of_filter", lambda children: False)
    assert found == tracked()


def test_the_first_kept_step_is_taken_only_for_its_shape() -> None:
    for text in ("items[?on] | [1]", "items[?on] | [0][0]", "items[?on].name | [0]", "items[?on] | [0] | name",
                 "[a, b][?on] | [0]", "items[?on] | [0].name[0]"):
        assert not locate._first_of_filter(jmespath.compile(text).parsed["children"]), text
