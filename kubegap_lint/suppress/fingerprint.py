"""A finding's identity that survives edits elsewhere in the file: used by the baseline,
SARIF partialFingerprints and the JSON output."""

from __future__ import annotations

import hashlib

from kubegap_lint.core.model import Finding


def fingerprint(finding: Finding, top: str | None = None) -> str:
    """Rule, file (the rendered file for Helm-mapped findings), template, resource identity and
    the node's path inside the resource; never a line number. With `top` (a baseline's git top
    level), the file as a path from it, so the run's working folder does not matter."""
    ref = finding.resource
    path = finding.rendered_location.path if finding.rendered_location else finding.location.path
    if top is not None:
        path = from_top(path, top)
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


def from_top(path: str, top: str) -> str:
    """A display path as a path from `top`; a path outside it, or no file (`<stdin>`), as is."""
    import os

    if path.startswith("<"):
        return path
    real = os.path.realpath(path)
    if real != top and not real.startswith(top.rstrip(os.sep) + os.sep):
        return path
    return os.path.relpath(real, top).replace(os.sep, "/")
