"""Where a finding points: a policy's `at:` expression evaluated with the key path of every value
it passes through, so the result names a node of the manifest, scalars included.

Views carry the key paths of the manifest nodes their facts come from (`key_paths`: "." for the
view's own node, and one entry per field taken from the manifest); a raw manifest value's path
is its parent's path and its key. The expression is evaluated by jmespath's own interpreter,
except the few node types that select rather than compute (fields, indexes, projections,
filters, pipes, `||`, `&&`, multi-selects), which are evaluated here with their paths. A path
may name a field that is absent (`spec.terminationGracePeriodSeconds` when none is set): the
finding then points at the nearest existing parent and says which field is missing.

Only run for findings (a few per workload), never for every document.
"""

from __future__ import annotations

from typing import Any

# What is known of where a value sits: None (nothing), a key path in the document (a tuple),
# a view's path map (a dict), or the paths of a list's items (a list).
Where = Any


def _truthy(value: Any) -> bool:
    return not (value is None or value is False or (isinstance(value, (str, list, dict)) and not value))


def own(value: Any) -> Where:
    """The path map a view carries, if the value is a view."""
    if isinstance(value, dict):
        paths = value.get("key_paths")
        if isinstance(paths, dict):
            return paths
    return None


def path_of(where: Where) -> tuple[str | int, ...] | None:
    if isinstance(where, tuple):
        return where
    if isinstance(where, dict):
        found = where.get(".")
        return found if isinstance(found, tuple) else None
    return None


def _field(value: Any, where: Where, name: str) -> tuple[Any, Where]:
    child = value.get(name) if isinstance(value, dict) else None
    if isinstance(where, tuple):
        return child, (*where, name)  # also for a missing field: its path is still known
    if isinstance(where, dict) and name in where:
        return child, where[name]
    return child, own(child)


def _item(value: Any, where: Where, index: int) -> tuple[Any, Where]:
    if not isinstance(value, list):
        return None, None
    if index < 0:
        index += len(value)
    if not 0 <= index < len(value):
        return None, None
    item = value[index]
    if isinstance(where, tuple):
        return item, (*where, index)
    if isinstance(where, list) and index < len(where) and where[index] is not None:
        return item, where[index]
    return item, own(item)


class Tracker:
    """Evaluates an expression's tree with paths; `visit` is the run's JMESPath interpreter."""

    def __init__(self, visit: Any) -> None:
        self.visit = visit

    def track(self, node: dict[str, Any], value: Any, where: Where) -> tuple[Any, Where]:
        kind = node["type"]
        children = node["children"]
        if kind == "field":
            return _field(value, where, node["value"])
        if kind == "subexpression" or kind == "pipe":
            for child in children:
                value, where = self.track(child, value, where)
            return value, where
        if kind in ("identity", "current"):
            return value, where if where is not None else own(value)
        if kind == "index_expression":
            value, where = self.track(children[0], value, where)
            return self.track(children[1], value, where)
        if kind == "index":
            return _item(value, where, node["value"])
        if kind in ("projection", "filter_projection"):
            base, base_where = self.track(children[0], value, where)
            if not isinstance(base, list):
                return None, None
            values: list[Any] = []
            places: list[Where] = []
            for number in range(len(base)):
                item, item_where = _item(base, base_where, number)
                if kind == "filter_projection" and not _truthy(self.visit(children[2], item)):
                    continue
                result, result_where = self.track(children[1], item, item_where)
                if result is not None:
                    values.append(result)
                    places.append(result_where)
            return values, places
        if kind == "flatten":
            base, base_where = self.track(children[0], value, where)
            if not isinstance(base, list):
                return None, None
            values, places = [], []
            for number, element in enumerate(base):
                _, element_where = _item(base, base_where, number)
                if isinstance(element, list):
                    for inner in range(len(element)):
                        item, item_where = _item(element, element_where, inner)
                        values.append(item)
                        places.append(item_where)
                else:
                    values.append(element)
                    places.append(element_where)
            return values, places
        if kind == "or_expression":
            left = self.track(children[0], value, where)
            return left if _truthy(left[0]) else self.track(children[1], value, where)
        if kind == "and_expression":
            left = self.visit(children[0], value)
            return (left, None) if not _truthy(left) else self.track(children[1], value, where)
        if kind == "multi_select_dict":
            if value is None:
                return None, None
            selected: dict[str, Any] = {}
            paths: dict[str, Where] = {}
            for pair in children:
                selected[pair["value"]], paths[pair["value"]] = self.track(pair["children"][0], value, where)
            return selected, paths
        if kind == "multi_select_list":
            if value is None:
                return None, None
            pairs = [self.track(child, value, where) for child in children]
            return [v for v, _ in pairs], [w for _, w in pairs]
        result_value = self.visit(node, value)
        return result_value, own(result_value)
