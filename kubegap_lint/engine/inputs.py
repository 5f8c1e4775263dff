"""What a run reads, decided in one place for every command that lints a tree (`lint`,
`baseline create`): the files and stdin named, the charts among them rendered by the Helm
engine, the kustomizations rendered by kustomize (kustomize/inputs.py), the facts of the rest of the git work tree, and, for each input that could not be
rendered, a KG009 finding of its own at its entry file. A run never passes over an input it
did not lint: its verdict does not depend on what happens to be installed.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from typing import TYPE_CHECKING, Any

from kubegap_lint.core.model import InputError, Position, Severity
from kubegap_lint.core.record import record
from kubegap_lint.engine.run import Linter, LintResult
from kubegap_lint.input.read import InputFault

if TYPE_CHECKING:
    from kubegap_lint.catalog.policies import Catalog
    from kubegap_lint.config.settings import ChartRender, Settings
    from kubegap_lint.helm.dependencies import MissingSubchart
    from kubegap_lint.helm.render import HelmError, NotLinted
    from kubegap_lint.input.sources import Source
    from kubegap_lint.workloads.repofacts import RepoContext

NOT_RENDERED = "input-not-rendered"  # KG009
NOT_RENDERED_ID = "KG009"


def not_rendered(entry: str, line: int | None, column: int, why: str, cap: Severity | None = None) -> InputFault:
    """The fault of an input that was not linted because it could not be rendered, at its entry
    file (a chart's Chart.yaml; a kustomization's kustomization.yaml) or the line that failed;
    `cap` makes it at most a note (what is left out by design, not by failure)."""
    return InputFault(NOT_RENDERED, why, entry, Position(line or 1, column), cap=cap)


# Helm names the template that failed as CHARTNAME/templates/x.yaml:LINE:COLUMN (the chart's
# name, not its folder's; a subchart's as CHARTNAME/charts/SUB/templates/...), its column
# counted in bytes from 0 (text/template's ErrorContext).
_FAILED_AT = re.compile(r"(?<![\w./-])[\w.-]+/((?:charts/[\w.-]+/)*templates/[^\s:()]+):(\d+):(\d+)")


def failed_at(chart: str, message: str) -> tuple[str, int, int]:
    """Where a failed render points: the template line Helm names when that file is in the
    chart, else the chart's Chart.yaml, line 1."""
    match = _FAILED_AT.search(message)
    if match is not None:
        inside = match.group(1)
        if ".." not in inside.split("/") and os.path.isfile(os.path.join(chart, *inside.split("/"))):
            path = os.path.normpath(os.path.join(chart, inside)).replace(os.sep, "/")
            return path, int(match.group(2)), int(match.group(3)) + 1  # Go counts columns from 0
    return chart_entry(chart), 1, 1


def render_failed(chart: str, folder: str, error: HelmError, entry: ChartRender | None, hint: str = "") -> InputFault:
    """The KG009 error of a chart whose render failed (`folder`: what was rendered, the chart or
    its checked copy), at the line the error names, else at the chart's Chart.yaml."""
    where = f" ({entry.origin[0]}:{entry.origin[1]})" if entry is not None and entry.origin else ""
    message = str(error).replace(folder, chart)
    at = (error.path.replace(folder, chart), error.line or 1, 1) if error.path else failed_at(chart, message)
    return not_rendered(*at, f"chart {chart} was not linted{where}: {message}{hint}")


def nothing_to_lint(chart: str, note: NotLinted) -> InputFault:
    """The KG009 note of a chart that holds nothing to lint (a library chart, an empty render)."""
    return not_rendered(chart_entry(chart), 1, 1, f"chart {chart} was not linted: {note}", cap=Severity.NOTE)


