"""The JMESPath compiler (catalog/compile.py) against jmespath itself: every policy expression
on the views of the examples, of ../shared/corpus and of generated streams, and generated
expressions on generated documents. Any difference in result (types included: 1 is not true)
or in error (class and message) fails."""

from __future__ import annotations

import io
import math
from collections.abc import Iterator
from typing import Any

import jmespath
import pytest
from conftest import CORPUS, EXAMPLES, load_bench_generator, requires_shared
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jmespath_reference import ReferenceInterpreter

from kubegap_lint.catalog.compile import is_true
from kubegap_lint.catalog.functions import PolicyFunctions, PolicyInterpreter
from kubegap_lint.catalog.policies import Catalog, Policy, _load_catalog
from kubegap_lint.config.settings import Settings
from kubegap_lint.engine.run import Linter, effective_params

CATALOG: Catalog = _load_catalog([], None)  # from the files: no cache between the test and the code
PARAMS = effective_params(CATALOG, Settings())


def reference(expression: Any, value: Any) -> tuple[str, Any]:
    """What jmespath.search gives (with the policy functions), as ('ok', result) or ('error', ...)."""
    options = jmespath.Options(custom_functions=PolicyFunctions(PARAMS))
    try:
        return "ok", jmespath.search(expression.expression, value, options)
    except Exception as exc:
        return "error", (type(exc), str(exc))


def compiled(interpreter: Any, expression: Any, value: Any) -> tuple[str, Any]:
    try:
        return "ok", interpreter.search(expression, value)
    except Exception as exc:
        return "error", (type(exc), str(exc))


def same(a: Any, b: Any) -> bool:
    """Equal and of the same JSON types all the way down (True == 1 in Python, not here)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    return bool(a == b)


def policy_expressions(policy: Policy) -> Iterator[tuple[str, Any]]:
    for key in ("applies_to", "for_each", "violation", "severity_expr"):
        if getattr(policy, key) is not None:
            yield key, getattr(policy, key)
    for text, expression in policy.at:
        yield f"at {text}", expression
    if policy.message is not None:
        for part in policy.message.parts:
            if not isinstance(part, str):
                yield "message", part


def values_of(policy: Policy, view: dict[str, Any]) -> Iterator[Any]:
    """The values a run evaluates the policy's expressions on: the view and its elements."""
    yield view
    if policy.for_each is not None:
        found = jmespath.search(policy.for_each.expression, view,
                                jmespath.Options(custom_functions=PolicyFunctions(PARAMS)))
        yield from found if isinstance(found, list) else [found]


def check_views(views: list[dict[str, Any]]) -> int:
    """Every policy expression on every view (and every for_each element); the comparisons made."""
    interpreter = PolicyInterpreter(PARAMS)
    checked = 0
    differences = []
    for policy in CATALOG.policies:
        if policy.scope != "workload":
            continue
        for view in views:
            for value in values_of(policy, view):
                for where, expression in policy_expressions(policy):
                    want, got = reference(expression, value), compiled(interpreter, expression, value)
                    checked += 1
                    if want[0] != got[0] or not same(want[1], got[1]):
                        differences.append(f"{policy.id} {where}: {expression.expression!r}: {want} != {got}")
    assert differences == []
    return checked


def views_of(paths: list[str]) -> list[dict[str, Any]]:
    return Linter(Settings()).lint_paths(paths, keep_views=True).views


def test_every_policy_expression_on_the_examples() -> None:
    views = views_of([str(EXAMPLES)])
    assert len(views) > 50
    assert check_views(views) > 10_000


@pytest.mark.slow
@requires_shared
def test_every_policy_expression_on_the_corpus() -> None:
    views = views_of([str(CORPUS)])
    assert len(views) > 100
    assert check_views(views) > 10_000


@pytest.mark.slow
def test_every_policy_expression_on_a_generated_stream(tmp_path: Any) -> None:
    generator = load_bench_generator()
    text = io.StringIO()
    generator.write_stream(150, 7, text)
    (tmp_path / "stream.yaml").write_text(text.getvalue(), encoding="utf-8")
    views = views_of([str(tmp_path / "stream.yaml")])
    assert len(views) > 30
    check_views(views)


# Generated documents: keys from a small set so that generated expressions find them.
KEYS = ["a", "b", "c", "name", "env", "value", "path"]
scalars = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.sampled_from([0.0, 1.0, 1.5, -2.5]),
                    st.sampled_from(["", "a", "b", "NCCL_DEBUG", "/data", "1", "0"]))
