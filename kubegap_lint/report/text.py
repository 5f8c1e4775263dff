"""Text output for people: one finding a line, like a compiler, then a summary line."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from kubegap_lint.core.model import Finding, Severity
from kubegap_lint.engine.run import LintResult
from kubegap_lint.report.sanitize import no_command, safe_text

_COLOURS = {Severity.ERROR: "red", Severity.WARNING: "yellow", Severity.NOTE: "cyan"}


def _style(text: str, colour: bool, **kwargs: Any) -> str:
    if not colour:
        return text
    import click

    return click.style(text, **kwargs)


def finding_line(finding: Finding, colour: bool = False) -> str:
    # Input text (paths, names, messages that quote them) is escaped piece by piece, before
    # the colour codes are added: the codes are ours and must reach the terminal as they are.
    loc = finding.location
    place = no_command(safe_text(f"{loc.path}:{loc.line}:{loc.column}"))
    severity = _style(finding.severity.value, colour, fg=_COLOURS[finding.severity], bold=True)
    subject = f"{finding.resource.display()}: " if finding.resource else ""
    parts = [_style(place, colour, bold=True), f": {severity} ",
             safe_text(f"{finding.rule_id} {finding.rule_name}: {subject}{finding.message}")]
    if finding.rendered_location is not None:
        rendered = finding.rendered_location
        parts.append(safe_text(f" (rendered at {rendered.path}:{rendered.line}:{rendered.column})"))
    if finding.approximate:
        parts.append(" [line approximate]")
    if finding.suppression is not None:
        parts.append(safe_text(f" [suppressed by {finding.suppression.kind}: {finding.suppression.reason}]"))
    return "".join(parts)


def summary_line(result: LintResult) -> str:
    stats = result.stats
    tally = result.tally()
    by_severity = tally.by_severity
    findings = ", ".join(counted(by_severity[s], s.value) for s in (Severity.ERROR, Severity.WARNING, Severity.NOTE))
    suppressed = tally.suppressed
    text = (f"{counted(stats.files, 'file')}, {counted(stats.documents, 'document')}"
            f" ({stats.empty_documents} empty, {stats.non_kubernetes_documents} not Kubernetes),"
            f" {counted(stats.resources, 'resource')}, {counted(result.workloads, 'workload')}: {findings}")
    if suppressed:
        text += f" ({suppressed} suppressed)"
    if result.errors:
        text += f"; {counted(len(result.errors), 'input error')}"
    return text


def counted(count: int, noun: str) -> str:
    """'1 file', '2 files', '0 files'."""
    return f"{count} {noun}{'' if count == 1 else 's'}"


def estimate_lines(result: LintResult, params: dict[str, Any]) -> Iterator[str]:
    """One line per multi-pod GPU training workload: how often to expect an interruption."""
    reference = params.get("interruption_reference")
    if not reference:
        return
    for number, item in enumerate(result.iter_estimates()):
        if number == 0:
            from kubegap_lint.engine.estimate import basis_text, interval_text  # only with estimates

            yield f"Expected interruptions {basis_text(reference)}:"
        loc = item.location
        yield no_command(safe_text(f"  {loc.path}:{loc.line}:{loc.column}: {item.resource.display()}:"
                                   f" {item.gpus} GPUs: one interruption every {interval_text(item.interval_days)}"))


def statistics_lines(result: LintResult) -> Iterator[str]:
    """How many counted findings each rule gave, most first (then by rule id), like ruff's
    --statistics: count, rule id, rule name, severity."""
    counts: dict[tuple[str, str, str], int] = {}
    for finding in result.iter_findings():
        if finding.suppression is None:
            key = (finding.rule_id, finding.rule_name, finding.severity.value)
            counts[key] = counts.get(key, 0) + 1
    rows = sorted(counts.items(), key=lambda item: (-item[1], item[0][0]))
    width = max((len(str(count)) for _, count in rows), default=1)
    name_width = max((len(name) for (_, name, _), _ in rows), default=0)
    for (rule_id, name, severity), count in rows:
        yield f"{count:>{width}}  {rule_id}  {name:<{name_width}}  {severity}"


def text_lines(result: LintResult, colour: bool = False, show_suppressed: bool = False,
               params: dict[str, Any] | None = None, summary: bool = True, estimates: bool = True,
               statistics: bool = False) -> Iterator[str]:
    """The report a line at a time (with its line end), as the stored findings are read:
    findings (or, with `statistics`, counts per rule), the interruption estimate, the summary."""
    if statistics:
        for line in statistics_lines(result):
            yield line + "\n"
    else:
        for finding in result.iter_findings():
            if show_suppressed or finding.suppression is None:
                yield finding_line(finding, colour) + "\n"
    if estimates:
        for line in estimate_lines(result, params or {}):
            yield line + "\n"
    if summary:
        yield summary_line(result) + "\n"


def render_text(result: LintResult, colour: bool = False, show_suppressed: bool = False,
                params: dict[str, Any] | None = None) -> str:
    return "".join(text_lines(result, colour, show_suppressed, params))
