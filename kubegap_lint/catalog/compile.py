"""Compile a parsed JMESPath expression into Python closures, once per run.

jmespath's `TreeInterpreter` walks the AST (plain dicts) again for every search: a dict lookup
of the node type, a bound-method dispatch and a `node['children']` lookup per node, per pod.
Here each node becomes one closure holding its children's closures, so a search is a few direct
calls. The semantics are jmespath 1.x's interpreter (`jmespath/visitor.py`) node for node: the
same truthiness, null propagation, projections that drop nulls, comparators that give null for
ordering anything but numbers and strings, and functions called through the run's functions
(functions.py: `PolicyFunctions.caller`) with jmespath's argument checks and errors.
tests/test_compile.py checks every policy expression, and generated ones, against jmespath.

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

from kubegap_lint.catalog.budget import MAX_VALUES, WALKING_FUNCTIONS, Budget, tree_size, walked_size

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


def _negated(value: Any) -> bool:
    """`!value`: Python's `not`, except that no number is negated to true (`!0` is false)."""
    kind = type(value)
    if kind is int or kind is float or (kind is not bool and isinstance(value, Number)):
        return False
    return not value


def _orderable(x: Any) -> bool:
    kind = type(x)
    return kind is int or kind is float or kind is str or (
        kind is not bool and x is not None and isinstance(x, (Number, str)))


def _charged(function: Callable[..., Any], name: str, spend: Callable[[int], None]) -> Callable[..., Any]:
    """`function`, charging what its call walks (walked_size) first."""

    def call(*arguments: Any) -> Any:
        size = walked_size(name, arguments)
        if size is not None:
            spend(size)
        return function(*arguments)

    return call


