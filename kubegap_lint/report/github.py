"""GitHub Actions workflow commands: one `::error`/`::warning`/`::notice` line per finding, which
the runner turns into annotations on the pull request's files (for runs without code scanning).

Paths are relative to the SARIF root (the git top level by default), which is the workspace in
a workflow. Values are escaped as the runner expects: `%`, CR and LF in the message; also `:` and
`,` in properties, where they would end the value.
"""

from __future__ import annotations

from collections.abc import Iterator

from kubegap_lint.core.model import Finding, InputError, Severity
from kubegap_lint.engine.run import LintResult
from kubegap_lint.report.sanitize import escape_invisible
from kubegap_lint.report.sarif_paths import UriMapper, default_root
from kubegap_lint.report.text import summary_line

COMMAND = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.NOTE: "notice"}

# Control characters other than CR and LF (which are %-escaped) would reach the log as they are:
# show them as \xNN so a manifest cannot colour or rewrite the log.
def _neutralise(text: str) -> str:
    # Also bidi and zero-width characters, and lone surrogates (a file name that is not UTF-8).
    return escape_invisible(text, keep_line_breaks=True).replace("\t", "\\x09")


def escape_data(text: str) -> str:
    """A command's message: `%` first, so that the escapes themselves survive."""
    return _neutralise(text).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def command(name: str, message: str, **properties: object) -> str:
    props = ",".join(f"{key}={escape_property(str(value))}" for key, value in properties.items()
                     if value is not None)
    return f"::{name}{' ' + props if props else ''}::{escape_data(message)}"


def _file(mapper: UriMapper, path: str) -> str:
    return mapper.relative_path(path) or path


def finding_command(finding: Finding, mapper: UriMapper) -> str:
    subject = f"{finding.resource.display()}: " if finding.resource else ""
    loc = finding.location
    return command(COMMAND[finding.severity], subject + finding.message, file=_file(mapper, loc.path),
                   line=loc.line, col=loc.column, title=f"{finding.rule_id} {finding.rule_name}")


def error_command(error: InputError, mapper: UriMapper) -> str:
    return command("error", error.message, file=_file(mapper, error.path), line=error.line, col=error.column,
                   title="kubegap-lint: input not linted")


def github_lines(result: LintResult, mapper: UriMapper | None = None) -> Iterator[str]:
    """The commands a line at a time (with its line end), as the stored findings are read."""
    mapper = mapper or UriMapper(default_root())
    for finding in result.iter_findings():
        if finding.suppression is None:
            yield finding_command(finding, mapper) + "\n"
    for error in result.errors:
        yield error_command(error, mapper) + "\n"
    yield summary_line(result) + "\n"


def render_github(result: LintResult, mapper: UriMapper | None = None) -> str:
    return "".join(github_lines(result, mapper))
