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

from kubegap_lint.catalog.functions import PolicyFunctions, PolicyInterpreter
from kubegap_lint.catalog.policies import Catalog, Policy, _load_catalog
from kubegap_lint.config.settings import Settings
from kubegap_lint.engine.evaluate import truthy
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


def compiled(interpreter: PolicyInterpreter, expression: Any, value: Any) -> tuple[str, Any]:
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
    """The engine's truthy() and the compiler's is_false() against `a || b` in jmespath."""
    from kubegap_lint.catalog.compile import is_false

    says_true = jmespath.search("a && `true` || `false`", {"a": value})
    assert truthy(value) is says_true
    assert is_false(value) is not says_true


def test_an_unknown_node_type_falls_back_to_the_interpreter() -> None:
    interpreter = PolicyInterpreter(PARAMS)
    assert interpreter.search(jmespath.compile("a"), {"a": 1}) == 1  # makes the compiler
    compiler = interpreter._compiler
    assert compiler is not None
    visited: list[Any] = []

    class Recording:
        def visit(self, node: Any, value: Any) -> Any:
            visited.append(node["type"])
            return "from the interpreter"

    compiler.interpreter = Recording()
    evaluate = compiler.compile({"type": "some_future_node", "children": []})
    assert evaluate({"a": 1}) == "from the interpreter"
    assert visited == ["some_future_node"]


def test_the_reference_mode_walks_the_tree() -> None:
    """`compiled=False` is the interpreter (what the engine used before the compiler)."""
    slow = PolicyInterpreter(PARAMS, compiled=False)
    expression = jmespath.compile("a[?b > `1`].b | [0]")
    assert slow.search(expression, {"a": [{"b": 1}, {"b": 3}]}) == 3
    assert slow._compiler is None


def _budget_used(interpreter: PolicyInterpreter, expression: Any, value: Any) -> tuple[int, Any]:
    interpreter._interpreter.produced = 0
    outcome = compiled(interpreter, expression, value)
    return interpreter._interpreter.produced, outcome


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(expressions(), st.lists(documents, min_size=1, max_size=3))
def test_the_compiled_closures_count_what_the_bounded_interpreter_counts(text: str, values: list[Any]) -> None:
    """The value budget (functions.MAX_VALUES): each closure counts inside itself, and calls of
    functions that return no list, object or string are not counted; the total a search uses is
    still the interpreter's, value for value."""
    expression = _compiles(text)
    if expression is None:
        return
    fast, slow = PolicyInterpreter(PARAMS), PolicyInterpreter(PARAMS, compiled=False)
    for value in values:
        assert _budget_used(fast, expression, value) == _budget_used(slow, expression, value), (text, value)


def test_a_search_that_builds_nothing_counted_needs_no_budget_reset() -> None:
    from kubegap_lint.catalog.compile import counts

    assert not counts(jmespath.compile("serving && has_gpu && replicas >= `2` && !(budgets)").parsed)
    assert not counts(jmespath.compile("contains(names, name) || starts_with(a, 'b')").parsed)
    assert counts(jmespath.compile("contains(param('x'), name)").parsed)  # a parameter's list counts
    assert counts(jmespath.compile("pods[?has_gpu]").parsed)
    assert counts(jmespath.compile("join(', ', names)").parsed)  # builds a string
    assert counts(jmespath.compile("sort_by(pods, &name)").parsed)  # the interpreter evaluates exprefs


def test_the_budget_stops_a_compiled_search_as_it_stops_the_interpreter() -> None:
    doubling = jmespath.compile("length(a" + " | [@, @][]" * 40 + ")")
    for interpreter in (PolicyInterpreter(PARAMS), PolicyInterpreter(PARAMS, compiled=False)):
        with pytest.raises(jmespath.exceptions.JMESPathError, match="built over 1,000,000 values"):
            interpreter.search(doubling, {"a": [1]})
        # The next search has its own budget.
        assert interpreter.search(jmespath.compile("length(a | [@, @][])"), {"a": [1]}) == 2


def test_search_view_shares_one_result_between_rules_that_ask_the_same_of_a_view() -> None:
    interpreter = PolicyInterpreter(PARAMS)
    calls: list[Any] = []
    original = interpreter.search

    def counting(expression: Any, value: Any) -> Any:
        calls.append(expression.expression)
        return original(expression, value)

    interpreter.search = counting  # type: ignore[method-assign]
    one, same_tree, other = (jmespath.compile("pods[?has_gpu]"), jmespath.compile("pods[? has_gpu ]"),
                             jmespath.compile("pods[?nccl_gpu]"))
    view = {"pods": [{"has_gpu": True, "nccl_gpu": False}, {"has_gpu": False}]}
    assert interpreter.search_view(one, view) == [view["pods"][0]]
    assert interpreter.search_view(same_tree, view) == [view["pods"][0]]  # written otherwise: one tree
    assert interpreter.search_view(other, view) == []
    assert calls == ["pods[?has_gpu]", "pods[?nccl_gpu]"]
    # Another view (even equal to the first) is searched again.
    assert interpreter.search_view(same_tree, dict(view)) == [view["pods"][0]]
    assert calls == ["pods[?has_gpu]", "pods[?nccl_gpu]", "pods[? has_gpu ]"]


