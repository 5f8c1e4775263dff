"""Which of a view's costly facts a workload needs: those a rule that applies to it reads.

The workload stage makes a costly fact (workloads/facts/registry.py) only when an active rule
names it and, once the rest of the view and the cheap facts are made, only when a rule that
reads it applies to the workload: a rule whose `applies_to` is false evaluates nothing else
(engine/evaluate.Plan), so a fact only such rules read changes no finding. A fact waits only
when no reader's `applies_to` reads a costly fact itself, so each `applies_to` asked is the one
the rule meets later (a costly fact reads the view's own keys and cheap facts only); asked
through the run's evaluation plan (engine/evaluate.Plan.applies), whose term answers the
evaluation of the same view then reads.
Names as evaluate.view_needs reads them (built-in policies only: with a user's policy every
fact is made).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from kubegap_lint.catalog.policies import Policy


def _names(policy: Policy, applies_only: bool = False) -> set[str]:
    from kubegap_lint.catalog.compile import names_read
    from kubegap_lint.catalog.patterns import expressions

    read = [policy.applies_to] if applies_only else [expression for _, expression in expressions(policy)]
    names: set[str] = set()
    for expression in read:
        if expression is not None:
            names_read(expression.parsed, names)
    return names


def fact_guards(policies: Iterable[Policy], costly: frozenset[str]) -> dict[str, tuple[Policy, ...]]:
    """For each costly fact that can wait, every policy that reads it."""
    readers: dict[str, list[Policy]] = {fact: [] for fact in costly}
    blocked: set[str] = set()
    for policy in policies:
        read = _names(policy) & costly
        if not read:
            continue
        if _names(policy, applies_only=True) & costly:
            blocked |= read  # its applies_to could read a fact not made yet: made at once
        for fact in read:
            readers[fact].append(policy)
    return {fact: tuple(found) for fact, found in readers.items() if fact not in blocked}


def applies_check(guards: dict[str, tuple[Policy, ...]],
                  policy_applies: Callable[[Any, Policy], bool]) -> Callable[[Any, str], bool]:
    """`applies(view, fact)`: does a rule that reads the costly `fact` apply to the view?
    `guards` are fact_guards' for the run's policies; `policy_applies` is the run's evaluation
    plan's (engine/evaluate.Plan.applies): the answers it gives are the ones the evaluation of
    the same view then reads, so nothing is asked twice."""

    def applies(view: Any, fact: str) -> bool:
        readers = guards.get(fact)
        if readers is None:
            return True  # cannot wait
        for policy in readers:
            if policy.applies_to is None:
                return True
            try:
                if policy_applies(view, policy):
                    return True
            except Exception:  # noqa: BLE001 - the run reports it when it evaluates the rule
                return True
        return False

    return applies
