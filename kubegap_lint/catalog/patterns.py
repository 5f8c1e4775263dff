"""Regular expressions from policies, run in time linear in the subject.

Policies call `match(pattern, subject)` with a pattern written in the policy or taken from a
parameter, both of which a user (or a pull request that edits a policy folder) controls.
Python's `re` backtracks, and no syntactic guard catches every catastrophic pattern
(`(a|aa){1,60}$`, `(?:a+){2,100}$`, `a*a*a*...b` all slip past nesting checks). So patterns
run on RE2 (the `google-re2` package), whose automaton takes time linear in the subject
whatever the pattern. The few patterns RE2 cannot express (backreferences, lookaround) run on
`re` under a timer: after MATCH_SECONDS the match is abandoned and the policy's evaluation
fails with an error naming the pattern (reported as an input error naming the policy; the
rest of the run goes on). Where no timer can be set (a thread other than the main one), such
a pattern is refused. A pattern neither engine compiles is refused when the policy loads.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

MATCH_SECONDS = 0.5


class PatternError(Exception):
    """A pattern that cannot be used, or a match that ran out of time."""


class _Timeout(Exception):
    pass


def _re2_options() -> Any:
    import re2

    options = re2.Options()
    options.log_errors = False  # RE2 would print to stderr what we report ourselves
    options.max_mem = 8 << 20  # bounds the automaton a huge counted repeat would build
    return options


# A matcher remembers its answers for short subjects: policies match the same few values
# (`1`, `INFO`, `false`) on every pod, and google-re2's search costs microseconds a call
# (it encodes the subject and builds a match object). Bounded: at most this many subjects of
# at most this many characters a pattern.
_REMEMBERED_SUBJECTS = 2048
_REMEMBERED_LENGTH = 256


class _Re2Matcher:
    def __init__(self, compiled: Any) -> None:
        self._compiled = compiled
        self._known: dict[str, bool] = {}

    def search(self, subject: str) -> bool:
        found = self._known.get(subject)
        if found is None:
            found = self._compiled.search(subject) is not None
            if len(subject) <= _REMEMBERED_LENGTH and len(self._known) < _REMEMBERED_SUBJECTS:
                self._known[subject] = found
        return found


class _TimedMatcher:
    """Python's re, for what RE2 cannot express, stopped by SIGALRM after MATCH_SECONDS
    (sre checks for signals while it backtracks)."""

    def __init__(self, pattern: str, compiled: re.Pattern[str]) -> None:
        self._pattern = pattern
        self._compiled = compiled

    def search(self, subject: str) -> bool:
        import signal
        import threading

        if not hasattr(signal, "setitimer") or threading.current_thread() is not threading.main_thread():
            raise PatternError(f"regular expression {self._pattern!r} needs a feature RE2 lacks"
                               " (backreference or lookaround) and cannot be timed here; rewrite it without")

        def expire(signum: int, frame: Any) -> None:
            raise _Timeout

        previous = signal.signal(signal.SIGALRM, expire)
        signal.setitimer(signal.ITIMER_REAL, MATCH_SECONDS)
        try:
            return self._compiled.search(subject) is not None
        except _Timeout:
            raise PatternError(
                f"regular expression {self._pattern!r} took over {MATCH_SECONDS} s on a subject of"
                f" {len(subject)} characters (it backtracks; it uses a feature RE2 lacks, so it runs on"
                " Python's re): rewrite it without backreferences or lookaround") from None
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)


@lru_cache(maxsize=512)
def compile_pattern(pattern: str) -> _Re2Matcher | _TimedMatcher:
    """A matcher for pattern; PatternError when neither engine compiles it."""
    import re2

    try:
        return _Re2Matcher(re2.compile(pattern, _re2_options()))
    except re2.error:
        pass
    try:
        compiled = re.compile(pattern)
    except (re.error, RecursionError, OverflowError) as exc:
        raise PatternError(f"regular expression {pattern!r} does not compile: {exc}") from None
    return _TimedMatcher(pattern, compiled)


def pattern_problem(pattern: str) -> str | None:
    """Why this pattern cannot be used, or None when it may be."""
    try:  # at load time: Python's re is imported already, RE2 waits until a match runs
        re.compile(pattern)
        return None
    except (re.error, RecursionError, OverflowError):
        pass
    try:
        compile_pattern(pattern)
    except PatternError as exc:
        return str(exc)
    return None


def _nodes(ast: dict[str, Any]) -> list[dict[str, Any]]:
    found, stack = [], [ast]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            found.append(node)
            stack.extend(c for c in node.get("children", []) if isinstance(c, dict))
    return found


def expression_pattern_errors(ast: dict[str, Any], params: dict[str, Any]) -> list[str]:
    """Problems with the patterns a compiled expression passes to match(), where they are known
    before evaluation: literals, and param('name') whose value is a string."""
    problems: list[str] = []
    for node in _nodes(ast):
        if node.get("type") != "function_expression" or node.get("value") != "match":
            continue
        children = node.get("children") or []
        first = children[0] if children else None
        if not isinstance(first, dict):
            continue
        if first.get("type") == "literal" and isinstance(first.get("value"), str):
            problem = pattern_problem(first["value"])
        elif first.get("type") == "function_expression" and first.get("value") == "param":
            name_node = (first.get("children") or [None])[0]
            name = name_node.get("value") if isinstance(name_node, dict) else None
            value = params.get(name) if isinstance(name, str) else None
            problem = pattern_problem(value) if isinstance(value, str) else None
            if problem:
                problem = f"parameter '{name}': {problem}"
        else:
            continue
        if problem:
            problems.append(problem)
    return problems


def expressions(policy: Any) -> list[tuple[str, Any]]:
    """Every compiled expression of a policy (policies.py), by field: applies_to ... at[i], message."""
    fields: list[tuple[str, Any]] = [
        (key, getattr(policy, key)) for key in ("applies_to", "for_each", "violation", "severity_expr")
        if getattr(policy, key) is not None
    ]
    fields += [(f"at[{i}]", expression) for i, (_, expression) in enumerate(policy.at)]
    if policy.message is not None:
        fields += [("message", part) for part in policy.message.parts if not isinstance(part, str)]
    return fields


def _policy_asts(policy: Any, checked_before: bool = False) -> list[tuple[str, dict[str, Any]]]:
    """The parsed ASTs of a policy's expressions that call match(), by field. Only an
    expression whose text names match() can pass it a pattern: the rest are neither walked nor,
    from the cache, parsed (start-up). With checked_before (the run's parameters are the
    catalog's own), an expression from the cache whose patterns passed then is passed over."""
    found = []
    for key, expression in expressions(policy):
        if checked_before and getattr(expression, "patterns_checked", False) is True:
            continue
        if "match" in getattr(expression, "expression", "match"):
            ast = getattr(expression, "parsed", None)
            if isinstance(ast, dict):
                found.append((key, ast))
    return found


def policy_pattern_errors(policies: list[Any], params: dict[str, Any], checked_before: bool = False) -> list[str]:
    """One line per pattern that does not compile: the policy file, the field, and why.
    checked_before: params are those the cached catalog's patterns were checked with."""
    errors: list[str] = []
    for policy in policies:
        for key, ast in _policy_asts(policy, checked_before):
            errors.extend(f"{policy.path}: {key}: {problem}" for problem in expression_pattern_errors(ast, params))
    return errors
