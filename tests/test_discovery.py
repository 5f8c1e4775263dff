"""Open discovery (the walk), the kinds and layouts of issue 14, native sidecars, the TrainJob
merged with its runtime, the diagnostic class, unrendered counts (KG008) and generateName."""

from __future__ import annotations

import json
from random import Random

import pytest
from conftest import run_cli
from hypothesis import given, settings
from hypothesis import strategies as st

from kubegap_lint.config.settings import Settings
from kubegap_lint.engine.run import Linter
from kubegap_lint.workloads.diagnostic import command_is_diagnostic, container_is_diagnostic
from kubegap_lint.workloads.discover import walk


def _lint(text: str, select: list[str], params: dict | None = None):
    settings = Settings(select=select, params=params or {})
    return Linter(settings).lint_texts([("m.yaml", text)], keep_views=True)


def _found(result) -> list[tuple[str, int, str]]:
    return [(f.rule_id, f.location.line, f.message) for f in result.findings]


UNKNOWN_CRD = """\
apiVersion: inference.example.com/v1
kind: ModelDeployment
metadata: {name: qwen}
spec:
  roles:
    - name: decode
      replicas: 2
      podTemplate:
        spec:
          containers:
            - name: engine
              image: vllm/vllm-openai:v0.9.2
              resources: {limits: {nvidia.com/gpu: 2}}
  sidecarSpec:
    containers:
      - {name: probe, image: busybox}
"""


def test_walk_finds_templates_and_inline_specs_with_paths_roles_and_counts() -> None:
    from ruamel.yaml import YAML

    data = YAML(typ="safe").load(UNKNOWN_CRD)
    found = [(f.path, f.is_template, f.role, f.replicas) for f in walk(data)]
    assert found == [
        ("spec.roles[0].podTemplate", True, "decode", 2),
        ("spec.sidecarSpec", False, "sidecarSpec", 1),
    ]
    # What the table already read is not walked again.
    assert [f.path for f in walk(data, frozenset({id(data["spec"]["roles"])}))] == ["spec.sidecarSpec"]


def test_walk_needs_image_or_resources_for_an_inline_spec() -> None:
    assert list(walk({"kind": "X", "spec": {"config": {"containers": [{"name": "a"}]}}})) == []
    assert list(walk({"kind": "X", "spec": {"config": {"containers": ["a"]}}})) == []


# Documents of the shapes the walk tells apart: pod specs with and without image/resources,
# templates, keys spelt "" (a pod spec there is the root's), lists, scalars, deep nesting.
_LEAVES = st.sampled_from([None, 1, "x", True, {}, []])
_CONTAINERS = st.sampled_from([[{"image": "i"}], [{"resources": {}}], [{"name": "a"}], ["a"], [],
                               [{"image": "i"}, "b"]])
_NODES = st.recursive(
    _LEAVES | st.builds(lambda c: {"containers": c}, _CONTAINERS),
    lambda inner: st.lists(inner, max_size=3)
    | st.dictionaries(st.sampled_from(["", "spec", "template", "containers", "a", "b"]), inner, max_size=3),
    max_leaves=12)


def _walk_finds(data: object, skip: frozenset[int] = frozenset()) -> bool:
    """The walk's own answer, with its first look (holds_pod_template) taken away."""
    from unittest import mock

    with mock.patch("kubegap_lint.workloads.discover.holds_pod_template", lambda *_: True):
        return next(walk(data, skip), None) is not None


def _nodes(data: object) -> list[object]:
    found = [data] if isinstance(data, (dict, list)) else []
    for value in (data.values() if isinstance(data, dict) else data if isinstance(data, list) else ()):
        found.extend(_nodes(value))
    return found


