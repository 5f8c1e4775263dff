"""`kubegap-lint helm`: render charts with helm, lint the output, report on the template files.

Also the entry of the `kubegap-lint-helm` pre-commit hook (`--from-files`: the arguments are
changed files; each chart they belong to is rendered once).
"""

from __future__ import annotations

import os
import sys

import click

from kubegap_lint.cli.common import fail, report_and_exit, resolve_settings
from kubegap_lint.cli.options import OutputChoices, config_options, output_options, report_options


@click.command("helm")
@click.argument("charts", nargs=-1)
@click.option("-f", "--values", "values", multiple=True, metavar="FILE",
              help="A values file for helm (repeatable).")
@click.option("--set", "sets", multiple=True, metavar="K=V", help="A value for helm (repeatable).")
@click.option("--release", metavar="NAME", help="Release name passed to helm template.")
@click.option("--namespace", "-n", metavar="NS", help="Namespace passed to helm template.")
@click.option("--helm", "helm_path", metavar="PATH", help="The helm binary [default: helm on PATH].")
@click.option("--from-files", is_flag=True,
              help="CHARTS are files (as pre-commit passes them): lint each chart they belong to once.")
@click.option("--allow-missing-helm", is_flag=True,
              help="Pass (exit 0, with a note) instead of failing when no helm binary exists.")
@report_options
@config_options
@output_options
def helm_command(charts: tuple[str, ...], values: tuple[str, ...], sets: tuple[str, ...],
                 release: str | None, namespace: str | None, helm_path: str | None, from_files: bool,
                 allow_missing_helm: bool, fmt: str, output: str | None, fail_on: str | None,
                 select: tuple[str, ...], ignore: tuple[str, ...], no_colour: bool,
                 config_file: str | None = None, no_config: bool = False, sarif_root: str | None = None,
                 sarif_category: str | None = None, choices: OutputChoices | None = None) -> None:
    """Render CHART with `helm template` and lint the output; findings point at the templates."""
    from kubegap_lint.helm.render import HelmError, HelmMissing, RenderOptions, charts_of, find_helm, render

    if from_files:
        chosen = charts_of(list(charts))
        if not chosen:
            sys.exit(0)  # no changed file belongs to a chart
    else:
        if not charts:
            fail("no chart: name a chart folder, archive or reference (see --help)")
        chosen = list(dict.fromkeys(charts))
    try:
        helm = find_helm(helm_path)
    except HelmMissing as exc:
        if allow_missing_helm:
            click.echo(f"kubegap-lint: {exc}; {len(chosen)} chart(s) not linted (--allow-missing-helm)",
                       err=True)
            sys.exit(0)
        fail(str(exc))
        return

    from kubegap_lint.core.model import InputError
    from kubegap_lint.engine.run import Linter

    options = RenderOptions(list(values), list(sets), release, namespace)
    rendered: list[tuple[str, str]] = []
    errors: list[InputError] = []
    for chart in chosen:
        try:
            rendered.append((f"<helm template {chart}>", render(helm, chart, options)))
        except HelmMissing as exc:
            fail(str(exc))
        except HelmError as exc:
            errors.append(InputError(chart, str(exc)))

    # The configuration is found from the first chart's folder, as for `lint` (docs/configuration.md).
    resolved, catalog = resolve_settings(tuple(chosen), config_file, no_config, select, ignore, fail_on)
    settings = resolved.settings
    settings.chart_dirs = [chart for chart in chosen if os.path.isdir(chart)]
    settings.partial = True  # a chart is part of a repository: exemptions without paths are not judged
    linter = Linter(settings, catalog=catalog)
    result = linter.lint_texts(rendered)
    result.errors[:0] = errors
    report_and_exit(result, linter, fmt, output, no_colour, False, sarif_root, sarif_category, choices)
