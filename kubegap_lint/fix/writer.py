"""Text edits that change one node of a YAML file in the document's own layout.

Three edits cover every fix: replace a scalar (in its own quoting), add entries to a mapping
and add an item to a list (block: new lines at the existing entries' indentation, after the
last line of the last entry; flow: before the closing bracket). Values are plain Python
(str, int, bool, dict, list); a `Verbatim` string is written as it is (a value copied from the
file itself).
"""

from __future__ import annotations

import json
import re
from typing import Any

from ruamel.yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from kubegap_lint.fix.document import Layout, Unfixable, YamlFile, is_block, is_empty_scalar
from kubegap_lint.fix.model import Edit


class Verbatim(str):
    """YAML text copied from the file: written unchanged."""

    __slots__ = ()


_PLAIN = re.compile(r"[A-Za-z0-9_/][A-Za-z0-9_./-]*\Z")
_NUMBER = re.compile(r"[-+]?(?:[0-9][0-9_]*(?:\.[0-9_]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?\Z|0[xo][0-9a-fA-F_]+\Z")
_WORDS = {"y", "n", "yes", "no", "on", "off", "true", "false", "null", "~"}


def scalar(value: Any) -> str:
    """A value as YAML scalar text: strings stay strings (quoted when plain text would read as
    a number, a boolean or null)."""
    if isinstance(value, Verbatim):
        return str(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    text = str(value)
    if _PLAIN.match(text) and not _NUMBER.match(text) and text.lower() not in _WORDS:
        return text
    return json.dumps(text, ensure_ascii=False)


def set_scalar(yfile: YamlFile, node: Node, value: str | int) -> Edit:
    """Replace a scalar's value, keeping its quotes (a plain scalar is quoted only when the new
    text would not read as a string; a number is written plain)."""
    if not isinstance(node, ScalarNode) or node.style not in (None, '"', "'"):
        raise Unfixable("the value is not a one-line scalar")
    if not isinstance(value, str):
        text = scalar(value)
    elif node.style == "'":
        text = "'" + value.replace("'", "''") + "'"
    elif node.style == '"':
        text = json.dumps(value, ensure_ascii=False)
    else:
        text = scalar(value)
    return Edit(node.start_mark.index, node.end_mark.index, text)


def _flow(value: Any) -> str:
    if isinstance(value, dict):
        return "{" + ", ".join(f"{scalar(k)}: {_flow(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_flow(v) for v in value) + "]"
    return scalar(value)


def block_lines(key: str, value: Any, column: int, layout: Layout) -> list[str]:
    """`key: value` as block lines starting at `column`."""
    pad = " " * column
    if isinstance(value, dict) and value:
        lines = [f"{pad}{scalar(key)}:"]
        for name, inner in value.items():
            lines += block_lines(name, inner, column + layout.step, layout)
        return lines
    if isinstance(value, list) and value:
        lines = [f"{pad}{scalar(key)}:"]
        for item in value:
            lines += item_lines(item, column + layout.dash_offset, layout)
        return lines
    return [f"{pad}{scalar(key)}: {_flow(value)}"]


def item_lines(item: Any, dash_column: int, layout: Layout, content_offset: int = 2) -> list[str]:
    """A list item (`- ...`) whose dash is at `dash_column`."""
    dash = " " * dash_column + "-" + " " * (content_offset - 1)
    if isinstance(item, dict) and item:
        lines: list[str] = []
        for name, inner in item.items():
            lines += block_lines(name, inner, dash_column + content_offset, layout)
        return [dash + lines[0].lstrip(" "), *lines[1:]]
    return [dash + _flow(item)]


def _end(node: Node) -> int:
    """Where the text of a node's last entry ends (a block container's own end mark can lie
    past the comments that follow it)."""
    end: int = node.end_mark.index
    while is_block(node) and node.value:
        last = node.value[-1]
        if isinstance(node, MappingNode):
            key, node = last
            end = key.end_mark.index  # `key:` with no value: the key's line
        else:
            node = last
        if not is_empty_scalar(node):
            end = node.end_mark.index
    return end


def _insert_lines(yfile: YamlFile, after: int, lines: list[str]) -> Edit:
    """New lines after the line on which offset `after` lies."""
    text, newline = yfile.text, yfile.newline
    if after > 0 and text[after - 1] == "\n":
        return Edit(after, after, "".join(line + newline for line in lines))
    end = text.find("\n", after)
    if end < 0:  # the last line has no line break
        return Edit(len(text), len(text), "".join(newline + line for line in lines))
    return Edit(end + 1, end + 1, "".join(line + newline for line in lines))


def _closing(yfile: YamlFile, node: Node, bracket: str) -> int:
    where = node.end_mark.index - 1
    if yfile.text[where:where + 1] != bracket:
        raise Unfixable("a flow collection without its closing bracket where expected")
    return where  # type: ignore[no-any-return]


def add_entries(yfile: YamlFile, layout: Layout, mapping: Node, values: dict[str, Any]) -> Edit:
    """Add keys (absent from `mapping`) to a mapping, after its last entry."""
    if not isinstance(mapping, MappingNode):
        raise Unfixable("the place to add to is not a mapping")
    if mapping.flow_style or not mapping.value:
        if not mapping.flow_style:
            raise Unfixable("an empty block mapping")
        where = _closing(yfile, mapping, "}")
        text = ", ".join(f"{scalar(k)}: {_flow(v)}" for k, v in values.items())
        return Edit(where, where, (", " if mapping.value else "") + text)
    column = mapping.value[0][0].start_mark.column
    lines: list[str] = []
    for name, value in values.items():
        lines += block_lines(name, value, column, layout)
    return _insert_lines(yfile, _end(mapping), lines)


def append_item(yfile: YamlFile, layout: Layout, sequence: Node, item: Any) -> Edit:
    """Add an item at the end of a list."""
    if not isinstance(sequence, SequenceNode):
        raise Unfixable("the place to add to is not a list")
    if sequence.flow_style or not sequence.value:
        if not sequence.flow_style:
            raise Unfixable("an empty block list")
        where = _closing(yfile, sequence, "]")
        return Edit(where, where, (", " if sequence.value else "") + _flow(item))
    dash_column = sequence.start_mark.column
    if yfile.text[sequence.start_mark.index:sequence.start_mark.index + 1] != "-":
        raise Unfixable("a block list that does not start with its dash")
    first = sequence.value[0]
    offset = 2
    if isinstance(first, (MappingNode, ScalarNode)) and first.start_mark.line == sequence.start_mark.line:
        offset = max(2, first.start_mark.column - dash_column)
    return _insert_lines(yfile, _end(sequence), item_lines(item, dash_column, layout, offset))


def set_path(yfile: YamlFile, layout: Layout, base: Node, dotted: str, value: Any) -> Edit:
    """Set `base.a.b.c` (a dotted path of mapping keys) to `value`: the scalar replaced when it
    is there, else the missing keys added under the deepest one that is."""
    parts = dotted.split(".")
    node = base
    for index, part in enumerate(parts):
        found = None
        if isinstance(node, MappingNode):
            found = next((v for k, v in node.value if isinstance(k, ScalarNode) and k.value == part), None)
        if found is None:
            nested: Any = value
            for name in reversed(parts[index + 1:]):
                nested = {name: nested}
            return add_entries(yfile, layout, node, {part: nested})
        node = found
    return set_scalar(yfile, node, value)
