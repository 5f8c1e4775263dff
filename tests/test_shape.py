"""A kind the workload table does not know: the class its shape decides (workloads/shape.py),
the table winning over the shape, and the KG008 note, in every format, where the shape does not
decide. The kinds here are stand-ins (made up), so no test depends on what the table knows."""

from __future__ import annotations

import json
from pathlib import Path

import jmespath
import pytest
from conftest import run_cli
from hypothesis import given, settings
from hypothesis import strategies as st

from kubegap_lint.catalog.compile import root_fields
from kubegap_lint.config.settings import Settings
from kubegap_lint.engine.run import Linter
from kubegap_lint.workloads.kinds import GENERIC, KindTable, shaped
from kubegap_lint.workloads.shape import serving_replicas, shape_class

_POD = {"containers": [{"name": "c", "image": "i"}]}


def _with(spec: dict) -> dict:
    return {"apiVersion": "example.dev/v1", "kind": "Thing", "metadata": {"name": "t"}, "spec": spec}


@pytest.mark.parametrize("spec,expected", [
    ({"replicas": 3, "template": {"spec": _POD}}, ("serving", "spec.replicas")),
    ({"roles": [{"name": "decode", "replicas": 2, "template": {"spec": _POD}}]}, ("serving", "spec.roles[0].replicas")),
    ({"completions": 4, "template": {"spec": _POD}}, ("training", "spec.completions")),
    ({"replicas": 2, "backoffLimit": 3, "template": {"spec": _POD}}, ("training", "spec.backoffLimit")),
    ({"runPolicy": {"cleanPodPolicy": "None"}, "workers": {"replicas": 2, "template": {"spec": _POD}}},
     ("training", "spec.runPolicy")),
    ({"jaxReplicaSpecs": {"Worker": {"replicas": 2, "template": {"spec": _POD}}}},
     ("training", "spec.jaxReplicaSpecs")),
    ({"tasks": [{"replicas": 2, "template": {"spec": {**_POD, "restartPolicy": "OnFailure"}}}]},
     ("training", "spec.tasks[0].template.spec.restartPolicy: OnFailure")),
    ({"workers": {"replicas": 2, "restartPolicy": "ExitCode", "template": {"spec": _POD}}},
     ("training", "spec.workers.restartPolicy: ExitCode")),
    ({"schedule": "0 3 * * *", "jobTemplate": {"replicas": 1, "template": {"spec": _POD}}}, ("training", "spec.schedule")),
    # An inline pod spec with the controller's fields beside it (a KServe ServingRuntime-like shape).
    ({**_POD, "replicas": 2}, ("serving", "spec.replicas")),
    ({**_POD, "backoffLimit": 1, "activeDeadlineSeconds": 60}, ("training", "spec.backoffLimit")),
])
def test_the_shape_decides(spec: dict, expected: tuple[str, str]) -> None:
    assert shape_class(_with(spec)) == expected


@pytest.mark.parametrize("spec", [
    {"template": {"spec": _POD}},  # a pod template and nothing else
    {"podTemplate": {"spec": {**_POD, "restartPolicy": "Always"}}},  # Always is any controller's
    # Inside a pod spec a field is the pod's, not the controller's: a pod's activeDeadlineSeconds
    # or a container's `replicas` argument says nothing.
    {"template": {"spec": {**_POD, "activeDeadlineSeconds": 60, "x": {"replicas": 2}}}},
    {**_POD, "activeDeadlineSeconds": 60},  # an inline pod spec's own deadline
    {"template": {"metadata": {"labels": {"replicas": "2"}}, "spec": _POD}},  # metadata is not read
    {"schedule": {"queue": "gpu"}, "template": {"spec": _POD}},  # a scheduler's settings, not a cron line
    {"fooReplicaSpecs": "text", "template": {"spec": _POD}},  # replica specs are a mapping
])
def test_the_shape_does_not_decide(spec: dict) -> None:
    assert shape_class(_with(spec)) is None
    assert shaped(_with(spec)) is GENERIC


