"""The command line: wires the stages and nothing else.

`kubegap-lint PATHS...` lints (the `lint` subcommand is implied); other subcommands list and
explain rules. Every error a user can cause ends in one line on stderr and exit code 2; no
traceback reaches the terminal.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from typing import Any

import click

from kubegap_lint import __version__
from kubegap_lint.core.errors import KubegapError

EXIT_USAGE = 2


class _DefaultLintGroup(click.Group):
    """Treat `kubegap-lint PATH...` as `kubegap-lint lint PATH...`."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ("--version", "--help", "-h"):
            args = ["lint", *args]
        return super().parse_args(ctx, args)


def _colour(no_colour: bool, stream: Any) -> bool:
    if no_colour or os.environ.get("NO_COLOR"):
        return False
    return bool(getattr(stream, "isatty", lambda: False)())


def _fail(message: str) -> None:
    click.echo(f"kubegap-lint: {message}", err=True)
    sys.exit(EXIT_USAGE)


def _write(text: str | Iterable[str], output: str | None) -> None:
    """Write a report, given whole or in pieces (written as they come: a long report is never
    held in memory)."""
    pieces = [text] if isinstance(text, str) else text
    if output:
        try:
            with open(output, "w", encoding="utf-8", newline="\n") as handle:
                for piece in pieces:
                    handle.write(piece)
        except OSError as exc:
            _fail(f"cannot write {output}: {exc.strerror}")
    else:
        stream = click.get_text_stream("stdout")
        for piece in pieces:
            stream.write(piece)
        stream.flush()


def _split(values: tuple[str, ...]) -> list[str]:
    return [part.strip() for value in values for part in value.split(",") if part.strip()]


@click.group(cls=_DefaultLintGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="kubegap-lint")
def cli() -> None:
    """Find the resilience gaps of GPU workloads in Kubernetes manifests and Helm output.

    `kubegap-lint PATH...` lints files, folders (recursively) and `-` (stdin).
    """


def _config_options(command: Any) -> Any:
    """--config, --no-config, --select, --ignore: shared by the commands that lint."""
    for decorator in reversed([
        click.option("--config", "config_file", type=click.Path(dir_okay=False),
                     help="Use this configuration file instead of the discovered one."),
        click.option("--no-config", is_flag=True, help="Ignore configuration files."),
        click.option("--select", multiple=True, help="Only these rules (ids or names, comma-separated)."),
        click.option("--ignore", multiple=True, help="Skip these rules (ids or names, comma-separated)."),
    ]):
        command = decorator(command)
    return command


def _resolve(paths: tuple[str, ...], config_file: str | None, no_config: bool, select: tuple[str, ...],
             ignore: tuple[str, ...], fail_on: str | None = None, baseline: str | None = None,
             no_baseline: bool = False) -> Any:
    """The run's settings (configuration, then the command line) and the policy catalog."""
    from kubegap_lint.catalog.policies import load_catalog
    from kubegap_lint.config.load import check_rule_names, resolve

    resolved = resolve(paths, config_file, no_config, _split(select), _split(ignore), fail_on,
                       baseline, no_baseline)
    catalog = load_catalog(resolved.settings.policy_dirs)
    check_rule_names(resolved, catalog)
    return resolved, catalog


@cli.command("lint")
@click.argument("paths", nargs=-1)
@click.option("--format", "fmt", type=click.Choice(["text", "json", "sarif", "github"]), default="text",
              show_default=True, help="Output format (sarif: GitHub code scanning; github: workflow commands).")
@click.option("--output", "-o", type=click.Path(dir_okay=False), help="Write the report to FILE.")
@click.option("--fail-on", type=click.Choice(["error", "warning", "note"]), default=None,
              help="Lowest severity that makes the exit code 1 [default: warning].")
@_config_options
@click.option("--baseline", type=click.Path(dir_okay=False),
              help="Suppress the findings recorded in this baseline file.")
@click.option("--no-baseline", is_flag=True, help="Ignore the configured baseline.")
@click.option("--show-suppressed", is_flag=True, help="List suppressed findings in text output.")
@click.option("--no-color", "no_colour", is_flag=True, help="Never colour the text output.")
@click.option("--chart-dir", "chart_dirs", multiple=True, type=click.Path(file_okay=False),
              help="Where to find the charts that `# Source:` lines name [default: below the current folder].")
