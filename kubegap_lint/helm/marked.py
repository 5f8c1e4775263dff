"""Exact template lines for a chart the tool renders itself.

A copy of the chart whose template lines each end in a marker comment (` #@kg<file>:<line>@`) is
rendered with the same values, and the two renders are aligned node by node: the marked line of
a node names the template line that wrote it. A node on a line without a marker was written by an
action (`toYaml`, `include`, a value that spans lines): it goes to the next marker, the action's
own line, flagged approximate. Only the unmodified render is linted; the marked one only gives
positions, and any disagreement between the two (another document count, kind or source) drops
the marked positions for that chart, so the static matching (template_lines.py) takes over.

Lines that a marker could change are never marked: inside an action that spans lines, inside a
`define` (its text may be compared or cut), inside a block scalar, a line ending in `-}}` (it
would glue the marker to the next output), pure control lines (`if`, `range`, `end`...), and
partials (their text lands in names and conditions: content a helper writes goes to the
`include` line, flagged). NOTES.txt is not marked. A document whose two renders differ in shape
keeps the static matching.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kubegap_lint.core.safefile import read_regular
from kubegap_lint.helm.actions import action_bodies, trimmed_body
from kubegap_lint.helm.chartcopy import MAX_FILE_BYTES, copy_chart
from kubegap_lint.helm.template_lines import CONTROL_WORDS

if TYPE_CHECKING:
    from kubegap_lint.helm.render import RenderOptions
    from kubegap_lint.helm.values_lines import ValuesIndex
    from kubegap_lint.input.parse import KeyPath
    from kubegap_lint.input.read import Resource

MARKER_RE = re.compile(r" #@kg(\d+):(\d+)@")
_CONTROL_RE = re.compile(rf"^(?:{CONTROL_WORDS})")
_OPEN_RE = re.compile(r"\{\{-?\s*(?:if|range|with|define|block)\b")
_END_RE = re.compile(r"\{\{-?\s*end\b")
_DEFINE_RE = re.compile(r"\{\{-?\s*(?:define|block)\b")
_BLOCK_RE = re.compile(r"(?:^|:|-)\s*[|>][-+0-9]*\s*(?:#.*)?$")
# Inside a `define`, only lines that write YAML where a comment cannot change it: a literal key
# (`app.kubernetes.io/name: {{ ... }}`, `- name: x`), or an action that writes an indented block
# (`{{ toYaml .x | nindent 4 }}`). Names, conditions and JSON never have these shapes.
_DEFINE_KEY_RE = re.compile(r"^\s*(?:-\s+)*[A-Za-z0-9_][A-Za-z0-9_./-]*:(?:\s|$)")
_DEFINE_BLOCK_RE = re.compile(r"^\{\{-?\s*[^}]*\|\s*n?indent\s+\d+\s*\}\}$")


@dataclass(frozen=True)
class Place:
    path: str  # the template file, as findings show it
    line: int
    column: int  # 1-based
    approximate: bool


class PlaceTable(dict[int, Place]):
    """Template places by rendered line, and what a fix of a values-written node needs (fix/helm.py):
    the plain render's text, and for each node `toYaml .Values.x` wrote, by (document number, key
    path in the document), the values file and the node's key path in it.

    Made `pending` (later_exact_lines), the table is empty until `complete` runs the marked render:
    the mapping asks for it only when the static matching cannot place a finding exactly, a fix
    when it reads `values_nodes`."""

    def __init__(self, text: str = "", pending: Callable[[], PlaceTable] | None = None) -> None:
        super().__init__()
        self.text = text
        self._values_nodes: dict[tuple[int, tuple[str | int, ...]], tuple[str, tuple[str | int, ...]]] = {}
        self._pending = pending

    @property
    def pending(self) -> bool:
        return self._pending is not None

    def complete(self) -> PlaceTable:
        """The table with its places, the marked render made now if it was left for later."""
        if self._pending is not None:
            made, self._pending = self._pending(), None
            self.update(made)
            self._values_nodes = made.values_nodes
        return self

    @property
    def values_nodes(self) -> dict[tuple[int, tuple[str | int, ...]], tuple[str, tuple[str | int, ...]]]:
        return self.complete()._values_nodes


def _pure_control(text: str) -> bool:
    """A line that holds only control actions: it writes no YAML of its own."""
    bodies = action_bodies(text)
    return bodies is not None and all(_CONTROL_RE.match(trimmed_body(body)) for body in bodies)


def mark_template(text: str, file_id: int, partial: bool = False) -> str:
    """The template with a marker at the end of every line a marker cannot change. In a partial
    (`_helpers.tpl`) only lines inside its defines can write output."""
    out: list[str] = []
    open_actions = 0
    block_indent: int | None = None
    depth = 0
    define_depth: int | None = None
    for number, line in enumerate(text.split("\n"), start=1):
        indent = len(line) - len(line.lstrip(" "))
        in_block = block_indent is not None and (not line.strip() or indent > block_indent)
        if not in_block:
            block_indent = None
        in_action = open_actions > 0  # inside an action that began on an earlier line
        was_in_define = define_depth is not None
        open_actions = max(0, open_actions + line.count("{{") - line.count("}}"))
        if define_depth is None and _DEFINE_RE.search(line):
            define_depth = depth
        depth += len(_OPEN_RE.findall(line)) - len(_END_RE.findall(line))
        inside_define = define_depth is not None
        if define_depth is not None and depth <= define_depth:
            define_depth = None
        stripped = line.rstrip()
        define_safe = was_in_define and define_depth is not None and (
            _DEFINE_KEY_RE.match(stripped) is not None or _DEFINE_BLOCK_RE.match(stripped.strip()) is not None)
        outside = not was_in_define and not inside_define and not partial
        markable = (not in_action and not in_block and open_actions == 0 and (outside or define_safe)
                    and stripped.strip() not in ("", "---", "...") and not stripped.endswith("-}}")
                    and not _pure_control(stripped) and "#@kg" not in stripped)
        if not in_block and _BLOCK_RE.search(stripped) and "{{" not in stripped[-3:]:
            block_indent = indent
        out.append(f"{stripped} #@kg{file_id}:{number}@" if markable else line)
    return "\n".join(out)


def _template_files(chart_dir: str) -> Iterator[str]:
    """The templates of a chart and its folder subcharts (relative paths)."""
    for folder, dirs, files in os.walk(chart_dir):
        dirs.sort()
        relative = os.path.relpath(folder, chart_dir)
        parts = relative.split(os.sep)
        if "templates" not in parts:
            continue
        for name in sorted(files):
            if name != "NOTES.txt":
                yield os.path.join(relative, name)


def marked_copy(chart_dir: str, scratch: str, shown: str | None = None) -> tuple[str, dict[int, str]]:
    """A marked copy of a chart folder in `scratch`, made as Helm reads the chart (chartcopy.py:
    no link out of it, `.helmignore` honoured, bounded); the marked files by id, as paths below
    `shown` (the chart folder findings name), else below chart_dir. Archived subcharts are
    copied as they are (their files are in no repository)."""
    copy = os.path.join(scratch, os.path.basename(os.path.normpath(chart_dir)) or "chart")
    copy_chart(chart_dir, copy)  # what it refuses, the plain render's copy reported
    files: dict[int, str] = {}
    for number, relative in enumerate(_template_files(copy)):
        target = os.path.join(copy, relative)
        try:
            with open(target, encoding="utf-8") as handle:
                text = handle.read()
        except (OSError, UnicodeDecodeError):
            continue
        with open(target, "w", encoding="utf-8", newline="") as handle:
            handle.write(mark_template(text, number, os.path.basename(relative).startswith("_")))
        files[number] = os.path.join(shown or chart_dir, relative)
    return copy, files


def _display(path: str) -> str:
    relative = os.path.relpath(path)
    return (path if relative.startswith("..") else relative).replace(os.sep, "/")


def _pairs(plain: Any, marked: Any, plain_pos: Any, marked_pos: Any, plain_path: KeyPath = (),
           marked_path: KeyPath = (), inside: tuple[str | int, ...] = ()) -> Iterator[tuple[int, int, tuple[str | int, ...]]]:
    """(plain line, marked line, key path in the plain data) of every list item and mapping key
    found in both; `plain_path` and `marked_path` are the two nodes' key paths in their
    documents, `inside` the plain node's below its resource's data."""
    if isinstance(plain, dict) and isinstance(marked, dict):
        for key, value in plain.items():
            if key not in marked:
                continue
            one, other = (*plain_path, key), (*marked_path, key)
            a, b = plain_pos.key(one), marked_pos.key(other)
            if a is not None and b is not None:
                yield a.line, b.line, (*inside, key)
            yield from _pairs(value, marked[key], plain_pos, marked_pos, one, other, (*inside, key))
    elif isinstance(plain, list) and isinstance(marked, list) and len(plain) == len(marked):
        for number, (item, other_item) in enumerate(zip(plain, marked, strict=True)):
            one, other = (*plain_path, number), (*marked_path, number)
            a, b = plain_pos.start(one), marked_pos.start(other)  # scalar items too (args)
            if a is not None and b is not None:
                yield a.line, b.line, (*inside, number)
            yield from _pairs(item, other_item, plain_pos, marked_pos, one, other, (*inside, number))


def _same(plain: Any, marked: Any) -> bool:
    """The two documents have the same shape: the same keys in the same order, lists of the
    same lengths. Scalars may differ: a marker inside a quoted or block scalar becomes part of
    it, and charts draw random names and UUIDs (randAlphaNum, uuidv4, now) on every render."""
    if isinstance(plain, dict):
        return isinstance(marked, dict) and list(plain) == list(marked) and all(
            _same(value, marked[key]) for key, value in plain.items())
    if isinstance(plain, list):
        return isinstance(marked, list) and len(plain) == len(marked) and all(
            _same(a, b) for a, b in zip(plain, marked, strict=True))
    return not isinstance(marked, (dict, list))


def _column(template_line: str, rendered_line: str) -> int:
    """Where the node's first word (`name:`, `- name:`) sits in the template line."""
    words = rendered_line.strip().lstrip("- ").split()
    token = words[0] if words else ""
    if token:
        found = template_line.find(token)
        if found >= 0:
            return found + 1
    return len(template_line) - len(template_line.lstrip()) + 1


