"""The subcommands other than `lint` and `helm`: configuration, baselines, policy folders, rules.

Defined at their first use (main._DefaultLintGroup.lazy): a lint does not build their options.
"""

from __future__ import annotations

import sys
from typing import Any

import click

from kubegap_lint.cli.common import EXIT_USAGE, fail, resolve_settings, write
from kubegap_lint.cli.options import config_options


@click.group("config")
def config_group() -> None:
    """Inspect the configuration (.kubegap-lint.yaml or [tool.kubegap-lint] in pyproject.toml)."""


@config_group.command("show")
@click.argument("path", default=".")
@config_options
@click.option("--fail-on", type=click.Choice(["error", "warning", "note"]), default=None,
              help="As for lint.")
@click.option("--baseline", type=click.Path(dir_okay=False), help="As for lint.")
def config_show_command(path: str, config_file: str | None, no_config: bool, select: tuple[str, ...],
                        ignore: tuple[str, ...], fail_on: str | None, baseline: str | None) -> None:
    """Print the effective configuration for PATH (default: this folder) and where each value
    came from."""
    from kubegap_lint.config.show import render_show
    from kubegap_lint.report.sanitize import escape_invisible

    resolved, catalog = resolve_settings((path,), config_file, no_config, select, ignore, fail_on, baseline)
    # Values and paths from the repository: no bidi or invisible character reaches the terminal.
    write(escape_invisible(render_show(resolved, catalog), keep_line_breaks=True), None)


@click.group("baseline")
def baseline_group() -> None:
    """Record today's findings, so that later runs report only new ones."""


@baseline_group.command("create")
@click.argument("paths", nargs=-1)
@config_options
@click.option("--output", "-o", type=click.Path(dir_okay=False), help="Write the baseline to FILE.")
def baseline_create_command(paths: tuple[str, ...], config_file: str | None, no_config: bool,
                            select: tuple[str, ...], ignore: tuple[str, ...], output: str | None) -> None:
    """Print a baseline of the findings in PATHS: `kubegap-lint baseline create . > .kubegap-baseline.json`.

    Paths in it are from the git top level, so later runs match it from any folder of the repository."""
    if not paths:
        fail("no input: name files or folders to record, or - for stdin (see --help)")
    from kubegap_lint.engine.inputs import lint_inputs
    from kubegap_lint.suppress.baseline import baseline_pieces

    resolved, catalog = resolve_settings(paths, config_file, no_config, select, ignore, no_baseline=True)
    # What `lint PATHS` reads, read the same way (engine/inputs.py): charts rendered, the facts of
    # the rest of the work tree, and KG009 for a chart that cannot be rendered.
    with lint_inputs(paths, resolved.settings, catalog) as inputs:
        result = inputs.linter.lint_sources(inputs.sources, inputs.errors)
    from kubegap_lint.report.sanitize import safe_text

    for error in result.errors:  # one line each, whatever the path holds
        click.echo(f"kubegap-lint: {safe_text(error.display())}", err=True)
    write(baseline_pieces(result.iter_findings()), output)
    sys.exit(EXIT_USAGE if result.errors else 0)


@click.group("policies")
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


def _command_catalog(config_file: str | None, no_config: bool) -> Any:
    """The catalog with the policy folders of the configuration found from this folder, as
    `lint .` would load it (custom policies included)."""
    from kubegap_lint.catalog.policies import load_catalog
    from kubegap_lint.config.load import resolve

    resolved = resolve((".",), config_file, no_config)
    return load_catalog(resolved.settings.policy_dirs)


@click.command("rules")
@click.option("--markdown", is_flag=True, help="Print the generated reference (docs/rules.md).")
@click.option("--config", "config_file", type=click.Path(dir_okay=False),
              help="Use this configuration file (its policy_dirs) instead of the discovered one.")
@click.option("--no-config", is_flag=True, help="Ignore configuration files: the built-in rules only.")
def rules_command(markdown: bool, config_file: str | None, no_config: bool) -> None:
    """List every policy, with those of the configured policy folders: id, name, severity, title."""
    if markdown:
        from kubegap_lint.catalog.docs import render_rules_markdown
        from kubegap_lint.catalog.policies import load_catalog
        from kubegap_lint.core.datapaths import examples_dir

        # The reference documents the built-in rules, whatever folder it is generated from.
        write(render_rules_markdown(load_catalog(), examples_dir()), None)
        return
    catalog = _command_catalog(config_file, no_config)
    width = max(len(p.name) for p in catalog.policies)
    for policy in catalog.policies:
        state = "" if policy.enabled else " (disabled by default)"
        click.echo(f"{policy.id}  {policy.name:<{width}}  {policy.severity.value:<7}  {policy.title}{state}")


@click.command("explain")
@click.argument("rule")
@click.option("--config", "config_file", type=click.Path(dir_okay=False),
              help="Use this configuration file (its policy_dirs) instead of the discovered one.")
@click.option("--no-config", is_flag=True, help="Ignore configuration files: the built-in rules only.")
def explain_command(rule: str, config_file: str | None, no_config: bool) -> None:
    """Explain a rule (id or name): why it matters, the evidence, and the fix."""
    from kubegap_lint.cli.explain import explain

    catalog = _command_catalog(config_file, no_config)
    policy = catalog.find(rule)
    if policy is None:
        fail(f"unknown rule '{rule}' (see `kubegap-lint rules`)")
        return
    click.echo(explain(policy, catalog))