@settings(max_examples=400, deadline=None)
@given(_NODES, st.randoms(use_true_random=False))
def test_holds_pod_template_is_whether_the_walk_finds_a_place(data: object, random: Random) -> None:
    from kubegap_lint.workloads.discover import holds_pod_template

    assert holds_pod_template(data) == _walk_finds(data)
    skip = frozenset(id(node) for node in _nodes(data) if random.random() < 0.3)  # read by the table
    assert holds_pod_template(data, skip) == _walk_finds(data, skip)


def test_holds_pod_template_on_the_edges() -> None:
    from kubegap_lint.workloads.discover import _MAX_DEPTH, holds_pod_template

    spec = {"containers": [{"image": "i"}]}
    assert not holds_pod_template(spec)  # the root is not an inline pod spec
    assert not holds_pod_template({"": spec}) and not holds_pod_template({"": {"": spec}})  # nor a key spelt ""
    assert holds_pod_template({"": {"a": spec}}) and holds_pod_template([spec]) and holds_pod_template({"spec": spec})
    template = {"spec": spec}
    assert not holds_pod_template({"a": template}, frozenset({id(spec)}))  # its spec was read: not again
    assert holds_pod_template({"a": template, "b": {"c": dict(spec)}}, frozenset({id(spec)}))  # one of its own
    deep: object = template
    for _ in range(_MAX_DEPTH):
        deep = {"a": deep}
    assert holds_pod_template(deep) and _walk_finds(deep)  # at the deepest place walked
    assert not holds_pod_template({"x": deep}) and not _walk_finds({"x": deep})  # one deeper


def test_unknown_crd_is_walked_and_classified_by_its_shape() -> None:
    """Its roles' `replicas` and no completion field: serving by its shape (workloads/shape.py),
    so the serving rules judge it beside those that need no class; the training rules do not."""
    result = _lint(UNKNOWN_CRD, ["KG501", "KG201", "KG101"])
    assert [(rule, line) for rule, line, _ in _found(result)] == [("KG101", 9), ("KG501", 11)]
    assert _found(result)[1][2] == (
        "decode pods (2 GPUs each) have no /dev/shm backed by an emptyDir "
        "with medium Memory of at least 1Gi: the runtime default is 64 MB, and DataLoader workers die with "
        '"Bus error"')
    assert {f.found_by for f in result.findings} == {"walk"}
    assert {f.class_from for f in result.findings} == {("serving", "spec.roles[0].replicas")}
    (view,) = result.views
    assert (view["class"], view["found_by"], view["pods_total"]) == ("serving", "walk", 3)
    assert (view["class_from"], view["class_sign"], view["replicas"]) == ("shape", "spec.roles[0].replicas", 2)


def test_json_output_names_the_table_entry_or_the_walk(tmp_path) -> None:
    path = tmp_path / "m.yaml"
    path.write_text(UNKNOWN_CRD + """\
---
apiVersion: batch/v1
kind: Job
metadata: {name: train}
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
        - {name: t, image: "registry.example/t:1", resources: {limits: {nvidia.com/gpu: 2}}}
""")
    done = run_cli("--format", "json", "--select", "KG501", str(path))
    report = json.loads(done.stdout)
    assert [(f["resource"]["kind"], f["found_by"], f.get("class_from")) for f in report["findings"]] == [
        ("ModelDeployment", "walk", {"by": "shape", "class": "serving", "field": "spec.roles[0].replicas"}),
        ("Job", "table:batch/Job", None)]


def test_known_kind_with_a_template_the_table_does_not_read_gets_it_from_the_walk() -> None:
    result = _lint("""\
apiVersion: serving.kserve.io/v1beta1
kind: InferenceService
metadata: {name: isvc}
spec:
  predictor:
    model: {modelFormat: {name: pytorch}, resources: {limits: {nvidia.com/gpu: 1}}}
  transformer:
    containers:
      - {name: t, image: "registry.example/transformer:1", resources: {limits: {nvidia.com/gpu: 2}}}
""", ["KG001"])
    (view,) = result.views
    assert [(p["role"], p["gpus"], p["found_by"]) for p in view["pods"]] == [
        ("predictor", 1, "table:serving.kserve.io/InferenceService"), ("transformer", 2, "walk")]