def _literal_key(template_line: str, rendered_line: str, key: object) -> bool:
    """The template line writes the node's key literally before its action
    (`resources: {{- toYaml ... }}`): the key's own line, though the action's output follows."""
    if not isinstance(key, str):
        return False
    literal = _line_key(template_line, "{#:")
    shown = _line_key(rendered_line, "#:")
    return (literal is not None and shown is not None and literal[0] == key == shown[0]
            and literal[1].lstrip().startswith("{{") and (not shown[1] or shown[1][0].isspace()))


def _line_key(line: str, stops: str) -> tuple[str, str] | None:
    """(key, the text after its `:`) of a line `  - - key: ...`, the key ending before the first
    of `stops`; None when there is none. A scan, not a regular expression: the expression it
    replaces backtracked over every way to split a long run of `- ` (quadratic: 65 s for 80 KB)."""
    start = len(line) - len(line.lstrip())
    while line.startswith("-", start) and line[start + 1:start + 2].isspace():  # each item's `- `
        start += 2
        while line[start:start + 1].isspace():
            start += 1
    rest = line[start:]
    end = next((index for index, char in enumerate(rest) if char in stops), len(rest))
    if end == len(rest) or rest[end] != ":":
        return None
    key = rest[:end].rstrip()
    if not key or key[0].isspace() or key[0] in "'\"" or key[0] in stops:
        return None
    return key, rest[end + 1:]


