"""The positions index (input/parse.py PositionIndex): records in walk order, found by walking
their spans from the root, answer exactly what the dict from key-path tuples it replaced did.

`_reference` computes that dict as the walker wrote it before (each key's and list item's
entry under its full path, a later write for the same path replacing an earlier one, merge keys
and the nodes below an alias left out); the tests compare every answer of the index with the
answers of that dict, on hand-written documents, the examples and ../shared/corpus."""

from __future__ import annotations

import marshal
from pathlib import Path
from typing import Any

import pytest
from conftest import CORPUS, EXAMPLES, requires_shared

from kubegap_lint.core.model import Position
from kubegap_lint.input import parse
from kubegap_lint.input.parse import PositionIndex, parse_chunk
from kubegap_lint.input.scan import split_documents

Table = dict[tuple[Any, ...], tuple[int, int, int, int, int, int]]


def _reference(text: str) -> tuple[Table, list[int]]:
    """The old walker's table (paths to six 0-based numbers) and the 0-based line each of its
    duplicate-key messages quoted: what `table[path]` held when the repeat was met."""
    root = parse._compose(text)
    table: Table = {}
    quoted: list[int] = []
    if root is None:
        return table, quoted

    def entry(key_mark: Any, node: Any) -> tuple[int, int, int, int, int, int]:
        start = node[2] if type(node) is tuple else node.start_mark
        end = parse._end_mark(node)
        mark = start if key_mark is None else key_mark
        return (mark.line, mark.column, start.line, start.column, end.line, end.column)

    table[()] = entry(None, root)
    walked = {id(root)}
    stack: list[tuple[Any, tuple[Any, ...]]] = [] if type(root) is tuple else [(root, ())]

    def visit(node: Any, path: tuple[Any, ...]) -> None:
        if type(node) is not tuple and id(node) not in walked:  # met again: through an alias
            walked.add(id(node))
            stack.append((node, path))

    while stack:
        node, path = stack.pop()
        if type(node) is not parse._MappingNode:
            for number, item in enumerate(node.value):
                table[(*path, number)] = entry(None, item)
                visit(item, (*path, number))
            continue
        present: set[str] = set()
        for key_node, value_node in node.value:
            if type(key_node) is tuple:
                key, key_mark = key_node[1], key_node[2]
                if key == parse.MERGE_KEY and (key_node[0] is parse.UNTAGGED
                                               or parse._tag_text(key_node[0]) in parse._MERGE_TAGS):
                    visit(value_node, (*path, parse.MERGE_KEY))
                    continue
            else:
                key = "<mapping key>" if type(key_node) is parse._MappingNode else "<sequence key>"
                key_mark = key_node.start_mark
            child = (*path, key)
            if key in present:
                quoted.append(table[child][0])
            present.add(key)
            table[child] = entry(key_mark, value_node)
            visit(value_node, child)
    return table, quoted


def _position(line: int, column: int, offset: int) -> Position:
    return Position(line + 1 + offset, column + 1)


def _probes(table: Table, many: bool) -> list[tuple[Any, ...]]:
    """Every recorded path, and paths that are not: a missing key or index below each one, a
    key where an index is and the reverse, and segments of other types equal to an index."""
    probes: list[tuple[Any, ...]] = []
    for path in table:
        probes += [path, (*path, "missing")]
        if many:
            probes += [(*path, 0), (*path, "0"), (*path, 99), (*path, -1), (*path, "missing", "deeper"),
                       (*path, 0, "name")]
        if many and path and isinstance(path[-1], int):
            probes += [(*path[:-1], str(path[-1])), (*path[:-1], float(path[-1]))]
            if path[-1] in (0, 1):
                probes.append((*path[:-1], bool(path[-1])))
    return probes


