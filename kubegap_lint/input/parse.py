"""Stage 2b: parse one document with ruamel.yaml's C parser into plain data that remembers lines.

The C parser (ruamel.yaml.clib) composes nodes with start marks at about 27x the speed of the
round-trip loader. A small iterative walker turns the nodes into plain dicts, lists and scalars
(plain types keep JMESPath's type checks happy) and records positions by object identity in a
`PositionIndex`. The walker resolves scalars itself (YAML 1.1 booleans, as Kubernetes' decoder
does), never constructs tagged objects, detects duplicate keys, applies merge keys, and refuses
documents whose aliases would expand past a limit.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from kubegap_lint.core.model import Position
from kubegap_lint.input.scan import Chunk

# An ordinary manifest expands to a few thousand nodes; a "billion laughs" document to 10^9.
MAX_EXPANDED_NODES = 1_000_000

_NULLS = frozenset(("", "~", "null", "Null", "NULL"))
_TRUE = frozenset(("true", "True", "TRUE", "yes", "Yes", "YES", "on", "On", "ON"))
_FALSE = frozenset(("false", "False", "FALSE", "no", "No", "NO", "off", "Off", "OFF"))
_INT_RE = re.compile(r"[-+]?(?:0|[1-9][0-9_]*)\Z")
_HEX_RE = re.compile(r"[-+]?0x[0-9a-fA-F_]+\Z")
_OCT_RE = re.compile(r"[-+]?0o[0-7_]+\Z")
_FLOAT_RE = re.compile(r"[-+]?(?:\.[0-9]+|[0-9][0-9_]*(?:\.[0-9_]*)?)(?:[eE][-+]?[0-9]+)?\Z")
_TAG_PREFIX = "tag:yaml.org,2002:"

MERGE_KEY = "<<"


class PositionIndex:
    """Positions of a document's containers and mapping keys, looked up by object identity.

    The objects must stay alive while the index is used (they do: the document holds them).
    Views built from the data register their own objects with `alias` so that a policy's
    result can be located whether it came from the raw resource or from a view.

    The tables hold the parser's marks (0-based line and column), turned into `Position`s
    only when asked: most of them are never looked up, and building a Position for each key
    of a large stream cost more than parsing it.
    """

    __slots__ = ("nodes", "keys", "key_of", "offset")

    def __init__(self, line_offset: int = 0) -> None:
        self.nodes: dict[int, Any] = {}  # container -> mark of where it starts
        self.keys: dict[int, dict[str, Any]] = {}  # mapping -> key -> mark of the key
        self.key_of: dict[int, Any] = {}  # container -> mark of the key that holds it
        self.offset = line_offset  # lines before the document's chunk in its file

    def _position(self, mark: Any) -> Position | None:
        if mark is None:
            return None
        return Position(mark.line + 1 + self.offset, mark.column + 1)

    def node(self, obj: Any) -> Position | None:
        return self._position(self.nodes.get(id(obj)))

    def anchor(self, obj: Any) -> Position | None:
        """The best line for a container: the key that holds it, else where it starts."""
        return self._position(self.key_of.get(id(obj)) or self.nodes.get(id(obj)))

    def key(self, mapping: Any, name: str) -> Position | None:
        table = self.keys.get(id(mapping))
        return self._position(table.get(name)) if table else None

    def key_is(self, mapping: Any, name: str, target: Position) -> bool:
        """`key(mapping, name) == target`, without making a Position (key paths ask it often)."""
        table = self.keys.get(id(mapping))
        mark = table.get(name) if table else None
        return (mark is not None and mark.line + 1 + self.offset == target.line
                and mark.column + 1 == target.column)

    def node_is(self, obj: Any, target: Position) -> bool:
        """`node(obj) == target`, without making a Position."""
        mark = self.nodes.get(id(obj))
        return (mark is not None and mark.line + 1 + self.offset == target.line
                and mark.column + 1 == target.column)

    def alias(self, view_obj: Any, raw_obj: Any) -> None:
        """Make a view object locate like the raw object it stands for."""
        mark = self.nodes.get(id(raw_obj))
        if mark is not None:
            self.nodes[id(view_obj)] = mark
        key_mark = self.key_of.get(id(raw_obj))
        if key_mark is not None:
            self.key_of[id(view_obj)] = key_mark


@dataclass
class ParseProblem:
    """A fault in the input found while parsing: becomes a KG0xx finding."""

    rule: str  # "yaml-syntax-error", "yaml-duplicate-key", "yaml-alias-expansion"
    message: str
    position: Position


@dataclass
class ParsedDocument:
    data: Any  # None when the document could not be parsed
    positions: PositionIndex
    start: Position
    problems: list[ParseProblem] = field(default_factory=list)


def _parser_class() -> type:
    """Build (once) a CParser subclass that leaves tags unresolved: the walker resolves them."""
    global _PARSER
    if _PARSER is None:
        import _ruamel_yaml  # type: ignore[import-not-found]  # ruamel.yaml.clib's C extension

        class _Parser(_ruamel_yaml.CParser):
            def resolve(self, kind: Any, value: Any, implicit: Any) -> None:
                return None

            # Called for every node, results unused: C callables (not bound to self) cost
            # less than Python methods. `{}.get(parent, index)` and `tuple()` accept what the
            # parser passes and do nothing.
            descend_resolver: Any = {}.get
            ascend_resolver = tuple

        _PARSER = _Parser
    return _PARSER


_PARSER: type | None = None


# Light nodes. The C parser builds each node by calling the classes named ScalarNode,
# SequenceNode and MappingNode in its module; ruamel's own are Python classes whose
# constructors (a Tag object per node) cost more than the parsing itself. While one document
# is composed, `_compose` puts these in their place: a scalar becomes the tuple of the
# constructor's arguments (tag, value, start_mark, end_mark, style); a collection a small
# object whose `end_mark` the parser sets when the collection ends.
def _scalar_node(*args: Any) -> tuple[Any, ...]:
    return args


class _SequenceNode:
    __slots__ = ("tag", "value", "start_mark", "end_mark", "flow_style")

    def __init__(self, tag: Any, value: Any, start_mark: Any, end_mark: Any, flow_style: Any) -> None:
        self.tag = tag
        self.value = value
        self.start_mark = start_mark
        self.end_mark = end_mark
        self.flow_style = flow_style


class _MappingNode(_SequenceNode):
    __slots__ = ()


def _compose(text: str) -> Any:
    """The document's root node (light nodes), or None for an empty document."""
    import _ruamel_yaml

    module: Any = _ruamel_yaml
    saved = (module.ScalarNode, module.SequenceNode, module.MappingNode)
    module.ScalarNode, module.SequenceNode, module.MappingNode = _scalar_node, _SequenceNode, _MappingNode
    try:
        return _parser_class()(text).get_single_node()
    except Exception:
        pass
    finally:
        module.ScalarNode, module.SequenceNode, module.MappingNode = saved
    # A fault: parse again with ruamel's own nodes, whose error (some read a node's start mark,
    # which a light scalar does not have) is the one to report.
    return _parser_class()(text).get_single_node()


