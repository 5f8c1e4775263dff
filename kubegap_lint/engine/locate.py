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

from kubegap_lint.workloads.keypaths import Pinned

# What is known of where a value sits: None (nothing), a key path in the document (a tuple),
# a node everything below locates at (keypaths.Pinned), a view's path map (a dict), or the
# paths of a list's items (a list).
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
    if isinstance(where, Pinned):
        return where.path
    if isinstance(where, tuple):
        return where
    if isinstance(where, dict):
        found = where.get(".")
        return found if isinstance(found, tuple) else None
    return None


def _field(value: Any, where: Where, name: str) -> tuple[Any, Where]:
    child = value.get(name) if isinstance(value, dict) else None
    if isinstance(where, Pinned):
        return child, where
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
    if isinstance(where, Pinned):
        return item, where
    if isinstance(where, tuple):
        return item, (*where, index)
    if isinstance(where, list) and index < len(where) and where[index] is not None:
        return item, where[index]
    return item, own(item)


class Tracker:
    """Evaluates an expression's tree with paths; `visit` is the run's JMESPath interpreter.

    A mapping or list met with no known path (a fact that holds a manifest node, such as a
    serving container's `preStop` hook) is looked up among the nodes of the document itself
    (`data`, whose key path is `base`): by identity, which is safe here, as the document is
    alive while its findings are located.

    Each tree is turned once into closures (`_compile`: one a node, no dispatch on the node's
    type per step), kept in `compiled`, which the trackers of one run share (the closures hold
    no resource: the tracker is passed in)."""

    def __init__(self, visit: Any, data: Any = None, base: tuple[str | int, ...] = (),
                 compiled: dict[int, tuple[Any, Any]] | None = None) -> None:
        self.visit = visit
        self._data = data
        self._base = base
        self._paths: dict[int, tuple[str | int, ...]] | None = None
        self.compiled: dict[int, tuple[Any, Any]] = {} if compiled is None else compiled

    def _known(self, value: Any, where: Where) -> Where:
        # Mappings only: the lists a view holds (pods, containers) are the view's own, and a
        # manifest list is reached by its path.
        if where is not None or not isinstance(value, dict) or self._data is None or "key_paths" in value:
            return where
        if value is self._data:  # the document itself (a view's `resource`): no walk needed
            return self._base
        if self._paths is None:
            self._paths = node_paths(self._data, self._base)
        return self._paths.get(id(value))

    def track(self, node: dict[str, Any], value: Any, where: Where) -> tuple[Any, Where]:
        found = self.compiled.get(id(node))
        if found is None or found[0] is not node:
            found = (node, _compile(node, self.visit, self.compiled))
        return found[1](value, where, self)  # type: ignore[no-any-return]


Step = Any  # (value, where, tracker) -> (value, where)


def _evaluator(visit: Any, node: dict[str, Any]) -> Any:
    """value -> what `visit(node, value)` gives: the run's interpreter's compiled search of
    the node (functions.PolicyInterpreter.node_evaluator, its own budget each call), made
    once with the tracker's closures, not looked up a call; else a call of `visit`."""
    make = getattr(getattr(visit, "__self__", None), "node_evaluator", None)
    if make is not None:
        return make(node)
    return lambda value: visit(node, value)


def _compile(node: dict[str, Any], visit: Any, cache: dict[int, tuple[Any, Any]]) -> Step:
    """A tree as closures, each giving (value, where) as the node selects them. The node is
    kept with its closures, so its id stays its own."""
    found = cache.get(id(node))
    if found is not None and found[0] is node:
        return found[1]
    step = _step(node, visit, cache)
    cache[id(node)] = (node, step)
    return step


# The node types the tracker follows with paths; every other node's value is computed, and
# its place is the value's own (a view) or the manifest node it is.
_FOLLOWED = frozenset({"field", "subexpression", "pipe", "index_expression", "identity", "current", "index",
                       "projection", "filter_projection", "flatten", "or_expression", "and_expression",
                       "multi_select_dict", "multi_select_list"})


def _computed(node: dict[str, Any]) -> bool:
    """Does tracking this tree give what computing it gives, placed by its value alone? So for
    a computed node, and for `&&` and `||` of such (`kind == 'Job' && x == null`): a falsy
    value has no own place, `&&` computes its left side anyway and gives its right side's
    value, `||` gives one side's. Such a tree is computed in one step, not node by node."""
    kind = node.get("type")
    if kind not in _FOLLOWED:
        return True
    children = node.get("children") or []
    if kind == "and_expression" and len(children) == 2:
        return _computed(children[1])
    if kind == "or_expression" and len(children) == 2:
        return _computed(children[0]) and _computed(children[1])
    return False