def subcharts_left_out(chart: str, missing: list[MissingSubchart]) -> list[InputFault]:
    """The KG009 notes of the subcharts the values enable that charts/ lacks, each at its
    entry in Chart.yaml (the rest of the chart is rendered and linted)."""
    return [not_rendered(chart_entry(chart), subchart.line, 1, subchart.message(chart), cap=Severity.NOTE)
            for subchart in missing]


def allow_unrendered(settings: Settings) -> None:
    """--allow-unrendered: KG009 becomes a note, unless the configuration gives it a severity."""
    if not any(key in settings.severity for key in (NOT_RENDERED_ID, NOT_RENDERED)):
        settings.severity[NOT_RENDERED_ID] = Severity.NOTE


def chart_entry(chart: str) -> str:
    """A chart's Chart.yaml as findings show it (forward slashes, no leading ./)."""
    return os.path.normpath(os.path.join(chart, "Chart.yaml")).replace(os.sep, "/")


@record
class Inputs:
    """What a run over a tree reads: its linter (holding the faults of what was not rendered),
    the sources (rendered charts and kustomizations included), the errors met so far and the
    charts and kustomizations found."""

    linter: Linter
    sources: list[Source]
    errors: list[InputError]
    charts: list[str]
    kustomizations: list[str]  # the kustomization folders rendered (or each a KG009)


def lint_tree(linter: Linter, path: str) -> LintResult:
    """Lint one path as `kubegap-lint PATH` reads it, with a linter made already (a policy's
    folder examples), without the facts of the work tree around it."""
    chart_dirs = list(linter.settings.chart_dirs)
    try:
        with lint_inputs((path,), linter.settings, linter.catalog, repo_facts=False, linter=linter) as inputs:
            return inputs.linter.lint_sources(inputs.sources, inputs.errors)
    finally:  # the linter serves other runs: as it was given
        linter.settings.chart_dirs[:] = chart_dirs
        linter.unlinted, linter.template_places, linter.kustomize_roots = [], {}, {}


@contextmanager
def lint_inputs(paths: tuple[str, ...], settings: Settings, catalog: Catalog, *, stdin_name: str | None = None,
                repo_facts: bool = True, skip_charts: bool = False, follow_outside: bool = False,
                config_paths: tuple[str, ...] | None = None, linter: Linter | None = None,
                kustomize_path: str | None = None) -> Iterator[Inputs]:
    """The inputs of a run, rendered charts and kustomizations kept in a scratch folder until the
    block ends; the linter is made once the work tree's facts are known (or given, and then
    reused)."""

    from kubegap_lint.helm.render import split_chart_sources
    from kubegap_lint.input.sources import discover

    sources, errors = discover(paths, settings.exclude, stdin_name, follow_outside=follow_outside)
    if repo_facts:
        settings.context = repository_context(config_paths or paths, sources, settings.exclude)
    if linter is None:
        linter = Linter(settings, catalog=catalog)
    else:
        linter.unlinted = []
        linter.template_places = {}
        linter.kustomize_roots = {}
    from kubegap_lint.kustomize.inputs import split_kustomizations

    plain, kustomizations = split_kustomizations(paths, sources)
    plain, charts = split_chart_sources(plain)
    with ExitStack() as kept:
        if kustomizations:
            plain += render_kustomizations(kustomizations, kept, linter, kustomize_path)
        if charts and not skip_charts:
            from kubegap_lint.core.tempdir import scratch_folder

            # Rendered files go to a private folder in the system's temp folder, never the
            # current one (tempfile's fallback); none usable: each chart is an input error.
            try:
                scratch = kept.enter_context(scratch_folder("charts-"))
            except OSError as exc:
                errors.extend(InputError(chart, f"cannot be rendered: {exc}") for chart in charts)
            else:
                plain += render_charts(charts, scratch, linter, settings.charts, errors)
            settings.chart_dirs.extend(charts)
        yield Inputs(linter, plain, errors, charts, kustomizations)


