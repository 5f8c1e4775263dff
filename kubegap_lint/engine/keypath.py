"""The YAML key path of a located node: how the Helm mapping finds the same node in a template.

Positions are indexed by object identity, not by path, so the path is recovered by walking the
resource once and comparing positions. Only findings on Helm output need it.
"""

from __future__ import annotations

from collections import deque
from typing import Any

from kubegap_lint.core.model import Position
from kubegap_lint.input.parse import PositionIndex

# A mapping key, or a list item as (index, the item's `name` when it has one).
Segment = str | tuple[int, str | None]


def key_path_at(data: Any, positions: PositionIndex, target: Position) -> tuple[Segment, ...]:
    """The path of the container that `PositionIndex.anchor` placed at `target`: a container held
    by a key anchors at the key, a list item (or the resource) where it starts. () when none does
    (the finding is on the resource itself). A mapping starts where its first key does, so a
    node's start is only compared for list items, never for values of keys."""
    queue: deque[tuple[Any, tuple[Segment, ...]]] = deque([(data, ())])
    while queue:
        node, path = queue.popleft()  # breadth first: the shallowest match wins
        if isinstance(node, dict):
            for key, value in node.items():
                if isinstance(value, (dict, list)):
                    child = (*path, str(key))
                    if positions.key_is(node, str(key), target):
                        return child
                    queue.append((value, child))
        elif isinstance(node, list):
            for index, item in enumerate(node):
                if isinstance(item, (dict, list)):
                    name = item.get("name") if isinstance(item, dict) else None
                    child = (*path, (index, name if isinstance(name, str) else None))
                    if positions.node_is(item, target):
                        return child
                    queue.append((item, child))
    return ()
