"""`kubegap-lint helm`: render charts with Helm, lint the output, report on the template files.

Charts render in-process with the Helm engine (the `kubegap-lint[helm]` extra); `--helm PATH`
runs a helm binary instead.

Also the entry of the `kubegap-lint-helm` pre-commit hook (`--from-files`: the arguments are
changed files; each chart they belong to is rendered once).
"""

from __future__ import annotations

import os
import sys
from contextlib import ExitStack
from typing import TYPE_CHECKING, Any, NoReturn

import click

from kubegap_lint.cli.common import fail, report_and_exit, resolve_settings
from kubegap_lint.cli.fixing import FixChoices, fix_options
from kubegap_lint.cli.options import (
    OutputChoices,
    config_options,
    output_options,
    render_timeout_option,
    report_options,
)
from kubegap_lint.core.model import InputError

if TYPE_CHECKING:
    from collections.abc import Callable

    from kubegap_lint.config.settings import ChartRender
    from kubegap_lint.helm.render import HelmMissing, RenderOptions


_RENDER_FLAGS = ("values", "sets", "set_strings", "set_files", "set_jsons", "set_literals", "release", "namespace",
                 "kube_version", "api_versions", "include_crds")


class _Request:
    """What the command line asks helm for: the render options, and whether any flag was given
    (without one, the configuration's `charts:` entries)."""

    def __init__(self, flags: dict[str, Any]) -> None:
        from kubegap_lint.helm.render import RenderOptions

        self.values: tuple[str, ...] = flags["values"]
        self.given = any(flags.values())
        self.options = RenderOptions(
            list(flags["values"]), list(flags["sets"]), flags["release"], flags["namespace"],
            list(flags["set_strings"]), list(flags["set_files"]), flags["kube_version"], list(flags["api_versions"]),
            flags["include_crds"], list(flags["set_jsons"]), list(flags["set_literals"]))


def _render_request(command: Any) -> Any:
    """The render flags given to the command as one `request: _Request` argument."""
    import functools

    @functools.wraps(command)
    def packed(*args: Any, **kwargs: Any) -> Any:
        flags = {name: kwargs.pop(name) for name in _RENDER_FLAGS}
        return command(*args, request=_Request(flags), **kwargs)

    return packed


@click.command("helm")
@click.argument("charts", nargs=-1)
@click.option("-f", "--values", "values", multiple=True, metavar="FILE",
              help="A values file for helm (repeatable).")
@click.option("--set", "sets", multiple=True, metavar="K=V", help="A value for helm (repeatable).")
@click.option("--set-string", "set_strings", multiple=True, metavar="K=V",
              help="A value kept a string (repeatable).")
@click.option("--set-file", "set_files", multiple=True, metavar="K=PATH",
              help="A value read from a file (repeatable).")
@click.option("--set-json", "set_jsons", multiple=True, metavar="K=JSON",
              help="A JSON value, or a JSON object of values (repeatable).")
@click.option("--set-literal", "set_literals", multiple=True, metavar="K=V",
              help="A value taken as it is, commas and braces included (repeatable).")
@click.option("--release", metavar="NAME", help="Release name [default: release-name, as helm template].")
@click.option("--namespace", "-n", metavar="NS", help="Release namespace [default: default].")
@click.option("--kube-version", metavar="VERSION", help="Kubernetes version for .Capabilities (e.g. v1.30.0).")
@click.option("--api-versions", "api_versions", multiple=True, metavar="GROUP/VERSION",
              help="An API version for .Capabilities (repeatable).")
@click.option("--include-crds", is_flag=True, help="Lint the chart's crds/ too (as helm template --include-crds).")
@click.option("--helm", "helm_path", metavar="PATH", default=None,
              help="Render with this helm binary instead of in-process (`--helm helm`: the one on PATH).")
@click.option("--keep-rendered", "keep_rendered", metavar="DIR", type=click.Path(file_okay=False),
              help="Write each chart's rendered stream to DIR/CHART.yaml; findings point there when no"
                   " template line holds them (SARIF related locations too).")
@click.option("--from-files", is_flag=True,
              help="CHARTS are files (as pre-commit passes them): lint each chart they belong to once.")
@click.option("--allow-missing-helm", is_flag=True,
              help="Pass (exit 0, with a note) instead of failing when Helm is not available.")
@click.option("--baseline", type=click.Path(dir_okay=False),
              help="Suppress the findings recorded in this baseline file (as for lint).")
