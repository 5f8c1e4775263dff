"""A file's YAML documents as ruamel.yaml nodes with their exact character offsets.

The fixes edit text, not data: each node's start and end marks (offsets into the file's own
text, byte order mark and CRLF line ends included) say where an edit goes. A file that does
not compose, or that holds a duplicate key, an anchor or a merge key on the way to a node, is
refused (`Unfixable`): its text is never touched.
"""

from __future__ import annotations

from collections.abc import Iterator

from ruamel.yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

KeyPath = tuple[str | int, ...]


class Unfixable(Exception):  # noqa: N818 - a reason, not a failure: the fix is left out
    """This node or file cannot be edited safely; the message says why."""


class YamlFile:
    """The documents of one file's text, each with the line span it covers."""

    def __init__(self, text: str) -> None:
        from ruamel.yaml import YAML
        from ruamel.yaml.error import YAMLError

        self.text = text
        self.newline = "\r\n" if "\r\n" in text else "\n"
        try:
            self.documents: list[Node] = [node for node in YAML(typ="rt").compose_all(text) if node is not None]
        except (YAMLError, ValueError, RecursionError) as exc:
            raise Unfixable(f"the file does not parse: {str(exc).splitlines()[0] if str(exc) else exc}") from None
        for document in self.documents:
            _check_keys(document)

    def document_at(self, line: int) -> Node:
        """The document whose text holds 1-based `line`: the last one starting at or before it
        (a document's end mark can lie on the next one's first line)."""
        found = [d for d in self.documents if d.start_mark.line + 1 <= line <= d.end_mark.line + 1]
        if not found:
            raise Unfixable(f"no document holds line {line}")
        return found[-1]


def _check_keys(root: Node) -> None:
    """Refuse a document with a duplicate key or a merge key: its data is not its text."""
    stack = [root]
    seen: set[int] = set()
    while stack:
        node = stack.pop()
        if id(node) in seen:  # an alias: the same node met again
            raise Unfixable("the document uses an alias")
        seen.add(id(node))
        if isinstance(node, MappingNode):
            keys = set()
            for key, value in node.value:
                name = key.value if isinstance(key, ScalarNode) else id(key)
                if name in keys or name == "<<":
                    raise Unfixable(f"the document has a duplicate or merge key {name!r}")
                keys.add(name)
                stack.append(value)
        elif isinstance(node, SequenceNode):
            stack.extend(node.value)


def child(node: Node, segment: str | int) -> Node | None:
    """The value at one key or index of a container node, None when absent."""
    if isinstance(segment, int):
        if isinstance(node, SequenceNode) and 0 <= segment < len(node.value):
            return node.value[segment]  # type: ignore[no-any-return]
        return None
    if isinstance(node, MappingNode):
        for key, value in node.value:
            if isinstance(key, ScalarNode) and key.value == segment:
                return value  # type: ignore[no-any-return]
    return None


def key_node(mapping: Node, name: str) -> Node | None:
    if isinstance(mapping, MappingNode):
        for key, _ in mapping.value:
            if isinstance(key, ScalarNode) and key.value == name:
                return key  # type: ignore[no-any-return]
    return None


def node_at(root: Node, path: KeyPath) -> Node:
    node = root
    for segment in path:
        found = child(node, segment)
        if found is None:
            raise Unfixable(f"nothing at {segment!r} of the finding's path")
        node = found
    return node


def entries(mapping: Node) -> Iterator[tuple[str, Node]]:
    if isinstance(mapping, MappingNode):
        for key, value in mapping.value:
            if isinstance(key, ScalarNode):
                yield key.value, value


def scalar_text(node: Node | None) -> str | None:
    """The value of a scalar node (as text, whatever its type), None for any other node."""
    return node.value if isinstance(node, ScalarNode) else None  # type: ignore[no-any-return]


def is_block(node: Node) -> bool:
    return isinstance(node, (MappingNode, SequenceNode)) and not node.flow_style


def is_empty_scalar(node: Node) -> bool:
    """`key:` with nothing after it (null), which a fix may replace by a block."""
    return isinstance(node, ScalarNode) and node.value == "" and node.style is None


class Layout:
    """How a document indents: the step of a nested mapping, and where a list's dash goes
    relative to its key (0: `key:\\n- a`; 2: `key:\\n  - a`)."""

    def __init__(self, root: Node) -> None:
        self.step = 2
        self.dash_offset = 2
        found_step = found_dash = False
        stack = [root]
        while stack and not (found_step and found_dash):
            node = stack.pop()
            if not isinstance(node, MappingNode) or node.flow_style:
                if isinstance(node, SequenceNode):
                    stack.extend(reversed(node.value))
                continue
            for key, value in node.value:
                column = key.start_mark.column
                if isinstance(value, MappingNode) and is_block(value) and value.value and not found_step \
                        and value.start_mark.line > key.start_mark.line:
                    self.step = max(1, value.value[0][0].start_mark.column - column)
                    found_step = True
                if isinstance(value, SequenceNode) and is_block(value) and value.value and not found_dash:
                    self.dash_offset = max(0, value.start_mark.column - column)
                    found_dash = True
            stack.extend(value for _, value in reversed(node.value))

    def __repr__(self) -> str:
        return f"Layout(step={self.step}, dash_offset={self.dash_offset})"