def test_shape_walk_is_bounded_and_takes_any_input() -> None:
    deep: object = {"replicas": 1}
    for _ in range(60):
        deep = {"a": deep}
    assert shape_class(_with({"x": deep})) is None  # deeper than any CRD nests: not read
    for odd in (None, [], "text", {"spec": None}, {"spec": [1, {"replicas": 2}]},
                {"spec": {"restartPolicy": ["Never"], 3: {"template": {"spec": {**_POD, "restartPolicy": {}}}}}}):
        shape_class(odd)  # unhashable restart policies, keys that are not text: no crash
    assert shape_class({"spec": [{"replicas": 2}]}) == ("serving", "spec[0].replicas")


def test_serving_replicas_are_the_largest_gpu_template_not_the_sum_of_roles() -> None:
    prefill = {"path": "spec.template.spec.roles[0].template", "replicas": 1, "has_gpu": True}
    decode = {"path": "spec.template.spec.roles[1].template", "replicas": 4, "has_gpu": True}
    router = {"path": "spec.template.spec.roles[2].template", "replicas": 6, "has_gpu": False}
    assert serving_replicas(_with({"replicas": 2}), [prefill, decode, router]) == 8  # 4 decode pods a copy, 2 copies
    assert serving_replicas(_with({}), [prefill, decode, router]) == 4
    assert serving_replicas(_with({"replicas": "$N"}), [prefill, decode]) is None
    assert serving_replicas(_with({}), [{**decode, "replicas": None}]) is None
    # spec.template's count is the root's own replicas: not multiplied by it again.
    assert serving_replicas(_with({"replicas": 3}), [{"path": "spec.template", "replicas": 3, "has_gpu": True}]) == 3
    assert serving_replicas(_with({}), [router]) == 6  # no GPU template: any


def test_serving_replicas_count_each_mapping_above_the_template_but_its_parent() -> None:
    """Seldon's predictors[].replicas sits above a list of components: it counts; a parent's
    own `replicas` is the template's count already (discover.py), not counted twice."""
    seldon = {"spec": {"predictors": [{"replicas": 3, "componentSpecs": [{"spec": {}}]}]}}
    component = {"path": "spec.predictors[0].componentSpecs[0]", "replicas": 1, "has_gpu": True}
    assert serving_replicas(seldon, [component]) == 3
    held = {"spec": {"replicas": 2, "roles": [{"replicas": 4, "template": {}}]}}
    role = {"path": "spec.roles[0].template", "replicas": 4, "has_gpu": True}
    assert serving_replicas(held, [role]) == 8  # 4 of the role (its parent), times 2 copies
    assert serving_replicas({"spec": {"predictors": [{"replicas": "$N", "componentSpecs": [{}]}]}},
                            [component]) is None


def test_the_table_wins_over_the_shape() -> None:
    from kubegap_lint.workloads.kinds import KindRule

    data = _with({"replicas": 2, "template": {"spec": _POD}})
    assert shaped(data).workload_class == "serving" and shaped(data).class_from == "shape"
    table = KindTable([KindRule("example.dev", "Thing", "training", (), None, ())])
    rule = table.lookup_or_infer(data)
    assert rule is not None and (rule.workload_class, rule.class_from) == ("training", "table")


def test_root_fields_are_those_read_from_the_value_given() -> None:
    def fields(text: str) -> set[str]:
        return root_fields(jmespath.compile(text).parsed)

    assert fields("serving && has_gpu && scaling.max >= `2`") == {"serving", "has_gpu", "scaling"}
    assert fields("pods[?training].serving | [0]") == {"pods"}
    assert fields("kind == 'X' || !(training)") == {"kind", "training"}
    assert fields("length(pods[?has_gpu]) > `1` && [replicas, other][0]") == {"pods", "replicas", "other"}
    assert fields("sort_by(pods, &replicas)") == {"pods"}


UNDECIDED = """\
apiVersion: sandbox.example.dev/v1alpha1
kind: GpuSandbox
metadata: {name: nb}
spec:
  podTemplate:
    spec:
      containers:
        - {name: nb, image: "quay.io/jupyter/pytorch-notebook:cuda12", resources: {limits: {nvidia.com/gpu: 1}}}
"""


def _lint(text: str, select: list[str] | None = None, workloads: list | None = None):
    settings = Settings(select=select, workloads=workloads or [])
    return Linter(settings).lint_texts([("m.yaml", text)], keep_views=True)


