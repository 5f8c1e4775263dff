"""Compile a parsed JMESPath expression into Python closures, once per run.

jmespath's `TreeInterpreter` walks the AST (plain dicts) again for every search: a dict
lookup of the node type, a bound-method dispatch and a `node['children']` lookup per node, per
pod. Here each node becomes one closure that holds its children's closures, so a search is a
few direct calls. The semantics are jmespath 1.x's interpreter (`jmespath/visitor.py`) node
for node: the same truthiness, null propagation, projections that drop nulls, comparators
that give null for ordering anything but numbers and strings, and functions called through
the run's `PolicyFunctions` with the same argument checks and errors. A node type not
handled here is evaluated by the interpreter itself (`fallback`), so a user policy using it
still works. tests/test_compile.py checks every policy expression, and generated ones,
against `jmespath.search`.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Iterable
from typing import Any

import jmespath.functions
from jmespath.visitor import _equals, _Expression, _is_actual_number

Evaluator = Callable[[Any], Any]

# jmespath checks argument types by the Python type's name, not isinstance (a bool is not a
# number, an OrderedDict is an object): the same names, from jmespath.functions.
_TYPE_NAMES = {
    "boolean": ("bool",),
    "array": ("list", "_Projection"),
    "object": ("dict", "OrderedDict"),
    "null": ("NoneType",),
    "string": ("unicode", "str"),
    "number": ("float", "int", "long"),
    "expref": ("_Expression",),
}

_ORDERING = {"lt": operator.lt, "gt": operator.gt, "lte": operator.le, "gte": operator.ge}


def is_false(value: Any) -> bool:
    """JMESPath's false: null, false, and empty strings, arrays and objects (0 is true).

    The interpreter tests `value == ''`, `== []`, `== {}`: for JSON data that is exactly an
    empty str, list or dict (subclasses included), which `not value` tells faster. The
    closures below inline this test (a call per node costs more than the test).
    """
    if value is None or value is False:
        return True
    if isinstance(value, (str, list, dict)):
        return not value
    return False


# Nodes that build new lists, objects or strings: what functions.BoundedInterpreter counts.
# Each counts inside its own closure, with no wrapper call per node: the length of what it
# built is added to the search's budget, which the interpreter holds (`produced`, reset at
# the start of each search by functions.PolicyInterpreter).
BUILDERS = frozenset({"projection", "value_projection", "filter_projection", "flatten",
                      "multi_select_list", "multi_select_dict", "function_expression"})

# Functions whose result is never a list, an object or a string: the interpreter counts 0
# for each of their results, so their calls are not counted at all.
_SCALAR_FUNCTIONS = frozenset({"abs", "avg", "ceil", "contains", "ends_with", "floor", "length",
                               "starts_with", "sum", "to_number", "match", "quantity", "contains_any",
                               "starts_with_any", "has", "known_name"})


# Functions that return only true or false (`!` of their result is Python's `not`).
_BOOLEAN_FUNCTIONS = frozenset({"contains", "ends_with", "starts_with", "match", "contains_any",
                                "starts_with_any", "has", "known_name"})


# jmespath's functions whose body is exactly one built-in call on the checked arguments
# (jmespath/functions.py 1.x: `_func_contains` is `search in subject`, `_func_keys` is
# `list(arg.keys())`, which `list` gives for an object ...): called directly.
_DIRECT: dict[str, Any] = {
    "abs": abs, "ceil": math.ceil, "floor": math.floor, "contains": operator.contains, "length": len,
    "starts_with": str.startswith, "ends_with": str.endswith, "join": str.join, "keys": list, "sum": sum,
}


class _Nothing:
    """A type no value has: a constant form's type when there is none."""


class _Unbounded:
    """The budget of an interpreter that sets none (a test's stand-in): counts, never stops."""

    produced = 0
    limit = float("inf")


def counts(node: dict[str, Any]) -> bool:
    """Does evaluating this tree count against the budget (a value-building node, or a node
    the interpreter evaluates)? A search of one that does not needs no reset."""
    kind = node.get("type")
    if kind in BUILDERS and not (kind == "function_expression" and node.get("value") in _SCALAR_FUNCTIONS):
        return True
    if kind == "expref" or not hasattr(Compiler, "_" + str(kind)):
        return True  # evaluated by the interpreter, which counts
    return any(counts(child) for child in node.get("children") or () if isinstance(child, dict))