@click.option("--no-baseline", is_flag=True, help="Ignore the configured baseline.")
@click.option("--repo-facts/--no-repo-facts", default=True, show_default=True,
              help="Read the cross-resource facts (PDBs, ConfigMaps, PVCs, DRA claims) of the rest of the"
                   " git work tree, as lint does.")
@report_options
@config_options
@output_options
@render_timeout_option
@fix_options
@_render_request
def helm_command(charts: tuple[str, ...], request: _Request, helm_path: str | None,
                 keep_rendered: str | None, from_files: bool,
                 allow_missing_helm: bool, fmt: tuple[tuple[str, str | None], ...], output: str | None, fail_on: str | None,
                 select: tuple[str, ...], ignore: tuple[str, ...], no_colour: bool,
                 config_file: str | None = None, no_config: bool = False, sarif_root: str | None = None,
                 sarif_category: str | None = None, choices: OutputChoices | None = None,
                 baseline: str | None = None, no_baseline: bool = False, repo_facts: bool = True,
                 fixing: FixChoices | None = None) -> None:
    """Render CHART as `helm template` does and lint the output; findings point at the templates."""
    choices = choices or OutputChoices()
    chosen = _chosen_charts(charts, from_files)
    helm = _renderer(helm_path, allow_missing_helm, len(chosen), wait=False)
    # The configuration is found from the first chart's folder, as for `lint` (docs/configuration.md).
    resolved, catalog = resolve_settings(tuple(chosen), config_file, no_config, select, ignore, fail_on,
                                         baseline, no_baseline)
    settings = resolved.settings
    if repo_facts:  # the PDBs, ConfigMaps and claims around the chart, as `lint` reads them
        from kubegap_lint.engine.inputs import repository_context

        settings.context = repository_context(tuple(c for c in chosen if os.path.exists(c)), [], settings.exclude)
    if helm is None:
        from kubegap_lint.helm.worker import configure

        configure(config=settings.render_timeout)
    # Render flags on the command line win; without any, the configuration's `charts:` entries.
    options, flags = request.options, request.given
    from kubegap_lint.engine.run import Linter
    from kubegap_lint.helm.render import configured

    settings.chart_dirs = [chart for chart in chosen if os.path.isdir(chart)]
    settings.partial = True  # a chart is part of a repository: exemptions without paths are not judged

    def missing(exc: HelmMissing) -> NoReturn:  # the engine's first line said it is not installed
        _missing_engine(exc, allow_missing_helm, len(chosen))

    def lint() -> tuple[Any, Any]:
        assert choices is not None
        linter = Linter(settings, catalog=catalog)
        renders = _Renders(helm, keep_rendered, linter, missing)
        for chart in chosen:
            renders.chart(chart, [(options, None)] if flags else configured(chart, settings.charts))
        choices.allow_empty = choices.allow_empty or bool(linter.unlinted)  # a KG009 says why nothing was read
        result = linter.lint_texts(renders.rendered)
        result.errors[:0] = renders.errors
        return result, linter

    result, linter = lint()
    fixes = None
    fixing = fixing or FixChoices()
    if fixing.active:  # a chart's fixes: its values files, never a template (fix/helm.py)
        from kubegap_lint.cli import fixing as fix_stage

        result, linter, fixes = fix_stage.run(tuple(chosen), fixing, None, None, lint, result, linter,
                                              request.values)
    report_and_exit(result, linter, fmt, output, no_colour, False, sarif_root, sarif_category, choices, fixes)


def _chosen_charts(charts: tuple[str, ...], from_files: bool) -> list[str]:
    """The charts to render, each once: named, or (--from-files) those the files belong to."""
    from kubegap_lint.helm.render import charts_of

    if from_files:
        chosen = charts_of(list(charts))
        if not chosen:
            sys.exit(0)  # no changed file belongs to a chart
        return chosen
    if not charts:
        fail("no chart: name a chart folder, archive or reference (see --help)")
    return list(dict.fromkeys(charts))


def _renderer(helm_path: str | None, allow_missing_helm: bool, count: int, wait: bool = True) -> str | None:
    """The helm binary --helm names, or None for the engine (started; with `wait`, loaded);
    when neither is there, exit 2 (0 with --allow-missing-helm, with a note)."""
    from kubegap_lint.helm.render import HelmMissing, find_helm
    from kubegap_lint.helm.worker import installed, start

    try:
        helm = find_helm(helm_path) if helm_path else None
        if helm is None:
            installed() if wait else start()
    except HelmMissing as exc:
        _missing_engine(exc, allow_missing_helm, count)
    return helm


