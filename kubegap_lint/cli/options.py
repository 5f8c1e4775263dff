"""The options that several commands share, declared once."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

# The report formats (report/formats.py registers a writer for each); kept here as plain names
# so that building the command line imports no report module.
FORMAT_NAMES = ["text", "json", "sarif", "github", "gitlab", "junit"]


class FormatSpec(click.ParamType):
    """`--format NAME` or `--format NAME:FILE`: a format, and the file it alone is written to
    (without one: --output, else standard output). Given several times, one lint writes each."""

    name = "format[:file]"

    def convert(self, value: Any, param: Any, ctx: Any) -> tuple[str, str | None]:
        if isinstance(value, tuple):
            return value
        name, colon, path = str(value).partition(":")
        if name not in FORMAT_NAMES:
            self.fail(f"{name!r} is not one of {', '.join(map(repr, FORMAT_NAMES))}", param, ctx)
        if colon and not path:
            self.fail(f"{value!r} names no file after the colon", param, ctx)
        return name, path or None

    def shell_complete(self, ctx: Any, param: Any, incomplete: str) -> list[Any]:
        from click.shell_completion import CompletionItem

        return [CompletionItem(name) for name in FORMAT_NAMES if name.startswith(incomplete)]


def _apply(command: Any, decorators: list[Callable[[Any], Any]]) -> Any:
    for decorator in reversed(decorators):
        command = decorator(command)
    return command


def config_options(command: Any) -> Any:
    """--config, --no-config, --select, --ignore: shared by the commands that lint."""
    return _apply(command, [
        click.option("--config", "config_file", type=click.Path(dir_okay=False),
                     help="Use this configuration file instead of the discovered one."),
        click.option("--no-config", is_flag=True, help="Ignore configuration files."),
        click.option("--select", multiple=True, help="Only these rules (ids or names, comma-separated); the verdicts that an input was not"
                     " read (KG001, KG003, KG004, KG007, KG009) stay on."),
        click.option("--ignore", multiple=True, help="Skip these rules (ids or names, comma-separated)."),
    ])


def report_options(command: Any) -> Any:
    """--format, --output, --fail-on, --no-color, --sarif-root, --sarif-category."""
    return _apply(command, [
        click.option("--format", "fmt", type=FormatSpec(), multiple=True, default=["text"], show_default=True,
                     help="Output format, with an optional file: sarif:FILE (sarif: GitHub code scanning;"
                          " github: workflow commands; gitlab: GitLab Code Quality; junit: JUnit XML)."
                          " Repeat it for several reports from one lint."),
        click.option("--output", "-o", type=click.Path(dir_okay=False), help="Write the report to FILE."),
        click.option("--fail-on", type=click.Choice(["error", "warning", "note"]), default=None,
                     help="Lowest severity that makes the exit code 1 [default: warning]."),
        click.option("--no-color", "no_colour", is_flag=True, help="Never colour the text output."),
        click.option("--sarif-root", type=click.Path(exists=True, file_okay=False), default=None,
                     help="SARIF URIs are relative to DIR [default: the git top level, else the current directory]."),
        click.option("--sarif-category", default=None,
                     help="SARIF runs[0].automationDetails.id, for several uploads on one commit."),
    ])


class OutputChoices:
    """The choices about what a run prints and how it exits, shared by `lint` and `helm`
    (`output_options` packs them into one `choices` argument)."""

    def __init__(self, quiet: bool = False, statistics: bool = False, exit_zero: bool = False,
                 estimate: bool = True, allow_empty: bool = False) -> None:
        self.quiet = quiet
        self.statistics = statistics
        self.exit_zero = exit_zero
        self.estimate = estimate
        self.allow_empty = allow_empty


def output_options(command: Any) -> Any:
    """--quiet, --statistics, --exit-zero, --estimate/--no-estimate, --allow-empty: given to the
    command as one `choices: OutputChoices` argument (--stdin-filename is stdin_filename_option)."""
    import functools

    @functools.wraps(command)
    def packed(*args: Any, quiet: bool, statistics: bool, exit_zero: bool, estimate: bool,
               allow_empty: bool, **kwargs: Any) -> Any:
        return command(*args, choices=OutputChoices(quiet, statistics, exit_zero, estimate, allow_empty),
                       **kwargs)

    return _apply(packed, [
        click.option("--quiet", "-q", is_flag=True,
                     help="Print the findings only: no summary line, no interruption estimate."),
        click.option("--statistics", is_flag=True,
                     help="Print how many findings each rule gave instead of the findings (text format)."),
        click.option("--exit-zero", is_flag=True,
                     help="Exit 0 even when there are findings (input and usage errors still exit 2)."),
        click.option("--estimate/--no-estimate", default=True, show_default=True,
                     help="The 'Expected interruptions' block of the text report (docs/estimate.md)."),
        click.option("--allow-empty", is_flag=True,
                     help="Exit 0 on an input without any YAML document (by default an error: exit 2)."),
    ])


def stdin_filename_option(command: Any) -> Any:
    """--stdin-filename NAME: the name piped input (`-`) is reported under. Shared by the
    commands that read stdin (issue 16 uses the same definition for `lint`)."""
    return click.option(
        "--stdin-filename", "stdin_filename", metavar="NAME", default=None,
        help="Report piped input (-) as NAME (a file in the repository: SARIF points at it).")(command)


def _set_render_timeout(context: Any, parameter: Any, value: float | None) -> None:
    import sys

    # None: this run names none, and an earlier run's in this process must not stay (the servers
    # lint many times); a process that never rendered has nothing to forget (start-up: no import).
    if value is not None or "kubegap_lint.helm.worker" in sys.modules:
        from kubegap_lint.helm.worker import configure

        configure(command_line=value)


def render_timeout_option(command: Any) -> Any:
    """--render-timeout SECONDS: the wall-clock limit of one chart's render (helm/worker.py);
    it wins over the configuration's `render_timeout`. Not passed to the command."""
    return click.option(
        "--render-timeout", type=click.FloatRange(min=0.1, max=86400), default=None, metavar="SECONDS",
        expose_value=False, callback=_set_render_timeout,
        help="Stop a chart's render after SECONDS (an error for that chart) [default: 60].")(command)