def positions(plain_text: str, marked_text: str, files: dict[int, str],
              values: ValuesIndex | None = None) -> PlaceTable:
    """Template places by line of the plain render; none when the renders disagree. With the
    render's values, a node that `toYaml .Values.x` wrote goes to its line in the values file
    that gave it (values_lines.py), exact, where the rendered content proves it."""
    from kubegap_lint.input.read import InputFault, ReadStats, read_text

    def resources(name: str, text: str) -> list[Resource]:
        return [r for r in read_text(name, text, ReadStats()) if not isinstance(r, InputFault)]

    plain, marked = resources("plain", plain_text), resources("marked", marked_text)
    if [(r.document_index, r.kind, r.helm_source) for r in plain] != \
            [(r.document_index, r.kind, r.helm_source) for r in marked] or not plain:
        return PlaceTable(plain_text)  # nothing to align (every document a fault: too deep, too large) or no match
    plain_lines = plain_text.split("\n")
    marked_lines = marked_text.split("\n")
    if not marked:
        return PlaceTable(plain_text)  # nothing rendered: nothing to place
    ends = [r.start.line for r in marked[1:]] + [len(marked_lines) + 1]
    texts: dict[str, list[str]] = {}

    def text_of(path: str) -> list[str]:
        if path not in texts:
            try:  # a regular file, bounded (the chart's file may have changed since it was copied)
                texts[path] = read_regular(path, MAX_FILE_BYTES).decode("utf-8").split("\n")
            except (OSError, UnicodeDecodeError):
                texts[path] = []
        return texts[path]

    table = PlaceTable(plain_text)
    arguments: dict[tuple[str, int], list[str] | None] = {}  # values_lines.argument by template line
    for one, other, end in zip(plain, marked, ends, strict=True):
        if not _same(one.data, other.data):
            continue  # a marker changed what the document says (a branch taken, a name compared)
        for plain_line, marked_line, key_path in _pairs(one.data, other.data, one.positions, other.positions,
                                                        one.base, other.base):
            if plain_line in table:
                continue
            found = None
            for number in range(marked_line, end):  # the node's line, else the action's below it
                match = MARKER_RE.search(marked_lines[number - 1])
                if match:
                    found = (int(match.group(1)), int(match.group(2)), number != marked_line)
                    break
            if found is None or found[0] not in files:
                continue
            path, line, approximate = files[found[0]], found[1], found[2]
            lines = text_of(path)
            if not 1 <= line <= len(lines):
                continue
            written = lines[line - 1]
            rendered = plain_lines[plain_line - 1]
            # A template line that is all action (`{{- toYaml . | nindent 12 }}`) writes its
            # output's last line too, where the marker lands: that line is the action's as well.
            approximate = approximate or action_bodies(written) is not None
            if approximate and _literal_key(written, rendered, key_path[-1]):
                approximate = False
            elif approximate and values is not None:
                from kubegap_lint.helm.values_lines import argument

                if (path, line) not in arguments:  # a toYaml line writes many nodes: read once
                    arguments[path, line] = argument(lines, line)
                keys = arguments[path, line]
                given = values.place(path, list(keys), one.data, list(key_path)) if keys else None
                if given is not None and 1 <= given[1] <= len(text_of(given[0])):
                    path, line, approximate = given[0], given[1], False
                    lines = text_of(path)
                    if given[2]:
                        table.values_nodes[one.document_index, (*one.base, *key_path)] = (_display(path), given[2])
            table[plain_line] = Place(_display(path), line, _column(lines[line - 1], rendered), approximate)
    return table