documents = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.sampled_from(KEYS), inner, max_size=4)),
    max_leaves=20,
)


def _quote(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


literals = st.one_of(
    st.sampled_from(["`null`", "`true`", "`false`", "`0`", "`1`", "`2.5`", "`\"a\"`", "`[]`", "`{}`",
                     "`[1, \"a\"]`", "`{\"a\": 1}`"]),
    st.sampled_from(["", "a", "b", "/data", "NCCL_DEBUG"]).map(_quote),
)
FUNCTIONS_1 = ["length", "keys", "values", "to_string", "to_number", "type", "not_null", "to_array",
               "abs", "sort", "max", "min", "sum", "avg", "reverse", "items", "quantity", "floor"]
FUNCTIONS_2 = ["contains", "starts_with", "ends_with", "join", "has", "lookup", "contains_any",
               "starts_with_any", "covering_mount", "known_name", "merge", "not_null", "match"]


def expressions() -> st.SearchStrategy[str]:
    leaf = st.one_of(st.sampled_from(KEYS), st.just("@"), literals, st.just("param('gpu_resources')"))

    def extend(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
        pair = st.tuples(inner, inner)
        return st.one_of(
            pair.map(lambda p: f"{p[0]}.{p[1]}" if p[1][0].isalpha() else f"{p[0]} | {p[1]}"),
            st.tuples(inner, st.integers(-2, 2)).map(lambda p: f"({p[0]})[{p[1]}]"),
            st.tuples(inner, st.sampled_from(["[1:]", "[:2]", "[::-1]", "[::2]", "[-1:0:-1]"]))
            .map(lambda p: f"({p[0]}){p[1]}"),
            pair.map(lambda p: f"({p[0]})[*].{p[1]}" if p[1][0].isalpha() else f"({p[0]})[*]"),
            pair.map(lambda p: f"({p[0]})[].{p[1]}" if p[1][0].isalpha() else f"({p[0]})[]"),
            pair.map(lambda p: f"({p[0]}).*.{p[1]}" if p[1][0].isalpha() else f"({p[0]}).*"),
            st.tuples(inner, inner, st.sampled_from(["==", "!=", "<", "<=", ">", ">="]), inner)
            .map(lambda p: f"({p[0]})[?({p[1]}) {p[2]} ({p[3]})]"),
            st.tuples(inner, inner).map(lambda p: f"({p[0]})[?{p[1]}]"),
            st.tuples(inner, st.sampled_from(["==", "!=", "<", "<=", ">", ">=", "||", "&&"]), inner)
            .map(lambda p: f"({p[0]}) {p[1]} ({p[2]})"),
            inner.map(lambda e: f"!({e})"),
            pair.map(lambda p: f"[{p[0]}, {p[1]}]"),
            pair.map(lambda p: f"{{a: {p[0]}, b: {p[1]}}}"),
            pair.map(lambda p: f"({p[0]}).[{p[1]}]"),
            st.tuples(st.sampled_from(FUNCTIONS_1), inner).map(lambda p: f"{p[0]}({p[1]})"),
            st.tuples(st.sampled_from(FUNCTIONS_2), inner, inner).map(lambda p: f"{p[0]}({p[1]}, {p[2]})"),
            st.tuples(st.sampled_from(["sort_by", "max_by", "min_by", "map"]), inner, inner)
            .map(lambda p: f"{p[0]}({p[1]}, &{p[2]})" if p[0] != "map" else f"map(&{p[2]}, {p[1]})"),
        )

    return st.recursive(leaf, extend, max_leaves=8)


def _compiles(text: str) -> Any:
    try:
        return jmespath.compile(text)
    except jmespath.exceptions.JMESPathError:
        return None


@pytest.mark.slow
@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(expressions(), st.lists(documents, min_size=1, max_size=4))
def test_generated_expressions_on_generated_documents(text: str, values: list[Any]) -> None:
    expression = _compiles(text)
    if expression is None:
        return
    interpreter = PolicyInterpreter(PARAMS)
    for value in values:
        want, got = reference(expression, value), compiled(interpreter, expression, value)
        assert want[0] == got[0] and same(want[1], got[1]), (text, value, want, got)


@pytest.mark.slow
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(documents)
def test_every_policy_expression_on_generated_documents(value: Any) -> None:
    interpreter = PolicyInterpreter(PARAMS)
    for policy in CATALOG.policies:
        for where, expression in policy_expressions(policy):
            want, got = reference(expression, value), compiled(interpreter, expression, value)
            assert want[0] == got[0] and same(want[1], got[1]), (policy.id, where, value, want, got)


@pytest.mark.parametrize("value", [None, False, True, 0, 0.0, 1, "", "x", [], [0], {}, {"a": None}, ()])
def test_truthiness_is_jmespaths(value: Any) -> None:
    """compile.is_true, the one truth of the engine, against `a || b` in jmespath."""
    says_true = jmespath.search("a && `true` || `false`", {"a": value})
    assert is_true(value) is says_true


def test_an_unknown_node_type_raises_as_jmespaths_visitor_does() -> None:
    interpreter = PolicyInterpreter(PARAMS)
    with pytest.raises(NotImplementedError, match="some_future_node"):
        interpreter.compiler.compile({"type": "some_future_node", "children": []})


def _budget_used(interpreter: PolicyInterpreter | ReferenceInterpreter, expression: Any, value: Any) -> tuple[int, Any]:
    outcome = compiled(interpreter, expression, value)
    used = interpreter.produced if isinstance(interpreter, ReferenceInterpreter) else interpreter.budget.produced
    return used, outcome


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(expressions(), st.lists(documents, min_size=1, max_size=3))
def test_the_compiled_closures_count_what_the_bounded_interpreter_counts(text: str, values: list[Any]) -> None:
    """The value budget (budget.MAX_VALUES): the total a search uses is the reference
    interpreter's (tests/jmespath_reference.py), value for value."""
    expression = _compiles(text)
    if expression is None:
        return
    fast, slow = PolicyInterpreter(PARAMS), ReferenceInterpreter(PARAMS)
    for value in values:
        assert _budget_used(fast, expression, value) == _budget_used(slow, expression, value), (text, value)


@pytest.mark.parametrize(("text", "value", "used"), [
    # Hypothesis found it: contains() of an object fails its type check before it walks, so
    # neither side charges the object (the reference charged it, the closures did not).
    ("([@, @])[?(contains(@, @)) == (!(@))]", {}, 2),
    ("contains(@, @)", {"a": 1}, 0),
    ("contains(@, @)", [], 1),
    ("to_string(@)", {"a": [1, 2]}, 4 + 11),  # the tree walked (4 values), the 11 characters made
])
def test_a_walking_call_is_charged_alike(text: str, value: Any, used: int) -> None:
    expression = jmespath.compile(text)
    fast, slow = PolicyInterpreter(PARAMS), ReferenceInterpreter(PARAMS)
    assert _budget_used(fast, expression, value)[0] == _budget_used(slow, expression, value)[0] == used


def test_the_budget_stops_a_compiled_search_as_it_stops_the_interpreter() -> None:
    doubling = jmespath.compile("length(a" + " | [@, @][]" * 40 + ")")
    for interpreter in (PolicyInterpreter(PARAMS), ReferenceInterpreter(PARAMS)):
        with pytest.raises(jmespath.exceptions.JMESPathError, match="built over 1,000,000 values"):
            interpreter.search(doubling, {"a": [1]})
        # The next search has its own budget.
        assert interpreter.search(jmespath.compile("length(a | [@, @][])"), {"a": [1]}) == 2


def test_a_parameter_is_read_once_at_compile_time_and_an_unknown_one_still_fails() -> None:
    interpreter = PolicyInterpreter({"keys": ["zone", "rack"]})
    known = jmespath.compile("[?contains(param('keys'), @)]")
    assert interpreter.search(known, ["rack", "host"]) == ["rack"]
    assert interpreter.search(jmespath.compile("param('keys')"), None) is interpreter._functions.params["keys"]
    for reference in (False, True):
        searcher = ReferenceInterpreter({}) if reference else PolicyInterpreter({})
        with pytest.raises(jmespath.exceptions.JMESPathError, match="unknown parameter 'nope'"):
            searcher.search(jmespath.compile("param('nope')"), {})


def test_a_call_on_constants_is_made_once_a_run_and_still_counted() -> None:
    """`param('keys')` (pure functions, fixed parameters) is called when compiled, not at each
    search; what it builds is still counted at each search, as the reference counts it."""
    read: list[str] = []

    class Params(dict):  # type: ignore[type-arg]
        def __getitem__(self, key: str) -> Any:
            read.append(key)
            return super().__getitem__(key)

    interpreter = PolicyInterpreter(Params(keys=["zone", "rack"]))
    expression = jmespath.compile("contains(param('keys'), @) && length(param('keys'))")
    assert [interpreter.search(expression, name) for name in ("rack", "host", "zone")] == [2, False, 2]
    assert read == ["keys", "keys"]  # once for each call in the expression, when compiled
    assert _budget_used(interpreter, expression, "rack") == _budget_used(ReferenceInterpreter(
        {"keys": ["zone", "rack"]}), expression, "rack") == (4, ("ok", 2))


def test_an_argument_type_accepted_once_is_still_refused_when_it_changes() -> None:
    """functions.PolicyFunctions.caller remembers the argument types jmespath accepted; an
    array of typed items (`join`'s) is checked every time, by jmespath."""
    interpreter = PolicyInterpreter(PARAMS)
    length, join = jmespath.compile("length(a)"), jmespath.compile("join(', ', a)")
    assert interpreter.search(length, {"a": "abc"}) == 3
    assert interpreter.search(join, {"a": ["x", "y"]}) == "x, y"
    with pytest.raises(jmespath.exceptions.JMESPathTypeError, match="length()"):
        interpreter.search(length, {"a": 1})
    with pytest.raises(jmespath.exceptions.JMESPathTypeError, match="join()"):
        interpreter.search(join, {"a": ["x", 1]})


# The shapes the built-in policies use most (fields against constants, calls with a constant
# argument, calls made at compile time, filters, flattens, multi-selects), written out so that
# each is reached; the generated documents hold the fields they name, of every JSON type.
FIELDS = st.sampled_from(["a", "b", "name", "env"])
CONSTANTS = st.sampled_from(["`null`", "`true`", "`false`", "`0`", "`1`", "`2`", "`1.0`", "`0.0`", "`-2.5`",
                             "'a'", "''", "'NCCL_DEBUG'", "`[]`", "`{}`", "`[1]`", "`{\"a\": 1}`"])
STRINGS = st.sampled_from(["'a'", "''", "'NC'", "'NCCL_'", "'b*'", "`1`", "`null`"])
OPERATORS = st.sampled_from(["==", "!=", "<", "<=", ">", ">="])
COMMON_SHAPES = st.one_of(
    st.tuples(FIELDS, OPERATORS, CONSTANTS).map(lambda p: f"{p[0]} {p[1]} {p[2]}"),
    st.tuples(FIELDS, FIELDS, OPERATORS, CONSTANTS).map(lambda p: f"{p[0]}.{p[1]} {p[2]} {p[3]}"),
    FIELDS.map(lambda f: f"!{f}"),
    st.tuples(FIELDS, CONSTANTS).map(lambda p: f"{p[0]} || {p[1]}"),
    st.tuples(FIELDS, FIELDS).map(lambda p: f"{p[0]} || {p[1]}"),
    st.tuples(FIELDS, FIELDS).map(lambda p: f"{p[0]} && !{p[1]}"),
    st.lists(st.one_of(FIELDS, FIELDS.map(lambda f: f"!{f}"), st.tuples(FIELDS, CONSTANTS).map(
        lambda p: f"{p[0]} == {p[1]}")), min_size=3, max_size=5).map(lambda parts: " && ".join(parts)),
    st.lists(st.one_of(FIELDS, CONSTANTS), min_size=3, max_size=5).map(lambda parts: " || ".join(parts)),
    st.tuples(st.sampled_from(["starts_with_any", "known_name", "contains_any", "contains", "has", "starts_with"]),
              st.sampled_from(["", "!"]), FIELDS, st.lists(STRINGS, max_size=3))
    .map(lambda p: f"{p[1]}{p[0]}({p[2]}, [{', '.join(p[3])}])"),
    st.tuples(st.sampled_from(["has", "known_name", "starts_with", "ends_with", "contains", "join", "lookup"]),
              st.sampled_from(["", "!"]), FIELDS, STRINGS)
    .map(lambda p: f"{p[1]}{p[0]}({p[2]}, {p[3]})"),
    st.tuples(st.sampled_from(["known_name", "starts_with_any", "contains_any"]), st.sampled_from(["", "!"]), FIELDS)
    .map(lambda p: f"{p[1]}{p[0]}({p[2]}, param('gpu_resources'))"),
    st.tuples(st.sampled_from(["contains", "match"]), STRINGS, st.sampled_from(["@", "a", "a.name", "env.b"]))
    .map(lambda p: f"{p[0]}([{p[1]}], {p[2]})" if p[0] == "contains" else f"match({p[1]}, {p[2]})"),
    st.just("contains(param('gpu_resources'), @)"),
    st.tuples(st.sampled_from(["length", "keys", "abs", "floor", "ceil", "sum", "to_number"]), FIELDS, FIELDS)
    .map(lambda p: f"{p[0]}({p[1]}.{p[2]})"),
    st.tuples(FIELDS, FIELDS).map(lambda p: f"{p[0]}[].{p[1]}"),
    st.tuples(FIELDS, FIELDS).map(lambda p: f"{p[0]}[].{p[1]}[]"),
    FIELDS.map(lambda f: f"{f}[][]"),
    st.tuples(FIELDS, FIELDS, CONSTANTS).map(lambda p: f"{p[0]}[?{p[1]} != {p[2]}]"),
    st.tuples(FIELDS, st.sampled_from(["starts_with_any", "known_name", "contains_any"]), FIELDS,
              st.lists(STRINGS, max_size=3)).map(lambda p: f"{p[0]}[?{p[1]}({p[2]}, [{', '.join(p[3])}])]"),
    st.tuples(FIELDS, st.sampled_from(["has", "known_name", "starts_with"]), FIELDS, STRINGS)
    .map(lambda p: f"{p[0]}[?{p[1]}({p[2]}, {p[3]})]"),
    st.tuples(FIELDS, FIELDS).map(lambda p: f"{p[0]} | [?known_name({p[1]}, param('gpu_resources'))].a"),
    st.tuples(FIELDS, FIELDS).map(lambda p: f"[{p[0]}, {p[1]}]"),
    st.tuples(FIELDS, CONSTANTS, FIELDS).map(lambda p: f"{{x: {p[0]}, y: {p[1]}, z: {p[2]}.a}}"),
    st.tuples(FIELDS, CONSTANTS, FIELDS).map(lambda p: f"[{{hit: {p[0]}, why: {p[1]}}}, {{hit: {p[2]}, why: 'w'}}][?hit]"),
)
shape_documents = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4),
                            st.dictionaries(st.sampled_from(["a", "b", "name", "env", "NCCL_DEBUG"]), inner, max_size=5)),
    max_leaves=16,
)