def _missing_engine(exc: HelmMissing, allow_missing_helm: bool, count: int) -> NoReturn:
    """Exit 2 saying what is missing (0 with --allow-missing-helm, with a note)."""
    if allow_missing_helm:
        click.echo(f"kubegap-lint: {exc}; {count} chart(s) not linted (--allow-missing-helm)", err=True)
        sys.exit(0)
    fail(str(exc))


class _Renders:
    """The renders of a run, as `lint` reads a chart (engine/inputs.py): each rendered stream
    with its exact template lines; what was not linted (a failed render, a library chart, a
    subchart charts/ lacks) a KG009 of the linter's run."""

    def __init__(self, helm: str | None, keep_rendered: str | None, linter: Any,
                 missing: Callable[[HelmMissing], NoReturn]) -> None:
        self.helm = helm
        self.keep_rendered = keep_rendered
        self.linter = linter
        self.missing = missing  # exits saying the engine is not installed
        self.warm = True  # the linter's first-workload work still to do, while the engine loads and renders
        self.rendered: list[tuple[str, str]] = []
        self.errors: list[InputError] = []

    def chart(self, chart: str, runs: list[tuple[RenderOptions, ChartRender | None]]) -> None:
        from kubegap_lint.helm.chartcopy import chart_to_render

        with ExitStack() as kept:
            try:  # the engine renders a checked copy (chartcopy.py); a named helm binary, the chart
                folder, refused = (chart, []) if self.helm else kept.enter_context(chart_to_render(chart))
            except OSError as exc:
                self.errors.append(InputError(chart, f"cannot be rendered: {exc}"))
                return
            self.errors.extend(refused)
            for options, entry in runs:
                self._render(chart, folder, options, entry, len(runs))

    def _render(self, chart: str, folder: str, options: RenderOptions, entry: ChartRender | None, count: int) -> None:
        from kubegap_lint.engine.inputs import nothing_to_lint, render_failed, subcharts_left_out
        from kubegap_lint.helm.dependencies import MissingSubchart
        from kubegap_lint.helm.marked import later_exact_lines
        from kubegap_lint.helm.render import HelmError, HelmMissing, NotLinted, RequestError, render, shown_name
        from kubegap_lint.helm.worker import render as render_in_process

        unlinted = self.linter.unlinted
        try:
            missing: list[MissingSubchart] = []
            text = (render(self.helm, folder, options) if self.helm
                    else render_in_process(folder, options, missing, shown=chart, meanwhile=self._warm_up))
        except NotLinted as exc:
            unlinted.append(nothing_to_lint(chart, exc))
            return
        except HelmMissing as exc:
            self.missing(exc)
        except RequestError as exc:  # the command line's values or flags: an input error, exit 2
            where = f"{entry.origin[0]}:{entry.origin[1]}: " if entry is not None and entry.origin else ""
            self.errors.append(InputError((exc.path or chart).replace(folder, chart),
                                          f"{where}{str(exc).replace(folder, chart)}", exc.line))
            return
        except HelmError as exc:  # the chart: as `lint` says it, a KG009
            unlinted.append(render_failed(chart, folder, exc, entry))
            return
        unlinted.extend(subcharts_left_out(chart, missing))  # said at Chart.yaml; the rest is linted
        shown = (_kept(self.keep_rendered, chart, text, self.rendered) if self.keep_rendered
                 else shown_name(chart, entry, count))
        self.rendered.append((shown, text))
        if not self.helm:  # the tool renders: it can learn the exact template lines
            self.linter.template_places[shown] = later_exact_lines(chart, options, text)


    def _warm_up(self) -> None:
        if self.warm:
            self.warm = False
            self.linter.warm_up()


def _kept(folder: str, chart: str, text: str, done: list[tuple[str, str]]) -> str:
    """Write a render to DIR/<chart folder name>.yaml (numbered when two charts share a name);
    the path, as findings show it."""
    name = os.path.basename(os.path.normpath(chart)).removesuffix(".tgz") or "chart"
    path = os.path.join(folder, f"{name}.yaml")
    taken = {shown for shown, _ in done}
    number = 2
    while os.path.relpath(path) in taken or path in taken:
        path = os.path.join(folder, f"{name}-{number}.yaml")
        number += 1
    try:
        os.makedirs(folder, exist_ok=True)
        with open(path, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
    except OSError as exc:
        fail(f"cannot write {path}: {exc.strerror or exc}")
    relative = os.path.relpath(path)
    return path if relative.startswith("..") else relative.replace(os.sep, "/")
