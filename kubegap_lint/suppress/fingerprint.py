"""A finding's identity that survives edits elsewhere in the file: used by the baseline,
SARIF partialFingerprints and the JSON output."""

from __future__ import annotations

import hashlib

from kubegap_lint.core.model import Finding


def fingerprint(finding: Finding) -> str:
    """Rule, file (the rendered file for Helm-mapped findings), template, resource identity and
    the node's path inside the resource; never a line number."""
    ref = finding.resource
    path = finding.rendered_location.path if finding.rendered_location else finding.location.path
    identity = "|".join([
        finding.rule_id,
        path,
        finding.template or "",
        ref.kind if ref else "",
        (ref.namespace or "") if ref else "",
        (ref.name or "") if ref else "",
        finding.node_path,
    ])
    return hashlib.sha256(identity.encode("utf-8", "surrogatepass")).hexdigest()[:32]