def render_kustomizations(folders: list[str], kept: ExitStack, linter: Linter,
                          kustomize_path: str | None) -> list[Source]:
    """Each kustomization rendered (kept until `kept` ends, its origins in the linter); one that
    cannot be rendered (no renderer, a remote base or a path out of the repository, a render
    that fails) is a KG009 fault of the linter's run at its kustomization file or the line
    that failed."""
    from kubegap_lint.kustomize.inputs import rendered

    def unrendered(path: str, line: int, column: int, why: str) -> None:
        linter.unlinted.append(not_rendered(path, line, column, why))

    return rendered(folders, kept, linter.kustomize_roots, unrendered, kustomize_path)


def render_charts(charts: list[str], scratch: str, linter: Linter, renders: list[ChartRender],
                  errors: list[InputError]) -> list[Source]:
    """Each chart rendered by the engine (in its child process, helm/worker.py), as the
    configuration's `charts:` entries say or with its default values (a file in `scratch`, read
    as a source); a chart that cannot be rendered
    (no Helm engine, or a render that fails) is a KG009 fault of the linter's run instead."""
    from kubegap_lint.helm.chartcopy import chart_to_render
    from kubegap_lint.helm.marked import later_exact_lines
    from kubegap_lint.helm.render import NEEDS_VALUES_HINT, HelmError, HelmMissing, NotLinted, configured, shown_name
    from kubegap_lint.helm.worker import RenderStopped, configure, installed, render
    from kubegap_lint.input.sources import Source

    try:
        installed()
    except HelmMissing:
        for chart in charts:
            linter.unlinted.append(not_rendered(
                chart_entry(chart), 1, 1, f"chart {chart} was not linted: the Helm engine is not installed"
                " (`pip install 'kubegap-lint[helm]'`), or run `kubegap-lint helm --helm PATH` with a helm binary"))
        return []
    configure(config=linter.settings.render_timeout)
    found: list[Source] = []
    for chart in charts:
        runs = configured(chart, renders)
        # Helm renders a checked copy (chartcopy.py): no link out of the chart, bounded; what it
        # refuses is an input error at Chart.yaml, and the rest of the chart is rendered.
        with chart_to_render(chart) as (folder, refused):
            errors.extend(refused)
            for options, entry in runs:
                try:
                    missing: list[MissingSubchart] = []
                    text = render(folder, options, missing, shown=chart)  # in the engine's child process
                except NotLinted as exc:  # a library chart, or one that renders nothing: a note
                    linter.unlinted.append(nothing_to_lint(chart, exc))
                    continue
                except HelmError as exc:
                    hint = (NEEDS_VALUES_HINT if entry is None and exc.path is None
                            and not isinstance(exc, RenderStopped) else "")
                    linter.unlinted.append(render_failed(chart, folder, exc, entry, hint))
                    continue
                # a subchart left out is said where Chart.yaml declares it; the rest is linted
                linter.unlinted.extend(subcharts_left_out(chart, missing))
                path = os.path.join(scratch, f"{len(found)}.yaml")
                with open(path, "w", encoding="utf-8", newline="\n") as handle:
                    handle.write(text)
                shown = shown_name(chart, entry, len(runs))
                linter.template_places[shown] = later_exact_lines(chart, options, text)
                found.append(Source(shown, path))
    return found


def repository_context(paths: tuple[str, ...], sources: list[Any], excludes: list[str]) -> RepoContext | None:
    """The facts of the rest of the git work tree for a partial run (workloads/repofacts.py);
    a chart's files are not manifests until rendered, so they give none."""
    from kubegap_lint.helm.render import chart_root
    from kubegap_lint.workloads.repofacts import repository_context as context_of

    in_chart: dict[str, bool] = {}  # by folder: a file's chart is its folder's (the tree's files share few)

    def skip(path: str) -> bool:
        folder = os.path.dirname(os.path.abspath(path))
        if folder not in in_chart:
            in_chart[folder] = chart_root(path) is not None
        return in_chart[folder]

    return context_of(paths, sources, excludes, skip)
