"""Parsing one document with ruamel.yaml's C parser into plain data that remembers lines.

The C parser (ruamel.yaml.clib) composes nodes with start and end marks at about 27x the speed
of the round-trip loader. A small iterative walker turns the nodes into plain dicts, lists and
scalars (plain types keep JMESPath's type checks happy) and records where every key and value
is, by key path, in a `PositionIndex`. The walker resolves scalars itself (YAML 1.1 booleans, as Kubernetes' decoder
does), never constructs tagged objects, detects duplicate keys, applies merge keys, and refuses
documents whose aliases would expand past a limit.

Composing has two paths with the same output: light nodes built by the C parser itself (fast,
but it names them in the C extension's private module, so it runs only where a self-check at
first use sees it work), and ruamel's own nodes from the public parser turned into light
nodes (portable). tests/test_portability.py holds them to the same documents.
"""

from __future__ import annotations

import gc
import re
from array import array
from typing import Any

from kubegap_lint.core.keypaths import KeyPath  # also named from here by the readers
from kubegap_lint.core.model import Position
from kubegap_lint.core.record import field, record
from kubegap_lint.input import limits
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


def dotted(path: KeyPath) -> str:
    """A key path as people write it: `spec.template.spec.containers[1].env[3].value`."""
    text = ""
    for segment in path:
        if isinstance(segment, int):
            text += f"[{segment}]"
        else:
            text += f".{segment}" if text else segment
    return text


# One record a node, in the order the walker meets them: its key (a mapping key, a list index;
# None for the root) in `keys`, and eight 0-based numbers in `numbers`: the key's line and
# column (the item's own start for list items and the root), the value's start, its end, and
# the span [first, end) of the records of its children. A container's children are met
# together (the walker records them all when it takes the container from its stack), so they
# are one span: a path is found by walking the spans from the root, with no tuple a node.
# (Measured on the 10k stream against one dict from path tuples to six-int tuples: the walk
# builds no path, the spill writes one list of shared key strings and packed numbers, and
# freeing a document frees three objects.)
WIDTH = 8
Entry = tuple[int, int, int, int, int, int]
_MERGED = -1  # key line of a record that holds no entry: a merged mapping walked in its place


