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

import operator
from collections.abc import Callable, Iterable
from typing import Any

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
    empty str, list or dict (subclasses included), which `not value` tells faster.
    """
    if value is None or value is False:
        return True
    if isinstance(value, (str, list, dict)):
        return not value
    return False


# Nodes that build new lists, objects or strings: what functions.BoundedInterpreter counts.
_BUILDERS = frozenset({"projection", "value_projection", "filter_projection", "flatten",
                       "multi_select_list", "multi_select_dict", "function_expression"})


class Compiler:
    """Compiles parsed expressions against one run's functions and interpreter."""

    def __init__(self, functions: Any, interpreter: Any) -> None:
        self.functions = functions
        self.interpreter = interpreter  # for exprefs and for node types not compiled here

    def compile(self, node: dict[str, Any]) -> Evaluator:
        method = getattr(self, "_" + str(node.get("type")), None)
        if method is None:
            return self.fallback(node)
        result: Evaluator = method(node)
        if node.get("type") in _BUILDERS and hasattr(self.interpreter, "_count"):
            result = self._counted(result)
        return result

    def _counted(self, inner: Evaluator) -> Evaluator:
        """Count what a value-building node makes against the search's budget, as the bounded
        interpreter does (functions.MAX_VALUES): an untrusted policy must not exhaust memory."""
        count = self.interpreter._count

        def counted(value: Any) -> Any:
            return count(inner(value))

        return counted

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
        left = self.compile(node["children"][0])
        right = self.compile(node["children"][1])
        if name == "eq":
            def eq(value: Any) -> Any:
                x, y = left(value), right(value)
                if isinstance(x, str) or isinstance(y, str):  # no number/boolean special case
                    return x == y
                return _equals(x, y)

            return eq
        if name == "ne":
            def ne(value: Any) -> Any:
                x, y = left(value), right(value)
                if isinstance(x, str) or isinstance(y, str):
                    return x != y
                return not _equals(x, y)

            return ne
        compare = _ORDERING[name]

        def ordering(value: Any) -> Any:
            x, y = left(value), right(value)
            # Only numbers and strings are ordered; anything else gives null (a number against
            # a string raises TypeError, as in jmespath).
            if not ((_is_actual_number(x) or isinstance(x, str)) and (_is_actual_number(y) or isinstance(y, str))):
                return None
            return compare(x, y)

        return ordering

    def _or_expression(self, node: dict[str, Any]) -> Evaluator:
        left = self.compile(node["children"][0])
        right = self.compile(node["children"][1])

        def either(value: Any) -> Any:
            matched = left(value)
            if is_false(matched):
                return right(value)
            return matched

        return either

    def _and_expression(self, node: dict[str, Any]) -> Evaluator:
        left = self.compile(node["children"][0])
        right = self.compile(node["children"][1])

        def both(value: Any) -> Any:
            matched = left(value)
            if is_false(matched):
                return matched
            return right(value)

        return both

    def _not_expression(self, node: dict[str, Any]) -> Evaluator:
        inner = self.compile(node["children"][0])

        def negate(value: Any) -> Any:
            result = inner(value)
            if _is_actual_number(result) and result == 0:  # !0 is false: 0 is true in JMESPath
                return False
            return not result  # Python's truth, as the interpreter has it

        return negate

    # Projections

    def _projection(self, node: dict[str, Any]) -> Evaluator:
        base = self.compile(node["children"][0])
        rhs = node["children"][1]
        if rhs.get("type") == "identity":
            def project_all(value: Any) -> Any:
                items = base(value)
                if not isinstance(items, list):
                    return None
                return [item for item in items if item is not None]

            return project_all
        step = self.compile(rhs)

        def project(value: Any) -> Any:
            items = base(value)
            return _collect(step, items) if isinstance(items, list) else None

        return project

    def _value_projection(self, node: dict[str, Any]) -> Evaluator:
        base = self.compile(node["children"][0])
        step = self.compile(node["children"][1])

        def project_values(value: Any) -> Any:
            found = base(value)
            try:
                items = found.values()
            except AttributeError:
                return None
            return _collect(step, items)

        return project_values

    def _filter_projection(self, node: dict[str, Any]) -> Evaluator:
        base = self.compile(node["children"][0])
        step = self.compile(node["children"][1])
        condition = self.compile(node["children"][2])
        plain = node["children"][1].get("type") == "identity"

        def project_filtered(value: Any) -> Any:
            items = base(value)
            if not isinstance(items, list):
                return None
            collected = []
            for item in items:
                if not is_false(condition(item)):
                    current = item if plain else step(item)
                    if current is not None:
                        collected.append(current)
            return collected

        return project_filtered

    def _flatten(self, node: dict[str, Any]) -> Evaluator:
        base = self.compile(node["children"][0])

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
            return merged

        return flatten

    # Constructors

    def _multi_select_list(self, node: dict[str, Any]) -> Evaluator:
        parts = tuple(self.compile(c) for c in node["children"])

        def select_list(value: Any) -> Any:
            if value is None:
                return None
            return [part(value) for part in parts]

        return select_list

    def _multi_select_dict(self, node: dict[str, Any]) -> Evaluator:
        parts = tuple((c["value"], self.compile(c)) for c in node["children"])
        make = getattr(self.interpreter, "_dict_cls", dict)

        def select_dict(value: Any) -> Any:
            if value is None:
                return None
            collected: Any = make()
            for key, part in parts:
                collected[key] = part(value)
            return collected

        return select_dict

    def _key_val_pair(self, node: dict[str, Any]) -> Evaluator:
        return self.compile(node["children"][0])

    # Functions

    def _function_expression(self, node: dict[str, Any]) -> Evaluator:
        name = node["value"]
        args = tuple(self.compile(c) for c in node["children"])
        functions = self.functions
        spec = functions.FUNCTION_TABLE.get(name)
        checks = _argument_checks(spec, len(args)) if spec is not None else None
        if checks is None:
            # Unknown function, wrong arity, variadic or typed array arguments: jmespath's own
            # call does the checks and raises its own errors, after the arguments are evaluated.
            call = functions.call_function

            def call_checked(value: Any) -> Any:
                return call(name, [arg(value) for arg in args])

            return call_checked
        function = spec["function"].__get__(functions)  # type: ignore[index]
        validate = functions._validate_arguments
        signature = spec["signature"]  # type: ignore[index]
        if len(args) == 1:
            (arg0,), (names0,) = args, checks

            def call1(value: Any) -> Any:
                a = arg0(value)
                if names0 is not None and type(a).__name__ not in names0:
                    validate([a], signature, name)  # raises jmespath's exact type error
                return function(a)

            return call1
        if len(args) == 2:
            arg0, arg1 = args
            names0, names1 = checks

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


def _same(value: Any) -> Any:
    return value


def _collect(step: Evaluator, items: Iterable[Any]) -> list[Any]:
    """Each item through step, nulls left out: what every projection returns."""
    collected = []
    for item in items:
        current = step(item)
        if current is not None:
            collected.append(current)
    return collected