def _step(node: dict[str, Any], visit: Any, cache: dict[int, tuple[Any, Any]]) -> Step:
    kind = node["type"]
    children = node["children"]
    if kind in ("and_expression", "or_expression") and _computed(node):
        kind = "computed"
    if kind == "field":
        name = node["value"]

        def field(value: Any, where: Where, tracker: Tracker) -> tuple[Any, Where]:
            # _field and _known written out for the usual kinds of place (a path, a view's
            # map, nothing): this runs for every field of every `at:` a finding tries.
            kind = type(where)
            if kind is tuple:
                child = value.get(name) if isinstance(value, dict) else None
                return child, (*where, name)  # not None: _known leaves it
            if kind is dict and name in where:
                child = value.get(name) if isinstance(value, dict) else None
                found = where[name]
                if found is not None or not isinstance(child, dict):
                    return child, found
                return child, tracker._known(child, found)
            value, where = _field(value, where, name)
            if where is not None or not isinstance(value, dict):
                return value, where
            return value, tracker._known(value, where)

        return field
    if kind == "pipe" and _first_of_filter(children):
        return _first_kept(children, visit, cache)
    if kind in ("subexpression", "pipe", "index_expression"):
        steps = tuple(_compile(child, visit, cache) for child in children)

        def chain(value: Any, where: Where, tracker: Tracker) -> tuple[Any, Where]:
            for step in steps:
                value, where = step(value, where, tracker)
            if where is not None or not isinstance(value, dict):
                return value, where  # what _known gives
            return value, tracker._known(value, where)

        return chain
    if kind in ("identity", "current"):
        def same(value: Any, where: Where, tracker: Tracker) -> tuple[Any, Where]:
            return value, tracker._known(value, where if where is not None else own(value))

        return same
    if kind == "index":
        position = node["value"]

        def index(value: Any, where: Where, tracker: Tracker) -> tuple[Any, Where]:
            value, where = _item(value, where, position)
            return value, tracker._known(value, where)

        return index
    if kind == "filter_projection" and children[0].get("type") == "multi_select_list":
        return _filter_selected(children, visit, cache)
    if kind in ("projection", "filter_projection"):
        base_step = _compile(children[0], visit, cache)
        item_step = _compile(children[1], visit, cache)
        test = _evaluator(visit, children[2]) if kind == "filter_projection" else None

        def project(value: Any, where: Where, tracker: Tracker) -> tuple[Any, Where]:
            base, base_where = base_step(value, where, tracker)
            if not isinstance(base, list):
                return None, None  # _known(None, None) is None
            values: list[Any] = []
            places: list[Where] = []
            for number, item in enumerate(base):
                # The filter first: an item it drops needs no place (filters drop most).
                if test is not None and not _truthy(test(item)):
                    continue
                item, item_where = _item(base, base_where, number)
                result, result_where = item_step(item, item_where, tracker)
                if result is not None:
                    values.append(result)
                    places.append(result_where)
            return values, places  # a list of paths: _known leaves it

        return project
    if kind == "flatten":
        base_step = _compile(children[0], visit, cache)

        def flatten(value: Any, where: Where, tracker: Tracker) -> tuple[Any, Where]:
            base, base_where = base_step(value, where, tracker)
            if not isinstance(base, list):
                return None, None
            values: list[Any] = []
            places: list[Where] = []
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

        return flatten
    if kind == "or_expression":
        left_step = _compile(children[0], visit, cache)
        right_step = _compile(children[1], visit, cache)

        def either(value: Any, where: Where, tracker: Tracker) -> tuple[Any, Where]:
            left = left_step(value, where, tracker)
            value, where = left if _truthy(left[0]) else right_step(value, where, tracker)
            return value, tracker._known(value, where)

        return either
    if kind == "and_expression":
        left_value = _evaluator(visit, children[0])
        right_step = _compile(children[1], visit, cache)

        def both(value: Any, where: Where, tracker: Tracker) -> tuple[Any, Where]:
            left = left_value(value)
            if not _truthy(left):
                return left, tracker._known(left, None)
            value, where = right_step(value, where, tracker)
            return value, tracker._known(value, where)

        return both
    if kind == "multi_select_dict":
        pairs = tuple((pair["value"], _compile(pair["children"][0], visit, cache)) for pair in children)

        def select_dict(value: Any, where: Where, tracker: Tracker) -> tuple[Any, Where]:
            if value is None:
                return None, None
            selected: dict[str, Any] = {}
            paths: dict[str, Where] = {}
            for key, step in pairs:
                selected[key], paths[key] = step(value, where, tracker)
            return selected, tracker._known(selected, paths)

        return select_dict
    if kind == "multi_select_list":
        steps = tuple(_compile(child, visit, cache) for child in children)

        def select_list(value: Any, where: Where, tracker: Tracker) -> tuple[Any, Where]:
            if value is None:
                return None, None
            pairs = [step(value, where, tracker) for step in steps]
            return [v for v, _ in pairs], [w for _, w in pairs]

        return select_list

    evaluate = _evaluator(visit, node)

    def computed(value: Any, where: Where, tracker: Tracker) -> tuple[Any, Where]:
        result = evaluate(value)
        return result, tracker._known(result, own(result))

    return computed