class Compiler:
    """Compiles parsed expressions against one run's functions and interpreter."""

    def __init__(self, functions: Any, interpreter: Any) -> None:
        self.functions = functions
        self.interpreter = interpreter  # for exprefs and for node types not compiled here
        # The budget: the bounded interpreter itself (functions.MAX_VALUES), or none.
        self.budget: Any = interpreter if hasattr(interpreter, "over_budget") else _Unbounded()
        # Calls `f(field, constant)` a filter can make in its own loop: id(closure) -> (the
        # closure, the field, what the constant counts, the type and callable of its constant
        # form), for a dict item whose field has that type (the closure does the rest).
        self._fused: dict[int, tuple[Any, str, int, type, Any]] = {}

    def compile(self, node: dict[str, Any]) -> Evaluator:
        method = getattr(self, "_" + str(node.get("type")), None)
        if method is None:
            return self.fallback(node)
        result: Evaluator = method(node)
        return result

    def fallback(self, node: dict[str, Any]) -> Evaluator:
        visit = self.interpreter.visit
        return lambda value: visit(node, value)

    # Leaves

    def _field(self, node: dict[str, Any]) -> Evaluator:
        key = node["value"]

        def field(value: Any) -> Any:
            if type(value) is dict:
                return value.get(key)
            try:
                return value.get(key)
            except AttributeError:
                return None

        return field

    def _literal(self, node: dict[str, Any]) -> Evaluator:
        constant = node["value"]
        return lambda value: constant

    def _current(self, node: dict[str, Any]) -> Evaluator:
        return _same

    _identity = _current  # `@` and the right side of a bare projection: the value itself

    def _index(self, node: dict[str, Any]) -> Evaluator:
        position = node["value"]

        def index(value: Any) -> Any:
            if not isinstance(value, list):
                return None
            try:
                return value[position]
            except IndexError:
                return None

        return index

    def _slice(self, node: dict[str, Any]) -> Evaluator:
        children = node["children"]

        def slicer(value: Any) -> Any:
            if not isinstance(value, list):
                return None
            return value[slice(*children)]  # a zero step raises ValueError, as jmespath's does

        return slicer

    def _expref(self, node: dict[str, Any]) -> Evaluator:
        # Functions that take an expression (sort_by, map, ...) evaluate it with the interpreter.
        child = node["children"][0]
        interpreter = self.interpreter
        return lambda value: _Expression(child, interpreter)

    # Chains

    def _chain(self, node: dict[str, Any]) -> Evaluator:
        children = node["children"]
        if len(children) == 2 and all(c.get("type") == "field" for c in children):
            outer, inner = (c["value"] for c in children)

            def two_fields(value: Any) -> Any:
                value = value.get(outer) if type(value) is dict else _get(value, outer)
                return value.get(inner) if type(value) is dict else _get(value, inner)

            return two_fields
        if all(c.get("type") == "field" for c in children):
            keys = tuple(c["value"] for c in children)

            def fields(value: Any) -> Any:
                for key in keys:
                    if type(value) is dict:
                        value = value.get(key)
                    else:
                        try:
                            value = value.get(key)
                        except AttributeError:
                            value = None
                return value

            return fields
        steps = tuple(self.compile(c) for c in children)
        if len(steps) == 2:
            first, second = steps
            return lambda value: second(first(value))

        def chain(value: Any) -> Any:
            for step in steps:
                value = step(value)
            return value

        return chain

    _subexpression = _chain
    _index_expression = _chain
    _pipe = _chain

    # Operators

    def _comparator(self, node: dict[str, Any]) -> Evaluator:
        name = node["value"]
        left_node, right_node = node["children"]
        if right_node.get("type") == "literal":
            return self._against_constant(name, left_node, right_node["value"])
        left = self.compile(left_node)
        right = self.compile(right_node)
        if name == "eq":
            def eq(value: Any) -> Any:
                x, y = left(value), right(value)
                # _equals differs from == only when one side is a boolean (1 == true is false).
                if x is True or x is False or y is True or y is False:
                    return _equals(x, y)
                return x == y

            return eq
        if name == "ne":
            def ne(value: Any) -> Any:
                x, y = left(value), right(value)
                if x is True or x is False or y is True or y is False:
                    return not _equals(x, y)
                return x != y

            return ne
        compare = _ORDERING[name]

        def ordering(value: Any) -> Any:
            x, y = left(value), right(value)
            if x is None or y is None:
                return None  # null is never ordered: no ABC test
            # Only numbers and strings are ordered; anything else gives null (a number against
            # a string raises TypeError, as in jmespath). int, float and str first: the
            # interpreter's test (an ABC check) is slow.
            tx, ty = type(x), type(y)
            if not ((tx is int or tx is float or tx is str or _is_actual_number(x) or isinstance(x, str))
                    and (ty is int or ty is float or ty is str or _is_actual_number(y) or isinstance(y, str))):
                return None
            return compare(x, y)

        return ordering

    def _against_constant(self, name: str, left_node: dict[str, Any], y: Any) -> Evaluator:
        """`replicas >= `2``, `kind == 'Job'`, `gpus != `0``: the right side is the same
        value every time, so what jmespath decides from its type is decided here; a plain field
        on the left is read in place (no call)."""
        key = left_node["value"] if left_node.get("type") == "field" else None
        left = self.compile(left_node)
        if name in ("eq", "ne"):
            exact: Callable[[Any], Any] | None
            if y is True or y is False:
                def exact(x: Any) -> Any:
                    return _equals(x, y)
            elif _is_actual_number(y) and y in (0, 1):
                # jmespath's special case: 0 and 1 never equal a boolean (Python's 1 == True).
                def exact(x: Any) -> Any:
                    return x == y and x is not True and x is not False
            else:
                exact = None  # Python's equality is jmespath's against null, strings, other numbers,
                # arrays and objects
            if exact is not None:
                if name == "eq":
                    return lambda value: exact(left(value))
                return lambda value: not exact(left(value))
            if key is not None:
                if name == "eq":
                    def field_eq(value: Any) -> Any:
                        if type(value) is dict:
                            return value.get(key) == y
                        return _get(value, key) == y

                    return field_eq

                def field_ne(value: Any) -> Any:
                    if type(value) is dict:
                        return value.get(key) != y
                    return _get(value, key) != y

                return field_ne
            if name == "eq":
                return lambda value: left(value) == y
            return lambda value: left(value) != y
        compare = _ORDERING[name]
        if not (_is_actual_number(y) or isinstance(y, str)):
            def unordered(value: Any) -> Any:
                left(value)  # evaluated all the same: it may raise, or count
                return None

            return unordered
        if key is not None:
            def field_ordering(value: Any) -> Any:
                x: Any = value.get(key) if type(value) is dict else _get(value, key)
                if x is None:
                    return None  # a missing field, the commonest: no ABC test
                tx = type(x)
                if tx is int or tx is float or tx is str or _is_actual_number(x) or isinstance(x, str):
                    return compare(x, y)
                return None

            return field_ordering

        def ordering_constant(value: Any) -> Any:
            x = left(value)
            if x is None:
                return None  # `to_number(env.X) > `0`` of an unset X: no ABC test
            tx = type(x)
            if tx is int or tx is float or tx is str or _is_actual_number(x) or isinstance(x, str):
                return compare(x, y)
            return None

        return ordering_constant

    def _operands(self, node: dict[str, Any]) -> list[dict[str, Any]]:
        """`a || b || c` as [a, b, c] (jmespath nests it as ((a || b) || c)): `||` and `&&` are
        associative in what they return and in what they evaluate, so one loop does it."""
        kind = node["type"]
        found: list[dict[str, Any]] = []
        for child in node["children"]:
            if child.get("type") == kind:
                found.extend(self._operands(child))
            else:
                found.append(child)
        return found

    def _or_expression(self, node: dict[str, Any]) -> Evaluator:
        nodes = self._operands(node)
        if len(nodes) > 2:
            parts, last = tuple(self.compile(n) for n in nodes[:-1]), self.compile(nodes[-1])

            def any_of(value: Any) -> Any:
                for part in parts:
                    matched = part(value)
                    if not (matched is None or matched is False or (
                            not matched and isinstance(matched, (str, list, dict)))):
                        return matched
                return last(value)

            return any_of
        left_node, right_node = nodes
        right = self.compile(right_node)
        if left_node.get("type") == "field":
            key = left_node["value"]
            if right_node.get("type") == "literal":
                # `volume_type || ''`: a field, else a constant.
                constant = right_node["value"]

                def field_or_constant(value: Any) -> Any:
                    matched = value.get(key) if type(value) is dict else _get(value, key)
                    if matched is None or matched is False or (
                            not matched and isinstance(matched, (str, list, dict))):
                        return constant
                    return matched

                return field_or_constant

            def field_or(value: Any) -> Any:
                matched = value.get(key) if type(value) is dict else _get(value, key)
                if matched is None or matched is False or (not matched and isinstance(matched, (str, list, dict))):
                    return right(value)
                return matched

            return field_or
        left = self.compile(left_node)

        def either(value: Any) -> Any:
            matched = left(value)
            if matched is None or matched is False or (not matched and isinstance(matched, (str, list, dict))):
                return right(value)
            return matched

        return either

    def _and_expression(self, node: dict[str, Any]) -> Evaluator:
        nodes = self._operands(node)
        if len(nodes) > 2:
            parts, last = tuple(self.compile(n) for n in nodes[:-1]), self.compile(nodes[-1])

            def all_of(value: Any) -> Any:
                for part in parts:
                    matched = part(value)
                    if matched is None or matched is False or (not matched and isinstance(matched, (str, list, dict))):
                        return matched
                return last(value)

            return all_of
        left_node, right_node = nodes
        right = self.compile(right_node)
        if left_node.get("type") == "field":
            key = left_node["value"]

            def field_and(value: Any) -> Any:
                matched = value.get(key) if type(value) is dict else _get(value, key)
                if matched is None or matched is False or (not matched and isinstance(matched, (str, list, dict))):
                    return matched
                return right(value)

            return field_and
        left = self.compile(left_node)

        def both(value: Any) -> Any:
            matched = left(value)
            if matched is None or matched is False or (not matched and isinstance(matched, (str, list, dict))):
                return matched
            return right(value)

        return both

    def _not_expression(self, node: dict[str, Any]) -> Evaluator:
        child = node["children"][0]
        if child.get("type") == "function_expression" and child.get("value") in _BOOLEAN_FUNCTIONS:
            fused = self._negated_call(child)
            if fused is not None:
                return fused
        if child.get("type") == "field":
            # `!partial`: the field read in place.
            key = child["value"]

            def not_field(value: Any) -> Any:
                result = value.get(key) if type(value) is dict else _get(value, key)
                if result is None or result is False:
                    return True
                kind = type(result)
                if kind is int or kind is float:
                    return False
                if kind is list or kind is dict or kind is str or kind is bool:
                    return not result  # no number: the ABC test below is slow
                if _is_actual_number(result) and result == 0:
                    return False
                return not result

            return not_field
        inner = self.compile(child)

        def negate(value: Any) -> Any:
            result = inner(value)
            if result is None or result is False:
                return True
            kind = type(result)
            if kind is int or kind is float:
                return False  # !0 is false: 0 is true in JMESPath, and so is every number
            if kind is list or kind is dict or kind is str or kind is bool:
                return not result  # no number: the ABC test below is slow (`!(... | [?...])`)
            if _is_actual_number(result) and result == 0:
                return False
            return not result  # Python's truth, as the interpreter has it

        return negate

    # Projections

    def _projection(self, node: dict[str, Any]) -> Evaluator:
        base_node, rhs = node["children"]
        if base_node.get("type") == "flatten" and (rhs.get("type") == "identity" or rhs.get("type") == "field"):
            return self._flat_projection(base_node["children"][0], rhs)
        base = self.compile(base_node)
        source = _field_key(base_node)
        budget = self.budget
        if rhs.get("type") == "identity":
            def project_all(value: Any) -> Any:
                if source is not None and type(value) is dict:
                    items = value.get(source)
                else:
                    items = base(value)
                if not isinstance(items, list):
                    return None
                collected = [item for item in items if item is not None]
                budget.produced += len(collected)
                if budget.produced > budget.limit:
                    budget.over_budget()
                return collected

            return project_all
        step = self.compile(rhs)
        key = _field_key(rhs)
        if key is not None:
            # `pods[].spread`: each item's field read in the loop.
            def project_field(value: Any) -> Any:
                if source is not None and type(value) is dict:
                    items = value.get(source)
                else:
                    items = base(value)
                if not isinstance(items, list):
                    return None
                collected = []
                for item in items:
                    current = item.get(key) if type(item) is dict else _get(item, key)
                    if current is not None:
                        collected.append(current)
                budget.produced += len(collected)
                if budget.produced > budget.limit:
                    budget.over_budget()
                return collected

            return project_field

        def project(value: Any) -> Any:
            if source is not None and type(value) is dict:
                items = value.get(source)
            else:
                items = base(value)
            return _collect(step, items, budget) if isinstance(items, list) else None

        return project

    def _flat_projection(self, inner_node: dict[str, Any], rhs: dict[str, Any]) -> Evaluator:
        """`containers[].mounts[]`, `pods[].spread`: a projection over a flatten, in one loop.
        What each builds is counted as the two nodes count it: every item the flatten gives
        (nulls included), then every item the projection keeps (nulls left out)."""
        inner = self.compile(inner_node)
        source = _field_key(inner_node)
        key = _field_key(rhs)
        budget = self.budget

        def project_flat(value: Any) -> Any:
            if source is not None and type(value) is dict:
                found = value.get(source)
            else:
                found = inner(value)
            if not isinstance(found, list):
                return None
            collected = []
            total = 0
            for item in found:
                if isinstance(item, list):
                    total += len(item)
                    for element in item:
                        if key is not None:
                            element = element.get(key) if type(element) is dict else _get(element, key)
                        if element is not None:
                            collected.append(element)
                else:
                    total += 1
                    if key is not None:
                        item = item.get(key) if type(item) is dict else _get(item, key)
                    if item is not None:
                        collected.append(item)
            budget.produced += total
            if budget.produced > budget.limit:
                budget.over_budget()
            budget.produced += len(collected)
            if budget.produced > budget.limit:
                budget.over_budget()
            return collected

        return project_flat

    def _value_projection(self, node: dict[str, Any]) -> Evaluator:
        base = self.compile(node["children"][0])
        step = self.compile(node["children"][1])
        budget = self.budget

        def project_values(value: Any) -> Any:
            found = base(value)
            try:
                items = found.values()
            except AttributeError:
                return None
            return _collect(step, items, budget)

        return project_values

    def _filter_projection(self, node: dict[str, Any]) -> Evaluator:
        base = self.compile(node["children"][0])
        # `pods[?...]` reads its field in place; `... | [?...]` filters the value itself.
        source = _field_key(node["children"][0])
        itself = node["children"][0].get("type") in ("identity", "current")
        step = self.compile(node["children"][1])
        condition_node = node["children"][2]
        condition = self.compile(condition_node)
        plain = node["children"][1].get("type") == "identity"
        budget = self.budget
        # `[?name]`, the commonest filter: the field read in the loop, no call per item.
        key = condition_node["value"] if condition_node.get("type") == "field" else None
        fused = self._fused.get(id(condition))
        if fused is not None and fused[0] is condition:
            return self._filter_fused(base, source, itself, step, plain, fused)

        def project_filtered(value: Any) -> Any:
            if itself:
                items = value
            elif source is not None and type(value) is dict:
                items = value.get(source)
            else:
                items = base(value)
            if not isinstance(items, list):
                return None
            collected = []
            for item in items:
                kept = item.get(key) if key is not None and type(item) is dict else condition(item)
                if kept is None or kept is False or (not kept and isinstance(kept, (str, list, dict))):
                    continue
                current = item if plain else step(item)
                if current is not None:
                    collected.append(current)
            budget.produced += len(collected)
            if budget.produced > budget.limit:
                budget.over_budget()
            return collected

        return project_filtered

    def _filter_fused(self, base: Evaluator, source: str | None, itself: bool, step: Evaluator, plain: bool,
                      fused: tuple[Any, str, int, type, Any]) -> Evaluator:
        """`[?starts_with_any(name, ['NCCL_', ...])]` (KG305's variables): a dict item whose
        field has the constant form's type is tested in the loop as the call would test it
        (the constant counted, then the form); any other item is given to the call itself."""
        condition, key, size, fast_type, fast = fused
        budget = self.budget

        def project_fused(value: Any) -> Any:
            if itself:
                items = value
            elif source is not None and type(value) is dict:
                items = value.get(source)
            else:
                items = base(value)
            if not isinstance(items, list):
                return None
            collected = []
            for item in items:
                # Not a dict: _Nothing, whose type (`type`) is never a form's (str or dict).
                field = item.get(key) if type(item) is dict else _Nothing
                if type(field) is fast_type:
                    if size:
                        budget.produced += size
                        if budget.produced > budget.limit:
                            budget.over_budget()
                    if not fast(field):
                        continue
                else:
                    kept = condition(item)
                    if kept is None or kept is False or (not kept and isinstance(kept, (str, list, dict))):
                        continue
                current = item if plain else step(item)
                if current is not None:
                    collected.append(current)
            budget.produced += len(collected)
            if budget.produced > budget.limit:
                budget.over_budget()
            return collected

        return project_fused

    def _flatten(self, node: dict[str, Any]) -> Evaluator:
        base = self.compile(node["children"][0])
        source = _field_key(node["children"][0])
        budget = self.budget

        def flatten(value: Any) -> Any:
            if source is not None and type(value) is dict:
                items = value.get(source)
            else:
                items = base(value)
            if not isinstance(items, list):
                return None
            merged: list[Any] = []
            for item in items:
                if isinstance(item, list):
                    merged.extend(item)
                else:
                    merged.append(item)
            budget.produced += len(merged)
            if budget.produced > budget.limit:
                budget.over_budget()
            return merged

        return flatten

    # Constructors

    def _multi_select_list(self, node: dict[str, Any]) -> Evaluator:
        parts = tuple(self.compile(c) for c in node["children"])
        budget, size = self.budget, len(parts)
        if size == 2:
            # `[a, b]`: the list written out (a comprehension is a call of its own).
            first, second = parts

            def select_two(value: Any) -> Any:
                if value is None:
                    return None
                selected = [first(value), second(value)]
                budget.produced += 2
                if budget.produced > budget.limit:
                    budget.over_budget()
                return selected

            return select_two

        def select_list(value: Any) -> Any:
            if value is None:
                return None
            selected = [part(value) for part in parts]
            budget.produced += size
            if budget.produced > budget.limit:
                budget.over_budget()
            return selected

        return select_list

    def _multi_select_dict(self, node: dict[str, Any]) -> Evaluator:
        parts = tuple((c["value"], self.compile(c)) for c in node["children"])
        make = getattr(self.interpreter, "_dict_cls", dict)
        budget = self.budget
        keys = [c["value"] for c in node["children"]]
        if make is dict and len(set(keys)) == len(keys):
            # `{hit: ..., why: 'text', node: node}`: the literal values (the same objects on
            # every call, as jmespath's literals are) in a template copied at once, and plain
            # fields read in place; the keys stay in the order written.
            template = {c["value"]: (_literal_value(c) if _literal_value(c) is not _NOT_LITERAL else None)
                        for c in node["children"]}
            computed = tuple((c["value"], _field_key(c["children"][0]), part)
                             for c, (_, part) in zip(node["children"], parts, strict=True)
                             if _literal_value(c) is _NOT_LITERAL)
            size = len(template)

            def select_template(value: Any) -> Any:
                if value is None:
                    return None
                collected = template.copy()
                for key, field, part in computed:
                    if field is not None and type(value) is dict:
                        collected[key] = value.get(field)
                    else:
                        collected[key] = part(value)
                budget.produced += size
                if budget.produced > budget.limit:
                    budget.over_budget()
                return collected

            return select_template

        def select_dict(value: Any) -> Any:
            if value is None:
                return None
            collected: Any = make()
            for key, part in parts:
                collected[key] = part(value)
            budget.produced += len(collected)
            if budget.produced > budget.limit:
                budget.over_budget()
            return collected

        return select_dict

    def _key_val_pair(self, node: dict[str, Any]) -> Evaluator:
        return self.compile(node["children"][0])

    # Functions

    def _function_expression(self, node: dict[str, Any]) -> Evaluator:
        budget = self.budget
        constant = self._parameter(node)
        if constant is not None:
            # `param('name')`: the run's value, the same object on every call; counted as the
            # interpreter counts the call's result.
            value, size = constant[0], len(constant[0]) if isinstance(constant[0], (list, dict, str)) else 0

            def parameter(_: Any) -> Any:
                budget.produced += size
                if budget.produced > budget.limit:
                    budget.over_budget()
                return value

            return parameter
        call = self._call(node)
        if node["value"] in _SCALAR_FUNCTIONS:
            return call

        def counted_call(value: Any) -> Any:
            result = call(value)
            if isinstance(result, (list, dict, str)):
                budget.produced += len(result)
                if budget.produced > budget.limit:
                    budget.over_budget()
            return result

        return counted_call

    def _parameter(self, node: dict[str, Any]) -> tuple[Any] | None:
        """(value,) for `param('name')` of a parameter the run has, with the policy functions'
        own `param`; None for anything else (an unknown name raises when called, as before)."""
        children = node["children"]
        params = getattr(self.functions, "params", None)
        if node["value"] != "param" or len(children) != 1 or children[0].get("type") != "literal" \
                or not isinstance(params, dict):
            return None
        spec = self.functions.FUNCTION_TABLE.get("param")
        name = children[0]["value"]
        if spec is None or getattr(spec["function"], "__name__", "") != "_func_param" \
                or not isinstance(name, str) or name not in params:
            return None
        return (params[name],)

    def _call(self, node: dict[str, Any]) -> Evaluator:
        name = node["value"]
        args = tuple(self.compile(c) for c in node["children"])
        functions = self.functions
        spec = functions.FUNCTION_TABLE.get(name)
        checks = _argument_checks(spec, len(args)) if spec is not None else None
        typed = _typed_array_checks(spec, len(args)) if spec is not None and checks is None else None
        if typed is not None:
            # `join(', ', names)`: an argument typed `array-string` has each item's type checked
            # here; on any doubt jmespath's own check runs and raises its own error.
            function = self._function(name, spec)
            validate = functions._validate_arguments
            signature = spec["signature"]  # type: ignore[index]

            def call_typed(value: Any) -> Any:
                resolved = [arg(value) for arg in args]
                for found, (names, items) in zip(resolved, typed, strict=True):
                    if names is None:
                        continue
                    if type(found).__name__ not in names or (
                            items is not None and not all(type(item).__name__ in items for item in found)):
                        validate(resolved, signature, name)
                return function(*resolved)

            return call_typed
        if checks is None:
            # Unknown function, wrong arity, variadic or typed array arguments: jmespath's own
            # call does the checks and raises its own errors, after the arguments are evaluated.
            call = functions.call_function

            def call_checked(value: Any) -> Any:
                return call(name, [arg(value) for arg in args])

            return call_checked
        function = self._function(name, spec)
        validate = functions._validate_arguments
        signature = spec["signature"]  # type: ignore[index]
        if len(args) == 1:
            (arg0,), (names0,) = args, checks

            found_keys = _path(node["children"][0])
            if found_keys is not None:
                # `to_number(env.NCCL_IB_TIMEOUT)`: the fields read in place.
                keys: tuple[str, ...] = found_keys
                if name == "to_number" and names0 is None and spec["function"] is getattr(  # type: ignore[index]
                        jmespath.functions.Functions, "_func_to_number", None):
                    # `to_number(env.TORCH_FR_BUFFER_SIZE)` of an unset variable: jmespath's
                    # to_number takes any type and gives null for null, without a call.
                    def to_number_path(value: Any) -> Any:
                        a = value
                        for key in keys:
                            a = a.get(key) if type(a) is dict else _get(a, key)
                        if a is None:
                            return None
                        return function(a)

                    return to_number_path

                def call1_path(value: Any) -> Any:
                    a = value
                    for key in keys:
                        a = a.get(key) if type(a) is dict else _get(a, key)
                    if names0 is not None and type(a).__name__ not in names0:
                        validate([a], signature, name)
                    return function(a)

                return call1_path

            def call1(value: Any) -> Any:
                a = arg0(value)
                if names0 is not None and type(a).__name__ not in names0:
                    validate([a], signature, name)  # raises jmespath's exact type error
                return function(a)

            return call1
        if len(args) == 2:
            arg0, arg1 = args
            names0, names1 = checks
            constant = self._constant_argument(node["children"][1], names1, name)
            if constant is not None:
                # `f(x, 'literal')`, `f(x, param('name'))`, `f(x, ['a', 'b'])`: the second
                # argument is the same value every call, its type checked once here; a parameter
                # or a list is still counted as its evaluation is, after the first argument
                # (jmespath's order).
                b, size, listed = constant
                budget = self.budget
                first = node["children"][0]
                key = first["value"] if first.get("type") == "field" else None
                # What the function computes from the constant alone, done once (functions.py).
                fast_type, fast = self._constant_form(name, b, names0)
                if listed:
                    # `[...]` of literals is null on a null value (and then refused by the type
                    # check, as jmespath refuses it), else a new list: counted, and shared only
                    # because the function's result is no list (_SCALAR_FUNCTIONS).
                    def call2_listed(value: Any) -> Any:
                        if key is not None and type(value) is dict:  # `starts_with_any(name, [...])`
                            a = value.get(key)
                            budget.produced += size
                            if budget.produced > budget.limit:
                                budget.over_budget()
                            if type(a) is fast_type:
                                return fast(a)
                            if names0 is not None and type(a).__name__ not in names0:
                                validate([a, b], signature, name)
                            return function(a, b)
                        a = arg0(value)
                        if value is None:
                            if (names0 is not None and type(a).__name__ not in names0) or (
                                    names1 is not None and "NoneType" not in names1):
                                validate([a, None], signature, name)
                            return function(a, None)
                        budget.produced += size
                        if budget.produced > budget.limit:
                            budget.over_budget()
                        if names0 is not None and type(a).__name__ not in names0:
                            validate([a, b], signature, name)
                        return function(a, b)

                    if key is not None and fast is not None:
                        self._fused[id(call2_listed)] = (call2_listed, key, size, fast_type, fast)
                    return call2_listed
                if key is not None:
                    # `has(env, 'X')`, `known_name(name, param('...'))`: a field, read in place.
                    def call2_field_constant(value: Any) -> Any:
                        a = value.get(key) if type(value) is dict else _get(value, key)
                        if size:
                            budget.produced += size
                            if budget.produced > budget.limit:
                                budget.over_budget()
                        if type(a) is fast_type:
                            return fast(a)
                        if names0 is not None and type(a).__name__ not in names0:
                            validate([a, b], signature, name)
                        return function(a, b)

                    if fast is not None:
                        self._fused[id(call2_field_constant)] = (call2_field_constant, key, size, fast_type, fast)
                    return call2_field_constant

                def call2_constant(value: Any) -> Any:
                    a = arg0(value)
                    if size:
                        budget.produced += size
                        if budget.produced > budget.limit:
                            budget.over_budget()
                    if type(a) is fast_type:
                        return fast(a)
                    if names0 is not None and type(a).__name__ not in names0:
                        validate([a, b], signature, name)
                    return function(a, b)

                return call2_constant
            constant = self._constant_argument(node["children"][0], names0, name)
            if constant is not None:
                # `contains(param('keys'), @)`: the first argument is the constant one.
                a, size, listed = constant
                budget = self.budget
                if listed:
                    def call2_listed_first(value: Any) -> Any:
                        if value is None:
                            b = arg1(value)
                            if (names0 is not None and "NoneType" not in names0) or (
                                    names1 is not None and type(b).__name__ not in names1):
                                validate([None, b], signature, name)
                            return function(None, b)
                        budget.produced += size
                        if budget.produced > budget.limit:
                            budget.over_budget()
                        b = arg1(value)
                        if names1 is not None and type(b).__name__ not in names1:
                            validate([a, b], signature, name)
                        return function(a, b)

                    return call2_listed_first

                second = node["children"][1]
                if second.get("type") == "current":
                    # `contains(param('keys'), @)`: the value itself.
                    def call2_constant_current(value: Any) -> Any:
                        if size:
                            budget.produced += size
                            if budget.produced > budget.limit:
                                budget.over_budget()
                        if names1 is not None and type(value).__name__ not in names1:
                            validate([a, value], signature, name)
                        return function(a, value)

                    return call2_constant_current
                second_keys = _path(second)
                if second_keys is not None:
                    # `match('...', env.NCCL_DEBUG)`: the fields read in place.
                    path: tuple[str, ...] = second_keys

                    def call2_constant_path(value: Any) -> Any:
                        if size:
                            budget.produced += size
                            if budget.produced > budget.limit:
                                budget.over_budget()
                        b = value
                        for key in path:
                            b = b.get(key) if type(b) is dict else _get(b, key)
                        if names1 is not None and type(b).__name__ not in names1:
                            validate([a, b], signature, name)
                        return function(a, b)

                    return call2_constant_path

                def call2_constant_first(value: Any) -> Any:
                    if size:
                        budget.produced += size
                        if budget.produced > budget.limit:
                            budget.over_budget()
                    b = arg1(value)
                    if names1 is not None and type(b).__name__ not in names1:
                        validate([a, b], signature, name)
                    return function(a, b)

                return call2_constant_first

            def call2(value: Any) -> Any:
                a, b = arg0(value), arg1(value)
                if (names0 is not None and type(a).__name__ not in names0) or (
                        names1 is not None and type(b).__name__ not in names1):
                    validate([a, b], signature, name)
                return function(a, b)

            return call2

        def call_n(value: Any) -> Any:
            resolved = [arg(value) for arg in args]
            for found, names in zip(resolved, checks, strict=True):
                if names is not None and type(found).__name__ not in names:
                    validate(resolved, signature, name)
            return function(*resolved)

        return call_n


    def _negated_call(self, node: dict[str, Any]) -> Evaluator | None:
        """`!known_name(name, param('...'))`, `!has(env, 'X')`: a function that returns only
        true or false, on a field and a constant, negated in the same closure (`!` of a boolean
        is Python's `not`); None for any other call."""
        children = node["children"]
        name = node["value"]
        spec = self.functions.FUNCTION_TABLE.get(name)
        checks = _argument_checks(spec, len(children)) if spec is not None else None
        if checks is None or len(children) != 2 or children[0].get("type") != "field":
            return None
        constant = self._constant_argument(children[1], checks[1], name)
        if constant is None or constant[2]:
            return None
        b, size, _ = constant
        key, names0 = children[0]["value"], checks[0]
        fast_type, fast = self._constant_form(name, b, names0)
        function = self._function(name, spec)
        validate = self.functions._validate_arguments
        signature = spec["signature"]  # type: ignore[index]
        budget = self.budget

        def not_call(value: Any) -> Any:
            a = value.get(key) if type(value) is dict else _get(value, key)
            if size:
                budget.produced += size
                if budget.produced > budget.limit:
                    budget.over_budget()
            if type(a) is fast_type:
                return not fast(a)
            if names0 is not None and type(a).__name__ not in names0:
                validate([a, b], signature, name)
            return not function(a, b)

        return not_call

    def _function(self, name: str, spec: Any) -> Any:
        """The callable a checked call calls: for a jmespath function whose body is one
        built-in call (`contains` is `search in subject`, `length` is `len`), that built-in,
        which needs no Python frame; else the run's function, bound."""
        function = spec["function"]
        direct = _DIRECT.get(name)
        if direct is not None and function is getattr(jmespath.functions.Functions, "_func_" + name, None):
            return direct
        return function.__get__(self.functions)

    def _constant_form(self, name: str, constant: Any, names: frozenset[str] | None) -> tuple[type, Any]:
        """(type, f): f(x) is the call's result for an x of exactly that type (functions.py's
        PolicyFunctions.constant_form); a type no value has when there is no such form."""
        form = getattr(self.functions, "constant_form", None)
        found = form(name, constant) if form is not None else None
        if found is None or (names is not None and found[0].__name__ not in names):
            return _Nothing, None
        return found

    def _constant_argument(self, node: dict[str, Any], names: frozenset[str] | None,
                           function: str) -> tuple[Any, int, bool] | None:
        """(value, what evaluating it counts, whether it is a list of literals) for an argument
        that is a literal, a parameter the run has, or a list of literals given to a function
        whose result is never that list, whose type the function accepts; None otherwise."""
        listed = False
        if node.get("type") == "literal":
            value, size = node["value"], 0
        elif node.get("type") == "function_expression":
            found = self._parameter(node)
            if found is None:
                return None
            value = found[0]
            size = len(value) if isinstance(value, (list, dict, str)) else 0
        elif node.get("type") == "multi_select_list" and function in _SCALAR_FUNCTIONS \
                and all(c.get("type") == "literal" for c in node["children"]):
            value = [c["value"] for c in node["children"]]
            size, listed = len(value), True
        else:
            return None
        if names is not None and type(value).__name__ not in names:
            return None  # refused at every call, with jmespath's error: left to call2
        return value, size, listed


