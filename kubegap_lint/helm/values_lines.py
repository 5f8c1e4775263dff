"""The values-file line behind content a template writes with `toYaml .Values.x`.

A node that `toYaml` wrote has no template line of its own: its text came from the values. When
the action's argument is a values path (`.Values.a.b`, `$.Values.a.b`, or `.` / `.c` inside
`with .Values.a`), the node's place is the line of that key in the values file that gave it:
the highest-priority source among `--set` (no file: no line), the `-f` files from last to first,
and the chart's values.yaml (a subchart's values sit under its name in its parent's). A place is
only given when the rendered content equals the composed values at that path (whole, or as one
run of items appended to a list, or as keys added to a mapping), so a `default`, a `tpl`, a
`--set` that changed it, or an `if` that picked other content leave the action line, flagged.
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING, Any

from kubegap_lint.helm.actions import action_spans, trimmed_body

if TYPE_CHECKING:
    from kubegap_lint.helm.render import RenderOptions
    from kubegap_lint.input.parse import PositionIndex

_TOYAML_RE = re.compile(
    r"(?:\btoYaml\s+\(?(?P<arg>(?:\$\w*)?\.[\w.]*)\)?\s*(?:\||$))"
    r"|(?:^\(?(?P<piped>(?:\$\w*)?\.[\w.]*)\)?\s*\|\s*toYaml\b)")
_PATH_RE = re.compile(r"^(?:\$\w*)?(?:\.\w+)*$|^\.$")
_ASSIGN_RE = re.compile(r"^\$(\w+)\s*:?=\s*(.+)$")
_RANGE_RE = re.compile(r"^range\s+(?:\$\w+\s*,\s*)?(?:\$(\w+)\s*:=\s*)?(.+)$")
ELEMENT = "[*]"  # one element of the collection a `range` walks (no template field has this name)
Segment = str | int


def _expression(path_text: str, dot: list[str] | None, variables: dict[str, list[str] | None]) -> list[str] | None:
    """Keys from the root of `.Values.a`, `$.Values.a`, `$root.Values.a` or `.a` (relative to
    the dot); None when it is no plain path or starts from what is not known."""
    path_text = path_text.strip()
    if not _PATH_RE.match(path_text):
        return None
    if path_text.startswith("$"):
        name, _, rest = path_text[1:].partition(".")
        base = [] if not name else variables.get(name)
        return None if base is None else base + [p for p in rest.split(".") if p]
    if dot is None:
        return None
    return dot + [p for p in path_text.split(".") if p]


def argument(lines: list[str], line: int) -> list[str] | None:
    """The values path (keys below .Values) that the `toYaml` action on template line `line`
    writes, following the `with` and `range` blocks around it and the variables set before it
    (a `range` element is ELEMENT); None when it is not a plain values path."""
    # The dot at each nesting level: a key path from the root, or None once it is unknown
    # (a `define` argument, the element of a range over what is no values path).
    stack: list[tuple[str, list[str] | None]] = []
    variables: dict[str, list[str] | None] = {}

    def dot() -> list[str] | None:
        return stack[-1][1] if stack else []

    target: str | None = None
    for number, text in enumerate(lines[:line], start=1):
        for body in (trimmed_body(text[start + 2:end - 2]) for start, end in action_spans(text)):
            words = body.split()
            head = words[0] if words else ""
            if number == line:
                match = _TOYAML_RE.search(body)
                if match:
                    if target is not None:
                        return None  # two toYaml actions on one line: which wrote the node?
                    target = match.group("arg") or match.group("piped")
                    continue
            assignment = _ASSIGN_RE.match(body)
            if assignment:
                variables[assignment.group(1)] = _expression(assignment.group(2), dot(), variables)
            elif head in ("if", "define", "block"):
                stack.append((head, dot() if head == "if" else None))
            elif head == "with":
                stack.append(("with", _expression(" ".join(words[1:]), dot(), variables)))
            elif head == "range":
                walked = _RANGE_RE.match(body)
                base = _expression(walked.group(2), dot(), variables) if walked else None
                element = base + [ELEMENT] if base else None
                if walked and walked.group(1):
                    variables[walked.group(1)] = element
                stack.append(("range", element))
            elif head == "else" and stack:
                kind, _ = stack.pop()
                outer = dot()
                if len(words) > 2 and words[1] == "with":
                    stack.append(("with", _expression(" ".join(words[2:]), outer, variables)))
                else:
                    stack.append((kind, outer))  # an else branch keeps the outer dot
            elif head == "end" and stack:
                stack.pop()
    if target is None:
        return None
    keys = _expression(target, dot(), variables)
    if not keys or keys[0] != "Values":
        return None
    return keys[1:]


def _get(data: Any, path: list[Segment]) -> tuple[bool, Any]:
    for segment in path:
        if isinstance(segment, int):
            if not isinstance(data, list) or not 0 <= segment < len(data):
                return False, None
            data = data[segment]
        else:
            if not isinstance(data, dict) or segment not in data:
                return False, None
            data = data[segment]
    return True, data


def _merge(base: Any, update: Any) -> Any:
    if isinstance(base, dict) and isinstance(update, dict):
        out = dict(base)
        for key, value in update.items():
            out[key] = _merge(out.get(key), value) if key in out else value
        return out
    return update


def _load(path: str) -> tuple[Any, PositionIndex] | None:
    """A values file's data and where each node is, or None: one too large, too deep or
    unparsable here gives no places (its content keeps the action line), never an error. Read
    by the tool's own parser, as the rendered document it is compared with (ruamel's pure-Python
    round-trip loader took 0.4 s of a 2 s run on gpu-operator's values)."""
    from kubegap_lint.core.safefile import read_regular
    from kubegap_lint.input.limits import MAX_DOCUMENT_CHARS, may_be_too_deep

    try:  # a regular file only (a FIFO would hang, /dev/zero never end), read bounded
        text = read_regular(path, 4 * MAX_DOCUMENT_CHARS).decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    if len(text) > MAX_DOCUMENT_CHARS or may_be_too_deep(text):
        return None
    from kubegap_lint.input.parse import parse_chunk
    from kubegap_lint.input.scan import Chunk

    parsed = parse_chunk(Chunk(0, 0, text))
    if parsed.problems or parsed.positions.irregular:  # a fault, a repeated key: no line is sure
        return None
    return parsed.data, parsed.positions


