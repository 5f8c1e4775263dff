"""The command line: wires the stages and nothing else.

`kubegap-lint PATHS...` lints (the `lint` subcommand is implied); other subcommands list and
explain rules. An existing path wins over a subcommand's name (`kubegap-lint config` lints the
folder `config`, where kubebuilder projects keep their manifests) unless the words after it are
that subcommand's own (`config show`, `helm --from-files`); `kubegap-lint lint PATHS` is the
explicit form, for scripts (docs/command-line.md). Every error a user can cause ends in one line
on stderr and exit code 2; no traceback reaches the terminal.
"""

from __future__ import annotations

import gc
import os
import sys
from typing import Any

import click

from kubegap_lint import __version__
from kubegap_lint.cli.common import EXIT_USAGE, fail, report_and_exit, resolve_settings
from kubegap_lint.cli.fixing import FixChoices, capture_stdin, fix_options
from kubegap_lint.cli.options import (
    OutputChoices,
    config_options,
    output_options,
    render_timeout_option,
    report_options,
    stdin_filename_option,
)
from kubegap_lint.core.errors import KubegapError


def _parses_as_lint(args: list[str]) -> bool:
    """The arguments are a valid `lint` command line whose every path exists (or is -)."""
    parser = lint_command.make_parser(click.Context(lint_command))
    try:
        values, _, _ = parser.parse_args(list(args))
    except click.UsageError:
        return False
    return all(path == "-" or os.path.exists(path) for path in values.get("paths") or ())


def _no_such_command(word: str, commands: list[str]) -> None:
    """A word that is neither a path nor a subcommand but is spelt like one: say which."""
    import difflib

    close = difflib.get_close_matches(word, [*commands, "lint"], n=1, cutoff=0.75)
    if close:
        fail(f"no such file, folder or command '{word}': did you mean `kubegap-lint {close[0]}`?")


class _DefaultLintGroup(click.Group):
    """Treat `kubegap-lint PATH...` as `kubegap-lint lint PATH...`, also when PATH is named
    like a subcommand: an existing path wins, unless the rest of the line only makes sense as
    that subcommand (`config show`, `helm --from-files chart/x`, `explain KG101`)."""

    # Subcommands defined at their first use: a lint never builds `helm`'s thirty options.
    lazy = {"helm": ("kubegap_lint.cli.helm", "helm_command"),
            "kustomize": ("kubegap_lint.cli.kustomize", "kustomize_command"),
            **{name: ("kubegap_lint.cli.commands", attribute) for name, attribute in (
                ("config", "config_group"), ("baseline", "baseline_group"), ("policies", "policies_group"),
                ("rules", "rules_command"), ("explain", "explain_command"))},
            "mcp": ("kubegap_lint.cli.serve", "mcp_command"), "server": ("kubegap_lint.cli.serve", "server_command")}

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and args[0] not in ("--version", "--help", "-h", "lint"):
            first = args[0]
            known = first in self.commands or first in self.lazy
            if not known and not first.startswith("-") and not os.path.exists(first):
                _no_such_command(first, self.list_commands(ctx))
            if not known or (os.path.exists(first) and _parses_as_lint(args)):
                args = ["lint", *args]
        return super().parse_args(ctx, args)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name != "lint":
            gc.enable()  # start-up is over for the other commands (main() paused the collector)
        if cmd_name in self.lazy and cmd_name not in self.commands:
            import importlib

            module, name = self.lazy[cmd_name]
            self.add_command(getattr(importlib.import_module(module), name), cmd_name)
        return super().get_command(ctx, cmd_name)

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(self.commands) | set(self.lazy))


@click.group(cls=_DefaultLintGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="kubegap-lint")
def cli() -> None:
    """Find the resilience gaps of GPU workloads in Kubernetes manifests and Helm output.

    `kubegap-lint PATH...` lints files, folders (recursively) and `-` (stdin).
    """


@cli.command("lint")
@click.argument("paths", nargs=-1)
@report_options
@config_options
@output_options
@click.option("--baseline", type=click.Path(dir_okay=False),
              help="Suppress the findings recorded in this baseline file.")
@click.option("--no-baseline", is_flag=True, help="Ignore the configured baseline.")
@click.option("--show-suppressed", is_flag=True, help="List suppressed findings in text output.")
@click.option("--chart-dir", "chart_dirs", multiple=True, type=click.Path(file_okay=False),
              help="Where to find the charts that `# Source:` lines name [default: below the current folder].")