def _same_answers(index: PositionIndex, table: Table, many: bool = True) -> None:
    offset = index.offset
    assert index.entries() == table
    for probe in _probes(table, many):
        found = table.get(probe)
        assert (probe in index) is (found is not None), probe
        if found is None:
            assert index.key(probe) is index.start(probe) is index.end(probe) is index.last_line(probe) is None
        else:
            assert index.key(probe) == _position(found[0], found[1], offset)
            assert index.start(probe) == _position(found[2], found[3], offset)
            assert index.end(probe) == _position(found[4], found[5], offset)
            line = found[4] if found[5] or found[4] == found[2] else found[4] - 1
            assert index.last_line(probe) == line + 1 + offset
        expected: tuple[Any, ...] = ()
        for length in range(len(probe), 0, -1):
            if probe[:length] in table:
                expected = probe[:length]
                break
        found_path = index.nearest(probe)
        assert found_path == expected, probe
        # As a finding asks next (answered from what nearest found, see _last):
        near = table.get(found_path)
        assert index.key(found_path) == (None if near is None else _position(near[0], near[1], offset))
        assert index.end(found_path) == (None if near is None else _position(near[4], near[5], offset))


def _check(text: str, many: bool = True) -> list[parse.ParsedDocument]:
    """Parse every document of text; each one's index answers as the reference table does.
    A document the walker refused (a limit, an alias loop) is compared only when it has data."""
    parsed = []
    for chunk in split_documents(text.splitlines(True)):
        if not chunk.has_content or chunk.too_large:
            continue
        doc = parse_chunk(chunk)
        parsed.append(doc)
        if doc.data is None and doc.problems:
            continue
        table, quoted = _reference(chunk.text)
        _same_answers(doc.positions, table, many)
        repeats = [p for p in doc.problems if p.rule == "yaml-duplicate-key"]
        assert [p.message.split("first at line ")[1].split(")")[0] for p in repeats] == [
            str(line + 1 + chunk.first_line) for line in quoted]
    return parsed


NESTED = """\
apiVersion: v1
kind: Pod
metadata:
  name: p
  labels: {app: a, "team": ml}
spec:
  containers:
    - name: c
      args: [--a, "--b", 3]
      env:
        - name: X
          value: "1"
        -   name: Y
            value: |
              two
              lines
  volumes: []
  extra: {}
"""


def test_nested_maps_and_lists_are_located_exactly() -> None:
    (doc,) = _check("# a comment\n---\n" + NESTED)
    positions = doc.positions
    assert not positions.irregular
    assert positions.key(()) == positions.start(()) == Position(3, 1)
    assert positions.key(("metadata", "labels", "team")) == Position(7, 20)
    assert positions.start(("metadata", "labels", "team")) == Position(7, 28)
    assert positions.end(("metadata", "labels", "team")) == Position(7, 30)
    assert positions.key(("spec", "containers", 0)) == positions.start(("spec", "containers", 0)) == Position(10, 7)
    assert positions.start(("spec", "containers", 0, "args", 2)) == Position(11, 26)
    assert positions.key(("spec", "containers", 0, "env", 1)) == Position(15, 13)
    assert positions.start(("spec", "containers", 0, "env", 1, "value")) == Position(16, 20)
    # A block scalar and a block mapping end where the next token starts: their last line is
    # the one before.
    assert positions.end(("spec", "containers", 0, "env", 1, "value")) == Position(19, 1)
    assert positions.last_line(("spec", "containers", 0, "env", 1, "value")) == 18
    assert positions.last_line(("spec", "containers")) == 18
    assert positions.start(("spec", "volumes")) == Position(19, 12)
    assert positions.key(("spec", "extra")) == Position(20, 3)
    assert positions.nearest(("spec", "containers", 0, "resources", "limits")) == ("spec", "containers", 0)
    assert positions.nearest(("spec", "volumes", 0)) == ("spec", "volumes")
    assert positions.nearest(("nope",)) == ()
    assert ("spec", "containers", 0, "args", 2) in positions
    assert ("spec", "containers", 0, "args", 3) not in positions
    assert ("spec", "containers", "0") not in positions  # a key where an index is
    assert ("metadata", 0) not in positions  # an index where a key is


MERGES = """\
base: &base {cpu: 1, mem: 2}
more: &more {gpu: 1}
a:
  <<: *base
  cpu: 4
b:
  <<: [*base, *more]
c:
  <<: {inline: 1, deep: {x: 1}}
  own: 1
d:
  inner: {<<: *more, own: 2}
"""


