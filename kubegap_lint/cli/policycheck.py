"""`kubegap-lint policies check DIR`: hold a user's policy folder to the built-in standard.

Each policy file must load (schema, JMESPath that compiles, only known functions, evidence ids
found in the built-in catalog or the folder's own incidents.yaml), and each must have annotated
examples under DIR/examples/KGnnn-name/ that behave as annotated (kubegap_lint.catalog.expectations).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from kubegap_lint.core.errors import DataFileError

EXIT_OK, EXIT_FAILED, EXIT_ERROR = 0, 1, 2


def _function_names(node: Any) -> Iterable[str]:
    """Every function a compiled JMESPath expression calls."""
    if isinstance(node, dict):
        if node.get("type") == "function_expression":
            yield node["value"]
        for child in node.get("children", []):
            yield from _function_names(child)
    elif isinstance(node, list):
        for child in node:
            yield from _function_names(child)


def unknown_functions(policy: Any, known: set[str]) -> list[str]:
    from kubegap_lint.catalog.patterns import expressions

    names: set[str] = set()
    for _, expression in expressions(policy):
        names.update(_function_names(expression.parsed))
    return sorted(names - known)


def check_policy_dirs(folders: Iterable[str]) -> tuple[list[str], int]:
    """Report lines and the exit code."""
    from kubegap_lint.catalog.expectations import check_example, example_paths, example_selection
    from kubegap_lint.catalog.functions import PolicyFunctions
    from kubegap_lint.catalog.policies import load_catalog
    from kubegap_lint.config.settings import Settings
    from kubegap_lint.engine.inputs import lint_tree
    from kubegap_lint.engine.run import Linter

    dirs = [Path(f) for f in folders]
    missing = [f"{d}: not a folder" for d in dirs if not d.is_dir()]
    if missing:
        return missing, EXIT_ERROR
    try:
        catalog = load_catalog(dirs)
    except DataFileError as exc:
        return exc.messages, EXIT_ERROR
    wanted = {d.resolve() for d in dirs}
    own = [p for p in catalog.policies if Path(p.path).resolve().parent in wanted]
    errors: list[str] = []
    if not own:
        errors.append(f"{', '.join(map(str, dirs))}: no policy files (KGnnn-name.yaml)")
    known = set(PolicyFunctions({}).FUNCTION_TABLE)
    for policy in own:
        if policy.scope != "workload":
            errors.append(f"{policy.path}: scope: a custom policy is a workload policy;"
                          " input rules are reported by the reader itself")
        unknown = unknown_functions(policy, known)
        if unknown:
            errors.append(f"{policy.path}: unknown function(s) {', '.join(unknown)}; a policy may call"
                          " JMESPath's functions and those in docs/writing-policies.md")
    if errors:
        return errors, EXIT_ERROR

    lines: list[str] = []
    failed = False
    linters: dict[Any, Any] = {}
    for policy in own:
        folder = Path(policy.path).parent / "examples" / f"{policy.id}-{policy.name}"
        files = example_paths(folder) if folder.is_dir() else []
        bad = [f for f in files if f.name.startswith("bad")]
        good = [f for f in files if f.name.startswith("good")]
        problems: list[str] = []
        if not bad or not good:
            problems.append(f"{folder}: needs at least one bad-*.yaml and one good-*.yaml example")
        selection = example_selection(policy)
        key = tuple(selection) if selection else None
        if key not in linters:
            linters[key] = Linter(Settings(select=selection, policy_dirs=dirs), catalog=catalog)
        for path in files:
            outcome = check_example(path, policy.id, linters[key], lint_tree)
            problems += [f"{path}: {problem}" for problem in outcome.problems]
        if problems:
            failed = True
            lines.append(f"FAIL {policy.id} {policy.name}")
            lines += [f"  {problem}" for problem in problems]
        else:
            lines.append(f"ok   {policy.id} {policy.name}: {len(bad)} bad, {len(good)} good example(s)")
    lines.append(f"{len(own)} polic{'y' if len(own) == 1 else 'ies'} checked: "
                 + ("examples failed" if failed else "all pass"))
    return lines, EXIT_FAILED if failed else EXIT_OK
