"""The compiler's tracking variant: a parsed expression evaluated with where each value sits, so
a finding's `at:` names a node of the manifest (engine/locate.py).

A node that selects part of its input (fields, indexes, chains, projections, filters, flattens,
`||`, `&&`, multi-selects) gets a closure `(value, where, placer) -> (value, where)`; every
other node is the plain closure of the same compiler (catalog/compile.py), its result placed by
what it is (`placer.known`). What `where` holds is the placer's business: the closures only
pass it on and ask the placer for a field's, an item's or a value's place. Filters and `&&`
test with the plain closures and the one truthiness (compile.is_true).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kubegap_lint.catalog.compile import Compiler, is_true

Tracked = Callable[[Any, Any, Any], tuple[Any, Any]]  # (value, where, placer) -> (value, where)


class Tracking:
    """Tracking closures for one run's compiler, each node once (kept with its closure)."""

    def __init__(self, compiler: Compiler) -> None:
        self.compile = compiler.compile
        self.budget = compiler.budget
        self._tracked: dict[int, tuple[dict[str, Any], Tracked]] = {}

    def track(self, node: dict[str, Any]) -> Tracked:
        """The closure `(value, where, placer) -> (value, where)` for a tree. `where` is what is
        known of where a value sits, which only the placer (engine/locate.py) reads."""
        found = self._tracked.get(id(node))
        if found is None or found[0] is not node:
            method = getattr(self, "_track_" + str(node.get("type")), None)
            found = self._tracked[id(node)] = (node, method(node) if method else self._placed(node))
        return found[1]

    def _placed(self, node: dict[str, Any]) -> Tracked:
        """A node that computes its value: placed by the value itself."""
        evaluate = self.compile(node)

        def computed(value: Any, where: Any, placer: Any) -> tuple[Any, Any]:
            result = evaluate(value)
            return result, placer.known(result, None)

        return computed

    def _track_field(self, node: dict[str, Any]) -> Tracked:
        key = node["value"]
        return lambda value, where, placer: placer.field(value, where, key)

    def _track_index(self, node: dict[str, Any]) -> Tracked:
        position = node["value"]

        def index(value: Any, where: Any, placer: Any) -> tuple[Any, Any]:
            found, found_where = placer.item(value, where, position)
            return found, placer.known(found, found_where)

        return index

    def _track_current(self, node: dict[str, Any]) -> Tracked:
        return lambda value, where, placer: (value, placer.known(value, where))

    _track_identity = _track_current

    def _track_subexpression(self, node: dict[str, Any]) -> Tracked:
        steps = tuple(self.track(child) for child in node["children"])

        def chain(value: Any, where: Any, placer: Any) -> tuple[Any, Any]:
            for step in steps:
                value, where = step(value, where, placer)
            return value, where

        return chain

    _track_pipe = _track_subexpression
    _track_index_expression = _track_subexpression

    def _track_or_expression(self, node: dict[str, Any]) -> Tracked:
        left, right = (self.track(child) for child in node["children"])

        def either(value: Any, where: Any, placer: Any) -> tuple[Any, Any]:
            matched = left(value, where, placer)
            return matched if is_true(matched[0]) else right(value, where, placer)

        return either

    def _track_and_expression(self, node: dict[str, Any]) -> Tracked:
        left, right = self.compile(node["children"][0]), self.track(node["children"][1])

        def both(value: Any, where: Any, placer: Any) -> tuple[Any, Any]:
            matched = left(value)
            return right(value, where, placer) if is_true(matched) else (matched, placer.known(matched, None))

        return both

    def _track_projection(self, node: dict[str, Any]) -> Tracked:
        children = node["children"]
        base, step = self.track(children[0]), self.track(children[1])
        test = self.compile(children[2]) if len(children) > 2 else None

        def project(value: Any, where: Any, placer: Any) -> tuple[Any, Any]:
            items, items_where = base(value, where, placer)
            if not isinstance(items, list):
                return None, None
            values: list[Any] = []
            places: list[Any] = []
            for number in range(len(items)):
                if test is not None and not is_true(test(items[number])):
                    continue  # before its place is made: a filter drops most
                item, item_where = placer.item(items, items_where, number)
                found, found_where = step(item, item_where, placer)
                if found is not None:
                    values.append(found)
                    places.append(found_where)
            return values, places

        return project

    _track_filter_projection = _track_projection

    def _track_flatten(self, node: dict[str, Any]) -> Tracked:
        base = self.track(node["children"][0])

        def flatten(value: Any, where: Any, placer: Any) -> tuple[Any, Any]:
            items, items_where = base(value, where, placer)
            if not isinstance(items, list):
                return None, None
            values: list[Any] = []
            places: list[Any] = []
            for number, item in enumerate(items):
                item_where = placer.item(items, items_where, number)[1]
                pairs = [placer.item(item, item_where, inner) for inner in range(len(item))] \
                    if isinstance(item, list) else [(item, item_where)]
                values.extend(found for found, _ in pairs)
                places.extend(found_where for _, found_where in pairs)
            return values, places

        return flatten

    def _track_multi_select_list(self, node: dict[str, Any]) -> Tracked:
        steps = tuple(self.track(child) for child in node["children"])

        def select_list(value: Any, where: Any, placer: Any) -> tuple[Any, Any]:
            if value is None:
                return None, None
            pairs = [step(value, where, placer) for step in steps]
            return [found for found, _ in pairs], [found_where for _, found_where in pairs]

        return select_list

    def _track_multi_select_dict(self, node: dict[str, Any]) -> Tracked:
        pairs = tuple((child["value"], self.track(child["children"][0])) for child in node["children"])

        def select_dict(value: Any, where: Any, placer: Any) -> tuple[Any, Any]:
            if value is None:
                return None, None
            selected, places = {}, {}
            for key, step in pairs:
                selected[key], places[key] = step(value, where, placer)
            return selected, placer.known(selected, places)

        return select_dict