def test_merged_and_aliased_nodes_are_found_at_their_nearest_recorded_parent() -> None:
    (doc,) = _check(MERGES)
    positions = doc.positions
    assert doc.data["a"] == {"cpu": 4, "mem": 2} and doc.data["b"] == {"cpu": 1, "mem": 2, "gpu": 1}
    assert positions.key(("a", "cpu")) == Position(5, 3)
    assert ("a", "mem") not in positions and positions.nearest(("a", "mem")) == ("a",)
    assert positions.nearest(("b", "gpu")) == ("b",)
    assert positions.nearest(("c", "inline")) == ("c",) and positions.key(("c", "own")) == Position(10, 3)
    assert ("a", "<<") not in positions and ("c", "<<") not in positions
    assert positions.nearest(("d", "inner", "gpu")) == ("d", "inner")
    assert positions.key(("d", "inner", "own")) == Position(12, 22)
    # An inline merged mapping is walked below its merge key, whose own record holds nothing:
    # its paths are there, as they were (no data path reaches them).
    assert positions.irregular
    assert positions.key(("c", "<<", "deep", "x")) == Position(9, 26)


def test_a_regular_documents_alias_stands_for_what_it_names() -> None:
    (doc,) = _check("a: &x {k: 1, l: [1, 2]}\nb: *x\nc: [*x]\n")
    positions = doc.positions
    assert not positions.irregular
    assert positions.start(("b",)) == positions.start(("a",)) == Position(1, 4)  # the anchored node's marks
    assert positions.key(("b",)) == Position(2, 1)
    assert positions.nearest(("b", "l", 1)) == ("b",) and positions.nearest(("c", 0, "k")) == ("c", 0)
    assert positions.start(("a", "l", 1)) == Position(1, 21)


DUPLICATES = """\
a: {x: 1, y: 2}
b: 1
a:
  x: 3
  x: 4
  z: 5
b: 2
b: 3
"""


def test_repeated_keys_answer_as_the_records_were_written() -> None:
    (doc,) = _check(DUPLICATES)
    positions = doc.positions
    assert positions.irregular
    assert [(p.position, p.message.split(";")[0]) for p in doc.problems] == [
        (Position(3, 1), "key 'a' is repeated in this mapping (first at line 1)"),
        (Position(7, 1), "key 'b' is repeated in this mapping (first at line 2)"),
        (Position(8, 1), "key 'b' is repeated in this mapping (first at line 7)"),
        (Position(5, 3), "key 'x' is repeated in this mapping (first at line 4)"),
    ]
    assert doc.data == {"a": {"x": 4, "z": 5}, "b": 3}
    assert positions.key(("a",)) == Position(3, 1) and positions.key(("b",)) == Position(8, 1)
    # The first `a` is walked last: its records replace the second's where they share a path.
    assert positions.key(("a", "x")) == Position(1, 5)
    assert positions.key(("a", "y")) == Position(1, 11) and positions.key(("a", "z")) == Position(6, 3)


def test_many_repeated_keys_are_looked_up_once_each() -> None:
    # 20,000 keys then the same keys again: each repeat names its first line, and the lookups
    # stay linear (the records of one mapping are read once, whatever the number of repeats).
    count = 20_000
    text = "".join(f"k{n}: {n}\n" for n in range(count)) * 2
    (doc,) = _parse_only(text)
    assert len(doc.problems) == count
    assert doc.problems[-1].message.startswith(f"key 'k{count - 1}' is repeated in this mapping (first at line {count})")
    assert doc.positions.key((f"k{count - 1}",)) == Position(2 * count, 1)


def _parse_only(text: str) -> list[parse.ParsedDocument]:
    return [parse_chunk(c) for c in split_documents(text.splitlines(True)) if c.has_content]