def _tag_text(tag: str) -> str:
    """An explicit tag as ruamel.yaml's nodes spell it (URI escapes decoded)."""
    from ruamel.yaml.tag import Tag

    return str(Tag(suffix=tag))


def _scalar(node: tuple[Any, ...]) -> Any:
    """Resolve a scalar node to a plain value; tagged values are kept as text, never built."""
    tag, value, _, _, style = node
    if tag is not None:
        text = _tag_text(tag)
        if text and text != "None" and text != "!":
            if text.startswith(_TAG_PREFIX):
                short = text[len(_TAG_PREFIX) :]
                if short in ("int", "float", "bool", "null"):
                    resolved = _plain(value)
                    return resolved if resolved is not value else value
            return value
    if style:  # quoted, literal or folded: always a string
        return value
    return _plain(value)


# Plain scalars that are not strings, by their exact text (YAML 1.1, as Kubernetes reads it).
_SPECIAL: dict[str, Any] = {
    **{text: None for text in _NULLS},
    **{text: True for text in _TRUE},
    **{text: False for text in _FALSE},
    ".inf": float("inf"), ".Inf": float("inf"), ".INF": float("inf"), "+.inf": float("inf"),
    "-.inf": float("-inf"), "-.Inf": float("-inf"), "-.INF": float("-inf"),
}
_NUMBER_START = frozenset("0123456789-+.")


def _plain(value: str) -> Any:
    if value in _SPECIAL:
        return _SPECIAL[value]
    if value[0] in _NUMBER_START:
        try:
            if _INT_RE.match(value):
                return int(value.replace("_", ""))
            if _HEX_RE.match(value):
                return int(value.replace("_", ""), 16)
            if _OCT_RE.match(value):
                return int(value.replace("_", "").replace("0o", ""), 8)
            if _FLOAT_RE.match(value) and any(ch.isdigit() for ch in value):
                return float(value.replace("_", ""))
        except ValueError:
            return value
    return value


def _key_text(node: Any) -> str:
    if type(node) is tuple:
        return str(node[1])
    return "<mapping key>" if type(node) is _MappingNode else "<sequence key>"


_MERGE_TAGS = ("tag:yaml.org,2002:merge", "None")