def test_a_parameter_is_read_once_at_compile_time_and_an_unknown_one_still_fails() -> None:
    interpreter = PolicyInterpreter({"keys": ["zone", "rack"]})
    known = jmespath.compile("[?contains(param('keys'), @)]")
    assert interpreter.search(known, ["rack", "host"]) == ["rack"]
    assert interpreter.search(jmespath.compile("param('keys')"), None) is interpreter._functions.params["keys"]
    for fast in (True, False):
        with pytest.raises(jmespath.exceptions.JMESPathError, match="unknown parameter 'nope'"):
            PolicyInterpreter({}, compiled=fast).search(jmespath.compile("param('nope')"), {})


# The shapes compile.py gives a closure of their own (fields read in place, constants decided
# at compile time, calls with a constant argument, chains in one loop), written out so that
# each is reached; the generated documents hold the fields they name, of every JSON type.
FIELDS = st.sampled_from(["a", "b", "name", "env"])
CONSTANTS = st.sampled_from(["`null`", "`true`", "`false`", "`0`", "`1`", "`2`", "`1.0`", "`0.0`", "`-2.5`",
                             "'a'", "''", "'NCCL_DEBUG'", "`[]`", "`{}`", "`[1]`", "`{\"a\": 1}`"])
STRINGS = st.sampled_from(["'a'", "''", "'NC'", "'NCCL_'", "'b*'", "`1`", "`null`"])
OPERATORS = st.sampled_from(["==", "!=", "<", "<=", ">", ">="])
SPECIALISED = st.one_of(
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
specialised_documents = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4),
                            st.dictionaries(st.sampled_from(["a", "b", "name", "env", "NCCL_DEBUG"]), inner, max_size=5)),
    max_leaves=16,
)


@pytest.mark.slow
@settings(max_examples=800, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(SPECIALISED, st.lists(specialised_documents, min_size=1, max_size=4))
def test_the_specialised_shapes_give_what_jmespath_gives_and_count_what_it_counts(text: str, values: list[Any]) -> None:
    expression = _compiles(text)
    if expression is None:
        return
    fast, slow = PolicyInterpreter(PARAMS), PolicyInterpreter(PARAMS, compiled=False)
    for value in values:
        for document in (value, {"a": value, "b": [value, {"a": value}], "name": value, "env": value}):
            want, got = reference(expression, document), compiled(fast, expression, document)
            assert want[0] == got[0] and same(want[1], got[1]), (text, document, want, got)
            assert _budget_used(fast, expression, document) == _budget_used(slow, expression, document), (text, document)


@pytest.mark.parametrize(("text", "closure"), [
    ("replicas >= `2`", "field_ordering"),
    ("kind == 'Job'", "field_eq"),
    ("gpus != `0`", "<lambda>"),  # against 0 a boolean is never equal: jmespath's special case
    ("!partial", "not_field"),
    ("volume_type || ''", "field_or_constant"),
    ("has_gpu && !partial && !diagnostic", "all_of"),
    ("a || b || c", "any_of"),
    ("starts_with_any(name, ['NCCL_', 'TORCH_NCCL_'])", "call2_listed"),
    ("!known_name(name, param('gpu_resources'))", "not_call"),
    ("has(env, 'X')", "call2_field_constant"),
    ("contains(param('gpu_resources'), @)", "call2_constant_current"),
    ("match('^a', env.NCCL_DEBUG)", "call2_constant_path"),
    ("to_number(env.NCCL_IB_TIMEOUT)", "to_number_path"),
    ("length(env.NCCL_IB_TIMEOUT)", "call1_path"),
    ("env_list[?starts_with_any(name, ['NCCL_', 'TORCH_NCCL_'])]", "project_fused"),
    ("containers[?has(env, 'X')]", "project_fused"),
    ("containers[?has(env, `1`)]", "project_filtered"),
    ("containers[].mounts[]", "project_flat"),
    ("pods[].spread", "project_flat"),
    ("{hit: a, why: 'text', node: node}", "select_template"),
    ("[a, b]", "select_two"),
])
def test_each_shape_gets_its_own_closure(text: str, closure: str) -> None:
    """The shapes the built-in policies use most get the closures the differential tests above
    reach (a change to the compiler that drops one shows here, not only as a slower lint)."""
    interpreter = PolicyInterpreter(PARAMS)
    assert interpreter.plain_evaluator(jmespath.compile(text).parsed).__name__ == closure


def test_constant_forms_answer_as_the_functions_do() -> None:
    """functions.PolicyFunctions.constant_form against the functions themselves."""
    functions = PolicyFunctions(PARAMS)
    cases: list[tuple[str, Any, list[Any]]] = [
        ("starts_with_any", ["NCCL_", "TORCH_", 1], ["NCCL_DEBUG", "TORCH_X", "X", "", "NCCL"]),
        ("has", "X", [{"X": None}, {"Y": 1}, {}]),
        ("known_name", ["NCCL_DEBUG", "NCCL_SHARP_*", 3], ["NCCL_DEBUG", "NCCL_SHARP_X", "NCCL_SHARP_", "NCCL", ""]),
        ("known_name", ["A", "B"], ["A", "C", ""]),
    ]
    for name, constant, subjects in cases:
        form = functions.constant_form(name, constant)
        assert form is not None
        kind, call = form
        function = functions.FUNCTION_TABLE[name]["function"]
        for subject in subjects:
            assert type(subject) is kind
            assert call(subject) is function(functions, subject, constant), (name, constant, subject)
    assert functions.constant_form("starts_with_any", ["", "a"]) is None  # '' would start every subject
    assert functions.constant_form("contains", ["a"]) is None
