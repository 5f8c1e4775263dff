"""Stage 5 (after evaluate): move findings on `helm template` output to the chart's template files.

A rendered document headed by `# Source: <chart>/templates/<file>` came from that template. When
the chart's folder is found (a `--chart-dir`, else below the current folder, matched by the
`name` in Chart.yaml; subcharts under `charts/`), the finding's location becomes the template
line (template_lines.py) and the rendered location is kept beside it. Findings whose chart is
not found keep the rendered location, unchanged.
"""

from __future__ import annotations

import bisect
import os
from array import array
from collections.abc import Callable, Iterable
from typing import Any

from kubegap_lint.core.model import Finding, Location
from kubegap_lint.core.record import replace
from kubegap_lint.helm.charts import chart_name
from kubegap_lint.input.read import Resource

_SKIP_DIRS = frozenset(("templates", "node_modules", "__pycache__"))
MAX_WALK_DIRS = 20_000  # a chart search never turns into a crawl of a huge tree
MAX_WALK_DEPTH = 8  # charts sit near a repository's top (deploy/helm/charts/x is 4 deep)
MAX_DEFINE_FILES = 5_000  # the template files read to find a define (a chart holds tens)


def is_hook(data: Any) -> bool:
    """A Helm hook (`helm.sh/hook` annotation): helm prints hooks after the release manifest."""
    metadata = data.get("metadata") if isinstance(data, dict) else None
    annotations = metadata.get("annotations") if isinstance(metadata, dict) else None
    return isinstance(annotations, dict) and "helm.sh/hook" in annotations


def _display(path: str) -> str:
    """Relative to the current folder when below it, with forward slashes, like other inputs."""
    relative = os.path.relpath(path)
    if not relative.startswith(".."):
        path = relative
    return os.path.normpath(path).replace(os.sep, "/")


class ChartIndex:
    """Charts by name, found in the named folders first, then below the current folder (only
    searched when a rendered document names a chart the named folders do not hold)."""

    def __init__(self, chart_dirs: Iterable[str] = ()) -> None:
        self.named: list[tuple[str, str]] = []
        for folder in chart_dirs:
            self.named.extend(self._walk(folder))
        self._below_cwd: list[tuple[str, str]] | None = None
        self._templates: dict[str, str | None] = {}
        self._resolved: dict[str, str | None] = {}  # per run: a stream names few templates, often

    @staticmethod
    def _walk(root: str) -> list[tuple[str, str]]:
        found: list[tuple[str, str]] = []
        visited = 0
        for folder, dirs, files in os.walk(root):
            visited += 1
            if visited > MAX_WALK_DIRS:
                break
            depth = os.path.relpath(folder, root).count(os.sep) + (folder != root)
            dirs[:] = [] if depth >= MAX_WALK_DEPTH else sorted(
                d for d in dirs if not d.startswith(".") and d not in _SKIP_DIRS)
            if "Chart.yaml" in files:
                name = chart_name(folder)
                if name:
                    found.append((name, folder))
        return sorted(found, key=lambda item: (item[1].count(os.sep), item[1]))

    def charts(self, name: str) -> Iterable[str]:
        for chart, folder in self.named:
            if chart == name:
                yield folder
        for chart, folder in self._searched():
            if chart == name:
                yield folder

    def _searched(self) -> list[tuple[str, str]]:
        """The charts below the current folder; none searched from the filesystem's root
        outside a repository (that would be a crawl of the machine: name --chart-dir)."""
        if self._below_cwd is None:
            here = os.path.abspath(os.curdir)
            from_root = os.path.dirname(here) == here and not os.path.exists(os.path.join(here, ".git"))
            self._below_cwd = [] if from_root else self._walk(os.curdir)
        return self._below_cwd

    def ambiguity(self, source: str) -> str | None:
        """Why the chart a `# Source:` path names is a guess: no --chart-dir holds it, and the
        nearest charts below the current folder that do are several, equally near."""
        parts = [p for p in source.replace("\\", "/").split("/") if p]
        if not parts or any(chart == parts[0] for chart, _ in self.named):
            return None
        holding = [folder for chart, folder in self._searched()
                   if chart == parts[0] and _inside(folder, parts[1:]) is not None]
        if len(holding) < 2 or holding[0].count(os.sep) != holding[1].count(os.sep):
            return None  # one, or one nearest: found
        shown = ", ".join(_display(folder) for folder in holding[:3]) + (", ..." if len(holding) > 3 else "")
        return (f"chart {parts[0]!r} is ambiguous (equally near: {shown}); the first is assumed:"
                " name the chart with --chart-dir")

    def resolve(self, source: str) -> str | None:
        """The template file a `# Source:` path names, or None when no chart holds it."""
        if source not in self._resolved:
            self._resolved[source] = self._resolve(source)
        return self._resolved[source]

    def _resolve(self, source: str) -> str | None:
        parts = [p for p in source.replace("\\", "/").split("/") if p]
        if len(parts) < 2 or any(p == ".." for p in parts):
            return None
        for folder in self.charts(parts[0]):
            found = _inside(folder, parts[1:])
            if found is not None:
                return found
        return None

    def template_text(self, path: str) -> str | None:
        if path not in self._templates:
            from kubegap_lint.core.safefile import read_regular
            from kubegap_lint.input.limits import MAX_DOCUMENT_CHARS

            try:  # a regular file, bounded: a template linked to /dev/zero is no template
                self._templates[path] = read_regular(path, MAX_DOCUMENT_CHARS).decode("utf-8", errors="replace")
            except OSError:
                self._templates[path] = None
        return self._templates[path]


