"""The run's evaluation plan (engine/evaluate.Plan) against evaluating each policy alone, and
the run-wide memories the evaluation keeps (match() answers, isfile answers)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from conftest import EXAMPLES

from kubegap_lint.catalog.compile import is_true
from kubegap_lint.config.settings import Settings
from kubegap_lint.engine.evaluate import Plan, _conjuncts
from kubegap_lint.engine.run import Linter
from kubegap_lint.workloads import views as views_module

GPU_JOB = (EXAMPLES / "KG201-training-checkpoint-volume" / "bad-job-no-volumes.yaml").read_text()


def _views(linter: Linter, paths: list[str], monkeypatch: pytest.MonkeyPatch) -> list[tuple[Any, Any]]:
    """(resource, view) of every workload a lint of the paths evaluates."""
    seen: list[tuple[Any, Any]] = []
    build = views_module.workload_view

    def keep(resource: Any, rule: Any, context: Any) -> Any:
        view = build(resource, rule, context)
        if view is not None:
            seen.append((resource, view))
        return view

    monkeypatch.setattr(views_module, "workload_view", keep)
    linter.lint_paths(paths)
    monkeypatch.undo()
    return seen


def _alone(policy: Any, view: Any, resource: Any, interpreter: Any) -> list[Any] | str:
    """The policy's findings by a plan of its own (no term shared with another policy)."""
    for _, outcome in Plan([policy], interpreter).evaluate(view, resource):
        return outcome if isinstance(outcome, list) else f"{type(outcome).__name__}: {outcome}"
    return []


def test_the_plan_finds_what_each_policy_alone_finds_on_the_examples(monkeypatch: pytest.MonkeyPatch) -> None:
    linter = Linter(Settings())
    seen = _views(linter, [str(EXAMPLES)], monkeypatch)
    assert len(seen) > 100
    interpreter = linter._interpreter()
    plan = Plan(linter.workload_policies, interpreter)
    found = 0
    for resource, view in seen:
        by_plan = {policy.id: (outcome if isinstance(outcome, list) else f"{type(outcome).__name__}: {outcome}")
                   for policy, outcome in plan.evaluate(view, resource)}
        for policy in linter.workload_policies:
            alone = _alone(policy, view, resource, interpreter)
            assert by_plan.get(policy.id, []) == alone, (policy.id, resource.path, resource.document_index)
            found += len(alone) if isinstance(alone, list) else 0
    assert found > 100


def test_each_applies_to_term_is_tested_at_most_once_a_view(monkeypatch: pytest.MonkeyPatch) -> None:
    linter = Linter(Settings())
    seen = _views(linter, [str(EXAMPLES / "KG101-gpu-replicas-share-power-domain")], monkeypatch)
    assert len(seen) >= 3
    plan = Plan(linter.workload_policies, linter._interpreter())
    written = sum(len(_conjuncts(p.applies_to.parsed)) for p in linter.workload_policies)
    assert len(plan.tests) < written  # `serving`, `has_gpu`, `training` ... are shared
    calls = [0] * len(plan.tests)

    def counted(number: int, test: Any) -> Any:
        def count(value: Any) -> Any:
            calls[number] += 1
            return test(value)
        return count

    plan.tests = [counted(n, t) for n, t in enumerate(plan.tests)]
    for resource, view in seen:
        calls[:] = [0] * len(calls)
        plan.evaluate(view, resource)
        assert max(calls) == 1 and calls[0] == 1  # the first rule's first term is always asked


TERM_POLICY = """id: {id}
name: {name}
title: A test policy
severity: warning
precision: high
applies_to: "{applies_to}"
violation: "`true`"
message: "a message"
evidence: [pytorch-dataloader-shm-k8s]
help: |
  Help.
"""


