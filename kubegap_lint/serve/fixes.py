"""Where fixes plug in: the one place the servers ask for them.

`suggest(...)` returns, for a file's text and its findings (the CLI's JSON finding objects),
each finding's fix (issue 32, kubegap_lint/fix/): its applicability, description, text edits
(1-based ranges, the end exclusive) and the unified diff of that fix alone, for MCP's
`suggest_fixes` and the language server's quick fixes and fix-all. Fixes are proposed, never
written by a server.

`available()` stays False until `mcp.py`'s `suggest_fixes` and `lsp.py`'s code actions call
`suggest()`: it is what registers them, and a registered tool must not answer "not built".
"""

from __future__ import annotations

from typing import Any

from kubegap_lint.core.model import Finding, Location, Severity


def available() -> bool:
    return False


def _finding(path: str, data: dict[str, Any]) -> Finding:
    """A JSON finding object back as a Finding, with what a fix reads of it."""
    loc = data.get("location") or {}
    return Finding(
        rule_id=str(data.get("rule", "")), rule_name=str(data.get("name", "")),
        severity=Severity.parse(str(data.get("severity", "note"))), message=str(data.get("message", "")),
        location=Location(path, int(loc.get("line") or 1), int(loc.get("column") or 1)),
        template=data.get("template"), key_path=tuple(loc.get("path_in_document") or ()),
        missing=loc.get("missing"), evidence=tuple(e.get("id", "") for e in data.get("evidence") or ()))


def suggest(path: str, text: str, findings: list[dict[str, Any]], params: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """Each finding's fix in `text` (findings whose rule has no fix are left out); `params` are
    the rules' parameters (default: the built-in ones)."""
    from kubegap_lint.fix.apply import apply_edits, unified_diff
    from kubegap_lint.fix.compute import file_fixes, finding_key
    from kubegap_lint.fix.model import LineMap, fix_dict

    if params is None:
        from kubegap_lint.engine.run import Linter

        params = Linter().params
    pairs = [(data, _finding(path, data)) for data in findings if isinstance(data, dict)]
    fixes = file_fixes(text, [finding for data, finding in pairs if not data.get("suppressed")], params)
    lines = LineMap(text)
    out: list[dict[str, Any]] = []
    for data, finding in pairs:
        fix = fixes.get(finding_key(finding))
        if fix is None:
            continue
        out.append({"rule": finding.rule_id, "fingerprint": data.get("fingerprint"), **fix_dict(fix, lines),
                    "diff": unified_diff(text, apply_edits(text, fix.edits), path) if fix.edits else ""})
    return out