class PositionIndex:
    """Where every key and every value of one document is, addressed by key path.

    A scalar is located as well as a container, and nothing depends on the identity of the
    parsed objects, so a view or a copy of the data locates like the original. Paths whose
    node came from a merge key or through an alias are absent: their nearest recorded parent
    stands for them.

    A document whose records do not form one tree of distinct paths (a key repeated in a
    mapping, or a merged mapping first met at its merge key) is `irregular`: it is answered
    from a dict of path tuples, built at its first query by replaying the records in order,
    so that a later record for the same path replaces an earlier one, as they were written.
    """

    __slots__ = ("keys", "numbers", "offset", "irregular", "_table", "_last")

    def __init__(self, line_offset: int = 0) -> None:
        self.keys: list[str | int | None] = []
        # A list while the document is read (building an array from it costs more than the
        # walk's own steps: ~40 ns a number, measured); an array (unsigned char or short when
        # every number fits, else int) once read back from a spill.
        self.numbers: list[int] | array[int] = []
        self.offset = line_offset  # lines before the document's chunk in its file
        self.irregular = False
        self._table: dict[KeyPath, int] | None = None  # path -> record, built on demand
        # The path `nearest` gave last, and its record: a finding asks for its key and end next.
        self._last: tuple[KeyPath | None, int] = (None, -1)

    # Plain data for a spill (store/records.py: marshal): the keys are the data's own strings,
    # so a record holding both writes each once.
    def to_record(self) -> tuple[Any, ...]:
        numbers = self.numbers
        packed: bytes | bytearray
        if type(numbers) is list:  # packed at C speed (array's constructor costs 3-4x more)
            try:  # a byte a number when all fit (most documents: 65% of the 1k stream's)
                kind, packed = "B", bytearray(numbers)  # a third of struct's cost; marshal writes it as bytes
            except ValueError:
                import struct

                try:  # two bytes when all fit (lines and columns within one document)
                    kind, packed = "H", struct.pack(f"{len(numbers)}H", *numbers)
                except struct.error:
                    kind, packed = "i", struct.pack(f"{len(numbers)}i", *numbers)
        else:
            kind, packed = numbers.typecode, numbers.tobytes()  # type: ignore[union-attr]
        return (self.keys, kind, packed, self.offset, self.irregular)

    @classmethod
    def from_record(cls, record: tuple[Any, ...]) -> PositionIndex:
        keys, kind, packed, offset, irregular = record
        index = cls(offset)
        index.keys = keys
        numbers = array(kind if kind in ("B", "H") else "i")
        numbers.frombytes(packed)
        index.numbers = numbers
        index.irregular = irregular
        return index

    def _replayed(self) -> dict[KeyPath, int]:
        table = self._table
        if table is None:
            table = {}
            keys, numbers = self.keys, self.numbers
            paths: list[KeyPath] = [()] * len(keys)
            for record, path in enumerate(paths):
                at = record * WIDTH
                if numbers[at] != _MERGED:
                    table[path] = record
                for child in range(numbers[at + 6], numbers[at + 7]):  # children come later
                    paths[child] = (*path, keys[child])  # type: ignore[arg-type]  # only the root's is None
            self._table = table
        return table

    def _walked(self, path: KeyPath) -> tuple[int, int]:
        """How many leading segments of path are recorded, and the record of the last of them
        (-1 when the document has none)."""
        keys = self.keys
        if not keys:
            return 0, -1
        numbers = self.numbers
        if not self.irregular:
            record = 0
            for depth, segment in enumerate(path):
                at = record * WIDTH + 6
                first, end = numbers[at], numbers[at + 1]
                kind = type(segment)
                if kind is int:
                    child = first + segment  # type: ignore[operator]
                    if not first <= child < end or keys[child] != segment:
                        return depth, record
                elif kind is str:
                    try:
                        child = keys.index(segment, first, end)
                    except ValueError:
                        return depth, record
                else:  # a bool or another type equal to an index: as a dict would compare it
                    break
                record = child
            else:
                return len(path), record
        table = self._replayed()
        for length in range(len(path), -1, -1):
            found = table.get(path[:length])
            if found is not None:
                return length, found
        return 0, -1

    def _find(self, path: KeyPath) -> int:
        last = self._last
        if path is last[0]:
            return last[1]
        length, record = self._walked(path)
        return record if length == len(path) else -1

    def entry(self, path: KeyPath) -> Entry | None:
        """The six numbers of path's node (0-based lines within the document), or None."""
        record = self._find(path)
        if record < 0:
            return None
        at = record * WIDTH
        return tuple(self.numbers[at:at + 6])  # type: ignore[return-value]

    def entries(self) -> dict[KeyPath, Entry]:
        """Every recorded path with its six numbers, in the order first recorded."""
        numbers = self.numbers
        return {path: tuple(numbers[r * WIDTH:r * WIDTH + 6])  # type: ignore[misc]
                for path, r in self._replayed().items()}

    def __contains__(self, path: KeyPath) -> bool:
        return self._find(path) >= 0

    def key(self, path: KeyPath) -> Position | None:
        """Where the key holding the node starts (a list item or the root: where it starts)."""
        record = self._find(path)
        if record < 0:
            return None
        at = record * WIDTH
        return Position(self.numbers[at] + 1 + self.offset, self.numbers[at + 1] + 1)

    def start(self, path: KeyPath) -> Position | None:
        """Where the value starts."""
        record = self._find(path)
        if record < 0:
            return None
        at = record * WIDTH
        return Position(self.numbers[at + 2] + 1 + self.offset, self.numbers[at + 3] + 1)

    def end(self, path: KeyPath) -> Position | None:
        """Just past the value's last character (exclusive column, as SARIF's endColumn)."""
        record = self._find(path)
        if record < 0:
            return None
        at = record * WIDTH
        return Position(self.numbers[at + 4] + 1 + self.offset, self.numbers[at + 5] + 1)

    def last_line(self, path: KeyPath) -> int | None:
        """The last line holding the node's text (a block ends where the next token starts)."""
        record = self._find(path)
        if record < 0:
            return None
        at = record * WIDTH
        numbers = self.numbers
        line = numbers[at + 4] if numbers[at + 5] or numbers[at + 4] == numbers[at + 2] else numbers[at + 4] - 1
        return line + 1 + self.offset

    def nearest(self, path: KeyPath) -> KeyPath:
        """The longest prefix of `path` that is recorded (() when none is)."""
        length, record = self._walked(path)
        found = path if length == len(path) else path[:length]
        self._last = (found, record)
        return found


