"""Open discovery: every pod template in a document, whatever kind holds it.

The workload table (kinds.py) says what a known kind's templates *mean* (class, counts, roles);
it is not what finds them. A walk of the document finds any mapping shaped like a pod spec (a
`containers` list of mappings with `image` or `resources`) or a pod template (a mapping whose
`spec` is such a pod spec), so a CRD nobody has taught the tool still has its GPU pods judged by
every rule that needs neither a class nor a count, and by the rest when its shape gives it a
class (shape.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from kubegap_lint.core.coerce import as_count
from kubegap_lint.core.record import record

# Deeper than any real CRD nests a pod template; bounds the walk on hostile input.
_MAX_DEPTH = 40
# Keys whose values are pod templates or specs by name, not the role of the pods they make.
STRUCTURAL = frozenset(("template", "spec", "podTemplate", "podSpec", "templateSpec"))


@record(frozen=True)
class Found:
    """One pod template found by the walk."""

    path: str  # view path of the template (or inline pod spec), e.g. `spec.workers[0].template`
    node: dict[str, Any]  # the template (metadata + spec) or the inline pod spec itself
    is_template: bool  # True: `node.spec` is the pod spec; False: `node` is the pod spec
    role: str
    replicas: int | None  # a sibling `replicas` of the template, else 1; None when unreadable
    steps: tuple[str | int, ...] = ()  # its key path from the walked object's root


def _containers(value: Any) -> list[dict[str, Any]] | None:
    if not isinstance(value, dict):
        return None
    containers = value.get("containers")
    if not isinstance(containers, list) or not containers or not all(isinstance(c, dict) for c in containers):
        return None
    return containers


def is_pod_spec(value: Any) -> bool:
    """A `containers` list of mappings, at least one with `image` or `resources` (a pod spec
    written anywhere, whatever its key)."""
    containers = _containers(value)
    return containers is not None and any("image" in c or "resources" in c for c in containers)


def is_template_spec(value: Any) -> bool:
    """The `spec` of a pod template: a `containers` list of mappings (the key says what it is)."""
    return _containers(value) is not None


def _join(base: str, key: str) -> str:
    return f"{base}.{key}" if base else key


def _role(steps: list[str | int], holders: list[Any]) -> str:
    """The role of pods found at this place: the nearest key that is not structural (a list
    entry's own `name` or `groupName` when it has one); `pod` at the document root."""
    for position in range(len(steps) - 1, -1, -1):
        step = steps[position]
        if isinstance(step, int):
            entry = holders[position + 1] if position + 1 < len(holders) else None
            if isinstance(entry, dict):
                for key in ("name", "groupName", "role"):
                    if isinstance(entry.get(key), str):
                        return str(entry[key])
            continue
        if step not in STRUCTURAL:
            return step
    return "pod"


def _replicas(parent: Any) -> int | None:
    if not isinstance(parent, dict) or parent.get("replicas") is None:
        return 1
    return as_count(parent.get("replicas"))


def _unwind(data: Any, chain: Any) -> tuple[str, list[str | int], list[Any]]:
    """The view path, key path and holders (the root first) of a place the walk reached."""
    steps: list[str | int] = []
    holders: list[Any] = []
    while chain is not None:
        chain, step, node = chain
        steps.append(step)
        holders.append(node)
    steps.reverse()
    holders.reverse()
    path = ""
    for step in steps:
        path = f"{path}[{step}]" if isinstance(step, int) else _join(path, step)
    return path, steps, [data, *holders]


def _found(data: Any, chain: Any, node: dict[str, Any], is_template: bool,
           where: tuple[str, list[str | int], list[Any]] | None = None) -> Found:
    path, steps, holders = where or _unwind(data, chain)
    parent = holders[-2] if len(holders) > 1 else None
    return Found(path, node, is_template, _role(steps, holders), _replicas(parent), tuple(steps))


def holds_pod_template(data: Any, skip: frozenset[int] = frozenset()) -> bool:
    """Does `walk(data, skip)` find a place? The same tests, without the places' paths: most
    documents of a stream hold no pod template but the ones the table reads (`skip`), and most
    of the rest are ConfigMaps and Services. A mapping without `containers` is neither test's."""
    # (node, depth, whether its path is still "": the root, or only keys spelt "" above it)
    stack: list[tuple[Any, int, bool]] = [(data, 0, True)]
    pop, extend = stack.pop, stack.extend
    while stack:
        node, depth, unnamed = pop()
        if depth > _MAX_DEPTH or id(node) in skip:
            continue
        if isinstance(node, dict):
            spec = node.get("spec")
            if isinstance(spec, dict) and "containers" in spec and is_template_spec(spec) and id(spec) not in skip:
                return True
            if not unnamed and "containers" in node and is_pod_spec(node):
                return True
            depth += 1
            if unnamed:  # below the root's keys: a child keeps the root's "" only under a key spelt ""
                extend([(v, depth, str(k) == "") for k, v in node.items() if isinstance(v, (dict, list))])
            else:
                extend([(v, depth, False) for v in node.values() if isinstance(v, (dict, list))])
        elif isinstance(node, list):
            depth += 1
            extend([(v, depth, False) for v in node if isinstance(v, (dict, list))])
    return False


def walk(data: Any, skip: frozenset[int] = frozenset()) -> Iterator[Found]:
    """Pod templates in `data`, outermost first, in document order; `skip` holds the ids of
    objects already read through the table (they and what they contain are not walked)."""
    # Each place holds its parent's chain (parent chain, step, node), not its paths: most of
    # a document holds no pod, and only the places found are spelled out (_unwind).
    if not holds_pod_template(data, skip):  # the common case, at a third of the cost
        return
    stack: list[tuple[Any, int, Any]] = [(data, 0, None)]
    while stack:
        node, depth, chain = stack.pop()
        if id(node) in skip or depth > _MAX_DEPTH:
            continue
        if isinstance(node, dict):
            spec = node.get("spec")
            if is_template_spec(spec) and id(spec) not in skip:
                yield _found(data, chain, node, True)
                continue
            if is_pod_spec(node):
                where = _unwind(data, chain)
                if where[0] != "":  # the root (or a key spelt "") is not an inline pod spec
                    yield _found(data, chain, node, False, where)
                    continue
            children: list[tuple[Any, int, Any]] = [
                (v, depth + 1, (chain, str(k), v)) for k, v in node.items() if isinstance(v, (dict, list))]
        elif isinstance(node, list):
            children = [(v, depth + 1, (chain, i, v)) for i, v in enumerate(node) if isinstance(v, (dict, list))]
        else:
            continue
        stack.extend(reversed(children))
