"""What every command does the same way: fail in one line, resolve settings, write a report."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Iterator
from typing import Any, NoReturn

import click

EXIT_USAGE = 2


def fail(message: str) -> NoReturn:
    """One line on stderr and exit 2; controls and line breaks in the message (an argument
    `x\n::error::y`) are escaped: no line of ours starts with a workflow command."""
    from kubegap_lint.report.sanitize import safe_text

    click.echo(f"kubegap-lint: {safe_text(message)}", err=True)
    sys.exit(EXIT_USAGE)


def colour_wanted(no_colour: bool, stream: Any) -> bool:
    if no_colour or os.environ.get("NO_COLOR"):
        return False
    isatty = getattr(stream, "isatty", None)
    return bool(isatty()) if callable(isatty) else False


def write(text: str | Iterable[str], output: str | None) -> None:
    """Write a report, given whole or in pieces (written as they come: a long report is never
    held in memory)."""
    pieces = [text] if isinstance(text, str) else _joined(text)
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


_JOIN_PIECES = 32  # pieces joined into one write (a JSON report's piece is one finding, ~1.5 KB): ~50 KB


def _joined(pieces: Iterable[str]) -> Iterator[str]:
    """The pieces, a few dozen joined into one text: a write each costs more than the join."""
    batch: list[str] = []
    for piece in pieces:
        batch.append(piece)
        if len(batch) >= _JOIN_PIECES:
            yield "".join(batch)
            batch = []
    if batch:
        yield "".join(batch)


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
    import gc

    # Start-up is over (main() paused the collector while modules and the catalog loaded): what
    # it made lives as long as the run, so later collections need not look at it again.
    gc.freeze()
    gc.enable()
    return resolved, catalog


def input_is_empty(result: Any) -> bool:
    """No YAML document with content anywhere in the input (nothing read, an empty stdin, only
    comments): the sign of a broken pipe upstream, e.g. a `helm template` that failed."""
    stats = result.stats
    return not result.errors and stats.documents == stats.empty_documents


def report_and_exit(result: Any, linter: Any, fmt: Any, output: str | None, no_colour: bool,
                    show_suppressed: bool, sarif_root: str | None, sarif_category: str | None,
                    choices: Any = None, fixes: Any = None) -> NoReturn:
    """Print the input errors, write the report in each chosen format, exit with the run's code.

    `fmt` is a format's name or the (name, file or None) pairs of --format. When no report goes
    to standard output the summary line goes to stderr (the terminal is never left silent); with
    --quiet there is none; --exit-zero turns exit code 1 into 0 (2 stays 2). `fixes` (a
    fix.files.FixLookup) gives the findings' fixes to the JSON and SARIF reports."""
    from kubegap_lint.cli.options import OutputChoices
    from kubegap_lint.report.formats import ReportOptions, render
    from kubegap_lint.report.sanitize import safe_text

    choices = choices or OutputChoices()
    for error in result.errors:  # paths and messages may hold control characters: escape them
        click.echo(f"kubegap-lint: {safe_text(error.display())}", err=True)
    if not choices.allow_empty and input_is_empty(result):
        fail("the input holds no YAML document (an empty stdin, e.g. from a `helm template` that"
             " failed, or no manifest in the named folders); pass --allow-empty to accept that")
    specs = report_targets([(fmt, None)] if isinstance(fmt, str) else list(fmt), output)
    if choices.statistics and any(name != "text" for name, _ in specs):
        fail(f"--statistics is for the text format, not {next(n for n, _ in specs if n != 'text')}")
    for name, target in specs:  # one lint, each report written from the same result
        options = ReportOptions(colour=not target and colour_wanted(no_colour, sys.stdout),
                                show_suppressed=show_suppressed, params=linter.params,
                                sarif_root=sarif_root, sarif_category=sarif_category,
                                summary=not choices.quiet, estimates=choices.estimate and not choices.quiet and not choices.statistics,
                                statistics=choices.statistics, fixes=fixes)
        report = render(name, result, options)
        for warning in report.warnings:
            click.echo(f"kubegap-lint: {warning}", err=True)
        write(report.pieces, target)
    files = [target for _, target in specs if target]
    if len(files) == len(specs) and not choices.quiet:
        from kubegap_lint.report.text import summary_line

        shown = ", ".join(safe_text(f) for f in files)
        click.echo(f"{summary_line(result)}; report{'s' if len(files) > 1 else ''} written to {shown}", err=True)
    code = result.exit_code(linter.settings.fail_on)
    sys.exit(0 if code == 1 and choices.exit_zero else code)


def report_targets(specs: list[tuple[str, str | None]], output: str | None) -> list[tuple[str, str | None]]:
    """Each format and where it goes (a file, or None for standard output): a format without
    its own file goes to --output, else to standard output; two reports in one place is an error."""
    targets = [(name, path or output) for name, path in specs]
    seen: dict[str | None, str] = {}
    for name, target in targets:
        if target in seen:
            where = f"the file {target}" if target else "standard output"
            fail(f"--format {seen[target]} and --format {name} would both write to {where}:"
                 f" give one its own file (--format {name}:FILE)")
        seen[target] = name
    return targets