@record
class ParseProblem:
    """A fault in the input found while parsing: becomes a KG0xx finding."""

    rule: str  # "yaml-syntax-error", "yaml-duplicate-key", "yaml-alias-expansion"
    message: str
    position: Position


@record
class ParsedDocument:
    data: Any  # None when the document could not be parsed
    positions: PositionIndex
    start: Position
    problems: list[ParseProblem] = field(default_factory=list)

    def __init__(self, data: Any, positions: PositionIndex, start: Position,
                 problems: list[ParseProblem] | None = None) -> None:  # one a document: by hand
        self.data = data
        self.positions = positions
        self.start = start
        self.problems = [] if problems is None else problems


def _unresolved(kind: Any, value: Any, implicit: Any) -> None:
    return None


# What the light parser's `resolve` gives every node without an explicit tag (an explicit
# tag is a str): a marker no tag can be.
UNTAGGED: Any = NotImplemented


def _untagged(kind: Any, value: Any, implicit: Any) -> Any:
    return UNTAGGED


def _parser_class(light: bool = True) -> type:
    """Build (once) a CParser subclass that leaves tags unresolved: the walker resolves them.
    The light one (for light nodes) marks an untagged node's tag UNTAGGED; the other None,
    as ruamel's own nodes expect (the second parse of a document that fails)."""
    global _PARSER, _PLAIN_PARSER
    if _PARSER is None or _PLAIN_PARSER is None:
        from ruamel.yaml.cyaml import CParser

        class _Parser(CParser):  # type: ignore[misc]
            __slots__ = ()  # no instance dict: the parser's own lookups of the hooks below are shorter
            # The resolver's hooks, called for every node. `{}.get(parent, index)` and `tuple()`
            # are C callables that accept what the parser passes and do nothing. (A C callable
            # standing for `resolve` too, `object.__subclasshook__`, took three arguments up to
            # Python 3.12 and one from 3.13: only documented signatures here.)
            resolve = staticmethod(_untagged)  # a static method: no bound method a call
            descend_resolver: Any = {}.get
            ascend_resolver = tuple

        class _PlainParser(_Parser):
            __slots__ = ()
            resolve = staticmethod(_unresolved)

        _PARSER, _PLAIN_PARSER = _Parser, _PlainParser
    return _PARSER if light else _PLAIN_PARSER


_PARSER: type | None = None
_PLAIN_PARSER: type | None = None


# Light nodes. The C parser builds each node by calling the classes named ScalarNode,
# SequenceNode and MappingNode in its module; ruamel's own are Python classes whose
# constructors (a Tag object per node) cost more than the parsing itself. While one document
# is composed, `_compose` puts these in their place: a scalar becomes the tuple of the
# constructor's arguments (tag, value, start_mark, end_mark, style); a collection a small
# object whose `end_mark` the parser sets when the collection ends. (Measured: a collection
# built by a C constructor, as a BaseException subclass keeping its arguments, saves 3% of the
# compose but holds 104 bytes more a node: 8% more peak memory on a crowded document.)
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


def _compose_light(text: str) -> Any:
    """The fast path: the C parser builds light nodes while `ScalarNode`, `SequenceNode` and
    `MappingNode` of its module name the light ones. This assigns to a private module's
    attributes, so it is used only where `light_nodes_take_effect` saw it work. Raises what
    the parser raises."""
    module = _c_module()
    if module is None:
        raise RuntimeError("the C parser's module is not known")
    saved = (module.ScalarNode, module.SequenceNode, module.MappingNode)
    module.ScalarNode, module.SequenceNode, module.MappingNode = _scalar_node, _SequenceNode, _MappingNode
    try:
        return _parser_class()(text).get_single_node()
    finally:
        module.ScalarNode, module.SequenceNode, module.MappingNode = saved


