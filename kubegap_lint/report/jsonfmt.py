"""JSON output for scripts. The shape is versioned and described by schemas/output.schema.json."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from kubegap_lint import __version__
from kubegap_lint.core.jsonpieces import indented, json_with_lists
from kubegap_lint.core.model import Finding, Location, Severity
from kubegap_lint.engine.run import LintResult
from kubegap_lint.suppress.fingerprint import fingerprint

OUTPUT_VERSION = 1


def _location(loc: Location) -> dict[str, Any]:
    return {"path": loc.path, "line": loc.line, "column": loc.column}


def _finding_location(finding: Finding) -> dict[str, Any]:
    """The location with its region's end (an end_column of null: to the end of that line),
    the key path of the node in its document, and the missing field when the place is its
    parent."""
    loc = finding.location
    out = _location(loc)
    out["end_line"] = loc.end_line or loc.line
    out["end_column"] = loc.end_column
    out["path_in_document"] = list(finding.key_path)
    out["missing"] = finding.missing
    return out


def finding_dict(finding: Finding, catalog_incidents: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {
        "rule": finding.rule_id,
        "name": finding.rule_name,
        "severity": finding.severity.value,
        "message": finding.message,
        "location": _finding_location(finding),
        "resource": None,
        "role": finding.role,
        "container": finding.container,
        "document": finding.document_index,
        "template": finding.template,
        "rendered_location": _location(finding.rendered_location) if finding.rendered_location else None,
        "approximate": finding.approximate,
        "fingerprint": fingerprint(finding),
        "evidence": [
            {"id": e, "title": catalog_incidents[e].title, "urls": list(catalog_incidents[e].urls)}
            for e in finding.evidence if e in catalog_incidents
        ],
        "suppressed": None,
        "found_by": finding.found_by,
    }
    if finding.resource is not None:
        out["resource"] = {
            "apiVersion": finding.resource.api_version,
            "kind": finding.resource.kind,
            "namespace": finding.resource.namespace,
            "name": finding.resource.name,
        }
    if finding.suppression is not None:
        out["suppressed"] = {"kind": finding.suppression.kind, "reason": finding.suppression.reason}
    if finding.class_from is not None:
        out["class_from"] = _class_from(finding.class_from)
    if finding.extra:
        out["extra"] = finding.extra
    return out


def _class_from(shape: tuple[str, str]) -> dict[str, str]:
    """A class read from the shape of a kind the table does not know (workloads/shape.py)."""
    return {"by": "shape", "class": shape[0], "field": shape[1]}


def _finding_writer(incidents: dict[str, Any], fixes: Any) -> Callable[[Finding, str], str]:
    """What writes each finding of the report: finding_dict, with its `fix` when the run has
    fixes (null when its rule has none)."""
    def write(finding: Finding, newline: str) -> str:
        data = finding_dict(finding, incidents)
        if fixes is not None:
            data["fix"] = fixes.json(finding)
        return indented(data, newline)

    return write


def _estimate_dicts(result: LintResult, params: dict[str, Any]) -> Iterator[dict[str, Any]]:
    from kubegap_lint.engine.estimate import basis_text

    reference = params.get("interruption_reference")
    if not reference:
        return
    basis = basis_text(reference)
    for e in result.iter_estimates():
        yield {
            "resource": {"apiVersion": e.resource.api_version, "kind": e.resource.kind,
                         "namespace": e.resource.namespace, "name": e.resource.name},
            "location": _location(e.location),
            "gpus": e.gpus,
            "interval_days": round(e.interval_days, 3),
            "basis": basis,
            "incident": reference.get("incident"),
        }


def json_pieces(result: LintResult, params: dict[str, Any] | None = None, fixes: Any = None) -> Iterator[str]:
    """The JSON report in pieces, without holding the findings in memory; with `fixes` (a
    fix.files.FixLookup), each finding has a `fix` (null when its rule has none)."""
    stats = result.stats
    tally = result.tally()
    summary = {
        "files": stats.files,
        "documents": stats.documents,
        "empty_documents": stats.empty_documents,
        "non_kubernetes_documents": stats.non_kubernetes_documents,
        "resources": stats.resources,
        "workloads": result.workloads,
        "findings": {s.value: tally.by_severity[s] for s in (Severity.ERROR, Severity.WARNING, Severity.NOTE)},
        "suppressed": tally.suppressed,
        "input_errors": len(result.errors),
    }
    document = {"version": OUTPUT_VERSION, "tool": {"name": "kubegap-lint", "version": __version__},
                "summary": summary}
    incidents = result.catalog.incidents
    errors = [{"path": e.path, "line": e.line, "column": e.column, "message": e.message} for e in result.errors]
    return json_with_lists(document, {
        "findings": result.iter_findings(),
        "estimates": _estimate_dicts(result, params or {}),
        "errors": iter(errors),
    }, {"findings": _finding_writer(incidents, fixes)})


def render_json(result: LintResult, params: dict[str, Any] | None = None) -> str:
    return "".join(json_pieces(result, params))
