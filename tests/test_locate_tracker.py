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
