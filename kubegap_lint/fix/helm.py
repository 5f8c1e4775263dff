"""Fixes of findings on a chart the run rendered: a template is never edited.

Each fix is computed as for any manifest, on the chart's render (kept with its template places,
helm/marked.py), then carried to where its text came from. When every node the fix changes lies
in what `toYaml .Values.x` wrote (the changed scalar, or the mapping or list the fix adds to, holds
exactly the values file's content at one key), the same change is made in that values file at the
values key path plus the node's path below it, in the file's own indentation: `--diff` shows it as
a diff of the values file. Otherwise the fix keeps no edit and says, as text, what to write at
which template line, so that a user or an agent can apply it by hand.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from dataclasses import replace
from typing import Any

from kubegap_lint.core.model import Finding
from kubegap_lint.fix.apply import apply_edits, apply_fixes, wanted
from kubegap_lint.fix.compute import NONE, FindingKey, file_fixes, finding_key
from kubegap_lint.fix.document import KeyPath, Layout, Unfixable, YamlFile, node_at
from kubegap_lint.fix.files import FileFixes, decode
from kubegap_lint.fix.model import Edit, Fix, LineMap
from kubegap_lint.fix.writer import add_entries, append_item, set_scalar

# One change a fix makes to a document's data: ("set", scalar path, value), ("add", mapping
# path, {key: value}) or ("append", list path, [items]).
Change = tuple[str, KeyPath, Any]


class _Inexpressible(Exception):  # noqa: N818 - a reason: the fix stays text
    """The fix changes what no values file wrote."""


def _documents(text: str) -> list[Any]:
    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError

    try:
        return [data for data in YAML(typ="safe", pure=True).load_all(text) if data is not None]
    except (YAMLError, ValueError, RecursionError) as exc:  # a render, or a fix of it, that does not read
        raise Unfixable(f"the text does not parse: {exc}") from None


def _changes(before: Any, after: Any, path: KeyPath = ()) -> Iterator[Change]:
    """What turns `before` into `after`: scalars set, keys added, items appended; anything else
    (a key removed, an item changed in kind) is no edit a values file can carry."""
    if isinstance(before, dict) and isinstance(after, dict):
        if any(key not in after for key in before):
            raise _Inexpressible("a key removed")
        added = {key: value for key, value in after.items() if key not in before}
        if added:
            yield "add", path, added
        for key, value in before.items():
            yield from _changes(value, after[key], (*path, key))
    elif isinstance(before, list) and isinstance(after, list) and len(after) >= len(before):
        for index, item in enumerate(before):
            yield from _changes(item, after[index], (*path, index))
        if len(after) > len(before):
            yield "append", path, after[len(before):]
    elif isinstance(before, (dict, list)) or isinstance(after, (dict, list)):
        raise _Inexpressible("a node changed in kind")
    elif before != after or type(before) is not type(after):
        yield "set", path, after


def _get(data: Any, path: KeyPath) -> tuple[bool, Any]:
    for segment in path:
        in_list = isinstance(segment, int) and isinstance(data, list) and 0 <= segment < len(data)
        if not in_list and not (isinstance(segment, str) and isinstance(data, dict) and segment in data):
            return False, None
        data = data[segment]
    return True, data


class _Render:
    """One rendered stream of a chart: its text, documents and values-written nodes."""

    def __init__(self, table: Any) -> None:
        self.text: str = table.text
        self.places: dict[int, Any] = table
        self.values_nodes: dict[tuple[int, KeyPath], tuple[str, KeyPath]] = table.values_nodes
        self.documents = _documents(self.text)
        self.yfile = YamlFile(self.text)
        if len(self.yfile.documents) != len(self.documents):
            raise Unfixable("the render's documents do not read alike")
        self._values_data: dict[str, Any] = {}

    def values_data(self, path: str) -> Any:
        if path not in self._values_data:
            try:
                with open(path, encoding="utf-8") as handle:
                    documents = _documents(handle.read())
            except (OSError, UnicodeDecodeError, Unfixable):
                documents = []
            self._values_data[path] = documents[0] if documents else None
        return self._values_data[path]

    def values_path(self, document: int, data: Any, path: KeyPath) -> tuple[str, KeyPath]:
        """The values file and key path whose content the rendered node at `path` is: the node
        itself placed there, or a node below it whose values path ends as its rendered path
        does; the content must be equal, so that the node holds nothing the template wrote."""
        found, content = _get(data, path)
        for (number, rendered), (file, keys) in self.values_nodes.items():
            if number != document or rendered[:len(path)] != path:
                continue
            rest = rendered[len(path):]
            if len(keys) <= len(rest) or tuple(keys[len(keys) - len(rest):]) != rest:
                continue
            base = tuple(keys[:len(keys) - len(rest)])
            given, value = _get(self.values_data(file), base)
            if found and given and value == content:
                return file, base
        raise _Inexpressible("the template wrote the node")


def _values_edits(render: _Render, finding: Finding, fix: Fix) -> tuple[str, str, list[Edit]]:
    """The values file, its text and the edits that make the fix's change there."""
    assert finding.rendered_location is not None
    nodes = render.yfile.documents
    document = nodes.index(render.yfile.document_at(finding.rendered_location.line))
    # Only the finding's document is read again (a chart's stream can be long, its findings many).
    start = nodes[document].start_mark.index
    end = nodes[document + 1].start_mark.index if document + 1 < len(nodes) else len(render.text)
    if any(edit.start < start or edit.end > end for edit in fix.edits):
        raise _Inexpressible("the fix changes another document")
    shifted = [Edit(edit.start - start, edit.end - start, edit.text) for edit in fix.edits]
    after = _documents(apply_edits(render.text[start:end], shifted))
    if len(after) != 1:
        raise _Inexpressible("the fix adds a document")
    changes = list(_changes(render.documents[document], after[0]))
    number = finding.document_index or 0
    targets = [render.values_path(number, render.documents[document], path) for _, path, _ in changes]
    files = {file for file, _ in targets}
    if len(files) != 1:
        raise _Inexpressible("the fix changes no values file, or two")
    file = files.pop()
    try:
        with open(file, "rb") as handle:
            text = decode(handle.read())
    except OSError:
        text = None
    if text is None:
        raise _Inexpressible("the values file cannot be read as UTF-8")
    yfile = YamlFile(text)
    if len(yfile.documents) != 1:
        raise _Inexpressible("the values file is not one document")
    root = yfile.documents[0]
    layout = Layout(root)
    edits: list[Edit] = []
    for (kind, _, value), (_, keys) in zip(changes, targets, strict=True):
        node = node_at(root, keys)
        if kind == "set":
            edits.append(set_scalar(yfile, node, value))
        elif kind == "add":
            edits.append(add_entries(yfile, layout, node, value))
        else:
            edits += [append_item(yfile, layout, node, item) for item in value]
    return file, text, edits


