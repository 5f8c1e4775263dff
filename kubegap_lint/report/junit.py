"""JUnit XML for CI test reports (GitLab `artifacts: reports: junit:`, Jenkins, Azure): one test
case per workload and active rule, failed by that rule's findings on that workload.

Findings that belong to no workload linted (an input fault, a rule about a whole file) are test
cases of their own, and every input that could not be read is a test case with an `error`: a
run that judged nothing never shows as all green. The counts sit in the opening tags, so the
findings are grouped in memory before the first byte is written (unlike text and JSON).
"""

from __future__ import annotations

from collections.abc import Iterator
from xml.sax.saxutils import escape, quoteattr

from kubegap_lint import __version__
from kubegap_lint.core.model import Finding, InputError, Location, ResourceRef
from kubegap_lint.engine.run import LintResult
from kubegap_lint.report.sanitize import safe_text

# A workload's identity: the file it was read from and its resource.
_Key = tuple[str, str, str | None, str | None]


def _key(path: str, ref: ResourceRef | None) -> _Key:
    return (path, ref.kind, ref.namespace, ref.name) if ref else (path, "", None, None)


def _read_path(finding: Finding) -> str:
    """The file the workload was read from (the rendered file of a finding mapped to a template)."""
    return (finding.rendered_location or finding.location).path


def _attr(text: str) -> str:
    return quoteattr(safe_text(text))


def _body(lines: list[str]) -> str:
    """One line each (a message's own line breaks become spaces), escaped for XML."""
    return escape("\n".join(safe_text(line) for line in lines))


def _finding_text(finding: Finding) -> str:
    loc = finding.location
    return f"{loc.path}:{loc.line}:{loc.column}: {finding.severity.value} {finding.message}"


class _Case:
    def __init__(self, classname: str, name: str, place: Location | None) -> None:
        self.classname = classname
        self.name = name
        self.place = place
        self.findings: list[Finding] = []
        self.error: InputError | None = None

    def failed(self) -> bool:
        return any(f.suppression is None for f in self.findings)

    def skipped(self) -> bool:
        return bool(self.findings) and not self.failed()

    def xml(self) -> str:
        where = ""
        if self.place is not None:
            where = f" file={_attr(self.place.path)} line=\"{self.place.line}\""
        head = f"    <testcase classname={_attr(self.classname)} name={_attr(self.name)}{where}"
        if self.error is not None:
            return (f"{head}>\n      <error type=\"input-error\" message={_attr(self.error.message)}>"
                    f"{_body([self.error.display()])}</error>\n    </testcase>\n")
        counted = [f for f in self.findings if f.suppression is None]
        if counted:
            first = counted[0]
            text = [_finding_text(f) for f in counted]
            return (f"{head}>\n      <failure type={_attr(first.rule_id)} message={_attr(first.message)}>"
                    f"{_body(text)}</failure>\n    </testcase>\n")
        if self.findings:
            reasons = "; ".join(sorted({f"{f.suppression.kind}: {f.suppression.reason}"
                                        for f in self.findings if f.suppression is not None}))
            return f"{head}>\n      <skipped message={_attr('suppressed by ' + reasons)}/>\n    </testcase>\n"
        return f"{head}/>\n"


def _cases(result: LintResult) -> list[_Case]:
    rules = [(p.id, p.name) for p in result.policies]
    cases: list[_Case] = []
    by_workload: dict[_Key, dict[str, _Case]] = {}
    for ref, place in result.iter_workloads():
        key = _key(place.path, ref)
        if key in by_workload:  # the same resource twice in one file: one set of cases
            continue
        classname = f"{place.path} {ref.display()}"
        row = by_workload[key] = {}
        for rule_id, name in rules:
            row[rule_id] = _Case(classname, f"{rule_id} {name}", place)
            cases.append(row[rule_id])
    loose: dict[tuple[str, str], _Case] = {}  # findings outside every workload: by file and rule
    for finding in result.iter_findings():
        row = by_workload.get(_key(_read_path(finding), finding.resource), {})
        case = row.get(finding.rule_id)
        if case is None:
            loose_key = (finding.location.path, finding.rule_id)
            case = loose.get(loose_key)
            if case is None:
                case = loose[loose_key] = _Case(finding.location.path, f"{finding.rule_id} {finding.rule_name}",
                                                finding.location)
                cases.append(case)
        case.findings.append(finding)
    for error in result.errors:
        case = _Case(error.path, "input not linted",
                     Location(error.path, error.line or 1, error.column or 1))
        case.error = error
        cases.append(case)
    return cases


def junit_pieces(result: LintResult) -> Iterator[str]:
    cases = _cases(result)
    tests = len(cases)
    failures = sum(1 for c in cases if c.failed())
    errors = sum(1 for c in cases if c.error is not None)
    skipped = sum(1 for c in cases if c.skipped())
    counts = f'tests="{tests}" failures="{failures}" errors="{errors}" skipped="{skipped}"'
    yield '<?xml version="1.0" encoding="UTF-8"?>\n'
    yield f'<testsuites name="kubegap-lint" {counts}>\n'
    yield f'  <testsuite name="kubegap-lint {__version__}" {counts}>\n'
    for case in cases:
        yield case.xml()
    yield "  </testsuite>\n</testsuites>\n"
