"""Read `# expect: KGnnn` annotations: each names a finding on the next non-comment line."""

from __future__ import annotations

import re
from pathlib import Path

_EXPECT_RE = re.compile(r"#\s*expect:\s*((?:KG\d{3}[\s,]*)+)")


def expected_findings(path: Path) -> set[tuple[str, int]]:
    """(rule id, line) pairs; the line is the first line after the comment that is not a comment."""
    lines = path.read_bytes().decode("utf-8", errors="replace").splitlines()
    found: set[tuple[str, int]] = set()
    for number, line in enumerate(lines, start=1):
        match = _EXPECT_RE.search(line)
        if not match:
            continue
        target = number + 1
        while target <= len(lines) and lines[target - 1].strip().startswith("#") and not _EXPECT_RE.search(lines[target - 1]):
            target += 1
        for rule in re.findall(r"KG\d{3}", match.group(1)):
            found.add((rule, target))
    return found
