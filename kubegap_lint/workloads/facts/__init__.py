"""The facts of the workload view: a registry (registry.py) filled by one module per family, and
`add_facts`, which makes them on a view by the one laziness rule registry.py states."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

# Each family registers its facts as it is imported; the order is the order facts are made in.
from kubegap_lint.workloads.facts import (  # noqa: F401
    accelerators,
    batch,
    budgets,
    elastic,
    env,
    lifecycle,
    scaling,
    serving,
    spread,
    storage,
)
from kubegap_lint.workloads.facts.registry import FACTS, LEVELS, Fact

__all__ = ["COSTLY", "FACTS", "add_facts"]

# What a policy must name for the fact to be made (engine/guards.py: which of them can wait).
COSTLY = frozenset(name for name, fact in FACTS.items() if fact.costly)


@lru_cache(maxsize=16)
def _plan(needs: frozenset[str] | None) -> tuple[tuple[Fact, ...], tuple[Fact, ...]]:
    """The cheap facts, then the costly ones the policies name (all when `needs` is None), each
    in the order they are made: pods', containers', then the workload's."""
    ordered = sorted(FACTS.values(), key=lambda f: LEVELS.index(f.level))
    return (tuple(f for f in ordered if not f.costly),
            tuple(f for f in ordered if f.costly and (needs is None or f.name in needs)))


def add_facts(view: dict[str, Any], context: Any) -> None:
    """Make the facts on a built view, in place: every cheap fact, then each costly fact an active
    policy names and, when the context can tell (context.applies), a policy that names it
    applies to the workload."""
    cheap, named = _plan(context.needs)
    _make(view, context, cheap)
    applies = context.applies
    _make(view, context, named if applies is None else [f for f in named if applies(view, f.name)])


def _make(view: dict[str, Any], context: Any, facts: tuple[Fact, ...] | list[Fact]) -> None:
    pods = view["pods"]
    for fact in facts:
        name, make = fact.name, fact.make
        if fact.level == "workload":
            view[name] = make(view, context)
        elif fact.level == "pod":
            for pod in pods:
                pod[name] = make(pod, view, context)
        else:
            for pod in pods:
                for container in pod["containers"]:
                    container[name] = make(container, pod, view, context)
                if fact.init_containers:
                    for container in pod["init_containers"]:
                        container[name] = make(container, pod, view, context)