def _by_hand(render: _Render, finding: Finding, fix: Fix) -> Fix:
    """The fix as text against the template lines its edits fall on: what to write where."""
    lines = LineMap(render.text)
    values_files = {file for file, _ in render.values_nodes.values()}
    steps: list[str] = []
    for edit in sorted(fix.edits, key=lambda one: one.start):
        line, column = lines.position(edit.start)
        inserts_lines = edit.start == edit.end and column == 1 and line > 1
        place, side = render.places.get(line - 1 if inserts_lines else line), "after"
        if inserts_lines and (place is None or place.path in values_files):
            # the line above is a values line (the end of a toYaml block): name the template
            # line the new lines go before
            following = render.places.get(line)
            if following is not None and following.path not in values_files:
                place, side = following, "before"
        where = f"{place.path}:{place.line}{' (the action that writes it)' if place.approximate else ''}" \
            if place is not None else f"{finding.location.path} near line {finding.location.line}"
        if inserts_lines:
            steps.append(f"{side} {where} add {json.dumps(edit.text, ensure_ascii=False)}")
        elif edit.start == edit.end:
            steps.append(f"at {where} insert {json.dumps(edit.text, ensure_ascii=False)}")
        else:
            old = render.text[edit.start:edit.end]
            steps.append(f"at {where} replace {json.dumps(old, ensure_ascii=False)}"
                         f" with {json.dumps(edit.text, ensure_ascii=False)}")
    return Fix(fix.rule_id, NONE, f"no edit: the Helm template {finding.template} is never edited; {fix.description}"
               f" by hand ({fix.applicability}; as rendered, indent it as the template does): {'; '.join(steps)}",
               (), fix.evidence)


