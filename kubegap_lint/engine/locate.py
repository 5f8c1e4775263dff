"""Where a finding points: a policy's `at:` expression evaluated with the key path of every value
it passes through, so the result names a node of the manifest, scalars included.

Views carry the key paths of the manifest nodes their facts come from (`key_paths`: "." for the
view's own node, and one entry per field taken from the manifest); a raw manifest value's path
is its parent's path and its key. The expression is evaluated by the run's compiler
(catalog/tracked.py, the tracking variant of catalog/compile.py), which follows the nodes that select rather than compute
(fields, indexes, projections, filters, pipes, `||`, `&&`, multi-selects) with their paths and
asks the `Tracker` here where each selected value sits. A path
may name a field that is absent (`spec.terminationGracePeriodSeconds` when none is set): the
finding then points at the nearest existing parent and says which field is missing.

Only run for findings (a few per workload), never for every document.
"""

from __future__ import annotations

from typing import Any

from kubegap_lint.core.keypaths import Pinned

# What is known of where a value sits: None (nothing), a key path in the document (a tuple),
# a node everything below locates at (keypaths.Pinned), a view's path map (a dict), or the
# paths of a list's items (a list).
Where = Any


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


class Tracker:
    """Places the values of an expression evaluated with key paths: the run's compiler tracks
    the tree (catalog/tracked.py), and asks the tracker where each value it selects sits
    (`field`, `item`, `known`).

    A mapping or list met with no known path (a fact that holds a manifest node, such as a
    serving container's `preStop` hook) is looked up among the nodes of the document itself
    (`data`, whose key path is `base`): by identity, which is safe here, as the document is
    alive while its findings are located."""

    def __init__(self, tracking: Any, data: Any = None, base: tuple[str | int, ...] = ()) -> None:
        self.tracking = tracking
        self._data = data
        self._base = base
        self._paths: dict[int, tuple[str | int, ...]] | None = None

    def track(self, node: dict[str, Any], value: Any, where: Where) -> tuple[Any, Where]:
        """The expression's value on `value` (which sits at `where`), and where that value sits."""
        self.tracking.budget.produced = 0  # one search, with its own budget
        return self.tracking.track(node)(value, where, self)  # type: ignore[no-any-return]

    def known(self, value: Any, where: Where) -> Where:
        """`where`, else the value's own path map (a view's), else, for a mapping of the
        document, its path there. A view's lists (pods, containers) are the view's own, and a
        manifest list is reached by its path."""
        return self._found(value, where if where is not None else own(value))

    def _found(self, value: Any, where: Where) -> Where:
        if where is not None or not isinstance(value, dict) or self._data is None or "key_paths" in value:
            return where
        if value is self._data:  # the document itself (a view's `resource`): no walk needed
            return self._base
        if self._paths is None:
            self._paths = node_paths(self._data, self._base)
        return self._paths.get(id(value))

    def field(self, value: Any, where: Where, name: str) -> tuple[Any, Where]:
        child = value.get(name) if isinstance(value, dict) else None
        if isinstance(where, Pinned):
            return child, where
        if isinstance(where, tuple):
            return child, (*where, name)  # also for a missing field: its path is still known
        if isinstance(where, dict) and name in where:
            return child, self._found(child, where[name])  # a view's own entry, even None
        return child, self.known(child, None)

    @staticmethod
    def item(value: Any, where: Where, index: int) -> tuple[Any, Where]:
        """A list's item and its place (not yet `known`: the step that reads it asks)."""
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
