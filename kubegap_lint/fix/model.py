"""The records of a fix: text edits at character offsets, and the fix that groups them."""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from typing import Any

SAFE = "safe"
UNSAFE = "unsafe"  # chooses a value for the user: applied only with --unsafe-fixes


@dataclass(frozen=True)
class Edit:
    """Replace text[start:end] (character offsets) with `text`; start == end inserts."""

    start: int
    end: int
    text: str


@dataclass(frozen=True)
class Fix:
    """What closes one finding: its edits (none when only the user can decide), whether it
    chooses a value for the user, one line that says what it does, and the catalog evidence
    ids behind any value it writes."""

    rule_id: str
    applicability: str
    description: str
    edits: tuple[Edit, ...] = ()
    evidence: tuple[str, ...] = ()

    @property
    def applies(self) -> bool:
        return bool(self.edits)


class LineMap:
    """Character offsets of one text to 1-based lines and columns (code points), and back."""

    def __init__(self, text: str) -> None:
        self.starts = [0]
        for index, char in enumerate(text):
            if char == "\n":
                self.starts.append(index + 1)
        self.length = len(text)

    def position(self, offset: int) -> tuple[int, int]:
        line = bisect.bisect_right(self.starts, offset) - 1
        return line + 1, offset - self.starts[line] + 1


def edit_dict(edit: Edit, lines: LineMap) -> dict[str, Any]:
    """An edit as JSON: the replaced range (1-based; the end is exclusive) and the new text."""
    start_line, start_column = lines.position(edit.start)
    end_line, end_column = lines.position(edit.end)
    return {"start": {"line": start_line, "column": start_column},
            "end": {"line": end_line, "column": end_column}, "text": edit.text}


def fix_dict(fix: Fix, lines: LineMap) -> dict[str, Any]:
    """The JSON `fix` object of a finding."""
    return {"applicability": fix.applicability, "description": fix.description,
            "evidence": list(fix.evidence), "edits": [edit_dict(edit, lines) for edit in fix.edits]}