@pytest.mark.parametrize("text", [
    "",
    "just a scalar\n",
    "- 1\n- [2, [3, {a: 4}]]\n- {}\n",
    "? [complex, key]\n: 1\n? {m: 1}\n: 2\n? [again]\n: 3\n",
    "a: !!str <<\n<<: {b: 1}\n",
    "!!str <<: 1\n<<: {x: {y: 1}}\n",
    "a: &a\n  - b: &b {c: 1}\n  - *b\nd: *a\ne: {<<: *b, c: 2}\n",
    "x: &x [1, 2]\n<<: [{p: 1}, {q: 2}]\ny: *x\n",
    # A block collection ends where its last value does (fixed from the records after the walk):
    # last values that are block collections, flow ones, empty ones, block scalars; through an
    # alias; a merge key last; more than 256 levels of last values (where _end_mark stops).
    "a:\n  b:\n    - c: 1\n      d:\n        - [x]\n  e: {}\nf:\n  - - |\n      text\n",
    "a: &a\n  b:\n    - 1\nc:\n  d: *a\ne: [*a]\n",
    "a: &a {x: 1}\nb:\n  c: 1\n  <<: *a\nd:\n  e: 2\n  <<: {f: {g: 3}}\n",
    "".join("  " * n + "k:\n" for n in range(250)) + "  " * 250 + "k: 1\n",
    "".join("  " * n + "k:\n" for n in range(300)) + "  " * 300 + "k: 1\n",
    "".join(f"k{n}:\n  - {n}\n" for n in range(300)),
])
def test_edge_documents_answer_as_the_reference(text: str) -> None:
    assert all(doc.data is not None for doc in _check(text))


@pytest.mark.parametrize("text", ["a: &a\n- *a\n", "a: &s\n- &t\n  - *s\nb: [*s]\n"])
def test_a_recursive_aliass_positions_answer_as_the_reference(text: str) -> None:
    # Refused (its data is infinitely deep), yet its index is the reference's, _end_mark's
    # 256 steps around the loop included.
    (chunk,) = split_documents(text.splitlines(True))
    doc = parse_chunk(chunk)
    assert doc.data is None and doc.problems[0].rule == "yaml-alias-expansion"
    _same_answers(doc.positions, _reference(text)[0])


@pytest.mark.parametrize(("root", "patterns", "least_files", "least_documents"), [
    pytest.param(EXAMPLES, ("*.yaml",), 100, 250, id="examples"),
    pytest.param(CORPUS, ("*.yaml", "*.yml"), 700, 1300, id="corpus", marks=[requires_shared, pytest.mark.slow]),
])
def test_every_example_and_corpus_document_answers_as_the_reference(
        root: Path, patterns: tuple[str, ...], least_files: int, least_documents: int) -> None:
    files = [path for pattern in patterns for path in sorted(root.rglob(pattern))]
    assert len(files) > least_files
    documents = 0
    for path in files:
        text = path.read_text(encoding="utf-8", errors="replace")
        documents += len(_check(text, many=False))
    assert documents > least_documents


def test_the_spill_record_is_plain_data_that_comes_back_the_same() -> None:
    _, doc = _check("one: 1\n---\n" + DUPLICATES)
    record = (doc.positions.to_record(), doc.data)
    back, data = marshal.loads(marshal.dumps(record))
    again = PositionIndex.from_record(back)
    assert again.offset == doc.positions.offset == 1 and again.irregular
    assert again.entries() == doc.positions.entries()
    assert again.key(("a", "x")) == Position(3, 5)
    # The keys are the data's own strings: one marshal call writes each once and reads it back shared.
    assert back[0][1] is next(iter(data))
    # A byte a number when every number fits; two when every one fits those; four when one does
    # not (a line past 65,535, or the -1 of a merge key's record).
    far = "\n" * 70_000 + "a: [1, {b: 2}]\n"
    wide = "a: " + "x" * 300 + "\n"  # an end column past 255
    many = "".join(f"k{n}: {n}\n" for n in range(300))  # records past 255
    for text, kind in ((NESTED, "B"), (wide, "H"), (many, "H"), (MERGES, "i"), (far, "i")):
        (plain,) = _check(text)
        record = plain.positions.to_record()
        assert record[1] == kind
        regular = PositionIndex.from_record(marshal.loads(marshal.dumps(record)))
        assert regular.irregular is plain.positions.irregular
        _same_answers(regular, _reference(text)[0])
        assert regular.to_record() == record
    assert regular.key(("a", 1, "b")) == Position(70_001, 9)


def test_an_unparsed_document_has_no_positions() -> None:
    (doc,) = _parse_only("a: [1,\n")
    assert doc.data is None
    assert doc.positions.nearest(("a", 0)) == () and doc.positions.key(()) is None and () not in doc.positions
    assert PositionIndex.from_record(marshal.loads(marshal.dumps(doc.positions.to_record()))).entries() == {}
