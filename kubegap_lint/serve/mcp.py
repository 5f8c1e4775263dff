"""`kubegap-lint mcp`: the linter as an MCP server over stdio, for coding agents.

Tools (short snake_case names; every one read-only, idempotent and closed-world: it reads the
workspace and the built-in catalog, writes nothing and reaches no network):

- `lint_manifests`: YAML text, or files and folders inside the workspace; the CLI's JSON
  findings, paged.
- `render_and_lint_chart`: a chart in the workspace rendered with values files and --set
  values, then linted (needs the Helm engine, `kubegap-lint[helm]`).
- `list_rules`, `explain_rule`: the catalog, with each rule's evidence and docs link.
- `suggest_fixes`: the autofix (issue 32) for one file or YAML text: each finding's fix and the
  unified diff `kubegap-lint --diff` prints; proposed only, the server writes no file.

The workspace root is the folder the server started in, or `--root`; a path outside it (by
`..`, an absolute path or a symbolic link) is refused. A wrong argument is a tool error
(`isError`), never a crash of the server. Imported only by the `mcp` subcommand: the MCP SDK
stays out of the CLI's start-up.
"""

from __future__ import annotations

import os
from typing import Annotated, Any

from mcp.server import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import BaseModel, Field

from kubegap_lint import __version__
from kubegap_lint.core.errors import KubegapError
from kubegap_lint.serve import fixes, runs
from kubegap_lint.serve.rules import catalog_at, rule_details, rule_summary
from kubegap_lint.serve.workspace import Workspace

READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True,
                            open_world_hint=False)
TEXT_NAME = "manifest.yaml"  # what YAML text is reported as, unless the call names a file


class LintPage(BaseModel):
    """A page of the findings: each is an object of the CLI's `--format json` report
    (schemas/output.schema.json: rule, severity, message, location with line and column,
    resource, evidence, fingerprint...)."""

    findings: list[dict[str, Any]]
    total: int = Field(description="Findings in the whole report, suppressed ones included.")
    offset: int
    next_offset: int | None = Field(description="Pass as offset for the next page; null on the last page.")
    summary: dict[str, Any] = Field(description="The JSON report's summary: files, workloads, counts.")
    errors: list[dict[str, Any]] = Field(
        description="Inputs that could not be linted (path, line, message): the result is incomplete when any.")
    exit_code: int = Field(description="The CLI's exit code: 0 clean, 1 findings, 2 an input not linted.")


class RuleSummary(BaseModel):
    id: str
    name: str
    severity: str
    title: str
    enabled_by_default: bool
    docs_url: str | None


class RuleList(BaseModel):
    rules: list[RuleSummary]


class Evidence(BaseModel):
    id: str
    title: str
    organisation: str
    date: str
    summary: str
    urls: list[str]


class RuleExplained(RuleSummary):
    help: str = Field(description="Why the rule matters and how to fix a finding (Markdown).")
    evidence: list[Evidence] = Field(description="The public incidents behind the rule.")


class FindingFix(BaseModel):
    """One finding's fix, as the JSON report's `fix` (docs/autofix.md)."""

    rule: str
    fingerprint: str | None
    line: int | None
    column: int | None
    message: str | None
    applicability: str = Field(description="safe, unsafe (chooses a value for you) or none (no edit: says why).")
    description: str
    evidence: list[str] = Field(description="Catalog evidence ids behind the values the fix writes.")
    edits: list[dict[str, Any]] = Field(
        description="Text edits: start and end (1-based line and column, the end exclusive) and the new text.")
    diff: str = Field(description="The unified diff of this fix alone (empty without edits).")


class FixSuggestions(BaseModel):
    path: str = Field(description="The file as linted (relative to the workspace root).")
    fixes: list[FindingFix] = Field(description="Each finding that has a fix, in the report's order.")
    diff: str = Field(description="One unified diff of the safe fixes (and the unsafe ones with unsafe=true),"
                                  " as `kubegap-lint --diff` prints it; empty when nothing would change.")
    unsafe_not_in_diff: int = Field(description="Unsafe fixes with edits left out of the diff (pass unsafe=true).")
    errors: list[dict[str, Any]] = Field(description="Inputs that could not be linted: no fix is proposed for them.")
    exit_code: int = Field(description="The lint's exit code: 0 clean, 1 findings, 2 an input not linted.")


Names = Annotated[list[str], Field(description="Rule ids or names (e.g. KG201, training-checkpoint-volume).")]
Offset = Annotated[int, Field(ge=0, description="The first finding to return (0-based).")]
Limit = Annotated[int, Field(ge=1, le=runs.MAX_LIMIT, description="At most this many findings.")]


