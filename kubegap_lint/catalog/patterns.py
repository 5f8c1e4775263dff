"""Refuse regular expressions that could backtrack catastrophically, before any input is read.

Policies call `match(pattern, subject)` with a pattern written in the policy or taken from a
parameter. Python's `re` backtracks: a quantifier around something that can itself match in
many ways (`(a+)+`, `(a|a)*`, `(\\s*x?)*`) takes time exponential in the subject's length, and
the 4,096-character cap on subjects (functions.MAX_MATCH_SUBJECT) does not bound 2^4096. So a
pattern with an unbounded repeat whose body holds another repeat or an alternation is refused
with an error naming the policy file and field; everything else runs in time polynomial in
the (capped) subject.
"""

from __future__ import annotations

import re
from typing import Any

try:  # Python 3.11+
    import re._parser as _sre  # type: ignore[import-not-found]
except ImportError:  # pragma: no cover - Python 3.10
    import sre_parse as _sre  # type: ignore[no-redef]

_REPEATS = {"MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"}
_AMBIGUOUS = _REPEATS | {"BRANCH"}


def _ambiguous_inside(items: Any) -> bool:
    """Does this parsed body hold a repeat (of more than one) or an alternation?"""
    stack = [items]
    while stack:
        for op, arg in stack.pop():
            name = str(op)
            if name in _REPEATS and arg[1] > 1:
                return True
            if name == "BRANCH" and len(arg[1]) > 1:
                return True
            stack.extend(_children(name, arg))
    return False


def _children(name: str, arg: Any) -> list[Any]:
    if name in _REPEATS:
        return [arg[2]]
    if name == "SUBPATTERN":
        return [arg[-1]]
    if name == "BRANCH":
        return list(arg[1])
    if name in ("ASSERT", "ASSERT_NOT"):
        return [arg[1]]
    if name == "GROUPREF_EXISTS":
        return [a for a in arg[1:] if a is not None]
    if name == "ATOMIC_GROUP":
        return [arg]
    return []


def pattern_problem(pattern: str) -> str | None:
    """Why this pattern is refused, or None when it may be used."""
    try:
        re.compile(pattern)
    except re.error as exc:
        return f"regular expression {pattern!r} does not compile: {exc}"
    stack = [_sre.parse(pattern)]
    while stack:
        for op, arg in stack.pop():
            name = str(op)
            if name in _REPEATS and arg[1] == _sre.MAXREPEAT and _ambiguous_inside(arg[2]):
                return (f"regular expression {pattern!r} nests a quantifier or an alternation inside"
                        " an unbounded repeat, which can backtrack for ever; rewrite it without")
            stack.extend(_children(name, arg))
    return None


def _nodes(ast: dict[str, Any]) -> list[dict[str, Any]]:
    found, stack = [], [ast]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            found.append(node)
            stack.extend(c for c in node.get("children", []) if isinstance(c, dict))
    return found


def expression_pattern_errors(ast: dict[str, Any], params: dict[str, Any],
                              newly_safe: list[str] | None = None) -> list[str]:
    """Problems with the patterns a compiled expression passes to match(), where they are known
    before evaluation: literals, and param('name') whose value is a string."""
    problems: list[str] = []

    def check(pattern: str) -> str | None:
        if newly_safe is None:
            return pattern_problem(pattern)
        return checked_pattern_problem(pattern, newly_safe)

    for node in _nodes(ast):
        if node.get("type") != "function_expression" or node.get("value") != "match":
            continue
        children = node.get("children") or []
        first = children[0] if children else None
        if not isinstance(first, dict):
            continue
        if first.get("type") == "literal" and isinstance(first.get("value"), str):
            problem = check(first["value"])
        elif first.get("type") == "function_expression" and first.get("value") == "param":
            name_node = (first.get("children") or [None])[0]
            name = name_node.get("value") if isinstance(name_node, dict) else None
            value = params.get(name) if isinstance(name, str) else None
            problem = check(value) if isinstance(value, str) else None
            if problem:
                problem = f"parameter '{name}': {problem}"
        else:
            continue
        if problem:
            problems.append(problem)
    return problems


# Patterns that passed before, kept between runs (start-up): plain lines of a checksum of the
# tool version and the pattern, in the cache folder of validcache.py. A lost or stale file
# only means checking again. Kept apart from the catalog cache (its owner may change its format).
SAFE_PATTERNS_FILE = "safe-patterns-v1.txt"
_safe: set[str] | None = None


def _pattern_key(pattern: str) -> str:
    import zlib

    from kubegap_lint import __version__

    data = f"{__version__}\0{pattern}".encode("utf-8", "surrogatepass")
    return f"{zlib.crc32(data):08x}{zlib.adler32(data):08x}{len(data):x}"


def _known_safe() -> set[str]:
    global _safe
    if _safe is None:
        from kubegap_lint.catalog.validcache import cache_dir

        _safe = set()
        folder = cache_dir()
        if folder is not None:
            try:
                with open(folder / SAFE_PATTERNS_FILE, encoding="ascii") as handle:
                    _safe = {line.strip() for line in handle}
            except (OSError, UnicodeDecodeError):
                pass
    return _safe


def _remember_safe(keys: list[str]) -> None:
    from kubegap_lint.catalog.validcache import cache_dir

    folder = cache_dir()
    if folder is None or not keys:
        return
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with open(folder / SAFE_PATTERNS_FILE, "a", encoding="ascii") as handle:
            handle.write("".join(key + "\n" for key in keys))
    except OSError:
        pass


def checked_pattern_problem(pattern: str, newly_safe: list[str]) -> str | None:
    """pattern_problem, skipped for a pattern that passed in an earlier run of this version."""
    key = _pattern_key(pattern)
    if key in _known_safe():
        return None
    problem = pattern_problem(pattern)
    if problem is None:
        _known_safe().add(key)
        newly_safe.append(key)
    return problem


def policy_pattern_errors(policies: list[Any], params: dict[str, Any]) -> list[str]:
    """One line per refused pattern: the policy file, the field, and why."""
    newly_safe: list[str] = []
    try:
        return _policy_pattern_errors(policies, params, newly_safe)
    finally:
        _remember_safe(newly_safe)


def _policy_pattern_errors(policies: list[Any], params: dict[str, Any], newly_safe: list[str]) -> list[str]:
    errors: list[str] = []
    for policy in policies:
        fields: list[tuple[str, Any]] = [
            (key, getattr(policy, key, None)) for key in ("applies_to", "for_each", "violation", "severity_expr")
        ]
        fields += [(f"at[{i}]", expression) for i, (_, expression) in enumerate(policy.at or ())]
        if policy.message is not None:
            fields += [("message", part) for part in policy.message.parts if not isinstance(part, str)]
        for key, expression in fields:
            ast = getattr(expression, "parsed", None)
            if isinstance(ast, dict):
                errors.extend(f"{policy.path}: {key}: {problem}"
                              for problem in expression_pattern_errors(ast, params, newly_safe))
    return errors
