"""JSON output for scripts. The shape is versioned and described by schemas/output.schema.json."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from kubegap_lint import __version__
from kubegap_lint.core.jsonpieces import _escape, indented, json_with_lists, scalar
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


def _flat(values: Any, newline: str) -> str:
    """indented(list(values), newline) for values of the fields' scalar types."""
    if not values:
        return "[]"
    inner = newline + "  "
    return "[" + inner + ("," + inner).join([
        _escape(v) if type(v) is str else int.__repr__(v) if type(v) is int else scalar(v, inner)
        for v in values]) + newline + "]"


def finding_json(finding: Finding, catalog_incidents: dict[str, Any], newline: str = "\n") -> str:
    """indented(finding_dict(finding, catalog_incidents), newline), byte for byte, written
    straight from the finding's fields (tests/test_json_report.py holds the two together):
    a report writes thousands, and the dict and the general writer cost thrice this."""
    return FindingWriter(catalog_incidents).write(finding, newline)


def _joints(newline: str) -> tuple[str, ...]:
    """The fixed text between a finding's values, for findings written at `newline`."""
    n1 = newline + "  "
    n2 = n1 + "  "
    return (
        "," + n1 + '"location": {' + n2 + '"path": ',
        "," + n2 + '"line": ',
        "," + n2 + '"column": ',
        "," + n2 + '"end_line": ',
        "," + n2 + '"end_column": ',
        "," + n2 + '"path_in_document": ',
        "," + n2 + '"missing": ',
        n1 + "}," + n1 + '"resource": ',
        "," + n1 + '"role": ',
        "," + n1 + '"container": ',
        "," + n1 + '"document": ',
        "," + n1 + '"template": ',
        "," + n1 + '"rendered_location": ',
        "," + n1 + '"approximate": ',
        "," + n1 + '"fingerprint": ',
        "," + n1 + '"evidence": ',
        "," + n1 + '"suppressed": ',
        "," + n1 + '"found_by": ',
    )