# (values file, or None for --set; its data at the template chart's values root; where that
# root is in the file: the file's positions and the root's key path there)
Source = tuple["str | None", Any, "tuple[PositionIndex, list[Segment]] | None"]
# Where the values give a node: the values file, the 1-based line, the node's key path in the file.
ValuesPlace = tuple[str, int, tuple[Segment, ...]]


def _line(where: tuple[PositionIndex, list[Segment]], path: list[Segment]) -> int | None:
    """The 1-based line of the node at `path` below the values root: its key's, or a list
    item's own."""
    positions, root = where
    full = (*root, *path)
    if not path:
        return None
    found = positions.key(full) if isinstance(path[-1], str) else positions.start(full)
    return found.line if found is not None else None


class ValuesIndex:
    """The values sources of one render, highest priority first, for each chart of the render."""

    def __init__(self, chart_dir: str, options: RenderOptions, set_values: dict[str, Any]) -> None:
        self.chart_dir = os.path.abspath(chart_dir)
        self.set_values = set_values
        # (file, data) of the -f files, the last one first: they are outside the chart.
        self.user_files = [(path, _load(path)) for path in reversed(options.values)]
        self._chart_values: dict[str, Any] = {}
        self._sources: dict[str, list[Source] | None] = {}  # by template folder
        self._merged: dict[str, Any] = {}  # the composed values, by template folder

    def _chart_defaults(self, folder: str) -> Any:
        if folder not in self._chart_values:
            path = os.path.join(folder, "values.yaml")
            self._chart_values[folder] = _load(path) if os.path.isfile(path) else None
        return self._chart_values[folder]

    def _scope(self, template: str) -> list[tuple[str, list[str]]] | None:
        """The charts from the top one down to the template's, each with the key path of the
        template's values inside that chart's values (a subchart's values sit under its name)."""
        from kubegap_lint.helm.charts import chart_name

        folder = os.path.dirname(os.path.abspath(template))
        while os.path.basename(folder) != "templates":
            if folder == self.chart_dir or os.path.dirname(folder) == folder:
                return None
            folder = os.path.dirname(folder)
        chart = os.path.dirname(folder)
        chain: list[str] = []
        while chart != self.chart_dir:
            parent = os.path.dirname(chart)
            name = chart_name(chart)
            if os.path.basename(parent) != "charts" or name is None:
                return None
            chain.insert(0, name)
            chart = os.path.dirname(parent)
        scopes: list[tuple[str, list[str]]] = []
        folder = self.chart_dir
        for depth in range(len(chain) + 1):
            scopes.append((folder, chain[depth:]))
            if depth < len(chain):
                folder = self._subchart(folder, chain[depth]) or ""
                if not folder:
                    return None
        return scopes

    @staticmethod
    def _subchart(parent: str, name: str) -> str | None:
        from kubegap_lint.helm.charts import chart_name

        folder = os.path.join(parent, "charts")
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            return None
        return next((e.path for e in entries if e.is_dir() and chart_name(e.path) == name), None)

    def _composed(self, template: str, sources: list[Source]) -> Any:
        """The values the template's chart sees: its sources merged, lowest first (once per folder)."""
        folder = os.path.dirname(os.path.abspath(template))
        if folder not in self._merged:
            composed: Any = None
            for _, data, _ in reversed(sources):
                if data is not None:
                    composed = _merge(composed, data)
            self._merged[folder] = composed
        return self._merged[folder]

    def sources(self, template: str) -> list[Source] | None:
        """(file or None for --set, data at the template chart's values root), highest first,
        once per template folder."""
        folder = os.path.dirname(os.path.abspath(template))
        if folder not in self._sources:
            self._sources[folder] = self._find_sources(template)
        return self._sources[folder]

    def _find_sources(self, template: str) -> list[Source] | None:
        scopes = self._scope(template)
        if scopes is None:
            return None
        prefix = scopes[0][1]
        found, data = _get(self.set_values, list(prefix))
        out: list[Source] = [(None, data if found else None, None)]
        files = [(path, loaded, prefix) for path, loaded in self.user_files]
        files += [(os.path.join(folder, "values.yaml"), self._chart_defaults(folder), inner) for folder, inner in scopes]
        for path, loaded, root in files:
            if loaded is None:
                out.append((path, None, None))
                continue
            found, data = _get(loaded[0], list(root))
            out.append((path, data if found else None, (loaded[1], list(root))))
        return out

    def place(self, template: str, keys: list[Segment], document: Any, node: list[Segment]) -> ValuesPlace | None:
        """As `_place`; a surprise in someone's values (a type this code never met) costs the
        place only, never the run."""
        try:
            return self._place(template, keys, document, node)
        except (AttributeError, IndexError, KeyError, TypeError, ValueError, RecursionError):
            return None

    def _place(self, template: str, keys: list[Segment], document: Any, node: list[Segment]) -> ValuesPlace | None:
        if ELEMENT not in keys:
            return self._one(template, keys, document, node)
        # The element of a range: the one element whose values the rendered content proves.
        at = keys.index(ELEMENT)
        sources = self.sources(template)
        if sources is None:
            return None
        found, walked = _get(self._composed(template, sources), list(keys[:at]))
        if not found:
            return None
        members: list[Segment] = list(walked) if isinstance(walked, dict) else (
            list(range(len(walked))) if isinstance(walked, list) else [])
        placed = [place for member in members
                  if (place := self._place(template, [*keys[:at], member, *keys[at + 1:]], document, node))]
        if len({place[:2] for place in placed}) != 1:
            return None
        # one line from two elements (never met): the line stands, the key path (for a fix) is unknown
        return placed[0] if len(set(placed)) == 1 else (placed[0][0], placed[0][1], ())

    def _one(self, template: str, keys: list[Segment], document: Any, node: list[Segment]) -> ValuesPlace | None:
        """Where the values define the rendered node at `node` (a key path in `document`) that
        `toYaml` of `.Values.<keys>` wrote (the file, its 1-based line, and the node's key path
        in that file, which a fix of the node edits); None unless the rendered content proves it."""
        sources = self.sources(template)
        if sources is None:
            return None
        found, value = _get(self._composed(template, sources), list(keys))
        if not found or value in (None, {}, []):
            return None
        inner = _inner(document, node, value)
        if inner is None:
            return None
        full: list[Segment] = [*keys, *inner]
        for path, data, where in sources:
            if not _defines(data, full):
                continue
            if path is None or where is None:
                return None  # --set gave it: no file line
            if not _inside_project(path, self.chart_dir):
                return None
            line = _line(where, full)
            return (path, line, (*where[1], *full)) if line is not None else None
        return None


