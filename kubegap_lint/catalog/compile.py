"""Compile a parsed JMESPath expression into Python closures, once per run.

jmespath's `TreeInterpreter` walks the AST (plain dicts) again for every search: a dict lookup
of the node type, a bound-method dispatch and a `node['children']` lookup per node, per pod.
Here each node becomes one closure holding its children's closures, so a search is a few direct
calls. One closure per node type, whatever the node's shape: the semantics are jmespath 1.x's
interpreter (`jmespath/visitor.py`) node for node: the same truthiness (`is_true`, the one
test of it in the package), null propagation, projections that drop nulls, comparators that
give null for ordering anything but numbers and strings, and functions called through the
run's functions (functions.py: `PolicyFunctions.caller`) with jmespath's argument checks and
errors. tests/test_compile.py checks every policy expression, and generated ones, against
jmespath.

Locating a finding (engine/locate.py) evaluates the same tree with key paths
(catalog/tracked.py: the same compiler's closures for every node that computes).

Every search has a value budget (budget.py): each list and object a node builds, and each
function result that is a list, an object or a string, counts its length, so an expression
whose values grow exponentially with its length is stopped.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from numbers import Number
from typing import Any

from jmespath.visitor import _equals, _Expression

from kubegap_lint.catalog.budget import WALKING_FUNCTIONS, Budget, tree_size, walked_size

Evaluator = Callable[[Any], Any]

_ORDERING = {"lt": operator.lt, "gt": operator.gt, "lte": operator.le, "gte": operator.ge}
_JSON_CONTAINERS = (str, list, dict)


def is_true(value: Any) -> bool:
    """JMESPath's truth: null, false, and empty strings, arrays and objects are false; 0 is true.
    (The interpreter tests `value == ''`, `== []`, `== {}`: for JSON data exactly an empty str,
    list or dict, which `not value` tells faster.)"""
    if value is True:
        return True
    if value is None or value is False:
        return False
    return not isinstance(value, _JSON_CONTAINERS) or bool(value)


def _orderable(x: Any) -> bool:
    """A number (not a boolean) or a string: what `<` compares (exact types first, as isinstance
    of the Number ABC is slow)."""
    kind = type(x)
    return kind is int or kind is float or kind is str or (
        kind is not bool and x is not None and isinstance(x, (Number, str)))


class Compiler:
    """Compiles parsed expressions against one run's functions, each node once (by identity:
    the node is kept with its closure, so its id stays its own)."""

    def __init__(self, functions: Any, budget: Budget) -> None:
        self.functions = functions
        self.budget = budget
        self._compiled: dict[int, tuple[dict[str, Any], Evaluator]] = {}

    def compile(self, node: dict[str, Any]) -> Evaluator:
        found = self._compiled.get(id(node))
        if found is None or found[0] is not node:
            method = getattr(self, "_" + str(node.get("type")), None)
            if method is None:
                raise NotImplementedError(node.get("type"))  # what jmespath's visitor raises
            found = self._compiled[id(node)] = (node, method(node))
        return found[1]

    def visit(self, node: dict[str, Any], value: Any) -> Any:
        """What the interpreter's `visit` gives: how jmespath's functions evaluate an expref."""
        return self.compile(node)(value)

    def _children(self, node: dict[str, Any]) -> tuple[Evaluator, ...]:
        return tuple(self.compile(child) for child in node["children"])

    # Leaves

    def _field(self, node: dict[str, Any]) -> Evaluator:
        key = node["value"]

        def field(value: Any) -> Any:
            if type(value) is dict:
                return value.get(key)
            if value is None:
                return None  # no exception to catch: the commonest miss
            try:
                return value.get(key)
            except AttributeError:
                return None

        return field

    def _literal(self, node: dict[str, Any]) -> Evaluator:
        constant = node["value"]
        return lambda value: constant

    def _current(self, node: dict[str, Any]) -> Evaluator:
        return lambda value: value

    _identity = _current

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
        bounds = slice(*node["children"])  # a zero step raises ValueError, as jmespath's does
        return lambda value: value[bounds] if isinstance(value, list) else None

    def _expref(self, node: dict[str, Any]) -> Evaluator:
        # `sort_by(pods, &name)`: the function evaluates the expression through our `visit`.
        reference = _Expression(node["children"][0], self)
        return lambda value: reference

    # Chains, operators

    def _subexpression(self, node: dict[str, Any]) -> Evaluator:
        steps = self._children(node)

        def chain(value: Any) -> Any:
            for step in steps:
                value = step(value)
            return value

        return chain

    _index_expression = _subexpression
    _pipe = _subexpression

    def _key_val_pair(self, node: dict[str, Any]) -> Evaluator:
        return self.compile(node["children"][0])

    def _comparator(self, node: dict[str, Any]) -> Evaluator:
        left, right = self._children(node)
        name, budget = node["value"], self.budget
        if name in ("eq", "ne"):
            same = name == "eq"

            def equality(value: Any) -> bool:
                x, y = left(value), right(value)
                if isinstance(x, (list, dict)) and isinstance(y, (list, dict)):  # comparing walks both
                    budget.spend(min(tree_size(x), tree_size(y)))
                if x is True or x is False or y is True or y is False:  # 1 == true is false
                    return bool(_equals(x, y)) is same
                return (x == y) is same

            return equality
        compare = _ORDERING[name]

        def ordering(value: Any) -> Any:
            x, y = left(value), right(value)
            return compare(x, y) if _orderable(x) and _orderable(y) else None

        return ordering

    def _or_expression(self, node: dict[str, Any]) -> Evaluator:
        left, right = self._children(node)

        def either(value: Any) -> Any:
            matched = left(value)
            return matched if is_true(matched) else right(value)

        return either

    def _and_expression(self, node: dict[str, Any]) -> Evaluator:
        left, right = self._children(node)

        def both(value: Any) -> Any:
            matched = left(value)
            return right(value) if is_true(matched) else matched

        return both

    def _not_expression(self, node: dict[str, Any]) -> Evaluator:
        (inner,) = self._children(node)
        return lambda value: not is_true(inner(value))

    # Builders: what they build is counted

    def _projection(self, node: dict[str, Any]) -> Evaluator:
        base, step = self._children(node)
        spend = self.budget.spend

        def project(value: Any) -> Any:
            items = base(value)
            if not isinstance(items, list):
                return None
            collected = [found for found in map(step, items) if found is not None]
            spend(len(collected))
            return collected

        return project

    def _value_projection(self, node: dict[str, Any]) -> Evaluator:
        base, step = self._children(node)
        spend = self.budget.spend

        def project_values(value: Any) -> Any:
            try:
                items = base(value).values()
            except AttributeError:
                return None
            collected = [found for found in map(step, items) if found is not None]
            spend(len(collected))
            return collected

        return project_values

    def _filter_projection(self, node: dict[str, Any]) -> Evaluator:
        base, step, condition = self._children(node)
        spend = self.budget.spend

        def project_filtered(value: Any) -> Any:
            items = base(value)
            if not isinstance(items, list):
                return None
            collected = []
            for item in items:  # each item tested, then stepped, as jmespath (which error first)
                if is_true(condition(item)):
                    found = step(item)
                    if found is not None:
                        collected.append(found)
            spend(len(collected))
            return collected

        return project_filtered

    def _flatten(self, node: dict[str, Any]) -> Evaluator:
        (base,) = self._children(node)
        spend = self.budget.spend

        def flatten(value: Any) -> Any:
            items = base(value)
            if not isinstance(items, list):
                return None
            merged: list[Any] = []
            for item in items:
                if isinstance(item, list):
                    merged.extend(item)
                else:
                    merged.append(item)
            spend(len(merged))
            return merged

        return flatten

    def _multi_select_list(self, node: dict[str, Any]) -> Evaluator:
        parts = self._children(node)
        spend = self.budget.spend
        def select_list(value: Any) -> Any:
            if value is None:
                return None
            selected = [part(value) for part in parts]
            spend(len(selected))  # after the parts, as jmespath counts (which error comes first)
            return selected

        return select_list

    def _multi_select_dict(self, node: dict[str, Any]) -> Evaluator:
        parts = tuple((child["value"], self.compile(child)) for child in node["children"])
        spend = self.budget.spend
        size = len({key for key, _ in parts})  # a repeated key is one entry

        def select_dict(value: Any) -> Any:
            if value is None:
                return None
            selected = {key: part(value) for key, part in parts}
            spend(size)
            return selected

        return select_dict

    def _function_expression(self, node: dict[str, Any]) -> Evaluator:
        arguments = self._children(node)
        name = node["value"]
        function, check = self.functions.caller(name)
        walks, budget = name in WALKING_FUNCTIONS, self.budget
        accepted: set[tuple[type, ...]] = set()  # argument types check() accepted by type alone

        def call(value: Any) -> Any:
            resolved = [argument(value) for argument in arguments]
            kinds = tuple(map(type, resolved))
            if kinds not in accepted and check(resolved):
                accepted.add(kinds)
            if walks:  # charged what it walks before it runs
                size = walked_size(name, resolved)
                if size is not None:
                    budget.spend(size)
            result = function(*resolved)
            if isinstance(result, _JSON_CONTAINERS):
                budget.spend(len(result))
            return result

        return call


# Nodes whose first child is evaluated on the current value and the rest on what it gives.
_CHAINS = frozenset(("subexpression", "index_expression", "projection", "value_projection", "filter_projection",
                     "pipe", "flatten"))


def root_fields(node: Any, found: set[str] | None = None) -> set[str]:
    """The fields an expression reads from the value it is given (`serving` in `serving &&
    has_gpu`), not those of what it reaches (`entry` in `serving.entry`, a filter's fields).
    Which rules an unknown kind's class gates (engine/notes.py)."""
    found = set() if found is None else found
    if not isinstance(node, dict):
        return found
    kind = node.get("type")
    children = node.get("children") or ()
    if kind == "field" and isinstance(node.get("value"), str):
        found.add(node["value"])
    elif kind in _CHAINS:
        if children:
            root_fields(children[0], found)
    elif kind != "expref":
        for child in children:
            root_fields(child, found)
    return found


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
