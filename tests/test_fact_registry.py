"""The view's fact registry (workloads/facts/): the registered names are the view's facts on a
real manifest, a new fact is one registered function (made only when a policy names it, and in
the generated reference at once), and the reference's fact rows come from the registry."""

from __future__ import annotations

import typing
from collections.abc import Iterator
from typing import Any

import pytest
from conftest import EXAMPLES, GPU_JOB

from kubegap_lint.config.settings import Settings
from kubegap_lint.engine.run import Linter
from kubegap_lint.workloads import facts as facts_module
from kubegap_lint.workloads import viewtypes
from kubegap_lint.workloads.facts import FACTS
from kubegap_lint.workloads.facts.registry import fact

_CORE = {"workload": viewtypes.WorkloadView, "pod": viewtypes.PodView, "container": viewtypes.ContainerView}


def _core_keys(level: str) -> set[str]:
    return set(typing.get_type_hints(_CORE[level]))


def test_the_registered_names_are_the_keys_a_view_adds_to_its_core() -> None:
    text = (EXAMPLES / "KG008-workload-not-judged" / "good-rendered-and-runtime-present.yaml").read_text()
    views = Linter(Settings(select=["KG001"])).lint_texts([("m.yaml", text)], keep_views=True).views
    assert len(views) == 4  # the PyTorchJob, the runtime (a JobSet template), the TrainJob, the Job
    for view in views:
        for pod in view["pods"]:
            holders: list[tuple[str, dict[str, Any]]] = [("pod", pod)]
            holders += [("container", c) for c in pod["containers"]]
            for level, holder in [("workload", view), *holders]:
                registered = {name for name, f in FACTS.items() if f.level == level}
                assert set(holder) - _core_keys(level) - {"runtime", "class"} == registered, (level, view["name"])


@pytest.fixture
def one_more_fact(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A fact registered as any family registers one: the containers of a workload."""
    monkeypatch.setattr(facts_module.registry, "FACTS", dict(FACTS))
    monkeypatch.setattr(facts_module, "FACTS", facts_module.registry.FACTS)
    facts_module._plan.cache_clear()

    @fact("container_count", "workload", "int", "how many main containers the workload's pods have")
    def _container_count(view: dict[str, Any], context: Any) -> int:
        return sum(len(pod["containers"]) for pod in view["pods"])

    yield "container_count"
    facts_module._plan.cache_clear()


def test_a_new_fact_is_one_registered_function(one_more_fact: str) -> None:
    linter = Linter(Settings(select=["KG001"]))
    (kept,) = linter.lint_texts([("j.yaml", GPU_JOB)], keep_views=True).views
    assert kept[one_more_fact] == 1
    row = "| `container_count` | int | *(fact)* how many main containers the workload's pods have |"
    assert row in viewtypes.render_view_markdown()


def test_a_costly_fact_no_policy_names_is_not_made(one_more_fact: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from kubegap_lint.workloads import views

    built: list[dict[str, Any]] = []
    original = views.workload_view
    monkeypatch.setattr(views, "workload_view", lambda *args: built.append(original(*args)) or built[-1])
    Linter(Settings(select=["KG001"])).lint_texts([("j.yaml", GPU_JOB)])
    assert one_more_fact not in built[0] and "gpu_pods" in built[0]  # a cheap fact is always made


def test_the_reference_lists_every_fact_with_its_type_and_meaning() -> None:
    reference = viewtypes.render_view_markdown()
    for name, registered in FACTS.items():
        assert f"| `{name}` | " in reference and f"*(fact)* {registered.doc} |" in reference


def test_a_fact_is_registered_once() -> None:
    with pytest.raises(ValueError, match="registered twice"):
        fact("gpu_pods", "workload", "int", "again")(lambda view, context: 0)
