"""Annotated examples: `# expect: KGnnn` names a finding on the next line that is not a comment,
at the column where that line's field starts (after indentation and list dashes), or at the
column written as `KGnnn@12` when the finding points inside the line (a flow mapping's key).

Used by the test suite for the built-in policies and by `kubegap-lint policies check` for a
user's own, so both are held to the same standard: a bad-*.yaml file produces exactly its
annotated findings of the policy, at those lines and columns; a good-*.yaml file produces none.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

_EXPECT_RE = re.compile(r"#\s*expect:\s*((?:KG\d{3}(?:@\d+)?[\s,]*)+)")
_ENTRY_RE = re.compile(r"(KG\d{3})(?:@(\d+))?")


def field_column(line: str) -> int:
    """The column where a line's field starts: past the indentation and any list dashes."""
    column = len(line) - len(line.lstrip())
    while line[column : column + 2] == "- ":
        column += 2
        column += len(line[column:]) - len(line[column:].lstrip())
    return column + 1


def expected_findings(path: Path) -> set[tuple[str, int, int]]:
    """(rule id, line, column) triples; the line is the first line after the comment that is not
    a comment, the column where that line's field starts unless written as `KGnnn@column`."""
    lines = path.read_bytes().decode("utf-8", errors="replace").splitlines()
    found: set[tuple[str, int, int]] = set()
    for number, line in enumerate(lines, start=1):
        match = _EXPECT_RE.search(line)
        if not match:
            continue
        target = number + 1
        while target <= len(lines) and lines[target - 1].strip().startswith("#") and not _EXPECT_RE.search(lines[target - 1]):
            target += 1
        default = field_column(lines[target - 1]) if target <= len(lines) else 1
        for rule, column in _ENTRY_RE.findall(match.group(1)):
            found.add((rule, target, int(column) if column else default))
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


def example_paths(folder: Path) -> list[Path]:
    """A policy's examples: bad-*.yaml and good-*.yaml files, and bad-*/ and good-*/ folders (an
    input that is a tree, such as a chart, linted as `kubegap-lint FOLDER` reads it)."""
    return sorted(p for p in folder.iterdir() if p.suffix == ".yaml" or (p.is_dir() and p.name.startswith(("bad-", "good-"))))


def _folder_expectations(folder: Path) -> set[tuple[str, int, int]]:
    """A folder example's annotations, each line numbered in its file (the file's path first)."""
    found: set[tuple[str, int, int]] = set()
    for file in sorted(p for p in folder.rglob("*") if p.is_file()):
        name = file.relative_to(folder).as_posix()
        found |= {(f"{name}|{rule}", line, column) for rule, line, column in expected_findings(file)}
    return found


def check_example(path: Path, rule: str, linter: Any, lint_tree: Any = None) -> ExampleResult:
    """Lint one example (a file, or a folder with `lint_tree(linter, folder)`: the command
    line's reading) and compare the rule's findings with its annotations."""
    if path.is_dir():
        result = lint_tree(linter, str(path))
        folder = path.resolve()

        def key(f: Any) -> str:
            try:
                name = Path(f.location.path).resolve().relative_to(folder).as_posix()
            except ValueError:
                name = f.location.path
            return f"{name}|{f.rule_id}"
        expected_all = _folder_expectations(path)
    else:
        result = linter.lint_paths([str(path)])

        def key(f: Any) -> str:
            return str(f.rule_id)
        expected_all = expected_findings(path)
    problems = [f"input error: {e.display()}" for e in result.errors]
    actual = {(key(f), f.location.line, f.location.column) for f in result.findings if f.rule_id == rule}
    expected = {(r, line, column) for r, line, column in expected_all if r.rsplit("|", 1)[-1] == rule}
    if path.name.startswith("good"):
        problems += [f"{_file(k)}line {line}: unexpected {rule} finding (a good example triggers nothing)"
                     for k, line, _ in sorted(actual)]
        if expected:
            problems.append("a good example carries no `# expect:` annotation")
    elif path.name.startswith("bad"):
        if not expected:
            problems.append(f"no `# expect: {rule}` annotation")
        problems += [f"{_file(k)}line {line} column {column}: expected {rule}, not found"
                     for k, line, column in sorted(expected - actual)]
        problems += [f"{_file(k)}line {line} column {column}: unexpected {rule} finding (annotate it with"
                     f" `# expect: {rule}` on the line before, `{rule}@{column}` inside a line)"
                     for k, line, column in sorted(actual - expected)]
    else:
        problems.append("example files are named bad-*.yaml or good-*.yaml")
    return ExampleResult(path, rule, problems)


def _file(key: str) -> str:
    """The file of a folder example's finding, to put before its line ("" for a file example)."""
    return f"{key.rsplit('|', 1)[0]}: " if "|" in key else ""