@click.option("--skip-chart-templates", is_flag=True,
              help="Pass over files in a chart's templates/ folder (they are not YAML until rendered).")
@click.option("--sarif-root", type=click.Path(exists=True, file_okay=False), default=None,
              help="SARIF URIs are relative to DIR [default: the git top level, else the current directory].")
@click.option("--sarif-category", default=None,
              help="SARIF runs[0].automationDetails.id, for several uploads on one commit.")
@click.option("--jobs", "-j", type=click.IntRange(min=0), default=1, show_default=True,
              help="Worker processes for inputs over 1 MB (0: one per CPU). Same output; one"
                   " process streams with bounded memory, workers hold the whole input.")
def lint_command(paths: tuple[str, ...], fmt: str, output: str | None, fail_on: str | None,
                 config_file: str | None, no_config: bool, select: tuple[str, ...],
                 ignore: tuple[str, ...], baseline: str | None, no_baseline: bool,
                 show_suppressed: bool, no_colour: bool, chart_dirs: tuple[str, ...] = (),
                 skip_chart_templates: bool = False, sarif_root: str | None = None,
                 sarif_category: str | None = None, jobs: int = 1) -> None:
    """Lint manifests: files, folders (recursively) and - for stdin."""
    if not paths:
        _fail("no input: name files or folders to lint, or - for stdin (see --help)")
    from kubegap_lint.engine.run import Linter

    resolved, catalog = _resolve(paths, config_file, no_config, select, ignore, fail_on, baseline,
                                 no_baseline)
    settings = resolved.settings
    settings.chart_dirs.extend(chart_dirs)
    linter = Linter(settings, catalog=catalog)
    from kubegap_lint.engine import parallel
    if skip_chart_templates:
        from kubegap_lint.helm.render import without_chart_templates

        result = parallel.lint_sources(linter, *without_chart_templates(list(paths), settings.exclude), jobs=jobs)
    else:
        result = parallel.lint_paths(linter, paths, jobs)
    _report(result, linter, fmt, output, no_colour, show_suppressed, sarif_root, sarif_category)


def _report(result: Any, linter: Any, fmt: str, output: str | None, no_colour: bool,
            show_suppressed: bool, sarif_root: str | None, sarif_category: str | None) -> None:
    """Print the input errors, write the report in the chosen format, exit with the run's code."""
    from kubegap_lint.report.sanitize import safe_text

    for error in result.errors:  # paths and messages may hold control characters: escape them
        click.echo(f"kubegap-lint: {safe_text(error.display())}", err=True)
    if fmt == "json":
        from kubegap_lint.report.jsonfmt import json_pieces

        _write(json_pieces(result, linter.params), output)
    elif fmt == "sarif":
        _write_sarif(result, output, sarif_root, sarif_category)
    elif fmt == "github":
        from kubegap_lint.report.github import github_lines

        _write(github_lines(result), output)
    else:
        from kubegap_lint.report.text import text_lines

        _write(text_lines(result, colour=not output and _colour(no_colour, sys.stdout),
                          show_suppressed=show_suppressed, params=linter.params), output)
    sys.exit(result.exit_code(linter.settings.fail_on))


def _write_sarif(result: Any, output: str | None, root: str | None, category: str | None) -> None:
    from pathlib import Path

    from kubegap_lint.report.sarif import render_sarif
    from kubegap_lint.report.sarif_paths import default_root

    report = render_sarif(result, Path(root) if root else default_root(), category)
    for warning in report.warnings:
        click.echo(f"kubegap-lint: {warning}", err=True)
    _write(report.text, output)


@cli.group("config")
def config_group() -> None:
    """Inspect the configuration (.kubegap-lint.yaml or [tool.kubegap-lint] in pyproject.toml)."""


@config_group.command("show")
@click.argument("path", default=".")
@_config_options
@click.option("--fail-on", type=click.Choice(["error", "warning", "note"]), default=None,
              help="As for lint.")
