"""Key paths: where a node sits in a document. Views carry them (`key_paths`) so a policy's
`at:` names a manifest node, and engine/locate.py follows them; both stages import them from here.

A view's path is a tuple of keys and list indexes from the document's root, like the parser's
(input/parse.py). A node that has no place of its own in the document, such as a TrainJob's pod
merged from its runtime (another document), is `Pinned` to the node a fix goes to: every
field below it locates there, and none is reported missing.
"""

from __future__ import annotations

# A key path inside a document: mapping keys (str) and list indexes (int), from the root.
KeyPath = tuple[str | int, ...]


class Pinned(tuple):  # type: ignore[type-arg]
    """A key path that everything below stands for (engine/locate.py follows it unchanged). A
    tuple, so views compare and print as before (a view is compared when read twice)."""

    __slots__ = ()

    @property
    def path(self) -> KeyPath:
        return tuple(self)


Where = KeyPath | Pinned


def sub(where: Where, *steps: str | int) -> Where:
    """The path of a node below `where`: a pinned place stays where it is."""
    if isinstance(where, Pinned):
        return where
    return (*where, *steps)


def exact(where: Where | None) -> KeyPath | None:
    """The key path `where` names, pinned or not."""
    if isinstance(where, Pinned):
        return where.path
    return where