def _argument_checks(spec: dict[str, Any], count: int) -> tuple[frozenset[str] | None, ...] | None:
    """Per argument, the Python type names jmespath accepts (None: any); None when the
    signature needs more than a type-name test (variadic, array subtypes) or the arity is off."""
    signature = spec["signature"]
    if not signature and count == 0:
        return ()
    if any(s.get("variadic") for s in signature) or len(signature) != count:
        return None
    checks: list[frozenset[str] | None] = []
    for argument in signature:
        types = argument.get("types") or []
        if not types:
            checks.append(None)
            continue
        if any("-" in t for t in types):
            return None
        try:
            checks.append(frozenset(n for t in types for n in _TYPE_NAMES[t]))
        except KeyError:
            return None
    return tuple(checks)


def _typed_array_checks(spec: dict[str, Any], count: int) -> tuple[tuple[frozenset[str] | None, frozenset[str] | None], ...] | None:
    """Per argument, (the type names jmespath accepts, the type names each item must have);
    only for fixed arity, where every argument is untyped, plain types, or exactly one typed
    array (`array-string`: jmespath checks each item against the one subtype)."""
    signature = spec["signature"]
    if any(s.get("variadic") for s in signature) or len(signature) != count:
        return None
    checks: list[tuple[frozenset[str] | None, frozenset[str] | None]] = []
    for argument in signature:
        types = argument.get("types") or []
        if not types:
            checks.append((None, None))
            continue
        try:
            if len(types) == 1 and types[0].startswith("array-"):
                checks.append((frozenset(_TYPE_NAMES["array"]), frozenset(_TYPE_NAMES[types[0][6:]])))
            elif any("-" in t for t in types):
                return None
            else:
                checks.append((frozenset(n for t in types for n in _TYPE_NAMES[t]), None))
        except KeyError:
            return None
    return tuple(checks)