class _Walker:
    """Turns a node graph into plain data without recursion, so depth is never a limit."""

    def __init__(self, line_offset: int) -> None:
        self.offset = line_offset
        self.index = PositionIndex(line_offset)
        self.problems: list[ParseProblem] = []
        self.memo: dict[int, Any] = {}
        self.merges: list[tuple[Any, dict[str, Any], list[Any]]] = []
        self.aliased = False

    def pos(self, mark: Any) -> Position:
        return Position(mark.line + 1 + self.offset, mark.column + 1)

    def value(self, node: Any, stack: list[tuple[Any, Any]]) -> Any:
        if type(node) is tuple:
            return _scalar(node)
        known = self.memo.get(id(node))
        if known is not None:
            self.aliased = True
            return known
        obj: Any = {} if type(node) is _MappingNode else []
        self.memo[id(node)] = obj
        self.index.nodes[id(obj)] = node.start_mark
        stack.append((node, obj))
        return obj

    def walk(self, root: Any) -> Any:
        stack: list[tuple[Any, Any]] = []
        result = self.value(root, stack)
        while stack:
            node, obj = stack.pop()
            if type(obj) is list:
                self.fill_sequence(node, obj, stack)
            else:
                self.fill_mapping(node, obj, stack)
        # Merge after filling, in text order: an anchor is defined before it is used, so a
        # merged mapping's own merges are applied before it is merged elsewhere. Keys already
        # present (explicit, or from an earlier source) win, as YAML's merge key says.
        for _, target, sources in sorted(self.merges, key=lambda m: (m[0].line, m[0].column)):
            for source in sources:
                if isinstance(source, dict):
                    for k, v in source.items():
                        if k not in target:
                            target[k] = v
        return result

    def fill_sequence(self, node: Any, obj: list[Any], stack: list[tuple[Any, Any]]) -> None:
        append = obj.append
        value = self.value
        for item in node.value:
            # Plain untagged scalars are most items: resolve them here, without a call.
            if type(item) is tuple and item[0] is None and not item[4]:
                text = item[1]
                append(_plain(text) if text in _SPECIAL or text[:1] in _NUMBER_START else text)
            else:
                append(value(item, stack))

    def fill_mapping(self, node: Any, obj: dict[str, Any], stack: list[tuple[Any, Any]]) -> None:
        key_marks: dict[str, Any] = {}
        index = self.index
        index.keys[id(obj)] = key_marks
        key_of = index.key_of
        value = self.value
        for key_node, value_node in node.value:
            if type(key_node) is tuple:
                key = str(key_node[1])
                key_mark = key_node[2]
                if key == MERGE_KEY and (key_node[0] is None or _tag_text(key_node[0]) in _MERGE_TAGS):
                    merged = value(value_node, stack)
                    sources = merged if isinstance(merged, list) else [merged]
                    self.merges.append((key_mark, obj, sources))
                    continue
            else:
                key = _key_text(key_node)
                key_mark = key_node.start_mark
            if key in key_marks:
                first = self.pos(key_marks[key])
                self.problems.append(
                    ParseProblem(
                        "yaml-duplicate-key",
                        f"key '{key}' is repeated in this mapping (first at line {first.line});"
                        " Kubernetes keeps the last value and silently drops the first",
                        self.pos(key_mark),
                    )
                )
            key_marks[key] = key_mark
            if type(value_node) is tuple:
                if value_node[0] is None and not value_node[4]:
                    text = value_node[1]
                    obj[key] = _plain(text) if text in _SPECIAL or text[:1] in _NUMBER_START else text
                else:
                    obj[key] = _scalar(value_node)
                continue
            item = value(value_node, stack)
            obj[key] = item
            if id(item) not in key_of:
                key_of[id(item)] = key_mark


RECURSIVE = -1


def _expanded_size(root: Any, limit: int) -> int:
    """Count the nodes the data would have if every alias were copied out; stops at limit.

    Returns RECURSIVE when an alias points at a node that contains it (`a: &a [*a]`): such
    data has no finite expansion, and a walk over it would never end.
    """
    sizes: dict[int, int] = {}
    open_nodes: set[int] = set()  # containers whose children are still being counted
    stack: list[tuple[Any, bool]] = [(root, False)]
    while stack:
        obj, done = stack.pop()
        if not isinstance(obj, (dict, list)) or (id(obj) in sizes and not done):
            continue
        children = obj.values() if isinstance(obj, dict) else obj
        if not done:
            if id(obj) in open_nodes:
                return RECURSIVE
            open_nodes.add(id(obj))
            stack.append((obj, True))
            for child in children:
                if isinstance(child, (dict, list)):
                    if id(child) in open_nodes:
                        return RECURSIVE
                    stack.append((child, False))
            continue
        open_nodes.discard(id(obj))
        total = 1
        for child in children:
            total += sizes.get(id(child), 1)
            if total > limit:
                return total
        sizes[id(obj)] = total
    return sizes.get(id(root), 1)