def _top_chart(template: str, source: str) -> str | None:
    """The folder of the chart a `# Source:` path starts with (`top/charts/sub/templates/x`:
    two folders above sub's templates), given the template file it names."""
    parts = [p for p in source.replace("\\", "/").split("/") if p]
    if "templates" not in parts:
        return None
    below = len(parts) - parts.index("templates")  # templates/ and what is inside it
    hops = parts[:parts.index("templates")].count("charts")
    folder = os.path.abspath(template)
    for _ in range(below + 2 * hops):
        folder = os.path.dirname(folder)
    return folder if os.path.isfile(os.path.join(folder, "Chart.yaml")) else None


def _template_files(chart: str) -> list[str]:
    """The files below the templates/ folders of a chart and its subcharts, in a stable order."""
    found: list[str] = []
    for folder, dirs, files in os.walk(chart):
        dirs.sort()
        if "templates" in os.path.relpath(folder, chart).split(os.sep):
            found.extend(os.path.join(folder, name) for name in sorted(files))
    return found


def _first_column(text: str | None, line: int) -> int:
    """Where the line's node starts (after a list dash), 1-based."""
    if text is None:
        return 1
    lines = text.split("\n")
    if not 1 <= line <= len(lines):
        return 1
    content = lines[line - 1]
    stripped = content.lstrip(" ")
    while stripped.startswith("- "):
        stripped = stripped[2:].lstrip(" ")
    return len(content) - len(stripped) + 1


def _at(finding: Finding, place: Any) -> Finding:
    """The finding at its place from a marked render (marked.Place)."""
    return replace(finding, location=Location(place.path, place.line, place.column),
                   rendered_location=finding.location, approximate=finding.approximate or place.approximate)


def _inside(chart_dir: str, rest: list[str]) -> str | None:
    """Follow `charts/<name>/...` into subcharts, whose folders may be named otherwise."""
    direct = os.path.join(chart_dir, *rest)
    if os.path.isfile(direct):
        return direct
    if len(rest) > 2 and rest[0] == "charts":
        subcharts = os.path.join(chart_dir, "charts")
        try:
            folders = sorted(os.scandir(subcharts), key=lambda e: e.name)
        except OSError:
            return None
        for entry in folders:
            if entry.is_dir() and chart_name(entry.path) == rest[1]:
                found = _inside(entry.path, rest[2:])
                if found is not None:
                    return found
    return None


