"""The fixes of a run, file by file: what each finding's fix is, and each file's fixed text."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from kubegap_lint.core.model import Finding
from kubegap_lint.fix.apply import apply_fixes, wanted
from kubegap_lint.fix.compute import UNTOUCHABLE, FindingKey, file_fixes, finding_key
from kubegap_lint.fix.model import Fix, LineMap, fix_dict


@dataclass
class FileFixes:
    """One file: its text as linted, the fix of each of its findings, the text with the wanted
    fixes applied and those fixes."""

    path: str
    text: str
    fixes: dict[FindingKey, Fix]
    fixed: str = ""
    applied: list[Fix] = field(default_factory=list)
    faulty: bool = False  # it holds an input fault, so it is never edited (compute.UNTOUCHABLE)

    @property
    def changed(self) -> bool:
        return self.fixed != self.text


def decode(data: bytes) -> str | None:
    """A file's text, or None when it is not UTF-8 (it is then never edited)."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def plan(findings: Iterable[Finding], text_of: Callable[[str], str | None], params: dict[str, Any],
         unsafe: bool) -> list[FileFixes]:
    """The fixes of the findings of each file `text_of` gives a text for (None: not editable)."""
    by_path: dict[str, list[Finding]] = {}
    for finding in findings:
        by_path.setdefault(finding.location.path, []).append(finding)
    out: list[FileFixes] = []
    for path in sorted(by_path):
        text = text_of(path)
        if text is None:
            continue
        fixes = file_fixes(text, by_path[path], params)
        fixed, applied = apply_fixes(text, [fix for fix in fixes.values() if wanted(fix, unsafe)])
        faulty = any(f.rule_id in UNTOUCHABLE and f.suppression is None for f in by_path[path])
        out.append(FileFixes(path, text, fixes, fixed, applied, faulty))
    return out


class FixLookup:
    """The fix of a finding, for the reports (JSON `fix`, SARIF `fixes`)."""

    def __init__(self, files: Iterable[FileFixes]) -> None:
        self.fixes: dict[FindingKey, tuple[Fix, LineMap]] = {}
        for file in files:
            lines = LineMap(file.text)
            for key, fix in file.fixes.items():
                self.fixes[key] = (fix, lines)

    def get(self, finding: Finding) -> tuple[Fix, LineMap] | None:
        return self.fixes.get(finding_key(finding))

    def json(self, finding: Finding) -> dict[str, Any] | None:
        found = self.get(finding)
        return fix_dict(*found) if found is not None else None