def test_an_undecided_gpu_workload_gets_one_note_naming_the_kind_and_the_rules_that_are_on() -> None:
    result = _lint(UNDECIDED, ["KG008", "KG101", "KG201", "KG306", "KG406", "KG501"])
    notes = [f for f in result.findings if f.rule_id == "KG008"]
    assert [(f.location.line, f.location.column) for f in notes] == [(2, 1)]  # at `kind`
    message = notes[0].message
    assert message.startswith("sandbox.example.dev/v1alpha1/GpuSandbox is not in the workload table")
    # The class-gated rules that are on: KG306 reads `training` without the tag; KG406 names its
    # kind (LeaderWorkerSet), KG501 needs no class.
    assert ": KG101, KG201, KG306 judge only training or serving workloads and did not judge it;" in message
    (view,) = result.views
    assert (view["class"], view["class_from"], view["class_sign"]) == ("other", None, None)
    assert [f.rule_id for f in result.findings if f.rule_id != "KG008"] == []  # what the note says


@pytest.mark.parametrize("text,select", [
    (UNDECIDED, ["KG008", "KG501"]),  # no class-gated rule is on: nothing to name
    (UNDECIDED.replace("nvidia.com/gpu: 1", "cpu: 1"), None),  # no GPU
    (UNDECIDED.replace("resources:", "command: [nvidia-smi], resources:"), None),  # diagnostic
    (UNDECIDED.replace("  podTemplate:", "  replicas: 1\n  podTemplate:"), None),  # the shape decides
])
def test_no_note_when_nothing_was_left_unjudged(text: str, select: list[str] | None) -> None:
    result = _lint(text, select)
    assert [f for f in result.findings if f.rule_id == "KG008"] == []


def test_a_configured_entry_classifies_the_kind_and_ends_the_note() -> None:
    from kubegap_lint.workloads.kinds import KindRule, TemplateRule

    entry = KindRule("sandbox.example.dev", "GpuSandbox", "serving", (), None,
                     (TemplateRule("pod", None, None, None, ("spec", "podTemplate"), None, None, (), 1, None, False),))
    result = _lint(UNDECIDED, None, [entry])
    assert [f for f in result.findings if f.rule_id == "KG008"] == []
    (view,) = result.views
    assert (view["class"], view["class_from"]) == ("serving", "table")


def test_the_note_is_in_every_format(tmp_path: Path) -> None:
    path = tmp_path / "sandbox.yaml"
    path.write_text(UNDECIDED)
    common = ("--no-config", "--sarif-root", str(tmp_path), str(path))
    text = run_cli("--format", "text", *common).stdout.decode()
    assert "sandbox.yaml:2:1: note KG008 workload-not-judged: GpuSandbox nb: sandbox.example.dev/v1alpha1/GpuSandbox" in text
    report = json.loads(run_cli("--format", "json", *common).stdout)
    (note,) = [f for f in report["findings"] if f["rule"] == "KG008"]
    assert (note["location"]["line"], note["location"]["column"], "class_from" in note) == (2, 1, False)
    sarif = json.loads(run_cli("--format", "sarif", *common).stdout)
    (result,) = [r for r in sarif["runs"][0]["results"] if r["ruleId"] == "KG008"]
    assert result["level"] == "note" and "GpuSandbox is not in the workload table" in result["message"]["text"]
    github = run_cli("--format", "github", *common).stdout.decode()
    assert "::notice file=" in github and "line=2,col=1,title=KG008 workload-not-judged::" in github


_VALUES = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.sampled_from(["Never", "OnFailure", "Always", "x", ""])),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.one_of(st.sampled_from(["spec", "replicas", "restartPolicy", "template", "containers",
                                                   "schedule", "xReplicaSpecs", "metadata"]), st.integers()),
                        inner, max_size=4)),
    max_leaves=20)


@settings(max_examples=300, deadline=None)
@given(_VALUES)
def test_any_input_gets_a_class_or_none_and_never_an_error(data: object) -> None:
    found = shape_class({"spec": data})
    assert found is None or found[0] in ("training", "serving") and found[1].startswith("spec")