def build(root: str) -> MCPServer:
    """The server for the workspace at `root` (tests connect to it in-process too)."""
    workspace = Workspace(root)
    server: MCPServer = MCPServer(
        "kubegap-lint", version=__version__, log_level="WARNING",
        instructions="Offline linter for resilience gaps of GPU workloads in Kubernetes manifests and Helm charts."
                     " Lint what you write with lint_manifests; explain_rule tells why a finding matters and"
                     " how to fix it. Paths are relative to the workspace root " + workspace.root + ".")

    calls = _Calls(workspace)
    _add_lint_tools(server, calls)
    _add_rule_tools(server, workspace)
    if fixes.available():
        _add_fix_tools(server, calls)
    return server


class _Calls:
    """What the lint tools share: the workspace, and the CLI run for its JSON report; every
    error of theirs is a tool error (`isError`), never a crash of the server."""

    def __init__(self, workspace: Workspace) -> None:
        self.workspace = workspace

    def report(self, args: list[str], stdin: str | None = None) -> dict[str, Any]:
        try:
            return runs.run_json(self.workspace.root, args, stdin)
        except KubegapError as exc:
            raise ToolError(str(exc)) from None

    def diff(self, args: list[str], stdin: str | None = None) -> str:
        try:
            return runs.run_diff(self.workspace.root, args, stdin)
        except KubegapError as exc:
            raise ToolError(str(exc)) from None

    def page(self, args: list[str], offset: int, limit: int, stdin: str | None = None) -> LintPage:
        got = runs.page(self.report(args, stdin), offset, limit)
        return LintPage(findings=got.findings, total=got.total, offset=got.offset, next_offset=got.next_offset,
                        summary=got.summary, errors=got.errors, exit_code=got.exit_code)

    def inside(self, name: str) -> str:
        try:
            return self.workspace.path(name)
        except KubegapError as exc:
            raise ToolError(str(exc)) from None

    def selection(self, select: list[str], ignore: list[str]) -> list[str]:
        try:
            return runs.selection_args(select, ignore)
        except KubegapError as exc:
            raise ToolError(str(exc)) from None


def _add_lint_tools(server: MCPServer, calls: _Calls) -> None:
    """lint_manifests and render_and_lint_chart: the CLI's JSON findings, paged."""

    @server.tool(title="Lint Kubernetes manifests", annotations=READ_ONLY)
    def lint_manifests(
        text: Annotated[str | None, Field(description="YAML manifests to lint (one or more documents).")] = None,
        paths: Annotated[list[str] | None, Field(
            description="Files or folders inside the workspace, relative to its root.")] = None,
        filename: Annotated[str | None, Field(
            description="With text: the workspace file the text stands for (configuration is found from it)."
        )] = None,
        select: Names | None = None, ignore: Names | None = None,
        offset: Offset = 0, limit: Limit = runs.DEFAULT_LIMIT,
    ) -> LintPage:
        """Lint Kubernetes manifests (given as YAML text, or as files and folders in the workspace)
        for resilience gaps of GPU workloads. Returns the findings of `kubegap-lint --format json`,
        paged: call again with offset=next_offset for more. Charts in folders are rendered when the
        Helm engine is installed."""
        if (text is None) == (not paths):
            raise ToolError("give either text or paths (one of them, not both)")
        args = ["lint", "--format", "json", "--no-color", *calls.selection(select or [], ignore or [])]
        if text is not None:
            name = calls.inside(filename) if filename else TEXT_NAME
            return calls.page([*args, "--stdin-filename", name, "--", "-"], offset, limit, stdin=text)
        return calls.page([*args, "--", *[calls.inside(p) for p in paths or []]], offset, limit)

    @server.tool(title="Render a Helm chart and lint it", annotations=READ_ONLY)
    def render_and_lint_chart(
        chart: Annotated[str, Field(description="The chart folder inside the workspace.")],
        values: Annotated[list[str] | None, Field(description="Values files inside the workspace (helm -f).")] = None,
        set: Annotated[list[str] | None, Field(description="Values as KEY=VALUE (helm --set).")] = None,
        release: Annotated[str | None, Field(description="The release name [release-name].")] = None,
        namespace: Annotated[str | None, Field(description="The release namespace [default].")] = None,
        select: Names | None = None, ignore: Names | None = None,
        offset: Offset = 0, limit: Limit = runs.DEFAULT_LIMIT,
    ) -> LintPage:
        """Render a Helm chart as `helm template` would (in-process, offline) and lint the output;
        findings point at the chart's templates and values files."""
        from kubegap_lint.helm.sdk import available

        if not available():
            raise ToolError("the Helm engine is not installed: install kubegap-lint[helm] to render charts")
        args = ["helm", "--format", "json", "--no-color", *calls.selection(select or [], ignore or [])]
        for name in values or []:
            args += ["--values", calls.inside(name)]
        for assignment in set or []:
            if "=" not in assignment:
                raise ToolError(f"--set takes KEY=VALUE, not {assignment!r}")
            args += ["--set", assignment]
        for flag, value in (("--release", release), ("--namespace", namespace)):
            if value is not None:
                args += [flag, value]
        return calls.page([*args, "--", calls.inside(chart)], offset, limit)


