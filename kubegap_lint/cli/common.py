"""What every command does the same way: fail in one line, resolve settings, write a report."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from typing import Any, NoReturn

import click

EXIT_USAGE = 2


def fail(message: str) -> NoReturn:
    click.echo(f"kubegap-lint: {message}", err=True)
    sys.exit(EXIT_USAGE)


def colour_wanted(no_colour: bool, stream: Any) -> bool:
    if no_colour or os.environ.get("NO_COLOR"):
        return False
    isatty = getattr(stream, "isatty", None)
    return bool(isatty()) if callable(isatty) else False


def write(text: str | Iterable[str], output: str | None) -> None:
    """Write a report, given whole or in pieces (written as they come: a long report is never
    held in memory)."""
    pieces = [text] if isinstance(text, str) else text
    if output:
        try:
            with open(output, "w", encoding="utf-8", newline="\n") as handle:
                for piece in pieces:
                    handle.write(piece)
        except OSError as exc:
            fail(f"cannot write {output}: {exc.strerror}")
    else:
        if sys.stdout is None:
            fail("cannot write the report: standard output is closed")
        # sys.stdout itself (not click's text stream, which may wrap the bytes anew): main()
        # set it to write what the locale cannot encode as backslash escapes.
        stream: Any = sys.stdout
        try:
            for piece in pieces:
                stream.write(piece)
            stream.flush()
        except BrokenPipeError:
            raise  # the reader went away (`| head`): main() ends quietly
        except OSError as exc:
            _drop_stdout()
            fail(f"cannot write the report to standard output: {exc.strerror or exc}")


def _drop_stdout() -> None:
    """After a failed write, send what is still buffered nowhere: the exit must not fail again."""
    try:
        sys.stdout = open(os.devnull, "w", encoding="utf-8")
    except OSError:
        pass


def split_names(values: tuple[str, ...]) -> list[str]:
    return [part.strip() for value in values for part in value.split(",") if part.strip()]


def resolve_settings(paths: tuple[str, ...], config_file: str | None, no_config: bool,
                     select: tuple[str, ...], ignore: tuple[str, ...], fail_on: str | None = None,
                     baseline: str | None = None, no_baseline: bool = False) -> Any:
    """The run's settings (configuration, then the command line) and the policy catalog."""
    from kubegap_lint.catalog import cache
    from kubegap_lint.catalog.policies import load_catalog
    from kubegap_lint.config.load import check_rule_names, resolve

    cache.exclude_roots(paths)  # before anything reads a cache: none inside a linted tree
    resolved = resolve(paths, config_file, no_config, split_names(select), split_names(ignore),
                       fail_on, baseline, no_baseline)
    catalog = load_catalog(resolved.settings.policy_dirs)
    check_rule_names(resolved, catalog)
    return resolved, catalog


def report_and_exit(result: Any, linter: Any, fmt: str, output: str | None, no_colour: bool,
                    show_suppressed: bool, sarif_root: str | None, sarif_category: str | None) -> NoReturn:
    """Print the input errors, write the report in the chosen format, exit with the run's code."""
    from kubegap_lint.report.formats import ReportOptions, render
    from kubegap_lint.report.sanitize import safe_text

    for error in result.errors:  # paths and messages may hold control characters: escape them
        click.echo(f"kubegap-lint: {safe_text(error.display())}", err=True)
    options = ReportOptions(colour=not output and colour_wanted(no_colour, sys.stdout),
                            show_suppressed=show_suppressed, params=linter.params,
                            sarif_root=sarif_root, sarif_category=sarif_category)
    report = render(fmt, result, options)
    for warning in report.warnings:
        click.echo(f"kubegap-lint: {warning}", err=True)
    write(report.pieces, output)
    sys.exit(result.exit_code(linter.settings.fail_on))
