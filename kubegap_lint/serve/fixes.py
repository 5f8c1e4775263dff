"""Where fixes plug in: the one place the servers ask for them.

The autofix (issue 32, kubegap_lint/fix/) computes each finding's fix; the servers only propose
it, never write a file:

- MCP's `suggest_fixes` reads the fixes the CLI's JSON report carries (`--show-fixes`): `suggest`
  turns each into what the tool returns, with the diff of that fix alone.
- The language server lints in-process: `document_fixes` computes the fixes of its findings,
  `fix_all` the text with the safe ones applied, and `text_changes` the line ranges that turn one
  text into another (what a code action's edit replaces).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from typing import Any

from kubegap_lint.core.model import Finding
from kubegap_lint.fix.model import Edit, Fix, LineMap


def available() -> bool:
    """The servers register `suggest_fixes` and the code actions (the autofix exists)."""
    return True


def _offset(lines: LineMap, point: dict[str, Any]) -> int:
    """A JSON position (1-based line and column, code points) as a character offset."""
    line = min(max(int(point["line"]), 1), len(lines.starts))
    return min(lines.starts[line - 1] + max(int(point["column"]), 1) - 1, lines.length)


def suggest(path: str, text: str, findings: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each finding's fix as the CLI's JSON report gives it (`--show-fixes`: findings without a
    fix and suppressed ones are left out), with the unified diff of that fix alone in `text`."""
    from kubegap_lint.fix.apply import apply_edits, unified_diff

    lines = LineMap(text)
    out: list[dict[str, Any]] = []
    for data in findings:
        fix = data.get("fix") if isinstance(data, dict) else None
        if not isinstance(fix, dict) or data.get("suppressed"):
            continue
        loc = data.get("location") or {}
        edits = [Edit(_offset(lines, e["start"]), _offset(lines, e["end"]), str(e["text"]))
                 for e in fix.get("edits") or ()]
        out.append({"rule": data.get("rule"), "fingerprint": data.get("fingerprint"),
                    "line": loc.get("line"), "column": loc.get("column"), "message": data.get("message"),
                    "applicability": fix.get("applicability"), "description": fix.get("description"),
                    "evidence": list(fix.get("evidence") or ()), "edits": list(fix.get("edits") or ()),
                    "diff": unified_diff(text, apply_edits(text, edits), path) if edits else ""})
    return out


def document_fixes(text: str, findings: Iterable[Finding], params: dict[str, Any]) -> list[tuple[Finding, Fix]]:
    """The findings of one document's `text` that have a fix, each with it (in their order)."""
    from kubegap_lint.fix.compute import file_fixes, finding_key

    findings = list(findings)
    fixes = file_fixes(text, findings, params)
    return [(f, fixes[finding_key(f)]) for f in findings if finding_key(f) in fixes]


def fix_one(text: str, fix: Fix) -> str:
    from kubegap_lint.fix.apply import apply_edits

    return apply_edits(text, fix.edits)


def fix_all(text: str, fixes: Iterable[Fix], unsafe: bool = False) -> str:
    """`text` with the safe fixes applied (and the unsafe ones with `unsafe`), as `--fix` does."""
    from kubegap_lint.fix.apply import apply_fixes, wanted

    return apply_fixes(text, [fix for fix in fixes if wanted(fix, unsafe)])[0]


def text_changes(before: str, after: str) -> list[tuple[int, int, str]]:
    """Non-overlapping replacements (start and end offsets in `before`, new text), in order, that
    make `after` of `before`: whole lines, as a line diff finds them."""
    old = before.splitlines(keepends=True)
    new = after.splitlines(keepends=True)
    starts = [0]
    for line in old:
        starts.append(starts[-1] + len(line))
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    return [(starts[i1], starts[i2], "".join(new[j1:j2]))
            for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal"]