def test_a_shared_term_that_fails_is_reported_for_every_policy_that_asks_it(tmp_path: Path) -> None:
    # join() refuses the pod views (objects): the term raises for each rule whose earlier terms
    # hold, and a rule whose first term is false never reaches it, as `&&` stops.
    failing = "join(', ', pods)"
    for number, (name, applies_to) in enumerate([("first", f"has_gpu && {failing}"),
                                                 ("second", f"has_gpu && {failing} && training"),
                                                 ("third", f"!has_gpu && {failing}"),
                                                 ("fourth", "has_gpu && training")]):
        policy_id = f"KG9{number:02d}"
        (tmp_path / f"{policy_id}-{name}.yaml").write_text(
            TERM_POLICY.format(id=policy_id, name=name, applies_to=applies_to))
    linter = Linter(Settings(policy_dirs=[tmp_path], select=["KG900", "KG901", "KG902", "KG903"]))
    result = linter.lint_texts([("job.yaml", GPU_JOB)])
    assert [e.message.split(" (")[0] for e in result.errors] == ["policy KG900", "policy KG901"]
    assert all("could not be evaluated on Job" in e.message and "join()" in e.message for e in result.errors)
    assert [(f.rule_id, f.location.line) for f in result.findings] == [("KG903", 2)]  # kind: Job


def test_an_re2_matcher_remembers_short_subjects_and_answers_the_same() -> None:
    from kubegap_lint.catalog import patterns

    matcher = patterns.compile_pattern(r"(?i)^\s*(0|false)\s*$")
    subjects = ["0", " FALSE ", "1", "", "x" * (patterns._REMEMBERED_LENGTH + 1) + "0"]
    first = [matcher.search(s) for s in subjects]
    assert first == [True, True, False, False, False]
    assert [matcher.search(s) for s in subjects] == first
    for number in range(patterns._REMEMBERED_SUBJECTS + 10):
        matcher.search(f"{number}")
    assert len(matcher._known) == patterns._REMEMBERED_SUBJECTS  # bounded
    assert matcher.search("0") is True and matcher.search(str(patterns._REMEMBERED_SUBJECTS + 5)) is False


RENDERED = """# Source: nowhere-chart/templates/job.yaml
""" + GPU_JOB


def test_the_template_mapper_asks_once_whether_a_path_is_a_file(monkeypatch: pytest.MonkeyPatch) -> None:
    # Rendered documents whose chart is nowhere: each finding keeps its place, and the path
    # (no file: an in-memory stream) is looked up once for the run, not once a finding.
    asked: list[str] = []
    isfile = os.path.isfile
    monkeypatch.setattr(os.path, "isfile", lambda p: asked.append(str(p)) or isfile(p))
    result = Linter(Settings(select=["KG201"])).lint_texts([("rendered.yaml", RENDERED + "---\n" + RENDERED)])
    assert [(f.rule_id, f.location.path, f.location.line, f.template, f.rendered_location)
            for f in result.findings] == [("KG201", "rendered.yaml", 10, "nowhere-chart/templates/job.yaml", None),
                                          ("KG201", "rendered.yaml", 28, "nowhere-chart/templates/job.yaml", None)]
    assert asked.count("rendered.yaml") == 1