def _error_position(exc: Exception, chunk: Chunk, fallback: Position) -> Position:
    """The parser's mark, or where the unclosed construct opened when the mark is past the end."""
    last_line = chunk.text.rstrip("\n").count("\n")  # 0-based, within the chunk
    problem = getattr(exc, "problem_mark", None)
    context = getattr(exc, "context_mark", None)
    mark = problem
    if mark is None or (getattr(mark, "line", 0) > last_line and context is not None):
        mark = context or problem
    if mark is not None and getattr(mark, "line", None) is not None:
        # The parser ends an input that lacks a final new line on a line of its own, past the
        # text: clamp every mark to the chunk's last line.
        line = min(mark.line, last_line)
        column = mark.column + 1 if line == mark.line else 1
        return Position(line + 1 + chunk.first_line, column)
    position = getattr(exc, "position", None)  # ReaderError: offset of a bad character
    if isinstance(position, int):
        line = chunk.text.count("\n", 0, position)
        return Position(line + 1 + chunk.first_line, position - (chunk.text.rfind("\n", 0, position) + 1) + 1)
    return fallback


def _error_message(exc: Exception) -> str:
    problem = getattr(exc, "problem", None)
    context = getattr(exc, "context", None)
    if problem:
        text = str(problem)
        if context:
            text += f" ({context})"
    else:
        text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return " ".join(text.split())


def _hint(chunk: Chunk, where: Position, message: str) -> str:
    """What to do, for the faults whose parser message does not say it (a tab loses its quote;
    an unclosed quote is reported as the end of the document)."""
    lines = chunk.text.split("\n")
    index = where.line - 1 - chunk.first_line
    if 0 <= index < len(lines) and lines[index][where.column - 1 : where.column] == "\t":
        return "; a tab cannot indent YAML: use spaces"
    if "end of stream" in message and "quoted scalar" in message:
        return "; the quote that opens here is never closed"
    return ""


def _refusal(chunk: Chunk) -> tuple[str, Any] | None:
    """Why the document must not be composed, and the parser's mark of where; None when it may.
    Both checks read the parser's events, which needs no recursion and holds no tree."""
    from kubegap_lint.input.limits import (
        MAX_DEPTH,
        MAX_NODES,
        depth_exceeds,
        may_be_too_deep,
        may_hold_too_many_nodes,
        nodes_exceed,
    )

    # Composed, each value costs several hundred bytes: refuse before memory runs out. First:
    # it is cheaper than the depth bound on a long flow (bench/reading.py).
    crowded = may_hold_too_many_nodes(chunk.text) and nodes_exceed(_parser_class()(chunk.text))
    if crowded:
        return (f"this document holds more than {MAX_NODES:,} values; it is not linted"
                " (no real object holds that many)", crowded)
    # Composing would recurse in C once per level: refuse before it can crash.
    deep = may_be_too_deep(chunk.text) and depth_exceeds(_parser_class()(chunk.text))
    if deep:
        return (f"this document nests more than {MAX_DEPTH:,} levels deep; it is not linted"
                " (no manifest needs that many)", deep)
    return None


def parse_chunk(chunk: Chunk) -> ParsedDocument:
    """Parse one document's text; a fault becomes a problem, never an exception."""
    fallback = Position(chunk.first_line + 1, 1)
    walker = _Walker(chunk.first_line)
    refusal = _refusal(chunk)
    if refusal is not None:
        message, mark = refusal
        where = Position(mark.line + 1 + chunk.first_line, mark.column + 1)
        return ParsedDocument(None, walker.index, fallback, [ParseProblem("document-too-large", message, where)])
    try:
        node = _compose(chunk.text)
    except Exception as exc:  # the C parser raises several error types; all are input faults
        where = _error_position(exc, chunk, fallback)
        message = _error_message(exc)
        problem = ParseProblem("yaml-syntax-error", message + _hint(chunk, where, message), where)
        return ParsedDocument(None, walker.index, fallback, [problem])
    if node is None:
        return ParsedDocument(None, walker.index, fallback, [])
    start = walker.pos(node[2] if type(node) is tuple else node.start_mark)
    data = walker.walk(node)
    if walker.aliased:
        size = _expanded_size(data, MAX_EXPANDED_NODES)
        if size == RECURSIVE:
            message = ("an alias refers to a node that contains it, so the data is infinitely"
                       " deep; the document is not linted")
            return ParsedDocument(None, walker.index, start, [ParseProblem("yaml-alias-expansion", message, start)])
        if size > MAX_EXPANDED_NODES:
            message = (
                f"aliases in this document expand to more than {MAX_EXPANDED_NODES:,} nodes;"
                " the document is not linted (an alias bomb, or data that is not a manifest)"
            )
            return ParsedDocument(None, walker.index, start, [ParseProblem("yaml-alias-expansion", message, start)])
    return ParsedDocument(data, walker.index, start, walker.problems)
