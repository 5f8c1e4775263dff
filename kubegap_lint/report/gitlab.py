"""GitLab Code Quality JSON: an array of issues that GitLab shows in the merge request widget and
the diff (`artifacts: reports: codequality:`; docs/ci-formats.md).

Paths are relative to the repository root (the SARIF root: the git top level by default), as
GitLab reads them. GitLab keeps one issue per fingerprint, so the finding's fingerprint (the
baseline's: no line, to survive edits elsewhere, and the file from the root, so that the folder
the run started in does not matter) has the occurrence folded in when two findings share it. An input that could not be read is an issue too (`blocker`): never a silent green.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from itertools import chain
from typing import Any

from kubegap_lint.core.jsonpieces import indented
from kubegap_lint.core.model import Finding, InputError, Severity
from kubegap_lint.engine.run import LintResult
from kubegap_lint.report.sarif_paths import UriMapper, default_root
from kubegap_lint.suppress.fingerprint import fingerprint

# GitLab's levels are info, minor, major, critical, blocker; blocker is kept for inputs not linted.
SEVERITY = {Severity.ERROR: "critical", Severity.WARNING: "major", Severity.NOTE: "minor"}
INPUT_ERROR_CHECK = "kubegap-lint/input-error"


def _path(mapper: UriMapper, display: str) -> str:
    return mapper.relative_path(display) or display


def _unique(identity: str, seen: dict[str, int]) -> str:
    """The identity, or for its n-th repeat a hash of it and n: unique within the report."""
    count = seen.get(identity, 0)
    seen[identity] = count + 1
    if not count:
        return identity
    return hashlib.sha256(f"{identity}|{count}".encode()).hexdigest()[:32]


def finding_issue(finding: Finding, mapper: UriMapper, seen: dict[str, int]) -> dict[str, Any]:
    subject = f"{finding.resource.display()}: " if finding.resource else ""
    return {
        "description": f"{finding.rule_id} {finding.rule_name}: {subject}{finding.message}",
        "check_name": finding.rule_id,
        "fingerprint": _unique(fingerprint(finding, str(mapper.root)), seen),
        "severity": SEVERITY[finding.severity],
        "location": {"path": _path(mapper, finding.location.path),
                     "lines": {"begin": finding.location.line}},
        "categories": ["Bug Risk"],
    }


def error_issue(error: InputError, mapper: UriMapper, seen: dict[str, int]) -> dict[str, Any]:
    identity = hashlib.sha256(f"{INPUT_ERROR_CHECK}|{error.path}|{error.message}".encode(
        "utf-8", "surrogatepass")).hexdigest()[:32]
    return {
        "description": f"input not linted: {error.message}",
        "check_name": INPUT_ERROR_CHECK,
        "fingerprint": _unique(identity, seen),
        "severity": "blocker",
        "location": {"path": _path(mapper, error.path), "lines": {"begin": error.line or 1}},
        "categories": ["Bug Risk"],
    }


def gitlab_pieces(result: LintResult, mapper: UriMapper | None = None) -> Iterator[str]:
    """The report an issue at a time: suppressed findings are left out, as GitLab has no place
    for them."""
    mapper = mapper or UriMapper(default_root())
    seen: dict[str, int] = {}
    issues = (finding_issue(f, mapper, seen) for f in result.iter_findings() if f.suppression is None)
    errors = (error_issue(e, mapper, seen) for e in result.errors)
    first = True
    for issue in chain(issues, errors):
        yield ("[\n  " if first else ",\n  ") + indented(issue, "\n  ")
        first = False
    yield "[]\n" if first else "\n]\n"