class Compiler:
    """Compiles parsed expressions against one run's functions, each node once (by identity:
    the node is kept with its closure, so its id stays its own)."""

    def __init__(self, functions: Any, budget: Budget) -> None:
        self.functions = functions
        self.budget = budget
        self._plain: dict[int, tuple[dict[str, Any], Evaluator]] = {}
        self._folded: dict[int, tuple[dict[str, Any], Any, int]] = {}  # calls made at compile time

    def compile(self, node: dict[str, Any]) -> Evaluator:
        found = self._plain.get(id(node))
        if found is None or found[0] is not node:
            method = getattr(self, "_" + str(node.get("type")), None)
            if method is None:
                raise NotImplementedError(node.get("type"))  # what jmespath's visitor raises
            found = self._plain[id(node)] = (node, method(node))
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

    @staticmethod
    def _path(keys: tuple[str, ...]) -> Evaluator:
        """`a.b.c`, a chain of fields: the keys read in one closure, as the fields would."""

        def path(value: Any) -> Any:
            for key in keys:
                if type(value) is dict:
                    value = value.get(key)
                elif value is None:
                    return None
                else:
                    try:
                        value = value.get(key)
                    except AttributeError:
                        value = None
            return value

        return path

    def _literal(self, node: dict[str, Any]) -> Evaluator:
        constant = node["value"]
        return lambda value: constant

    def _current(self, node: dict[str, Any]) -> Evaluator:
        return _same

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
        children = node["children"]
        if all(child.get("type") == "field" for child in children):
            return self._path(tuple(child["value"] for child in children))
        steps = self._children(node)
        if len(steps) == 2:  # `xs | [0]`, `a[0]`: without a loop
            first, second = steps
            return lambda value: second(first(value))

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
        name = node["value"]
        if name in ("eq", "ne"):
            same = name == "eq"

            budget = self.budget

            def equality(value: Any) -> bool:
                x, y = left(value), right(value)
                if isinstance(x, (list, dict)) and isinstance(y, (list, dict)):  # comparing walks both
                    budget.spend(min(tree_size(x), tree_size(y)))
                # jmespath's _equals differs from == only when a side is a boolean (1 == true is false).
                if x is True or x is False or y is True or y is False:
                    return bool(_equals(x, y)) is same
                return (x == y) is same

            return equality
        compare = _ORDERING[name]

        def ordering(value: Any) -> Any:
            x, y = left(value), right(value)
            if x is None or y is None:
                return None  # no type test: the commonest unordered value
            return compare(x, y) if _orderable(x) and _orderable(y) else None

        return ordering

    def _operands(self, node: dict[str, Any]) -> tuple[list[Evaluator], Evaluator]:
        """`a || b || c` as ([a, b], c): `||` and `&&` are associative in what they give and
        in what they evaluate (left to right, stopping at the first that decides), so a chain
        of them (jmespath nests it as ((a || b) || c)) is one loop."""
        found: list[Evaluator] = []
        for child in node["children"]:
            if child.get("type") == node["type"]:
                parts, last = self._operands(child)
                found.extend((*parts, last))
            else:
                found.append(self.compile(child))
        return found[:-1], found[-1]

    def _or_expression(self, node: dict[str, Any]) -> Evaluator:
        parts, last = self._operands(node)

        def any_of(value: Any) -> Any:
            for part in parts:
                matched = part(value)
                if matched is True or is_true(matched):  # `is True`: the commonest, without a call
                    return matched
            return last(value)

        return any_of

    def _and_expression(self, node: dict[str, Any]) -> Evaluator:
        parts, last = self._operands(node)

        def all_of(value: Any) -> Any:
            for part in parts:
                matched = part(value)
                if matched is not True and not is_true(matched):
                    return matched
            return last(value)

        return all_of

    def _not_expression(self, node: dict[str, Any]) -> Evaluator:
        (inner,) = self._children(node)

        def negate(value: Any) -> bool:
            result = inner(value)
            return result is False if result is True or result is False else _negated(result)

        return negate

    # Builders: what they build is counted

    def _projection(self, node: dict[str, Any]) -> Evaluator:
        base, step = self._children(node)
        budget, itself = self.budget, step is _same  # `xs[*]`, `xs[]`: the items, no step

        def project(value: Any) -> Any:
            items = base(value)
            if not isinstance(items, list):
                return None
            collected = [found for found in (items if itself else map(step, items)) if found is not None]
            budget.produced += len(collected)
            if budget.produced > MAX_VALUES:
                budget.stop()
            return collected

        return project

    def _value_projection(self, node: dict[str, Any]) -> Evaluator:
        base, step = self._children(node)
        budget = self.budget

        def project_values(value: Any) -> Any:
            try:
                items = base(value).values()
            except AttributeError:
                return None
            collected = [found for found in map(step, items) if found is not None]
            budget.produced += len(collected)
            if budget.produced > MAX_VALUES:
                budget.stop()
            return collected

        return project_values

    def _filter_projection(self, node: dict[str, Any]) -> Evaluator:
        base, step, condition = self._children(node)
        budget, itself = self.budget, step is _same  # `xs[?...]`: the items kept, no step

        def project_filtered(value: Any) -> Any:
            items = base(value)
            if not isinstance(items, list):
                return None
            collected = []
            for item in items:
                kept = condition(item)
                if kept is True or is_true(kept):
                    found = item if itself else step(item)
                    if found is not None:
                        collected.append(found)
            budget.produced += len(collected)
            if budget.produced > MAX_VALUES:
                budget.stop()
            return collected

        return project_filtered

    def _flatten(self, node: dict[str, Any]) -> Evaluator:
        (base,) = self._children(node)
        budget = self.budget

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
            budget.produced += len(merged)
            if budget.produced > MAX_VALUES:
                budget.stop()
            return merged

        return flatten

    def _multi_select_list(self, node: dict[str, Any]) -> Evaluator:
        parts = self._children(node)
        spend, size = self.budget.spend, len(parts)
        constants = self._constants(node)
        if constants is not None:  # `['NCCL_', 'TORCH_']`: one list, the same object each time
            selected = [value for value, _ in constants]
            cost = size + sum(cost for _, cost in constants)
            return lambda value: None if value is None else spend(cost) or selected

        def select_list(value: Any) -> Any:
            if value is None:
                return None
            selected = [part(value) for part in parts]
            spend(size)  # after the parts, as jmespath counts (which error comes first)
            return selected

        return select_list

    def _multi_select_dict(self, node: dict[str, Any]) -> Evaluator:
        parts = tuple((child["value"], self.compile(child)) for child in node["children"])
        spend, size = self.budget.spend, len({key for key, _ in parts})  # a repeated key is one entry

        def select_dict(value: Any) -> Any:
            if value is None:
                return None
            selected = {key: part(value) for key, part in parts}
            spend(size)
            return selected

        return select_dict

    def _function_expression(self, node: dict[str, Any]) -> Evaluator:
        arguments = self._children(node)
        function, check = self.functions.caller(node["value"])
        budget, spend = self.budget, self.budget.spend
        if node["value"] in WALKING_FUNCTIONS:
            function = _charged(function, node["value"], spend)
        accepted: set[tuple[type, ...]] = set()  # argument types check() accepted by type alone
        first, second = (*arguments, None, None)[:2]
        count = len(arguments)

        def call(value: Any) -> Any:
            # One or two arguments written out: no comprehension (a frame of its own before
            # 3.12), no star call.
            if count == 2:
                a, b = first(value), second(value)  # type: ignore[misc]
                kinds: tuple[type, ...] = (type(a), type(b))
                if kinds not in accepted and check([a, b]):
                    accepted.add(kinds)
                result = function(a, b)
            elif count == 1:
                a = first(value)  # type: ignore[misc]
                kinds = (type(a),)
                if kinds not in accepted and check([a]):
                    accepted.add(kinds)
                result = function(a)
            else:
                resolved = [argument(value) for argument in arguments]
                kinds = tuple(map(type, resolved))
                if kinds not in accepted and check(resolved):
                    accepted.add(kinds)
                result = function(*resolved)
            if isinstance(result, _JSON_CONTAINERS):
                budget.produced += len(result)
                if budget.produced > MAX_VALUES:
                    budget.stop()
            return result

        constants = self._constants(node)
        if constants is None:
            return call
        # `param('gpu_resources')`: the functions are pure and the parameters fixed for the run,
        # so a call on constants is made once (one that raises, at every search), and what
        # evaluating it counts is counted at every search.
        searching, budget.produced = budget.produced, 0  # compiled within a search: an expref
        try:
            result = call(None)
        except Exception:  # noqa: BLE001 - raised again where the search makes the call
            return call
        finally:
            cost, budget.produced = budget.produced, searching
        self._folded[id(node)] = (node, result, cost)
        return (lambda value: spend(cost) or result) if cost else (lambda value: result)

    def _constants(self, node: dict[str, Any]) -> list[tuple[Any, int]] | None:
        """Per child, (the value it has on every input, what evaluating it counts), when each
        is a literal or a call made at compile time; else None."""
        found = []
        for child in node["children"]:
            folded = self._folded.get(id(child))
            if child.get("type") == "literal":
                found.append((child["value"], 0))
            elif folded is not None and folded[0] is child:
                found.append((folded[1], folded[2]))
            else:
                return None
        return found


def _same(value: Any) -> Any:
    return value


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