def _same(value: Any) -> Any:
    return value


_NOT_LITERAL = object()


def _literal_value(pair: dict[str, Any]) -> Any:
    """The value of a key-value pair whose value is a literal; _NOT_LITERAL otherwise."""
    child = pair["children"][0] if pair.get("children") else {}
    return child["value"] if child.get("type") == "literal" else _NOT_LITERAL


def _field_key(node: dict[str, Any]) -> str | None:
    """The key of a plain field (`name`), which a closure reads in place; else None."""
    return node["value"] if node.get("type") == "field" else None


def _path(node: dict[str, Any]) -> tuple[str, ...] | None:
    """The keys of a plain field or a chain of them (`env.NCCL_DEBUG`); else None."""
    if node.get("type") == "field":
        return (node["value"],)
    if node.get("type") == "subexpression" and all(c.get("type") == "field" for c in node["children"]):
        return tuple(c["value"] for c in node["children"])
    return None


def _get(value: Any, key: str) -> Any:
    """A field of anything but a dict, as jmespath reads it (`.get`, else null)."""
    try:
        return value.get(key)
    except AttributeError:
        return None


def _collect(step: Evaluator, items: Iterable[Any], budget: Any) -> list[Any]:
    """Each item through step, nulls left out: what every projection returns, counted."""
    collected = []
    for item in items:
        current = step(item)
        if current is not None:
            collected.append(current)
    budget.produced += len(collected)
    if budget.produced > budget.limit:
        budget.over_budget()
    return collected


def names_read(node: Any, found: set[str] | None = None) -> set[str]:
    """Every key an expression names: its fields, and its string literals (`has(env, 'X')`,
    `lookup(m, 'k')`). What a view must hold for the expression (engine/evaluate.view_needs)."""
    found = set() if found is None else found
    if isinstance(node, dict):
        if node.get("type") in ("field", "literal") and isinstance(node.get("value"), str):
            found.add(node["value"])
        for child in node.get("children") or ():
            names_read(child, found)
    return found