def _c_module() -> Any:
    """The C extension module whose node classes the C parser calls, or None when it cannot
    be told (another packaging of ruamel.yaml.clib): then the portable path serves."""
    import sys

    from ruamel.yaml.cyaml import CParser

    module = sys.modules.get(CParser.__module__) or sys.modules.get("_ruamel_yaml")
    if module is None or not all(hasattr(module, name) for name in ("ScalarNode", "SequenceNode", "MappingNode")):
        return None
    return module


def _compose_public(text: str) -> Any:
    """The portable path: ruamel's own nodes, from its public C parser (tags left unresolved
    by the same subclass), turned into light nodes, so the walker and its output are the same."""
    root = _parser_class(light=False)(text).get_single_node()
    return None if root is None else _lighten(root)


def _lighten(root: Any) -> Any:
    """Light nodes for a graph of ruamel's nodes: a scalar becomes the tuple the fast path
    builds, a collection a `_SequenceNode` or `_MappingNode`. A node met twice (an alias)
    becomes one light node, as the fast path shares it. Iterative: depth is never a limit."""
    from ruamel.yaml.nodes import MappingNode, ScalarNode

    def scalar(node: Any) -> tuple[Any, ...]:
        suffix = node.ctag.suffix  # the tag as the parser gave it; None when untagged
        return (UNTAGGED if suffix is None else suffix, node.value, node.start_mark, node.end_mark, node.style)

    made: dict[int, Any] = {}

    def light(node: Any, pending: list[tuple[Any, Any]]) -> Any:
        known = made.get(id(node))
        if known is not None:
            return known
        if type(node) is ScalarNode:
            new: Any = scalar(node)
        else:
            kind = _MappingNode if type(node) is MappingNode else _SequenceNode
            new = kind(None, [], node.start_mark, node.end_mark, node.flow_style)
            pending.append((node, new))
        made[id(node)] = new
        return new

    pending: list[tuple[Any, Any]] = []
    result = light(root, pending)
    while pending:
        node, new = pending.pop()
        if type(new) is _MappingNode:
            new.value = [(light(key, pending), light(value, pending)) for key, value in node.value]
        else:
            new.value = [light(item, pending) for item in node.value]
    return result


def light_nodes_take_effect() -> bool:
    """Whether the fast path builds light nodes on this Python and ruamel.yaml.clib: a tiny
    document composed both ways must give the same light graph. Checked once a process."""
    global _FAST
    if _FAST is None:
        sample = "a: [b, {c: !t d}]\n'e': &f g\nh: *f\n"
        try:
            fast, public = _compose_light(sample), _compose_public(sample)
            _FAST = _shape(fast) == _shape(public)
        except Exception:  # the fast path broke in another way: the portable path serves
            _FAST = False
    return _FAST


_FAST: bool | None = None


def _shape(node: Any) -> Any:
    """A light node graph as comparable data (types, tags, values, marks); small inputs only."""
    if type(node) is tuple:
        tag, value, start, end, style = node
        return ("scalar", tag, value, start.line, start.column, end.line, end.column, style)
    if type(node) is _MappingNode:
        return ("map", node.flow_style, node.start_mark.line, node.end_mark.line,
                [(_shape(k), _shape(v)) for k, v in node.value])
    if type(node) is _SequenceNode:
        return ("seq", node.flow_style, node.start_mark.line, node.end_mark.line, [_shape(i) for i in node.value])
    return ("other", type(node).__name__)


def _compose(text: str) -> Any:
    """The document's root node (light nodes), or None for an empty document."""
    if light_nodes_take_effect():
        try:
            return _compose_light(text)
        except Exception:  # a fault: the portable path meets it again, and its error (some
            pass           # read a node's start mark, which a light scalar has not) is reported
    return _compose_public(text)


def _tag_text(tag: str) -> str:
    """An explicit tag as ruamel.yaml's nodes spell it (URI escapes decoded)."""
    from ruamel.yaml.tag import Tag

    return str(Tag(suffix=tag))