def _add_rule_tools(server: MCPServer, workspace: Workspace) -> None:
    """list_rules and explain_rule: the catalog of the workspace's configuration."""

    @server.tool(title="List the rules", annotations=READ_ONLY)
    def list_rules() -> RuleList:
        """Every rule: id, name, severity, title, whether it runs by default, and its docs link
        (the built-in rules and the policy folders the workspace's configuration names)."""
        catalog = catalog_at(workspace.root)
        return RuleList(rules=[RuleSummary(**rule_summary(p)) for p in catalog.policies])

    @server.tool(title="Explain a rule", annotations=READ_ONLY)
    def explain_rule(rule: Annotated[str, Field(description="A rule id or name, e.g. KG201.")]) -> RuleExplained:
        """Why a rule matters, the public incidents behind it, and how to fix its findings."""
        catalog = catalog_at(workspace.root)
        policy = catalog.find(rule.strip())
        if policy is None:
            raise ToolError(f"unknown rule {rule!r}: list_rules gives every id and name")
        return RuleExplained(**rule_details(policy, catalog))


def _add_fix_tools(server: MCPServer, calls: _Calls) -> None:
    """suggest_fixes: the autofix's fixes and diff (serve/fixes.py), proposed, never written."""

    @server.tool(title="Suggest fixes", annotations=READ_ONLY)
    def suggest_fixes(
        text: Annotated[str | None, Field(description="YAML manifests to fix (one or more documents).")] = None,
        path: Annotated[str | None, Field(description="A manifest file inside the workspace.")] = None,
        filename: Annotated[str | None, Field(
            description="With text: the workspace file the text stands for (configuration is found from it)."
        )] = None,
        unsafe: Annotated[bool, Field(
            description="Also the unsafe fixes in the diff: those that choose a value for you.")] = False,
        select: Names | None = None, ignore: Names | None = None,
    ) -> FixSuggestions:
        """The fixes of the findings in one manifest file (or YAML text): each finding's fix (what it
        does, safe or unsafe, its text edits) and one unified diff of the safe fixes, the one
        `kubegap-lint --diff` prints (with unsafe=true, `--diff --unsafe-fixes`). Nothing is
        written: apply the diff yourself."""
        if (text is None) == (path is None):
            raise ToolError("give either text or path (one of them, not both)")
        selection = calls.selection(select or [], ignore or [])
        if text is not None:
            name = calls.inside(filename) if filename else TEXT_NAME
            source, target = text, ["--stdin-filename", name, "--", "-"]
        else:
            name = calls.inside(path or "")
            source = _read_manifest(os.path.join(calls.workspace.root, name), name)
            target = ["--", name]
        stdin = text
        report = calls.report(["lint", "--format", "json", "--no-color", "--show-fixes", *selection, *target], stdin)
        diff = calls.diff([*(["--unsafe-fixes"] if unsafe else []), *selection, *target], stdin)
        found = [FindingFix(**entry) for entry in fixes.suggest(name, source, report.get("findings", []))]
        left = sum(1 for f in found if f.applicability == "unsafe" and f.edits) if not unsafe else 0
        return FixSuggestions(path=name, fixes=found, diff=diff, unsafe_not_in_diff=left,
                              errors=report.get("errors", []), exit_code=report["exit_code"])


def _read_manifest(full: str, name: str) -> str:
    if not os.path.isfile(full):
        raise ToolError(f"{name} is not a file: suggest_fixes takes one manifest file")
    try:
        with open(full, "rb") as handle:
            return handle.read().decode("utf-8")
    except UnicodeDecodeError:
        raise ToolError(f"{name} is not UTF-8: it is never edited") from None
    except OSError as exc:
        raise ToolError(f"cannot read {name}: {exc.strerror or exc}") from None


def serve(root: str) -> None:
    """Run over stdio until the client closes the connection."""
    root = os.path.realpath(root)
    os.chdir(root)  # the lints run here; relative paths in their findings are from the root
    build(root).run()