def _first_of_filter(children: list[Any]) -> bool:
    """Is a pipe `xs[?test] | [0]` or `xs[?test] | [0].a.b` (the commonest `at:`: the first
    container that sets a variable, the first GPU pod)?"""
    left, right = children
    if left.get("type") != "filter_projection" or left["children"][0].get("type") == "multi_select_list" \
            or left["children"][1].get("type") != "identity":
        return False
    first: dict[str, Any] = {}
    rest: list[Any] = []
    if right.get("type") == "index_expression":
        first = right
    elif right.get("type") == "subexpression":
        first, rest = right["children"][0], right["children"][1:]
    return (first.get("type") == "index_expression" and [c.get("type") for c in first["children"]] == ["identity", "index"]
            and first["children"][1].get("value") == 0 and all(c.get("type") == "field" for c in rest))


def _first_kept(children: list[Any], visit: Any, cache: dict[int, tuple[Any, Any]]) -> Step:
    """`xs[?test] | [0].a.b` as the steps `project`, `[0]` and the fields give it, in one: every
    item is tested (a test that raises fails the `at:` as before), and only the first item kept
    is placed, since `[0]` reads no other (tests/test_locate_tracker.py holds it to the steps)."""
    left, right = children
    base_step = _compile(left["children"][0], visit, cache)
    test = _evaluator(visit, left["children"][2])
    fields = tuple(_compile(child, visit, cache) for child in (
        right["children"][1:] if right.get("type") == "subexpression" else ()))

    def first_kept(value: Any, where: Where, tracker: Tracker) -> tuple[Any, Where]:
        base, base_where = base_step(value, where, tracker)
        if not isinstance(base, list):
            return None, None  # what [0] and the fields give for nothing
        first: Any = None
        found = False
        for number, item in enumerate(base):
            if not _truthy(test(item)):
                continue
            if found or item is None:  # placed only the first (a null item is not kept)
                continue
            found = True
            first, first_where = _item(base, base_where, number)
            first_where = tracker._known(first, first_where if first_where is not None else own(first))
        if not found:
            return None, None
        # [0] of the kept items: its place, as _item and index give it
        where = tracker._known(first, first_where if first_where is not None else own(first))
        value = first
        if where is None and isinstance(value, dict):
            where = tracker._known(value, where)  # the end of `[0]`'s chain
        for step in fields:
            value, where = step(value, where, tracker)
        if fields and where is None and isinstance(value, dict):
            where = tracker._known(value, where)  # the end of the fields' chain
        if where is not None or not isinstance(value, dict):
            return value, where
        return value, tracker._known(value, where)

    return first_kept


def _filter_selected(children: list[Any], visit: Any, cache: dict[int, tuple[Any, Any]]) -> Step:
    """`[{hit: ..., node: ...}, {...}][?hit]`: each entry is computed, and only an entry the
    filter keeps is followed with its paths (the same value, the same places: only the paths
    of the entries left out are not made)."""
    parts = children[0]["children"]
    part_steps = tuple(_compile(part, visit, cache) for part in parts)
    item_step = _compile(children[1], visit, cache)
    condition = _evaluator(visit, children[2])
    tests = tuple(_selected_test(part, children[2]) for part in parts)
    checks = tuple(_evaluator(visit, test) if test is not None else None for test in tests)
    entries = tuple(_evaluator(visit, part) for part in parts)

    def project_selected(value: Any, where: Where, tracker: Tracker) -> tuple[Any, Where]:
        if value is None:
            return None, None
        values: list[Any] = []
        places: list[Where] = []
        for step, check, part in zip(part_steps, checks, entries, strict=True):
            if check is not None:  # the one entry the filter reads, not the whole object
                if not _truthy(check(value)):
                    continue
            elif not _truthy(condition(part(value))):
                continue
            item, item_where = step(value, where, tracker)
            result, result_where = item_step(item, item_where if item_where is not None else own(item), tracker)
            if result is not None:
                values.append(result)
                places.append(result_where)
        return values, places

    return project_selected


def _selected_test(part: dict[str, Any], condition: dict[str, Any]) -> dict[str, Any] | None:
    """For `{hit: h, ...}` filtered by `[?hit]`: the expression h, whose value is the field the
    filter tests (on a value that is not null, where the object is made); None otherwise. The
    other entries are computed only for the entries kept: the plain evaluation computed them
    all already, without an error, so skipping them changes no value."""
    if condition.get("type") != "field" or part.get("type") != "multi_select_dict":
        return None
    found = None
    for pair in part["children"]:  # a repeated key: the object holds the last one's value
        if pair.get("value") == condition.get("value"):
            found = pair["children"][0]
    return found


def node_paths(data: Any, base: tuple[str | int, ...]) -> dict[int, tuple[str | int, ...]]:
    """The key path of every mapping and list in a document, by id (the first path wins)."""
    found: dict[int, tuple[str | int, ...]] = {}
    stack: list[tuple[Any, tuple[str | int, ...]]] = [(data, base)]
    while stack:
        node, path = stack.pop()
        if id(node) in found:
            continue  # an alias: the node was written once, where it is first reached
        found[id(node)] = path
        if isinstance(node, dict):
            stack.extend((v, (*path, str(k))) for k, v in node.items() if isinstance(v, (dict, list)))
        elif isinstance(node, list):
            stack.extend((v, (*path, n)) for n, v in enumerate(node) if isinstance(v, (dict, list)))
    return found