def _scalar(node: tuple[Any, ...]) -> Any:
    """Resolve a scalar node to a plain value; tagged values are kept as text, never built."""
    tag, value, _, _, style = node
    if tag is not UNTAGGED and tag is not None:
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
        try:  # int() refuses more than sys.get_int_max_str_digits() digits: the text stays
            if value.isdigit() and value.isascii() and (value[0] != "0" or len(value) == 1):
                return int(value)  # the common case of _INT_RE, without the expressions
            if _INT_RE.match(value):
                return int(value.replace("_", ""))
            # Base 16 and 8 have no digit limit in int(), but such a number could never be
            # printed (str() refuses over 4,300 decimal digits): past 3,000 digits the text stays.
            if _HEX_RE.match(value):
                return int(value.replace("_", ""), 16) if len(value) <= 3000 else value
            if _OCT_RE.match(value):
                return int(value.replace("_", "").replace("0o", ""), 8) if len(value) <= 3000 else value
            if _FLOAT_RE.match(value) and any(ch.isdigit() for ch in value):
                return float(value.replace("_", ""))
        except ValueError:
            return value
    return value


_MERGE_TAGS = ("tag:yaml.org,2002:merge", "None")


def _end_mark(node: Any) -> Any:
    """Where a node's text ends. A block collection's own end mark is where the next token
    starts (the next key, lines later): its last value's end is where its text ends."""
    for _ in range(256):  # a recursive alias (`a: &a\n- *a`) has no last value
        if type(node) is tuple:
            return node[3]
        items = node.value
        if node.flow_style or not items:
            return node.end_mark
        node = items[-1][1] if type(node) is _MappingNode else items[-1]
    return node[3] if type(node) is tuple else node.end_mark