class TemplateMapper:
    """Moves findings on rendered documents to their template lines. `note` each resource as
    it is read (a document is placed in its template by its rank among the documents that
    template rendered, of the same kind, in the same file: only those numbers are kept);
    `map` a finding once the whole input has been noted."""

    def __init__(self, chart_dirs: Iterable[str] = (), places: dict[str, dict[int, Any]] | None = None) -> None:
        self.chart_dirs = list(chart_dirs)
        # Exact places from a marked render (marked.Place by rendered line), by rendered stream.
        self.places = places or {}
        self._charts: ChartIndex | None = None
        # Ascending document numbers (resources are noted in reading order): 8 bytes each.
        self.documents: dict[tuple[str, str, str, bool], array[int]] = {}
        self.hooks: set[tuple[str, int]] = set()  # (stream, document number) of the Helm hooks
        self._values: dict[str, Any] = {}  # values_lines.ValuesIndex by chart folder
        self._define_index: dict[str, dict[str, tuple[str, list[str], int]]] = {}  # by chart folder
        # Is a finding's path a file? Asked once a path a run (every finding of a rendered
        # stream asks it): the run reads its inputs, it does not expect them to come and go.
        self._is_file: dict[str, bool] = {}
        # (rendered path, `# Source:`) pairs whose findings stay as they are: no marked render
        # of the path, no chart holding the template, and the fallback keeps the place (the
        # path is a file, or no chart of that name is found). Every finding of such a stream
        # asks, and nothing of this changes during a run.
        self._as_is: set[tuple[str, str]] = set()

    def note(self, resource: Resource) -> None:
        if resource.helm_source is not None:
            hook = is_hook(resource.data)
            if hook:
                self.hooks.add((resource.path, resource.document_index))
            key = (resource.path, resource.helm_source, resource.kind, hook)
            group = self.documents.get(key)
            if group is None:  # not setdefault: an array made for every resource of a render
                group = self.documents[key] = array("q")
            if not group or group[-1] != resource.document_index:  # the items of one List count once
                group.append(resource.document_index)

    def _rank(self, path: str, template: str, kind: str, hook: bool, document: int) -> tuple[int, int]:
        """The document's rank among its group (the documents of its template and kind, hooks
        and the others apart: helm prints hooks after the manifest), and the group's size."""
        unique = self.documents.get((path, template, kind, hook), array("q"))
        position = bisect.bisect_left(unique, document)
        if position == len(unique) or unique[position] != document:
            return 0, 1
        return position, len(unique)

    def map(self, finding: Finding,
            key_path: Callable[[Finding], tuple[object, ...]] | None = None, document: Any = None) -> Finding:
        """The finding with its primary location moved to the template file, when one is found.
        `key_path` gives the finding's key path with each list item's `name` beside its index
        (evaluate.key_path_of): it reads the resource, so it is only asked for once a template
        was found. `document` (the resource's data) lets the matching read the rendered values:
        names that pick a section or an item, values that pick the `if`/`else` branch that
        rendered."""
        if finding.template is None or finding.rendered_location:
            return finding
        if (finding.location.path, finding.template) in self._as_is:
            return finding
        marked = self.places.get(finding.location.path) if self.places else None
        # A table left pending (marked.later_exact_lines) is completed only for a finding the
        # static matching cannot place exactly: where it can, it gives what the marked render
        # would (tests/test_helm_oracle.py compares the two on every shared render).
        later = marked is not None and getattr(marked, "pending", False)
        place = marked.get(finding.location.line) if marked and not later else None
        if place is not None and finding.resource is not None:
            return _at(finding, place)
        if self._charts is None:
            self._charts = ChartIndex(self.chart_dirs)
        path = self._charts.resolve(finding.template)
        mapped, sure = self._static(finding, path, key_path, document)
        if later and finding.resource is not None and not sure:
            assert marked is not None
            place = marked.complete().get(finding.location.line)  # type: ignore[attr-defined]
            if place is not None:
                return _at(finding, place)
        if path is None and mapped is finding and not marked and not later:  # a pending table may hold places
            self._as_is.add((finding.location.path, finding.template))
        return mapped

    def _static(self, finding: Finding, path: str | None,
                key_path: Callable[[Finding], tuple[object, ...]] | None, document: Any) -> tuple[Finding, bool]:
        """The finding placed by the static matching (template_lines.py) in the template file
        `path` its `# Source:` names, else as _fallback places it; and whether it is sure: on a
        template line, not approximate. (A line of the chart's values.yaml is not: a values file
        of the render may have given the same content, and the marked render names that one.)"""
        assert self._charts is not None and finding.template is not None
        text = self._charts.template_text(path) if path else None
        if path is None or text is None or finding.resource is None:
            return self._fallback(finding, path if text is not None else None), False
        from kubegap_lint.helm.template_lines import locate  # only once a template is found
        number = finding.document_index or 0
        hook = (finding.location.path, number) in self.hooks
        rank, count = self._rank(finding.location.path, finding.template, finding.resource.kind, hook, number)
        steps = key_path(finding) if key_path else tuple(finding.key_path)
        match = locate(text, finding.resource.kind, rank, count, steps, document, hook,
                       self._defines(path, finding.template))
        if match.path is not None:  # inside the define an include wrote
            mapped = self._guessed(replace(
                finding, location=Location(_display(match.path), match.line, match.column),
                rendered_location=finding.location, approximate=finding.approximate or match.approximate))
            return mapped, not mapped.approximate
        if match.approximate and document is not None:
            given = self._values_line(path, finding.template, text, match.line, document, steps)
            if given is not None:
                return self._guessed(replace(finding, location=Location(_display(given[0]), given[1], given[2]),
                                             rendered_location=finding.location, approximate=finding.approximate)), False
        mapped = replace(
            finding,
            location=Location(_display(path), match.line, match.column),
            rendered_location=finding.location,
            approximate=finding.approximate or match.approximate,
        )
        mapped = self._guessed(mapped)
        return mapped, not mapped.approximate

    def _guessed(self, finding: Finding) -> Finding:
        """A finding placed in a chart picked among equals: approximate, and says why."""
        assert self._charts is not None and finding.template is not None
        why = self._charts.ambiguity(finding.template)
        if why is None:
            return finding
        return replace(finding, approximate=True, message=f"{finding.message} ({why})")

    def _defines(self, template: str, source: str) -> Callable[[str], tuple[str, list[str], int] | None]:
        """The defines of the render's charts by name (the top chart's folder and its subcharts
        share one namespace, as in helm), read once per chart."""
        top = _top_chart(template, source)

        def lookup(name: str) -> tuple[str, list[str], int] | None:
            if top is None:
                return None
            if top not in self._define_index:
                from kubegap_lint.helm.actions import define_bodies

                found: dict[str, tuple[str, list[str], int]] = {}
                for number, path in enumerate(_template_files(top)):
                    if number >= MAX_DEFINE_FILES:
                        break
                    text = self._charts.template_text(path) if self._charts else None
                    if text is not None:
                        for key, value in define_bodies(path, text).items():
                            found.setdefault(key, value)
                self._define_index[top] = found
            return self._define_index[top].get(name)

        return lookup

    def _values_line(self, template: str, source: str, text: str, line: int, document: Any,
                     path: tuple[object, ...]) -> tuple[str, int, int] | None:
        """For a node that `toYaml .Values.x` on template line `line` wrote: its line in the
        chart's values.yaml, when the rendered content is what values.yaml holds there (a
        piped stream names no values files: only the chart's own defaults can be checked)."""
        from kubegap_lint.helm.values_lines import ValuesIndex, argument

        lines = text.split("\n")
        keys = argument(lines, line)
        top = _top_chart(template, source)
        if not keys or top is None:
            return None
        if top not in self._values:
            from kubegap_lint.helm.render import RenderOptions

            self._values[top] = ValuesIndex(top, RenderOptions(), {})
        node: list[str | int] = []
        for segment in path:  # keys, and list items as (index, name)
            if isinstance(segment, str):
                node.append(segment)
            elif isinstance(segment, tuple) and segment and isinstance(segment[0], int):
                node.append(segment[0])
            else:
                return None
        given = self._values[top].place(template, keys, document, node)
        if given is None:
            return None
        column = _first_column(self._charts.template_text(given[0]) if self._charts else None, given[1])
        return given[0], given[1], column

    def _fallback(self, finding: Finding, template: str | None) -> Finding:
        """A finding that cannot be placed on a template line. On a rendered file it stays there
        (input faults, KG0xx, are about the rendered text itself); on a stream that is no file
        (stdin, an in-process render) it points at the template its `# Source:` names, else at
        its chart's Chart.yaml, line 1, approximate: every finding keeps a place in the
        repository (SARIF needs one), and the rendered place is kept beside it."""
        if finding.template is None:
            return finding
        path = finding.location.path
        is_file = self._is_file.get(path)
        if is_file is None:
            is_file = self._is_file[path] = os.path.isfile(path)
        if is_file:
            return finding
        target = template
        if target is None and self._charts is not None:
            chart = finding.template.replace("\\", "/").split("/", 1)[0]
            target = next((os.path.join(folder, "Chart.yaml") for folder in self._charts.charts(chart)), None)
        if target is None:
            return finding
        return replace(finding, location=Location(_display(target), 1, 1), rendered_location=finding.location,
                       approximate=True)