def test_kserve_predictor_model_resources_are_read() -> None:
    result = _lint("""\
apiVersion: serving.kserve.io/v1beta1
kind: InferenceService
metadata: {name: nim}
spec:
  predictor:
    minReplicas: 3
    model:
      modelFormat: {name: nvidia-nim}
      env: [{name: NIM_CACHE_PATH, value: /cache}]
      resources: {limits: {nvidia.com/gpu: "4"}, requests: {nvidia.com/gpu: "4"}}
""", ["KG001"])
    (view,) = result.views
    (pod,) = view["pods"]
    assert (view["replicas"], pod["gpus"], [c["name"] for c in pod["containers"]], pod["env"]) == (
        3, 4, ["kserve-container"], {"NIM_CACHE_PATH": "/cache"})


def test_mpijob_v1alpha1_is_read_by_its_own_entry_and_v2beta1_by_the_other() -> None:
    result = _lint("""\
apiVersion: kubeflow.org/v1alpha1
kind: MPIJob
metadata: {name: old}
spec:
  gpus: 16
  template:
    spec:
      containers: [{name: w, image: "mpioperator/tensorflow-benchmarks:latest"}]
---
apiVersion: kubeflow.org/v1alpha1
kind: MPIJob
metadata: {name: old-replicas}
spec:
  replicas: 2
  template:
    spec:
      containers: [{name: w, image: i, resources: {limits: {nvidia.com/gpu: 4}}}]
---
apiVersion: kubeflow.org/v2beta1
kind: MPIJob
metadata: {name: new}
spec:
  mpiReplicaSpecs:
    Worker: {replicas: 2, template: {spec: {containers: [{name: w, image: i, resources: {limits: {nvidia.com/gpu: 8}}}]}}}
""", ["KG001"])
    assert [(v["name"], v["found_by"], v["has_gpu"], v["pods_total"], v["gpus_total"]) for v in result.views] == [
        ("old", "table:kubeflow.org/v1alpha1/MPIJob", True, None, None),
        ("old-replicas", "table:kubeflow.org/v1alpha1/MPIJob", True, 3, 8),  # a launcher and 2 workers
        ("new", "table:kubeflow.org/MPIJob", True, 2, 16),
    ]


def test_katib_experiment_reads_its_trial_spec_by_the_trial_kind() -> None:
    result = _lint("""\
apiVersion: kubeflow.org/v1beta1
kind: Experiment
metadata: {name: exp}
spec:
  trialTemplate:
    trialSpec:
      apiVersion: kubeflow.org/v1
      kind: PyTorchJob
      spec:
        pytorchReplicaSpecs:
          Worker: {replicas: 3, template: {spec: {containers: [{name: p, image: i, resources: {limits: {nvidia.com/gpu: 2}}}]}}}
""", ["KG001"])
    (view,) = result.views
    (pod,) = view["pods"]
    assert (view["class"], pod["role"], pod["replicas"], pod["path"], pod["embedded"]["kind"]) == (
        "training", "Worker", 3, "spec.trialTemplate.trialSpec.spec.pytorchReplicaSpecs.Worker.template", "PyTorchJob")


def test_kthena_modelserving_counts_groups_roles_and_workers() -> None:
    result = _lint("""\
apiVersion: workload.serving.volcano.sh/v1alpha1
kind: ModelServing
metadata: {name: ms}
spec:
  replicas: 2
  template:
    roles:
      - name: decode
        replicas: 3
        entryTemplate: {spec: {containers: [{name: e, image: i, resources: {limits: {nvidia.com/gpu: 8}}}]}}
        workerReplicas: 1
        workerTemplate: {spec: {containers: [{name: w, image: i, resources: {limits: {nvidia.com/gpu: 8}}}]}}
""", ["KG001"])
    (view,) = result.views
    assert [(p["role"], p["replicas"]) for p in view["pods"]] == [("decode entry", 6), ("decode worker", 6)]
    assert (view["serving"], view["replicas"], view["gpus_total"]) == (True, 2, 96)