class _Walker:
    """Turns a node graph into plain data without recursion, so depth is never a limit, and
    records the position of every key and value (see `PositionIndex`)."""

    def __init__(self, line_offset: int) -> None:
        self.offset = line_offset
        self.index = PositionIndex(line_offset)
        self.problems: list[ParseProblem] = []
        self.aliased = False

    def pos(self, mark: Any) -> Position:
        return Position(mark.line + 1 + self.offset, mark.column + 1)

    def walk(self, root: Any, shared: bool = True) -> Any:
        """The data of the node graph under root. One loop, its steps written out in it: this
        runs for every value of every document, and a method call per value costs more than the
        rest of its step (measured). `shared` False says no node is met twice (the text holds
        no anchor, so no alias): the walk then keeps no table of the nodes it has met."""
        index = self.index
        keys = index.keys
        numbers: list[int] = []  # filled as a list (the cheapest to extend), packed at the end
        add_key, add = keys.append, numbers.extend
        add_key(None)
        if type(root) is tuple:
            start, end = root[2], root[3]
            add((start.line, start.column, start.line, start.column, end.line, end.column, 0, 0))
            index.numbers = numbers
            return _scalar(root)
        start = root.start_mark
        if root.flow_style or not root.value:
            end = root.end_mark
            add((start.line, start.column, start.line, start.column, end.line, end.column, 0, 0))
        else:
            add((start.line, start.column, start.line, start.column, 0, 0, 0, 0))
        special, number_start, plain, scalar, untagged = _SPECIAL, _NUMBER_START, _plain, _scalar, UNTAGGED
        # The data built for each collection node, by id: a node met again came through an
        # alias and shares its data (and is not walked again).
        memo: dict[int, Any] = {}
        merges: list[tuple[Any, dict[str, Any], list[Any]]] = []
        aliased = irregular = False
        result: Any = {} if type(root) is _MappingNode else []
        memo[id(root)] = result
        stack: list[tuple[Any, Any, int]] = [(root, result, 0)]  # node, its data, its record
        # Block collections that end where their last value ends (_end_mark): fixed after the
        # walk from their last child's record, children first (a child's record comes after its
        # parent's), not by a descent to the last value for each (measured: 5% of a 1k lint's
        # instructions).
        ends: list[tuple[Any, Any, int]] = [] if root.flow_style or not root.value else [stack[0]]
        later = ends.append
        while stack:
            node, obj, record = stack.pop()
            first = len(keys)
            numbers[record * WIDTH + 6] = first
            if type(obj) is list:
                append = obj.append
                for number, item in enumerate(node.value):
                    add_key(number)
                    if type(item) is tuple:
                        tag, text, start, end, style = item
                        line, column = start.line, start.column
                        add((line, column, line, column, end.line, end.column, 0, 0))
                        # Plain untagged scalars are most values: resolved here, without a call.
                        if tag is not untagged:
                            append(scalar(item))
                        elif style or (text not in special and text[0] not in number_start):
                            append(text)
                        else:
                            append(plain(text))
                        continue
                    start = item.start_mark
                    line, column = start.line, start.column
                    new: Any = {} if type(item) is _MappingNode else []
                    if shared and memo.setdefault(id(item), new) is not new:
                        aliased = True
                        end = _end_mark(item)
                        add((line, column, line, column, end.line, end.column, 0, 0))
                        append(memo[id(item)])
                        continue
                    if item.flow_style or not item.value:
                        end = item.end_mark
                        add((line, column, line, column, end.line, end.column, 0, 0))
                        stack.append((item, new, first + number))
                    else:
                        add((line, column, line, column, 0, 0, 0, 0))
                        entry = (item, new, first + number)
                        stack.append(entry)
                        later(entry)
                    append(new)
                numbers[record * WIDTH + 7] = len(keys)
                continue
            merged_here = 0  # merge keys of this mapping (they add no key to obj)
            for key_node, value_node in node.value:
                if type(key_node) is tuple:
                    key = key_node[1]
                    key_mark = key_node[2]
                    if key == MERGE_KEY and (key_node[0] is untagged or _tag_text(key_node[0]) in _MERGE_TAGS):
                        merged_here += 1
                        if type(value_node) is tuple:
                            merged = scalar(value_node)
                        else:
                            new = {} if type(value_node) is _MappingNode else []
                            merged = memo.setdefault(id(value_node), new)
                            if merged is new:  # walked here: its records hang below a record of no entry
                                irregular = True
                                stack.append((value_node, new, len(keys)))
                                add_key(MERGE_KEY)
                                add((_MERGED, 0, 0, 0, 0, 0, 0, 0))
                            else:
                                aliased = True
                        merges.append((key_mark, obj, merged if isinstance(merged, list) else [merged]))
                        continue
                else:
                    key = "<mapping key>" if type(key_node) is _MappingNode else "<sequence key>"
                    key_mark = key_node.start_mark
                add_key(key)
                if type(value_node) is tuple:
                    tag, text, start, end, style = value_node
                    add((key_mark.line, key_mark.column, start.line, start.column, end.line, end.column, 0, 0))
                    if tag is not untagged:
                        obj[key] = scalar(value_node)
                    elif style or (text not in special and text[0] not in number_start):
                        obj[key] = text
                    else:
                        obj[key] = plain(text)
                    continue
                start = value_node.start_mark
                new = {} if type(value_node) is _MappingNode else []
                if shared and memo.setdefault(id(value_node), new) is not new:
                    aliased = True
                    end = _end_mark(value_node)
                    add((key_mark.line, key_mark.column, start.line, start.column, end.line, end.column, 0, 0))
                    obj[key] = memo[id(value_node)]
                    continue
                if value_node.flow_style or not value_node.value:
                    end = value_node.end_mark
                    add((key_mark.line, key_mark.column, start.line, start.column, end.line, end.column, 0, 0))
                    stack.append((value_node, new, len(keys) - 1))
                else:
                    add((key_mark.line, key_mark.column, start.line, start.column, 0, 0, 0, 0))
                    entry = (value_node, new, len(keys) - 1)
                    stack.append(entry)
                    later(entry)
                obj[key] = new
            numbers[record * WIDTH + 7] = len(keys)
            if len(obj) + merged_here < len(node.value):  # a key repeated (obj holds no merge yet)
                irregular = True
                self.repeated(first, numbers)
        if aliased or merges or len(ends) > 256:
            # A merge key last has no record of its own; _end_mark stops after 256 levels (an
            # alias can loop): such documents ask _end_mark, node by node, as before.
            for node, _, record in ends:
                end = _end_mark(node)
                at = record * WIDTH + 4
                numbers[at] = end.line
                numbers[at + 1] = end.column
        else:
            for _, _, record in reversed(ends):  # children first: each takes its last child's end
                at = record * WIDTH + 4
                last = numbers[at + 3] * WIDTH - 4  # the record before the end of its span
                numbers[at] = numbers[last]
                numbers[at + 1] = numbers[last + 1]
        self.aliased = aliased
        index.irregular = irregular
        index.numbers = numbers
        # Merge after filling, in text order: an anchor is defined before it is used, so a
        # merged mapping's own merges are applied before it is merged elsewhere. Keys already
        # present (explicit, or from an earlier source) win, as YAML's merge key says.
        for _, target, sources in sorted(merges, key=lambda m: (m[0].line, m[0].column)):
            for source in sources:
                if isinstance(source, dict):
                    for k, v in source.items():
                        if k not in target:
                            target[k] = v
        return result

    def repeated(self, first: int, numbers: list[int]) -> None:
        """Report each key met again in the mapping whose records start at `first` (the last
        records so far), in their order, with the line of its occurrence recorded last."""
        keys = self.index.keys
        seen: dict[Any, int] = {}
        for entry in range(first, len(keys)):
            at = entry * WIDTH
            if numbers[at] == _MERGED:
                continue
            key = keys[entry]
            earlier = seen.get(key)
            if earlier is not None:
                self.problems.append(
                    ParseProblem(
                        "yaml-duplicate-key",
                        f"key '{key}' is repeated in this mapping (first at line"
                        f" {numbers[earlier * WIDTH] + 1 + self.offset}); Kubernetes keeps the last"
                        " value and silently drops the first",
                        Position(numbers[at] + 1 + self.offset, numbers[at + 1] + 1),
                    )
                )
            seen[key] = entry


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
    if 0 <= index < len(lines):
        return _indentation_hint(lines[:index], lines[index], where.column, message)
    return ""


