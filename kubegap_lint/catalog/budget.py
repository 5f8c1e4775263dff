"""The value budget of one policy search: what a search may build before it is stopped.

An expression from a policy may build values that grow exponentially with its length (forty
`[@, @][]` stages double a list forty times; 2.5 GB was measured before this bound), or walk
values that share halves exponentially often (comparing, printing). Each list and object a node
builds, and each function result that is a list, an object or a string, counts its length
(compile.py), and a walking call is charged what it walks before it runs (walked_size).
tests/jmespath_reference.py counts the same by walking the tree.
"""

from __future__ import annotations

from typing import Any

from jmespath.exceptions import JMESPathError

MAX_VALUES = 1_000_000


def tree_size(value: Any, limit: int = MAX_VALUES) -> int:
    """How many values `value` holds counted as a tree: a list or object met twice counts twice,
    as comparing or printing it visits it twice (`[@, @]` forty times shares its halves: 80
    values built, 2^40 visited). Linear in the distinct containers; stops counting past limit."""
    if not isinstance(value, (list, dict)):
        return 1
    sizes: dict[int, int] = {}
    stack = [value]
    while stack:
        node = stack[-1]
        if id(node) in sizes:
            stack.pop()
            continue
        children = list(node.values()) if isinstance(node, dict) else node
        waiting = [c for c in children if isinstance(c, (list, dict)) and id(c) not in sizes]
        if waiting:
            stack.extend(waiting)
            continue
        total = 1 + sum(sizes[id(c)] if isinstance(c, (list, dict)) else 1 for c in children)
        sizes[id(node)] = min(total, limit + 1)
        stack.pop()
    return sizes[id(value)]


# Functions that walk a whole argument (printing it, comparing a needle with each item), charged
# its tree size before they run: otherwise a few values built could take hours or all memory.
WALKING_FUNCTIONS = {"to_string": (0,), "contains": (0, 1)}


class Budget:
    """What one search has built so far (`produced`), against MAX_VALUES; whoever starts a
    search sets `produced = 0`."""

    def __init__(self) -> None:
        self.produced = 0

    def spend(self, size: int) -> None:
        """Counts `size` values built. The closures that build the most write this out (a
        call less a node): `budget.produced += size`, then `stop()` past MAX_VALUES."""
        self.produced += size
        if self.produced > MAX_VALUES:
            self.stop()

    @staticmethod
    def stop() -> None:
        raise JMESPathError(f"the expression built over {MAX_VALUES:,} values: stopped")


def walked_size(name: str, arguments: list[Any] | tuple[Any, ...]) -> int | None:
    """What a call of a walking function visits, charged before it runs: the tree size of its
    walked argument when every walked argument is a list or object (`contains` of a string or
    a scalar needle walks nothing deep, and an object subject fails its type check before any
    walk); None when it walks nothing deep. The reference interpreter in tests charges the same."""
    walked = WALKING_FUNCTIONS.get(name)
    if walked is None or not all(isinstance(arguments[i], (list, dict)) for i in walked if i < len(arguments)):
        return None
    if name == "contains" and not isinstance(arguments[0], list):
        return None
    return tree_size(arguments[walked[0]])