def _chart_fix(render: _Render, finding: Finding, fix: Fix) -> tuple[str, str, Fix] | Fix:
    """The fix carried to its values file (file, text, fix), else the fix as text."""
    if not fix.edits:
        return replace(fix, description=f"{fix.description} (in the Helm template {finding.template}, never edited)")
    try:
        file, text, edits = _values_edits(render, finding, fix)
    except (_Inexpressible, Unfixable):
        return _by_hand(render, finding, fix)
    return file, text, Fix(fix.rule_id, fix.applicability,
                           f"{fix.description}, in {file} (the values the Helm template {finding.template} writes"
                           " with toYaml)", tuple(edits), fix.evidence)


def on_chart(finding: Finding, rendered: dict[str, Any]) -> bool:
    """The finding is placed in a chart the run rendered and kept the render of."""
    from kubegap_lint.helm.marked import PlaceTable

    where = finding.rendered_location
    table = rendered.get(where.path) if where is not None else None
    return finding.template is not None and isinstance(table, PlaceTable) and bool(table.text)


def chart_plan(findings: Iterable[Finding], rendered: dict[str, Any], params: dict[str, Any],
               unsafe: bool) -> list[FileFixes]:
    """The fixes of the findings placed in a chart (a template or values line, with the place
    in a render of the run): values files with their edits, and templates with fixes as text."""
    by_stream: dict[str, list[Finding]] = {}
    for finding in findings:
        if on_chart(finding, rendered):
            assert finding.rendered_location is not None
            by_stream.setdefault(finding.rendered_location.path, []).append(finding)
    values: dict[str, tuple[str, dict[FindingKey, Fix]]] = {}
    templates: dict[str, dict[FindingKey, Fix]] = {}
    for stream in sorted(by_stream):
        try:
            render = _Render(rendered[stream])
        except Unfixable:
            continue
        originals = {finding_key(_as_rendered(f)): f for f in by_stream[stream]}
        computed = file_fixes(render.text, [_as_rendered(f) for f in by_stream[stream]], params)
        for key, fix in computed.items():
            finding = originals[key]
            carried = _chart_fix(render, finding, fix)
            if isinstance(carried, Fix):
                templates.setdefault(finding.location.path, {})[finding_key(finding)] = carried
            else:
                file, text, moved = carried
                values.setdefault(file, (text, {}))[1][finding_key(finding)] = moved
    out = [FileFixes(path, "", fixes, "") for path, fixes in sorted(templates.items())]
    for path, (text, fixes) in sorted(values.items()):
        fixed, applied = apply_fixes(text, [fix for fix in fixes.values() if wanted(fix, unsafe)])
        out.append(FileFixes(path, text, fixes, fixed, applied))
    return out


def _as_rendered(finding: Finding) -> Finding:
    """The finding at its place in the render, where its fix is computed."""
    assert finding.rendered_location is not None
    return replace(finding, location=finding.rendered_location, template=None, rendered_location=None)


def may_write(values_file: str, named: Iterable[str]) -> bool:
    """`--fix` writes a values file only when the command line named it, or when it is the
    values.yaml of a chart folder that a named path is or holds."""
    real = os.path.realpath(values_file)
    folder = os.path.dirname(real)
    if os.path.basename(real) != "values.yaml" or not os.path.isfile(os.path.join(folder, "Chart.yaml")):
        return any(os.path.realpath(path) == real for path in named)
    for path in named:
        root = os.path.realpath(path)
        if root == real or os.path.isdir(root) and os.path.commonpath([root, folder]) == root:
            return True
    return False
