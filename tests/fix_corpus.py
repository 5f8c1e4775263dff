"""The corpus check of the autofix (issue 32): every fix, safe and unsafe, applied to every
manifest of ../shared/corpus (in memory: the corpus is never written).

For each file: the fixed text parses, keeps every comment and every line no edit touched, has
no finding left of the rules fixed in it and no new finding of any rule, is unchanged by a
second fix, and its core-kind documents validate against the Kubernetes OpenAPI schema
(kubernetes-validate). `python tests/fix_corpus.py` prints the counts (docs/corpus-report.md).
"""

from __future__ import annotations

import re
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from kubegap_lint.engine.run import Linter
from kubegap_lint.fix.files import decode, plan

CORE_GROUPS = {"v1", "apps/v1", "batch/v1", "policy/v1"}
K8S_VERSION = "1.33.0"  # a schema kubernetes-validate ships; the corpus's kinds are stable across 1.2x-1.3x
_COMMENT = re.compile(r"(?:^|\s)(#.*)$")


def _identity(finding: Any) -> tuple[Any, ...]:
    resource = finding.resource.display() if finding.resource else None
    return (finding.rule_id, resource, finding.document_index, finding.container)


def _loose(line: str) -> tuple[str, str]:
    """A line's key part and its comment: what a scalar edit keeps."""
    match = _COMMENT.search(line)
    code = line[:match.start(1)] if match else line
    return code.split(":")[0], match.group(1) if match else ""


def comments_kept(before: str, after: str) -> list[str]:
    """Problems: a line of `before` not found, in order, in `after`, as it was or with only its
    value changed (its key and comment kept)."""
    old, new = before.splitlines(keepends=True), after.splitlines(keepends=True)
    problems: list[str] = []
    at = 0
    for number, line in enumerate(old, 1):
        found = next((j for j in range(at, len(new)) if new[j] == line or _loose(new[j]) == _loose(line)), None)
        if found is None:
            problems.append(f"line {number} lost: {line!r}")
        else:
            at = found + 1
    return problems


def validate_core(text: str) -> tuple[int, list[str]]:
    """The core-kind documents of `text` checked against the OpenAPI schema: (count, errors)."""
    import kubernetes_validate
    from ruamel.yaml import YAML

    count, errors = 0, []
    for document in YAML(typ="safe", pure=True).load_all(text):
        if not isinstance(document, dict) or document.get("apiVersion") not in CORE_GROUPS:
            continue
        count += 1
        try:
            kubernetes_validate.validate(document, K8S_VERSION, strict=True)
        except kubernetes_validate.ValidationError as exc:
            errors.append(f"{document.get('kind')}: {exc.message}")
        except kubernetes_validate.SchemaNotFoundError:
            count -= 1
    return count, errors


def check_file(linter: Linter, path: str, text: str) -> dict[str, Any]:
    """One file's check: what was fixed and what went wrong."""
    from ruamel.yaml import YAML

    before = list(linter.lint_texts([(path, text)]).iter_findings())
    files = plan(before, lambda _: text, linter.params, unsafe=True)
    out: dict[str, Any] = {"applied": Counter(), "problems": [], "validated": 0, "invalid_before": 0}
    if not files or not files[0].changed:
        return out
    fixed = files[0].fixed
    out["applied"] = Counter(fix.rule_id for fix in files[0].applied)
    problems = out["problems"]
    try:
        list(YAML(typ="safe", pure=True).load_all(fixed))
    except Exception as exc:  # noqa: BLE001 - any parse failure is the finding
        problems.append(f"does not parse: {exc}")
        return out
    problems += comments_kept(text, fixed)
    after = list(linter.lint_texts([(path, fixed)]).iter_findings())
    fixed_rules = set(out["applied"])
    left = Counter(_identity(f) for f in after)
    was = Counter(_identity(f) for f in before)
    for identity, count in left.items():
        if count > was.get(identity, 0) and identity[0] not in fixed_rules:
            problems.append(f"new finding {identity}")
    applied_places = {(fix.rule_id,) for fix in files[0].applied}
    for finding in after:
        if (finding.rule_id,) in applied_places and _identity(finding) in {_identity(f) for f in before
                                                                            if _was_fixed(f, files[0])}:
            problems.append(f"still there: {_identity(finding)} {finding.message[:80]}")
    again = plan(after, lambda _: fixed, linter.params, unsafe=True)
    if again and again[0].changed:
        problems.append("a second fix changes the file")
    count, errors = validate_core(fixed)
    _, errors_before = validate_core(text)
    out["validated"] = count
    out["invalid_before"] = len(errors_before)
    problems += [f"schema: {e}" for e in errors if e not in errors_before]
    return out


def _was_fixed(finding: Any, file: Any) -> bool:
    from kubegap_lint.fix.compute import finding_key

    fix = file.fixes.get(finding_key(finding))
    return fix is not None and fix in file.applied


def corpus_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.suffix in (".yaml", ".yml") and p.is_file())


def run(root: Path) -> dict[str, Any]:
    linter = Linter()
    totals: dict[str, Any] = {"files": 0, "changed": 0, "applied": Counter(), "validated": 0, "invalid_before": 0,
                              "problems": {}}
    for path in corpus_files(root):
        text = decode(path.read_bytes())
        if text is None:
            continue
        totals["files"] += 1
        result = check_file(linter, str(path), text)
        if result["applied"]:
            totals["changed"] += 1
        totals["applied"].update(result["applied"])
        totals["validated"] += result["validated"]
        totals["invalid_before"] += result["invalid_before"]
        if result["problems"]:
            totals["problems"][str(path)] = result["problems"]
    return totals


if __name__ == "__main__":
    outcome = run(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).parent.parent.parent / "shared" / "corpus")
    print(f"files {outcome['files']}, changed {outcome['changed']}, core documents of changed files validated"
          f" {outcome['validated']} ({outcome['invalid_before']} schema errors before the fix)")
    print("fixes applied:", dict(sorted(outcome["applied"].items())))
    for path, problems in outcome["problems"].items():
        print(path, problems[:5])
    sys.exit(1 if outcome["problems"] else 0)