@pytest.mark.slow
@settings(max_examples=800, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(COMMON_SHAPES, st.lists(shape_documents, min_size=1, max_size=4))
def test_the_commonest_shapes_give_what_jmespath_gives_and_count_what_it_counts(text: str, values: list[Any]) -> None:
    expression = _compiles(text)
    if expression is None:
        return
    fast, slow = PolicyInterpreter(PARAMS), ReferenceInterpreter(PARAMS)
    for value in values:
        for document in (value, {"a": value, "b": [value, {"a": value}], "name": value, "env": value}):
            want, got = reference(expression, document), compiled(fast, expression, document)
            assert want[0] == got[0] and same(want[1], got[1]), (text, document, want, got)
            assert _budget_used(fast, expression, document) == _budget_used(slow, expression, document), (text, document)


def test_comparing_or_printing_shared_halves_is_charged_by_what_it_walks() -> None:
    """`[@, @]` forty times builds 80 values whose tree holds 2^40: comparing two of them, or
    printing one, would take hours or all memory (issue 35). The budget charges what is walked."""
    import time

    doubled = "a" + " | [@, @]" * 40
    for text in (f"({doubled}) == ({doubled})", f"to_string({doubled})", f"contains([{doubled}], {doubled})"):
        expression = jmespath.compile(text)
        for interpreter in (PolicyInterpreter(PARAMS), ReferenceInterpreter(PARAMS)):
            started = time.monotonic()
            with pytest.raises(jmespath.exceptions.JMESPathError, match="built over 1,000,000 values"):
                interpreter.search(expression, {"a": "x"})
            assert time.monotonic() - started < 5, text
    # Small structures compare and print as before, charged their size.
    interpreter = PolicyInterpreter(PARAMS)
    assert interpreter.search(jmespath.compile("(a | [@, @]) == (a | [@, @])"), {"a": [1]}) is True
    assert interpreter.search(jmespath.compile("to_string(a | [@, @])"), {"a": [1]}) == "[[1],[1]]"