class FindingWriter:
    """finding_json for the findings of one report. What the findings of one rule share (its
    id, name, severity and evidence, written the same for each) is written once a report; so
    is the resource, for the run of findings about one resource (sorted, they come together),
    the file's path, and the fixed text between the values."""

    def __init__(self, catalog_incidents: dict[str, Any], fixes: Any = None) -> None:
        self._fixes = fixes
        self.incidents = catalog_incidents
        self._heads: dict[tuple[Any, ...], str] = {}  # rule, name, severity, newline -> its text
        self._evidence: dict[tuple[Any, ...], str] = {}  # evidence, newline -> its text
        self._resource: tuple[Any, ...] = ()  # the last resource's fields and newline, and its text
        self._path: tuple[Any, str] = (None, "")  # the last location path and its text
        # The last resource object written (a frozen ResourceRef of texts), its newline and text.
        self._ref: Any = None
        self._ref_newline = ""
        self._ref_text = ""
        self._joints: dict[str, tuple[str, ...]] = {}

    def _head(self, finding: Finding, newline: str) -> str:
        n1 = newline + "  "
        return "".join(["{", n1, '"rule": ', scalar(finding.rule_id, n1), ",", n1, '"name": ',
                        scalar(finding.rule_name, n1), ",", n1, '"severity": ', scalar(finding.severity.value, n1),
                        ",", n1, '"message": '])

    def _evidence_text(self, evidence: tuple[str, ...], newline: str) -> str:
        incidents = self.incidents
        chosen = [e for e in evidence if e in incidents]
        if not chosen:
            return "[]"
        n1 = newline + "  "
        n2 = n1 + "  "
        n3 = n2 + "  "
        out = []
        for number, e in enumerate(chosen):
            incident = incidents[e]
            out += ["[" if number == 0 else ",", n2, "{", n3, '"id": ', scalar(e, n3),
                    ",", n3, '"title": ', scalar(incident.title, n3),
                    ",", n3, '"urls": ', _flat(list(incident.urls), n3), n2, "}"]
        out += [n1, "]"]
        return "".join(out)

    def _resource_text(self, resource: Any, newline: str) -> str:
        if resource is self._ref and newline == self._ref_newline:  # the findings of one pickled
            return self._ref_text  # batch share the object: no fields to compare
        fields = (resource.api_version, resource.kind, resource.namespace, resource.name, newline)
        if self._resource[:-1] == fields:
            self._ref, self._ref_newline, self._ref_text = resource, newline, self._resource[-1]
            return self._resource[-1]  # type: ignore[no-any-return]
        n1 = newline + "  "
        n2 = n1 + "  "
        text = "".join([
            "{", n2, '"apiVersion": ', scalar(fields[0], n2), ",", n2, '"kind": ', scalar(fields[1], n2),
            ",", n2, '"namespace": ', scalar(fields[2], n2), ",", n2, '"name": ', scalar(fields[3], n2), n1, "}"])
        # Kept only for texts and None: a value equal to one of them writes the same.
        if all(f is None or type(f) is str for f in fields):
            self._resource = (*fields, text)
            self._ref, self._ref_newline, self._ref_text = resource, newline, text
        return text

    def write(self, finding: Finding, newline: str = "\n") -> str:
        joints = self._joints.get(newline)
        if joints is None:
            joints = self._joints[newline] = _joints(newline)
        n1 = newline + "  "
        n2 = n1 + "  "
        loc = finding.location
        resource = finding.resource
        rendered = finding.rendered_location
        suppression = finding.suppression
        severity = finding.severity
        rule_id, rule_name = finding.rule_id, finding.rule_name
        if type(rule_id) is str and type(rule_name) is str and type(severity) is Severity:
            head_key = (rule_id, rule_name, severity, newline)
            head = self._heads.get(head_key)
            if head is None:
                head = self._heads[head_key] = self._head(finding, newline)
        else:  # only texts and a Severity are remembered: equal values write the same text
            head = self._head(finding, newline)
        evidence_key = (finding.evidence, newline)
        evidence = self._evidence.get(evidence_key)
        if evidence is None:
            evidence = self._evidence[evidence_key] = self._evidence_text(finding.evidence, newline)
        path = loc.path
        if self._path[0] is not path:
            self._path = (path, scalar(path, n2))
        line, column, end_line, end_column = loc.line, loc.column, loc.end_line or loc.line, loc.end_column
        message, missing = finding.message, finding.missing
        role, container, document, template = finding.role, finding.container, finding.document_index, finding.template
        found_by = finding.found_by
        out = [
            head, _escape(message) if type(message) is str else scalar(message, n1),
            joints[0], self._path[1],
            joints[1], int.__repr__(line) if type(line) is int else scalar(line, n2),
            joints[2], int.__repr__(column) if type(column) is int else scalar(column, n2),
            joints[3], int.__repr__(end_line) if type(end_line) is int else scalar(end_line, n2),
            joints[4], int.__repr__(end_column) if type(end_column) is int else scalar(end_column, n2),
            joints[5], _flat(finding.key_path, n2),
            joints[6], _escape(missing) if type(missing) is str else scalar(missing, n2),
            joints[7], "null" if resource is None else self._resource_text(resource, newline),
            joints[8], _escape(role) if type(role) is str else scalar(role, n1),
            joints[9], _escape(container) if type(container) is str else scalar(container, n1),
            joints[10], int.__repr__(document) if type(document) is int else scalar(document, n1),
            joints[11], _escape(template) if type(template) is str else scalar(template, n1),
            joints[12],
        ]
        if rendered is None:
            out.append("null")
        else:
            out += ["{", n2, '"path": ', scalar(rendered.path, n2),
                    ",", n2, '"line": ', scalar(rendered.line, n2),
                    ",", n2, '"column": ', scalar(rendered.column, n2), n1, "}"]
        approximate = finding.approximate
        out += [joints[13], "false" if approximate is False else "true" if approximate is True else scalar(approximate, n1),
                joints[14], _escape(fingerprint(finding)),
                joints[15], evidence,
                joints[16]]
        if suppression is None:
            out.append("null")
        else:
            out += ["{", n2, '"kind": ', scalar(suppression.kind, n2),
                    ",", n2, '"reason": ', scalar(suppression.reason, n2), n1, "}"]
        out += [joints[17], _escape(found_by) if type(found_by) is str else scalar(found_by, n1)]
        if finding.class_from is not None:
            out += [",", n1, '"class_from": ', indented(_class_from(finding.class_from), n1)]
        if finding.extra:
            out += [",", n1, '"extra": ', indented(finding.extra, n1)]
        if self._fixes is not None:
            fix = self._fixes.json(finding)
            out += [",", n1, '"fix": ', "null" if fix is None else indented(fix, n1)]
        out += [newline, "}"]
        return "".join(out)


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
    }, {"findings": FindingWriter(incidents, fixes).write})


def render_json(result: LintResult, params: dict[str, Any] | None = None) -> str:
    return "".join(json_pieces(result, params))