def test_native_sidecar_counts_for_gpus_and_env_and_a_plain_init_container_does_not() -> None:
    result = _lint("""\
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  initContainers:
    - {name: once, image: i, resources: {limits: {nvidia.com/gpu: 1}}, env: [{name: A, value: "1"}]}
    - name: engine
      image: i
      restartPolicy: Always
      env: [{name: NCCL_DEBUG, value: INFO}]
      resources: {limits: {nvidia.com/gpu: 4}}
  containers:
    - {name: proxy, image: envoy}
""", ["KG001"])
    (view,) = result.views
    (pod,) = view["pods"]
    assert (pod["gpus"], [c["name"] for c in pod["containers"]], [c["name"] for c in pod["init_containers"]],
            pod["env"]) == (4, ["proxy", "engine"], ["once"], {"NCCL_DEBUG": "INFO"})
    assert pod["containers"][1]["sidecar"] is True


RUNTIME = """\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata: {name: torch-distributed}
spec:
  mlPolicy: {numNodes: 1}
  template:
    spec:
      replicatedJobs:
        - name: model-initializer
          template:
            metadata: {labels: {trainer.kubeflow.org/trainjob-ancestor-step: model-initializer}}
            spec:
              template:
                spec:
                  containers: [{name: model-initializer, image: "ghcr.io/kubeflow/trainer/model-initializer"}]
        - name: node
          template:
            metadata: {labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}}
            spec:
              template:
                spec:
                  containers:
                    - name: node
                      image: pytorch/pytorch:2.7.1-cuda12.8-cudnn9-runtime
                      env: [{name: FROM_RUNTIME, value: "1"}]
"""

TRAINJOB = """\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: tj}
spec:
  runtimeRef: {name: torch-distributed}
  trainer:
    numNodes: 2
    command: [torchrun, train.py]
    env: [{name: FROM_TRAINJOB, value: "2"}]
    resourcesPerNode: {limits: {nvidia.com/gpu: 4}}
  podTemplateOverrides:
    - targetJobs: [{name: node}]
      spec:
        volumes:
          - {name: dshm, emptyDir: {medium: Memory, sizeLimit: 8Gi}}
        containers:
          - name: node
            volumeMounts: [{name: dshm, mountPath: /dev/shm}]
"""


def test_trainjob_is_judged_merged_with_its_runtime_in_the_input() -> None:
    result = _lint(RUNTIME + "---\n" + TRAINJOB, ["KG201", "KG501", "KG402"])
    trainjob = next(v for v in result.views if v["kind"] == "TrainJob")
    node = next(p for p in trainjob["pods"] if p["role"] == "node")
    assert (node["replicas"], node["gpus"], node["partial"], node["env"]) == (
        2, 4, False, {"FROM_RUNTIME": "1", "FROM_TRAINJOB": "2"})
    assert (trainjob["pods_total"], trainjob["gpus_total"], trainjob["runtime"]) == (
        2, 8, {"kind": "ClusterTrainingRuntime", "name": "torch-distributed", "max_restarts": None})
    # The /dev/shm of the override counts (no KG501); the finding points at the override, the
    # place a fix in the TrainJob goes, and names both.
    assert [(f.rule_id, f.location.line, f.message) for f in result.findings
            if f.resource.kind == "TrainJob"] == [
        ("KG402", 29, "2 GPU pods (8 accelerators in all) are not gang scheduled (no gang "
         "scheduler such as Volcano or KAI, no Kueue queue label, no PodGroup): pods that start while the "
         "others wait for capacity hold their GPUs idle, and two such jobs can deadlock each other"),
        ("KG201", 38, "node pods of TrainJob tj with ClusterTrainingRuntime torch-distributed "
         "(4 GPUs each) mount no persistent volume and name no object store: checkpoints written there "
         "die with the pod, and a restart starts training over"),
    ]