def exact_lines(chart: str, options: RenderOptions, plain_text: str, shown: str | None = None) -> PlaceTable:
    """Template places by rendered line for a chart folder rendered in-process (`chart` may be
    its checked copy, `shown` then the folder findings name); no place (the render's text still
    kept, for its fixes) when the chart cannot be marked (an archive, a marked render that fails
    or disagrees)."""
    from kubegap_lint.core.tempdir import scratch_folder
    from kubegap_lint.helm.render import HelmError
    from kubegap_lint.helm.sdk import set_values
    from kubegap_lint.helm.values_lines import ValuesIndex
    from kubegap_lint.helm.worker import render

    if not os.path.isdir(chart):
        return PlaceTable(plain_text)
    try:
        with scratch_folder("marked-") as scratch:
            copy, files = marked_copy(chart, scratch, shown)  # archived subcharts stay as they are: unmarked
            marked_text = render(copy, options, shown=shown or chart)
            given = options.sets or options.set_strings or options.set_files  # else no engine here
            values = ValuesIndex(shown or chart, options, set_values(options) if given else {})
    except (HelmError, OSError, shutil.Error):
        return PlaceTable(plain_text)
    return positions(plain_text, marked_text, files, values)


def later_exact_lines(chart: str, options: RenderOptions, plain_text: str) -> PlaceTable:
    """exact_lines for a chart folder rendered in-process, made only when `complete` is asked
    (most renders' findings are placed exactly by the static matching, and the marked render
    costs about as much as the render). It renders a new checked copy of the chart (chartcopy.py,
    whose refusals the first copy reported), so nothing needs to be kept until then. A chart
    edited in between is read as it is then: where the two renders disagree, the static places
    stay."""

    def made() -> PlaceTable:
        from kubegap_lint.helm.chartcopy import chart_to_render

        try:
            with chart_to_render(chart) as (folder, _):
                return exact_lines(folder, options, plain_text, chart)
        except OSError:  # no private temp folder any more
            return PlaceTable(plain_text)

    return PlaceTable(plain_text, made)
