"""The output formats by name: one registry that every command reports through.

Each writer takes the run's result and the report options and gives the report in pieces
(written as they come) and any warnings for stderr. A new format is one module in report/
and one entry here; writers import their module only when chosen, to keep start-up short.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from kubegap_lint.core.record import record
from kubegap_lint.engine.run import LintResult


@record(frozen=True)
class ReportOptions:
    colour: bool = False
    show_suppressed: bool = False
    params: dict[str, Any] | None = None
    sarif_root: str | None = None
    sarif_category: str | None = None
    summary: bool = True  # text: the summary line (off with --quiet, or when it goes to stderr)
    estimates: bool = True  # text: the "Expected interruptions" block
    statistics: bool = False  # text: counts per rule instead of the findings
    fixes: Any = None  # JSON and SARIF: each finding's fix (fix.files.FixLookup), with --show-fixes or --fix


@record(frozen=True)
class Report:
    pieces: Iterable[str]
    warnings: list[str]


def _text(result: LintResult, options: ReportOptions) -> Report:
    from kubegap_lint.report.text import text_lines

    return Report(text_lines(result, colour=options.colour, show_suppressed=options.show_suppressed,
                             params=options.params, summary=options.summary, estimates=options.estimates,
                             statistics=options.statistics), [])


def _json(result: LintResult, options: ReportOptions) -> Report:
    from kubegap_lint.report.jsonfmt import json_pieces

    return Report(json_pieces(result, options.params, options.fixes), [])


def _sarif(result: LintResult, options: ReportOptions) -> Report:
    from kubegap_lint.report.sarif import render_sarif
    from kubegap_lint.report.sarif_paths import default_root

    root = Path(options.sarif_root) if options.sarif_root else default_root()
    report = render_sarif(result, root, options.sarif_category, fixes=options.fixes)
    return Report([report.text], list(report.warnings))


def _github(result: LintResult, options: ReportOptions) -> Report:
    from kubegap_lint.report.github import github_lines

    return Report(github_lines(result), [])


def _mapper(options: ReportOptions) -> Any:
    from kubegap_lint.report.sarif_paths import UriMapper, default_root

    return UriMapper(Path(options.sarif_root) if options.sarif_root else default_root())


def _gitlab(result: LintResult, options: ReportOptions) -> Report:
    from kubegap_lint.report.gitlab import gitlab_pieces

    return Report(gitlab_pieces(result, _mapper(options)), [])


def _junit(result: LintResult, options: ReportOptions) -> Report:
    from kubegap_lint.report.junit import junit_pieces

    return Report(junit_pieces(result), [])


FORMATS: dict[str, Callable[[LintResult, ReportOptions], Report]] = {
    "text": _text,
    "json": _json,
    "sarif": _sarif,
    "github": _github,
    "gitlab": _gitlab,
    "junit": _junit,
}


def render(fmt: str, result: LintResult, options: ReportOptions) -> Report:
    return FORMATS[fmt](result, options)


def names() -> Iterator[str]:
    return iter(FORMATS)