def test_trainjob_merged_with_a_runtime_without_max_restarts_has_no_restart_budget() -> None:
    """KG401 reads the runtime's JobSet failurePolicy for the TrainJob (the runtime itself holds
    no GPU, so only the TrainJob can say it), at the TrainJob's runtimeRef; a runtime with a
    budget gives none."""
    result = _lint(RUNTIME + "---\n" + TRAINJOB, ["KG401"])
    assert _found(result) == [
        ("KG401", 31, "its ClusterTrainingRuntime torch-distributed sets no failurePolicy.maxRestarts in its "
         "JobSet template (or 0, the default), so the first pod failure fails this TrainJob"),
    ]
    budgeted = RUNTIME.replace("    spec:\n      replicatedJobs:", "    spec:\n      failurePolicy: {maxRestarts: 3}\n"
                               "      replicatedJobs:", 1)
    assert budgeted != RUNTIME
    assert _found(_lint(budgeted + "---\n" + TRAINJOB, ["KG401"])) == []


def test_trainjob_without_its_runtime_gets_one_note_and_no_guesses() -> None:
    result = _lint(TRAINJOB, ["KG008", "KG201", "KG501", "KG402", "KG101"])
    assert _found(result) == [
        ("KG008", 5, "ClusterTrainingRuntime torch-distributed is not in the input: the pods of TrainJob tj "
         "are that runtime's template merged with it, so KG201, KG402, KG501 did not judge them (lint the "
         "runtime with the TrainJob)"),
    ]


def test_unrendered_count_gives_one_note_naming_the_field_and_the_rules() -> None:
    text = """\
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: fsdp}
spec:
  pytorchReplicaSpecs:
    Worker:
      replicas: $NUM_NODES
      template:
        spec:
          containers: [{name: p, image: i, resources: {limits: {nvidia.com/gpu: 8}}}]
"""
    result = _lint(text, ["KG008", "KG401", "KG402", "KG101"])
    assert _found(result) == [
        ("KG008", 7, "spec.pytorchReplicaSpecs.Worker.replicas is '$NUM_NODES', an unrendered placeholder: "
         "KG401, KG402 need this count and did not judge PyTorchJob fsdp"),
    ]
    # Only the rules that are on are named; with none of them on, no note.
    assert _found(_lint(text, ["KG008", "KG503"])) == []


@pytest.mark.parametrize("value", ["${REPLICAS}", "__REPLICAS__", "replaced-by-kustomize"])
def test_every_placeholder_form_is_recognised(value: str) -> None:
    result = _lint(f"""\
apiVersion: apps/v1
kind: Deployment
metadata: {{name: d}}
spec:
  replicas: "{value}"
  template:
    spec:
      containers: [{{name: c, image: i, resources: {{limits: {{nvidia.com/gpu: 1}}}}}}]
""", ["KG008", "KG101", "KG103"])
    assert [(f.rule_id, f.message.split(" is ")[0]) for f in result.findings] == [("KG008", "spec.replicas")]


DEFAULTS = ["sleep", "nvidia-smi", "clinfo", "rocm-smi", "rocminfo", "dcgmi", "*_perf", "nvbandwidth",
            "deviceQuery", "vectorAdd", "vectoradd", "nbody"]


