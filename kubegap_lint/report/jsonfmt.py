"""JSON output for scripts. The shape is versioned and described by schemas/output.schema.json."""

from __future__ import annotations

import json
from typing import Any

from kubegap_lint import __version__
from kubegap_lint.fingerprint import fingerprint
from kubegap_lint.lint import LintResult
from kubegap_lint.model import Finding, Location

OUTPUT_VERSION = 1


def _location(loc: Location) -> dict[str, Any]:
    return {"path": loc.path, "line": loc.line, "column": loc.column}


def finding_dict(finding: Finding, catalog_incidents: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {
        "rule": finding.rule_id,
        "name": finding.rule_name,
        "severity": finding.severity.value,
        "message": finding.message,
        "location": _location(finding.location),
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
    if finding.extra:
        out["extra"] = finding.extra
    return out


def _estimates(result: LintResult, params: dict[str, Any]) -> list[dict[str, Any]]:
    from kubegap_lint.estimate import basis_text

    reference = params.get("interruption_reference")
    if not reference:
        return []
    return [
        {
            "resource": {"apiVersion": e.resource.api_version, "kind": e.resource.kind,
                         "namespace": e.resource.namespace, "name": e.resource.name},
            "location": _location(e.location),
            "gpus": e.gpus,
            "interval_days": round(e.interval_days, 3),
            "basis": basis_text(reference),
            "incident": reference.get("incident"),
        }
        for e in result.estimates
    ]


def render_json(result: LintResult, params: dict[str, Any] | None = None) -> str:
    stats = result.stats
    counted = result.counted()
    document = {
        "version": OUTPUT_VERSION,
        "tool": {"name": "kubegap-lint", "version": __version__},
        "summary": {
            "files": stats.files,
            "documents": stats.documents,
            "empty_documents": stats.empty_documents,
            "non_kubernetes_documents": stats.non_kubernetes_documents,
            "resources": stats.resources,
            "workloads": result.workloads,
            "findings": {s: sum(1 for f in counted if f.severity.value == s) for s in ("error", "warning", "note")},
            "suppressed": len(result.findings) - len(counted),
            "input_errors": len(result.errors),
        },
        "findings": [finding_dict(f, result.catalog.incidents) for f in result.findings],
        "estimates": _estimates(result, params or {}),
        "errors": [
            {"path": e.path, "line": e.line, "column": e.column, "message": e.message} for e in result.errors
        ],
    }
    return json.dumps(document, indent=2, sort_keys=False, ensure_ascii=True) + "\n"
