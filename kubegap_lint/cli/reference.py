"""The options table of docs/command-line.md, generated from the `lint` command itself: each
option as `kubegap-lint lint --help` shows it, so the page cannot list an option the tool lacks
or miss one it has (scripts/regenerate.py writes it, tests/test_docs.py checks it)."""

from __future__ import annotations

import click


def render_options_markdown() -> str:
    """One row an option of `kubegap-lint lint`: its forms and metavar, and its help text with
    its default, as --help prints them."""
    from kubegap_lint.cli.main import cli

    command = cli.commands["lint"]
    context = click.Context(command, info_name="lint")
    rows = ["| option | what it does |", "|---|---|"]
    for param in command.get_params(context):
        record = param.get_help_record(context) if isinstance(param, click.Option) else None
        if record is None or "--help" in param.opts:  # -h too once the group has run: not an option of lint's own
            continue
        forms, text = (cell.replace("|", "\\|") for cell in record)
        rows.append(f"| `{forms}` | {' '.join(text.split())} |")
    return "\n".join(rows) + "\n"