@pytest.mark.parametrize("words,expected", [
    (["sleep", "infinity"], True),
    (["nvidia-smi", "-L"], True),
    (["bash", "-c", "nvidia-smi -L && echo done; sleep 3600"], True),
    (["sh", "-c", "clinfo | grep 'Number of devices'"], True),
    (["/bin/sh", "-c", "while true; do sleep 30; done"], True),
    (["bash", "-c", "tail -f /dev/null"], True),
    (["mpirun", "-np", "16", "-x", "NCCL_DEBUG=INFO", "/opt/nccl-tests/build/all_reduce_perf", "-b", "8"], True),
    (["/usr/bin/nvbandwidth", "-t", "0"], True),
    (["sh", "-c", "echo start\nexec mpirun \\\n  -np 4 \\\n  nvbandwidth -t multinode_device_to_device_memcpy_read_ce\n"], True),
    (["torchrun", "--nproc-per-node=8", "train.py"], False),
    (["bash", "-c", "nvidia-smi; python train.py"], False),
    (["mpirun", "-np", "16", "python", "train.py"], False),
    (["deepspeed", "train.py"], False),
    (["accelerate", "launch", "train.py"], False),
    (["bash", "/start.sh"], False),
    ([], False),
])
def test_diagnostic_commands(words: list[str], expected: bool) -> None:
    assert command_is_diagnostic(words, DEFAULTS) is expected


def test_diagnostic_by_image_when_there_is_no_command() -> None:
    assert container_is_diagnostic([], ["--benchmark"], "nvcr.io/nvidia/k8s/cuda-sample:nbody-cuda11.7.1", DEFAULTS)
    assert container_is_diagnostic([], ["120s"], "gcr.io/k8s-staging-perf-tests/sleep:v0.0.3", DEFAULTS)
    assert not container_is_diagnostic([], ["--epochs", "3"], "registry.example/train:1", DEFAULTS)


SMOKE = """\
apiVersion: batch/v1
kind: Job
metadata: {name: burn}
spec:
  parallelism: 2
  backoffLimit: 0
  template:
    spec:
      restartPolicy: Never
      containers:
        - {name: c, image: i, command: [gpu-burn, "60"], resources: {limits: {nvidia.com/gpu: 8}}}
"""


def test_diagnostic_class_skips_checkpoint_and_restart_rules_and_users_extend_the_list() -> None:
    rules = ["KG201", "KG401", "KG501"]
    assert sorted({f.rule_id for f in _lint(SMOKE, rules).findings}) == ["KG201", "KG401", "KG501"]
    extended = _lint(SMOKE, rules, {"diagnostic_commands": DEFAULTS + ["gpu-burn"]})
    assert sorted({f.rule_id for f in extended.findings}) == ["KG501"]  # the other rules still apply
    (view,) = extended.views
    assert (view["class"], view["training"], view["diagnostic"]) == ("diagnostic", True, True)


def test_explain_says_diagnostics_are_skipped() -> None:
    done = run_cli("explain", "KG201")
    assert done.returncode == 0
    assert "class `diagnostic`" in done.stdout.decode()


def test_generate_name_is_shown_as_name_star() -> None:
    result = _lint("""\
apiVersion: batch/v1
kind: Job
metadata: {generateName: train-}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: t, image: i, resources: {limits: {nvidia.com/gpu: 1}}}]
""", ["KG201"])
    (finding,) = result.findings
    assert (finding.resource.name, finding.resource.display()) == ("train-*", "Job train-*")


def test_rayjob_with_a_cpu_head_and_one_gpu_worker_is_multi_pod() -> None:
    result = _lint("""\
apiVersion: ray.io/v1
kind: RayJob
metadata: {name: rj}
spec:
  rayClusterSpec:
    headGroupSpec: {template: {spec: {containers: [{name: h, image: "rayproject/ray:2.46.0"}]}}}
    workerGroupSpecs:
      - groupName: gpu
        replicas: 1
        template: {spec: {containers: [{name: w, image: "rayproject/ray:2.46.0", resources: {limits: {nvidia.com/gpu: 1}}}]}}
""", ["KG401", "KG402"])
    assert [(f.rule_id, f.message) for f in result.findings] == [
        ("KG402", "2 pods, 1 of them with GPUs (1 accelerators in all) are not gang scheduled (no gang "
         "scheduler such as Volcano or KAI, no Kueue queue label, no PodGroup): pods that start while the "
         "others wait for capacity hold their GPUs idle, and two such jobs can deadlock each other"),
        ("KG401", "backoffLimit is unset or 0 (the default), so a failed run is not retried"),
    ]


