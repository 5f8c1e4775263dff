"""`kubegap-lint kustomize`: render kustomizations and lint them as they deploy, findings at the
base, patch or generator line that wrote each node (docs/kustomize.md).

Also the entry of the `kubegap-lint-kustomize` pre-commit hook (`--from-files`: the arguments
are changed files; every kustomization below the repository top whose render reads one of them
is rendered and linted once).
"""

from __future__ import annotations

import os
import sys

import click

from kubegap_lint.cli.common import fail, report_and_exit, resolve_settings
from kubegap_lint.cli.options import OutputChoices, config_options, output_options, report_options


@click.command("kustomize")
@click.argument("folders", nargs=-1)
@click.option("--kustomize", "kustomize_path", metavar="PATH", default=None,
              help="Render with this kubectl or kustomize binary [default: kustomize, else kubectl, on PATH].")
@click.option("--allow-unrendered", is_flag=True,
              help="Report a kustomization that cannot be rendered (KG009) as a note, not an error.")
@click.option("--from-files", is_flag=True,
              help="FOLDERS are changed files (as pre-commit passes them): lint every kustomization below"
                   " the repository top that reads one of them.")
@report_options
@config_options
@output_options
def kustomize_command(folders: tuple[str, ...], kustomize_path: str | None, allow_unrendered: bool,
                      from_files: bool, fmt: tuple[tuple[str, str | None], ...],
                      output: str | None, fail_on: str | None, select: tuple[str, ...], ignore: tuple[str, ...],
                      no_colour: bool, config_file: str | None = None, no_config: bool = False,
                      sarif_root: str | None = None, sarif_category: str | None = None,
                      choices: OutputChoices | None = None) -> None:
    """Render each kustomization FOLDER as `kubectl kustomize` does and lint the output."""
    from kubegap_lint.kustomize.tree import including, kustomization_file

    if from_files:
        from kubegap_lint.input.git import top_level

        if not folders:
            sys.exit(0)
        top = top_level(folders[0]) or os.curdir
        chosen = [os.path.relpath(f) for f in including(list(folders), top)]
        if not chosen:
            sys.exit(0)  # no changed file is read by a kustomization
    else:
        if not folders:
            fail("no kustomization: name a folder holding a kustomization.yaml (see --help)")
        for folder in folders:
            if not os.path.isdir(folder) or kustomization_file(folder) is None:
                fail(f"{folder}: not a folder holding a kustomization.yaml, kustomization.yml or Kustomization")
        chosen = list(dict.fromkeys(folders))
    from contextlib import ExitStack

    from kubegap_lint.engine import parallel
    from kubegap_lint.engine.inputs import allow_unrendered as allow_unrendered_inputs
    from kubegap_lint.engine.inputs import render_kustomizations
    from kubegap_lint.engine.run import Linter

    resolved, catalog = resolve_settings(tuple(chosen), config_file, no_config, select, ignore, fail_on)
    settings = resolved.settings
    settings.partial = True  # a kustomization is part of a repository, as a chart is
    if allow_unrendered:
        allow_unrendered_inputs(settings)
    linter = Linter(settings, catalog=catalog)
    choices = choices or OutputChoices()
    choices.allow_empty = True  # an empty render is said by the summary; a failed one is a KG009
    with ExitStack() as kept:
        sources = render_kustomizations([os.path.abspath(f) for f in chosen], kept, linter, kustomize_path)
        result = parallel.lint_sources(linter, sources, [])
    report_and_exit(result, linter, fmt, output, no_colour, False, sarif_root, sarif_category, choices)