def test_applies_answers_as_the_evaluation_does_and_the_evaluation_reuses_its_answers(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # The workload stage asks `applies` before it makes the facts only some rules read
    # (s23-views' guards); the evaluation of that view then tests no term again.
    linter = Linter(Settings())
    seen = _views(linter, [str(EXAMPLES / "KG301-nccl-async-error-handling-off")], monkeypatch)
    assert len(seen) >= 3
    interpreter = linter._interpreter()
    plan = Plan(linter.workload_policies, interpreter)
    calls = [0]

    def counted(test: Any) -> Any:
        def count(value: Any) -> Any:
            calls[0] += 1
            return test(value)
        return count

    plan.tests = [counted(t) for t in plan.tests]
    applying = 0
    for resource, view in seen:
        answers = [plan.applies(view, policy) for policy in linter.workload_policies]
        assert answers == [is_true(interpreter.search(p.applies_to, view)) for p in linter.workload_policies]
        applying += sum(answers)
        calls[0] = 0
        plan.evaluate(view, resource)
        assert calls[0] == 0
    assert applying > 0


def test_a_warm_up_arranges_the_next_runs_plan_and_only_its(monkeypatch: pytest.MonkeyPatch) -> None:
    # `kubegap-lint helm` warms the linter up while the engine renders: the first run takes the
    # plan made then, the next makes its own (a plan holds one run's budget and answers), and
    # both find what a linter that never warmed up finds.
    from kubegap_lint.engine import evaluate

    made: list[Plan] = []

    class Counted(Plan):
        def __init__(self, *args: Any) -> None:
            super().__init__(*args)
            made.append(self)

    monkeypatch.setattr(evaluate, "Plan", Counted)
    texts = [("job.yaml", GPU_JOB)]
    cold = list(Linter(Settings()).lint_texts(texts).findings)
    assert len(made) == 1 and cold
    warm = Linter(Settings())
    warm.warm_up()
    assert len(made) == 2
    assert list(warm.lint_texts(texts).findings) == cold
    assert len(made) == 2  # the warm-up's plan served the first run
    assert list(warm.lint_texts(texts).findings) == cold
    assert len(made) == 3


def test_what_the_policies_read_is_reckoned_once_for_every_run_of_a_linter(monkeypatch: pytest.MonkeyPatch) -> None:
    # The keys the workload policies name and the readers of each costly fact depend on the
    # policies alone: a linter reckons them once (in its warm-up, or at its first workload), and
    # every run finds what a new linter finds. The servers lint many times with one linter.
    from kubegap_lint.engine import evaluate, guards

    asked: list[str] = []
    view_needs, fact_guards = evaluate.view_needs, guards.fact_guards

    def counted_needs(policies: Any) -> Any:
        asked.append("view_needs")
        return view_needs(policies)

    def counted_guards(policies: Any, costly: Any) -> Any:
        asked.append("fact_guards")
        return fact_guards(policies, costly)

    monkeypatch.setattr(evaluate, "view_needs", counted_needs)
    monkeypatch.setattr(guards, "fact_guards", counted_guards)
    texts = [("job.yaml", GPU_JOB)]
    expected = list(Linter(Settings()).lint_texts(texts).findings)
    assert expected and asked == ["view_needs", "fact_guards"]
    warm = Linter(Settings())
    warm.warm_up()
    assert asked == ["view_needs", "fact_guards"] * 2
    for _ in range(3):
        assert list(warm.lint_texts(texts).findings) == expected
    assert asked == ["view_needs", "fact_guards"] * 2
    kept = warm.lint_texts(texts, keep_views=True)  # every fact made: nothing asked
    assert list(kept.findings) == expected and len(asked) == 4


def test_after_a_warm_up_a_run_imports_none_of_the_packages_modules() -> None:
    # `kubegap-lint helm` lints a render as soon as it arrives: what the run would import is
    # imported by the warm-up, while the engine still loads and renders. In a fresh interpreter.
    import subprocess
    import sys

    from conftest import REPO

    probe = ("import sys\n"
             "from kubegap_lint.config.settings import Settings\n"
             "from kubegap_lint.engine.run import Linter\n"
             "linter = Linter(Settings())\n"
             "linter.warm_up()\n"
             "before = set(sys.modules)\n"
             "result = linter.lint_texts([('job.yaml', sys.stdin.read())])\n"
             "assert result.findings, 'the job has findings'\n"
             "print(sorted(m for m in set(sys.modules) - before if m.startswith('kubegap_lint')))\n")
    proc = subprocess.run([sys.executable, "-c", probe], input=GPU_JOB, capture_output=True, text=True,
                          cwd=REPO, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"