@click.option("--baseline", type=click.Path(dir_okay=False), help="As for lint.")
def config_show_command(path: str, config_file: str | None, no_config: bool, select: tuple[str, ...],
                        ignore: tuple[str, ...], fail_on: str | None, baseline: str | None) -> None:
    """Print the effective configuration for PATH (default: this folder) and where each value
    came from."""
    from kubegap_lint.config.load import render_show

    resolved, catalog = _resolve((path,), config_file, no_config, select, ignore, fail_on, baseline)
    _write(render_show(resolved, catalog), None)


@cli.group("baseline")
def baseline_group() -> None:
    """Record today's findings, so that later runs report only new ones."""


@baseline_group.command("create")
@click.argument("paths", nargs=-1)
@_config_options
@click.option("--output", "-o", type=click.Path(dir_okay=False), help="Write the baseline to FILE.")
def baseline_create_command(paths: tuple[str, ...], config_file: str | None, no_config: bool,
                            select: tuple[str, ...], ignore: tuple[str, ...], output: str | None) -> None:
    """Print a baseline of the findings in PATHS: `kubegap-lint baseline create . > .kubegap-baseline.json`.

    Run it, and later lint, from the same folder: paths are part of each fingerprint."""
    if not paths:
        _fail("no input: name files or folders to record, or - for stdin (see --help)")
    from kubegap_lint.suppress.baseline import baseline_pieces
    from kubegap_lint.engine.run import Linter

    resolved, catalog = _resolve(paths, config_file, no_config, select, ignore, no_baseline=True)
    result = Linter(resolved.settings, catalog=catalog).lint_paths(paths)
    for error in result.errors:
        click.echo(f"kubegap-lint: {error.display()}", err=True)
    _write(baseline_pieces(result.iter_findings()), output)
    sys.exit(EXIT_USAGE if result.errors else 0)


@cli.group("policies")
def policies_group() -> None:
    """Work with your own policy folders."""


@policies_group.command("check")
@click.argument("folders", nargs=-1, required=True)
def policies_check_command(folders: tuple[str, ...]) -> None:
    """Validate policy FOLDERS (schema, JMESPath, evidence ids) and run their annotated examples
    (FOLDER/examples/KGnnn-name/bad-*.yaml and good-*.yaml). Exit 0 when all pass, 1 when an
    example fails, 2 when a policy cannot be loaded."""
    from kubegap_lint.cli.policycheck import check_policy_dirs

    lines, code = check_policy_dirs(folders)
    for line in lines:
        click.echo(line)
    sys.exit(code)


@cli.command("rules")
@click.option("--markdown", is_flag=True, help="Print the generated reference (docs/rules.md).")
def rules_command(markdown: bool) -> None:
    """List every policy: id, name, severity, title."""
    from kubegap_lint.catalog.policies import load_catalog

    catalog = load_catalog()
    if markdown:
        from kubegap_lint.catalog.docs import render_rules_markdown
        from kubegap_lint.core.datapaths import examples_dir

        _write(render_rules_markdown(catalog, examples_dir()), None)
        return
    width = max(len(p.name) for p in catalog.policies)
    for policy in catalog.policies:
        state = "" if policy.enabled else " (disabled by default)"
        click.echo(f"{policy.id}  {policy.name:<{width}}  {policy.severity.value:<7}  {policy.title}{state}")


@cli.command("explain")
@click.argument("rule")
def explain_command(rule: str) -> None:
    """Explain a rule (id or name): why it matters, the evidence, and the fix."""
    from kubegap_lint.catalog.policies import load_catalog
    from kubegap_lint.cli.explain import explain

    catalog = load_catalog()
    policy = catalog.find(rule)
    if policy is None:
        _fail(f"unknown rule '{rule}' (see `kubegap-lint rules`)")
        return
    click.echo(explain(policy, catalog))


from kubegap_lint.cli.helm import helm_command  # noqa: E402  (light: click only)

cli.add_command(helm_command)


def main() -> None:
    """Entry point: run the CLI, turning every known error into one line and exit code 2."""
    try:
        cli.main(prog_name="kubegap-lint", standalone_mode=False)
    except click.exceptions.Abort:
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
        sys.exit(130)
    except SystemExit:
        raise
    except Exception as exc:  # a bug: still one line, with what to report
        click.echo(f"kubegap-lint: internal error: {type(exc).__name__}: {exc}"
                   " (please report this with the input that caused it)", err=True)
        sys.exit(EXIT_USAGE)
    sys.exit(0)