def _indentation_hint(above: list[str], line: str, column: int, message: str) -> str:
    """The parser's words for a key indented off its mapping name no indentation: a key less
    indented than its siblings "did not find expected key", a deeper one continues the value of
    the line above until its colon, where "mapping values are not allowed"."""
    def indent(text: str) -> int:
        return len(text) - len(text.lstrip(" "))

    above = [text for text in above if text.strip() and not text.lstrip().startswith("#")]
    if not above:
        return ""
    spaces = indent(line)
    width = f"{spaces} space{'' if spaces == 1 else 's'}"
    if "mapping values are not allowed" in message:
        if ": " in line[spaces : column - 1]:
            return "; a value that holds ': ' must be quoted"
        previous = indent(above[-1])
        if spaces > previous:
            return (f"; this line is indented deeper than the line above it ({width} against {previous}), so it"
                    " reads as more of that line's value: indent the key like the other keys of its mapping")
        return ""
    expected = ("did not find expected key", "did not find expected '-'")  # libyaml's words (the C parser)
    # A line's key starts after its indentation, or after the "- " that opens a list item.
    starts = {indent(text) for text in above} | {len(text) - len(text.lstrip(" -")) for text in above}
    if any(words in message for words in expected) and column == spaces + 1 and spaces not in starts:
        return (f"; this line's indentation ({width}) lines up with no line above it: indent the key like"
                " the other keys of its mapping")
    return ""


def _refusal(chunk: Chunk) -> tuple[str, Any] | None:
    """Why the document must not be composed, and the parser's mark of where; None when it may.
    Both checks read the parser's events, which needs no recursion and holds no tree."""
    # Composed, each value costs several hundred bytes: refuse before memory runs out. First:
    # it is cheaper than the depth bound on a long flow (bench/reading.py).
    crowded = limits.may_hold_too_many_nodes(chunk.text) and limits.nodes_exceed(_parser_class()(chunk.text))
    if crowded:
        return (f"this document holds more than {limits.MAX_NODES:,} values; it is not linted"
                " (no real object holds that many)", crowded)
    # Composing would recurse in C once per level: refuse before it can crash.
    deep = limits.may_be_too_deep(chunk.text) and limits.depth_exceeds(_parser_class()(chunk.text))
    if deep:
        return (f"this document nests more than {limits.MAX_DEPTH:,} levels deep; it is not linted"
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
    # No cyclic garbage collection while one document is read: its nodes and data are young
    # objects that all survive until the walk ends (then the nodes go by reference count), so
    # each collection the allocations would trigger finds nothing to free (measured: about a
    # tenth of the compose). Any cycle (a recursive alias) waits for the next collection.
    collecting = gc.isenabled()
    gc.disable()
    try:
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
        data = walker.walk(node, "&" in chunk.text)  # no anchor, no alias: no node met twice
        del node
    finally:
        if collecting:
            gc.enable()
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
