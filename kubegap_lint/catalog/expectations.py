"""Annotated examples: `# expect: KGnnn` names a finding on the next line that is not a comment.

Used by the test suite for the built-in policies and by `kubegap-lint policies check` for a
user's own, so both are held to the same standard: a bad-*.yaml file produces exactly its
annotated findings of the policy, at those lines; a good-*.yaml file produces none.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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


def example_folders(examples_dir: Path) -> list[Path]:
    return sorted(p for p in examples_dir.glob("KG[0-9][0-9][0-9]-*") if p.is_dir())


def example_selection(policy: Any) -> list[str] | None:
    """Which rules run for a policy's examples: the policy alone, so no example depends on
    another policy; except input rules about suppressions, which judge the other rules'
    findings and therefore run with the default set."""
    return None if policy.scope == "input" else [policy.id]


@dataclass
class ExampleResult:
    path: Path
    rule: str
    problems: list[str]


def check_example(path: Path, rule: str, linter: Any) -> ExampleResult:
    """Lint one example file and compare the rule's findings with its annotations."""
    result = linter.lint_paths([str(path)])
    problems = [f"input error: {e.display()}" for e in result.errors]
    actual = {(f.rule_id, f.location.line) for f in result.findings if f.rule_id == rule}
    expected = {(r, line) for r, line in expected_findings(path) if r == rule}
    if path.name.startswith("good"):
        problems += [f"line {line}: unexpected {rule} finding (a good example triggers nothing)"
                     for _, line in sorted(actual)]
        if expected:
            problems.append("a good example carries no `# expect:` annotation")
    elif path.name.startswith("bad"):
        if not expected:
            problems.append(f"no `# expect: {rule}` annotation")
        problems += [f"line {line}: expected {rule}, not found" for _, line in sorted(expected - actual)]
        problems += [f"line {line}: unexpected {rule} finding (annotate it with `# expect: {rule}`)"
                     for _, line in sorted(actual - expected)]
    else:
        problems.append("example files are named bad-*.yaml or good-*.yaml")
    return ExampleResult(path, rule, problems)