def test_kind_lookups_are_remembered_until_the_table_grows() -> None:
    from kubegap_lint.core.record import replace
    from kubegap_lint.workloads.kinds import load_kind_table

    table = load_kind_table()
    job = table.lookup("batch/v1", "Job")
    assert job is not None and table.lookup("batch/v1", "Job") is job
    assert table.lookup("example.com/v1", "TrainingRun") is None
    assert table.lookup(["not", "hashable"], "Job") is table.lookup("", "Job") is None  # an odd apiVersion
    table.add([replace(job, group="example.com", kind="TrainingRun")])
    found = table.lookup("example.com/v1", "TrainingRun")
    assert found is not None and found.kind == "TrainingRun"


def test_unknown_kind_without_containers_among_its_recorded_keys_is_no_workload(tmp_path, monkeypatch) -> None:
    """lookup_or_infer passes over the walk when the document's recorded keys hold no
    `containers`, and still finds an unknown kind's template when they do; keys that record
    nothing (a resource made by hand) leave it to the walk."""
    from kubegap_lint.input.read import ReadStats, Resource
    from kubegap_lint.input.readers import SourceReader
    from kubegap_lint.input.sources import discover
    from kubegap_lint.workloads.kinds import GENERIC

    path = tmp_path / "two.yaml"
    path.write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {spec: x}\n---\n"
        "apiVersion: example.com/v1\nkind: Trainer\nmetadata: {name: t}\n"
        "spec:\n  template:\n    spec:\n      containers:\n      - name: main\n        image: train:1\n",
        encoding="utf-8")
    sources, errors = discover([str(path)], [])
    assert not errors
    resources = [item for _, item in SourceReader(sources).read(ReadStats(), []) if isinstance(item, Resource)]
    table = Linter(Settings()).kind_table
    config, trainer = resources
    keys = config.positions.keys
    assert keys and "containers" not in keys
    from kubegap_lint.workloads import kinds

    walked: list[object] = []
    real_walk = kinds.holds_pod_template
    monkeypatch.setattr(kinds, "holds_pod_template", lambda data: walked.append(data) or real_walk(data))
    assert table.lookup_or_infer(config.data, keys) is None
    assert walked == []  # not walked at all
    assert table.lookup_or_infer(config.data) is None and walked == [config.data]  # no keys: walked
    assert "containers" in trainer.positions.keys
    assert table.lookup_or_infer(trainer.data, trainer.positions.keys) is GENERIC
    assert table.lookup_or_infer(trainer.data, []) is GENERIC  # nothing recorded: the walk decides
    assert table.lookup_or_infer(trainer.data) is GENERIC


def test_placeholder_count_in_a_wrapped_resource_is_named_by_its_full_path() -> None:
    """A count read from an embedded resource's own root (a wrapped Deployment's replicas) is
    named below the component that holds it, so the note says where to look."""
    result = _lint("""\
apiVersion: workload.codeflare.dev/v1beta2
kind: AppWrapper
metadata: {name: aw}
spec:
  components:
    - template:
        apiVersion: apps/v1
        kind: Deployment
        metadata: {name: d}
        spec:
          replicas: $REPLICAS
          template: {spec: {containers: [{name: c, image: i, resources: {limits: {nvidia.com/gpu: 1}}}]}}
""", ["KG008", "KG103"])
    assert _found(result) == [
        ("KG008", 11, "spec.components[0].template.spec.replicas is '$REPLICAS', an unrendered placeholder: "
         "KG103 need this count and did not judge AppWrapper aw"),
    ]
