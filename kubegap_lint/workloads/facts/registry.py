"""The registry of the view's facts: answers to questions JMESPath cannot put cleanly (it has no
variables, no parent reference, no arithmetic), added to a view once its pods are built.

A fact is one pure function, registered with `@fact(name, level, type, doc)`:
- `workload` facts are called as make(view, context), `pod` facts as make(pod, view, context),
  `container` facts as make(container, pod, view, context) for each main container (native
  sidecars included) and, with `init_containers=True`, each init container too;
- the value is stored under `name`; a fact that points at manifest nodes carries their key
  paths in its records (`key_paths`, as the view's own records do);
- `type` is the value's type as viewtypes.py spells it (resolved there, for the reference and
  its tests, never at run time) and `doc` its meaning, one line of docs/workload-view.md.

One laziness rule (build.py): a `costly` fact is made only when an active policy names it, and,
once the rest of the view is built, only when a policy that names it applies to the workload
(engine/guards.py says which can wait). A cheap fact (`costly=False`) is always made, and is all
a costly fact may read besides the view's own keys.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

Level = Literal["workload", "pod", "container"]
LEVELS: tuple[Level, ...] = ("pod", "container", "workload")  # the order facts are made in


@dataclass(frozen=True, slots=True, kw_only=True)
class Fact:
    name: str
    level: Level
    type: str
    doc: str
    make: Callable[..., Any]
    costly: bool = True
    init_containers: bool = False


FACTS: dict[str, Fact] = {}  # by name, in the order registered (the order they are made in, per level)


def fact(name: str, level: Level, type: str, doc: str, *, costly: bool = True,  # noqa: A002 - a fact's type
         init_containers: bool = False) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register the decorated function as the fact `name`."""
    def register(make: Callable[..., Any]) -> Callable[..., Any]:
        if name in FACTS:
            raise ValueError(f"fact {name!r} is registered twice")
        FACTS[name] = Fact(name=name, level=level, type=type, doc=doc, make=make, costly=costly,
                           init_containers=init_containers)
        return make

    return register


@dataclass(frozen=True, slots=True, kw_only=True)
class Need:
    """What a policy's `needs:` may name: something the view can lack, so that the rules that
    need it cannot judge the workload (KG008 says which, engine/notes.py)."""

    name: str
    lacking: str  # the workload view's key that is set (not null, not empty) when the view lacks it
    doc: str


NEEDS: dict[str, Need] = {need.name: need for need in (
    Need(name="counts", lacking="unrendered_counts",
         doc="replica and pod counts: a count that is an unrendered placeholder (`$N`, `${N}`) leaves"
             " the rule unjudged"),
    Need(name="runtime", lacking="runtime_missing",
         doc="a TrainJob's (Cluster)TrainingRuntime: its pods are the runtime's template merged with"
             " it, so without the runtime in the input the rule does not judge them"),
)}  # schemas/policy.schema.json's `needs` enum holds these names (tests/test_viewtypes.py)