@click.option("--skip-chart-templates", is_flag=True,
              help="Pass over files in a chart's templates/ folder (they are not YAML until rendered).")
@click.option("--repo-facts/--no-repo-facts", default=True, show_default=True,
              help="When PATHS are part of a git work tree, read the cross-resource facts (PDBs, ConfigMaps,"
                   " PVCs, DRA claims) of the whole tree; findings are still reported for PATHS only.")
@click.option("--jobs", "-j", type=click.IntRange(min=0), default=1, show_default=True,
              help="Worker processes for inputs over 1 MB (0: one per CPU). Same output; one"
                   " process streams with bounded memory, workers hold the whole input.")
@click.option("--follow-symlinks-out", is_flag=True,
              help="Read symbolic links to files outside the linted tree (skipped with a note by default).")
@click.option("--staged", is_flag=True,
              help="PATHS are a commit's changed files (the pre-commit hook; none is no error): also report"
                   " the findings its staged changes to PDBs, ConfigMaps, autoscalers or runtimes, deletions"
                   " included, cause on the repository's other files.")
@click.option("--allow-unrendered", is_flag=True,
              help="Report a chart or kustomization that cannot be rendered (KG009) as a note, not an error.")
@click.option("--kustomize", "kustomize_path", metavar="PATH", default=None,
              help="Render kustomizations with this kubectl or kustomize binary [default: kustomize, else"
                   " kubectl, on PATH].")
@stdin_filename_option
@render_timeout_option
@fix_options
def lint_command(paths: tuple[str, ...], fmt: tuple[tuple[str, str | None], ...], output: str | None, fail_on: str | None,
                 config_file: str | None, no_config: bool, select: tuple[str, ...],
                 ignore: tuple[str, ...], baseline: str | None, no_baseline: bool,
                 show_suppressed: bool, no_colour: bool, chart_dirs: tuple[str, ...] = (),
                 skip_chart_templates: bool = False, sarif_root: str | None = None,
                 sarif_category: str | None = None, jobs: int = 1, repo_facts: bool = True,
                 choices: OutputChoices | None = None, stdin_filename: str | None = None,
                 follow_symlinks_out: bool = False, allow_unrendered: bool = False, staged: bool = False,
                 kustomize_path: str | None = None, fixing: FixChoices | None = None) -> None:
    """Lint manifests: files, folders (recursively) and - for stdin. A folder holding a
    Chart.yaml is a chart: rendered in-process with the Helm engine; one that cannot be
    rendered (no engine, or a render that fails) is a KG009 finding at its Chart.yaml. A
    folder holding a kustomization.yaml is rendered with kustomize (docs/kustomize.md)."""
    if not paths and not staged:
        fail("no input: name files or folders to lint, or - for stdin (see --help)")
    from kubegap_lint.engine import parallel
    from kubegap_lint.engine.inputs import allow_unrendered as allow_unrendered_inputs
    from kubegap_lint.engine.inputs import lint_inputs

    choices = choices or OutputChoices()
    stdin_name = stdin_filename
    resolved, catalog = resolve_settings(_config_paths(paths, stdin_name), config_file, no_config, select,
                                         ignore, fail_on, baseline, no_baseline)
    settings = resolved.settings
    settings.chart_dirs.extend(chart_dirs)
    settings.follow_symlinks_out = follow_symlinks_out
    if allow_unrendered:
        allow_unrendered_inputs(settings)
    fixing = fixing or FixChoices()
    stdin = capture_stdin(paths, fixing)

    def lint() -> tuple[Any, Any]:
        with lint_inputs(paths, settings, catalog, stdin_name=stdin_name, repo_facts=repo_facts,
                         skip_charts=skip_chart_templates, follow_outside=follow_symlinks_out,
                         config_paths=_config_paths(paths, stdin_name), kustomize_path=kustomize_path) as inputs:
            if inputs.charts or inputs.kustomizations:
                choices.allow_empty = True  # charts or kustomizations were found (rendered, or each a KG009)
            return parallel.lint_sources(inputs.linter, inputs.sources, inputs.errors, jobs=jobs), inputs.linter

    result, linter = lint()
    fixes = None
    if fixing.active:
        from kubegap_lint.cli import fixing as fix_stage

        result, linter, fixes = fix_stage.run(paths, fixing, stdin, stdin_name, lint, result, linter)
        if fixing.fix and stdin is not None:
            fix_stage.stdin_out(fix_stage.fixed_stdin(), result, linter)
    if staged:
        from kubegap_lint.engine.decided import decided_findings

        caused = decided_findings(paths, settings, catalog)
        if caused:  # a commit's run is small: its findings are read back whole
            choices.allow_empty = True
            kept = list(result.iter_findings())
            result.baseline = None  # applied to `kept` already
            result.findings = [*kept, *caused]
    report_and_exit(result, linter, fmt, output, no_colour, show_suppressed, sarif_root, sarif_category,
                    choices, fixes)