def _defines(data: Any, path: list[Segment]) -> bool:
    """The source sets the node at `path` itself. Below a list the whole list is its (helm
    replaces lists), so a source that gives the list gives its items."""
    for depth in range(len(path)):
        if isinstance(path[depth], int):
            found, container = _get(data, path[:depth])
            return found and isinstance(container, list)
    return _get(data, path)[0]


def _inner(document: Any, node: list[Segment], value: Any) -> list[Segment] | None:
    """The node's path inside `value`, found as the deepest ancestor (or the node) whose
    rendered content is `value`, or holds it as one run of list items or as some of its keys."""
    for depth in range(len(node), -1, -1):
        found, content = _get(document, node[:depth])
        if not found:
            continue
        rest = node[depth:]
        if content == value:
            return list(rest)
        if rest and isinstance(content, list) and isinstance(value, list) and isinstance(rest[0], int):
            size = len(value)
            starts = [start for start in range(len(content) - size + 1) if content[start:start + size] == value]
            if len(starts) == 1 and starts[0] <= rest[0] < starts[0] + size:
                return [rest[0] - starts[0], *rest[1:]]
        if rest and isinstance(content, dict) and isinstance(value, dict) and isinstance(rest[0], str):
            if rest[0] in value and all(content.get(k) == v for k, v in value.items()):
                return list(rest)
    return None


def _inside_project(path: str, chart_dir: str) -> bool:
    """A values file below the current folder or the chart: a place SARIF can point at."""
    absolute = os.path.abspath(path)
    return any(os.path.commonpath([absolute, root]) == root for root in (os.path.abspath(os.curdir), chart_dir))
