"""`kubegap-lint mcp` and `kubegap-lint server`: the servers of serve/, each an optional extra
whose packages are imported only here, when the command runs (never by a lint)."""

from __future__ import annotations

import os

import click

from kubegap_lint.cli.common import fail


def _need(module: str, extra: str) -> None:
    import importlib.util

    if importlib.util.find_spec(module) is None:
        fail(f"this command needs the {module} package: pip install 'kubegap-lint[{extra}]'")


@click.command("mcp")
@click.option("--root", type=click.Path(exists=True, file_okay=False), default=None,
              help="The workspace the tools may read [default: the current folder]; paths outside it are refused.")
def mcp_command(root: str | None) -> None:
    """Serve the linter to coding agents over MCP (stdio): lint_manifests, render_and_lint_chart,
    list_rules, explain_rule. Read-only and offline (docs/editors-and-agents.md)."""
    _need("mcp", "mcp")
    from kubegap_lint.serve.mcp import serve

    serve(root or os.getcwd())


@click.command("server")
@click.option("--stdio", is_flag=True, help="Talk over standard input and output (the default and only transport).")
def server_command(stdio: bool) -> None:
    """Run the language server for editors (stdio): diagnostics for Kubernetes manifests on open,
    change and save (docs/editors-and-agents.md)."""
    _need("pygls", "lsp")
    from kubegap_lint.serve.lsp import serve

    serve()