def _config_paths(paths: tuple[str, ...], stdin_name: str | None) -> tuple[str, ...]:
    """The paths the configuration is found from: --stdin-filename stands for -."""
    return tuple(stdin_name if p == "-" and stdin_name else p for p in paths)


def main() -> None:
    """Entry point: run the CLI, turning every known error into one line and exit code 2."""
    # Start-up allocates thousands of long-lived objects (modules, classes, the catalog) and no
    # garbage cycles: the cyclic collector is paused until a lint's settings and catalog are
    # loaded (common.resolve_settings), or another command is chosen (get_command).
    was_enabled = gc.isenabled()
    gc.disable()
    _exit_cleanly_on_sigterm()
    try:
        _main()
    finally:
        if was_enabled:  # as found, whatever ended the command (main() may run inside a process)
            gc.unfreeze()
            gc.enable()


def _show_traceback() -> bool:
    """--show-traceback anywhere on the line (taken off it), or KUBEGAP_LINT_DEBUG=1: an
    internal error prints its traceback too."""
    wanted = os.environ.get("KUBEGAP_LINT_DEBUG", "") not in ("", "0")
    if "--show-traceback" in sys.argv[1:]:
        sys.argv[1:] = [a for a in sys.argv[1:] if a != "--show-traceback"]
        wanted = True
    return wanted


def _main() -> None:
    traceback_wanted = _show_traceback()
    # Names from any input must reach any terminal: what the locale cannot encode (an emoji in
    # a Latin-1 locale, a file name that is not UTF-8) is written as a backslash escape.
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if callable(reconfigure):
            try:
                reconfigure(errors="backslashreplace")
            except (ValueError, OSError):
                pass
    try:
        cli.main(prog_name="kubegap-lint", standalone_mode=False)
    except click.exceptions.Abort as exc:
        if isinstance(exc.__cause__, KeyboardInterrupt):  # click turns Ctrl-C into Abort
            click.echo("kubegap-lint: interrupted", err=True)
            sys.exit(130)  # 128 + SIGINT, as shells report it
        click.echo("kubegap-lint: aborted", err=True)
        sys.exit(EXIT_USAGE)
    except click.exceptions.ClickException as exc:
        exc.show()
        sys.exit(EXIT_USAGE)
    except KubegapError as exc:
        from kubegap_lint.report.sanitize import safe_text

        for line in str(exc).splitlines() or [type(exc).__name__]:
            click.echo(f"kubegap-lint: {safe_text(line)}", err=True)
        sys.exit(EXIT_USAGE)
    except BrokenPipeError:
        # The reader went away (e.g. `| head`); say nothing more.
        try:
            sys.stdout = open(os.devnull, "w")
        finally:
            sys.exit(1)
    except KeyboardInterrupt:
        click.echo("kubegap-lint: interrupted", err=True)
        sys.exit(130)
    except _Terminated:
        click.echo("kubegap-lint: terminated", err=True)
        sys.exit(143)  # 128 + SIGTERM
    except SystemExit:
        raise
    except Exception as exc:  # a bug: still one line, with what to report
        if traceback_wanted:
            import traceback

            traceback.print_exc()
        click.echo(f"kubegap-lint: internal error: {type(exc).__name__}: {exc}"
                   " (please report this with the input that caused it)", err=True)
        sys.exit(EXIT_USAGE)
    sys.exit(0)


class _Terminated(BaseException):
    """SIGTERM, raised where the run is, so that every `finally` and atexit step runs: the
    private temp folder (and any rendered charts in it) is removed, the engine process ended."""


def _exit_cleanly_on_sigterm() -> None:
    import signal
    import threading

    def terminated(signum: int, frame: object) -> None:
        raise _Terminated()

    # Not when SIGTERM is ignored by whoever started us, nor off the main thread (main() may run
    # inside a process that has its own handler).
    if threading.current_thread() is threading.main_thread() and signal.getsignal(signal.SIGTERM) == signal.SIG_DFL:
        signal.signal(signal.SIGTERM, terminated)
