"""The fast indented writer (core/jsonpieces.indented) against json.dumps(indent=2, ensure_ascii=True)."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kubegap_lint.core.jsonpieces import indented, json_with_lists

keys = st.one_of(st.text(max_size=6), st.integers(), st.booleans(), st.none(),
                 st.floats(allow_nan=False))
scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text())
values = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.tuples(inner, inner),
                            st.dictionaries(keys, inner, max_size=4)),
    max_leaves=25,
)


def reference(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=True)


@settings(max_examples=500, deadline=None)
@given(values)
def test_byte_for_byte_what_json_dumps_writes(value: Any) -> None:
    text = reference(value)
    assert indented(value) == text
    assert indented(value, "\n    ") == text.replace("\n", "\n    ")


def test_other_types_go_to_json_dumps() -> None:
    class Number(int):
        pass

    assert indented({"a": Number(3), "b": [1.5, float("inf")]}) == reference({"a": 3, "b": [1.5, float("inf")]})
    try:
        indented({"a": object()})
    except TypeError as exc:
        assert "not JSON serializable" in str(exc)
    else:
        raise AssertionError("an object is not JSON")


@given(st.dictionaries(st.text(max_size=4), values, max_size=3), st.lists(values, max_size=4))
@settings(max_examples=200, deadline=None)
def test_a_document_in_pieces_is_one_json_dumps(head: dict[str, Any], items: list[Any]) -> None:
    head.pop("items", None)
    assert "".join(json_with_lists(head, {"items": iter(items)})) == reference({**head, "items": items}) + "\n"
