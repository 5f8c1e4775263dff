"""No value a manifest can hold aborts the run: huge numbers, other bases, a bug in one document."""

from __future__ import annotations

import pytest
from conftest import run_cli, run_cli_subprocess

from kubegap_lint.config.settings import Settings
from kubegap_lint.core.coerce import as_count
from kubegap_lint.core.quantity import parse_quantity
from kubegap_lint.engine.run import Linter

GPU_JOB = """apiVersion: batch/v1
kind: Job
metadata:
  name: train
spec:
  parallelism: {count}
  completions: {count}
  template:
    spec:
      containers:
      - name: t
        image: x:1
        resources:
          limits:
            nvidia.com/gpu: {gpus}
"""

DEPLOYMENT = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: {name}
spec:
  replicas: {replicas}
  template:
    spec:
      containers:
      - name: t
        image: x:1
        resources:
          limits:
            nvidia.com/gpu: {gpus}
"""


def _write(folder, name: str, text: str):
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("count, gpus", [
    ("9" * 309, 8),            # float(count * ...) overflowed
    (2, "9" * 309),
    ("'" + "9" * 4301 + "'", 8),  # over Python's int-str limit
    ("9" * 4301, "9" * 4301),
    ("0x10", "0o17"),
    ("'0x10'", "'0o17'"),
    ("1e400", ".inf"),
    ("'²'", "'٣'"),  # digits str.isdigit takes and int() refuses or reads
])
def test_a_number_of_any_size_or_base_never_aborts_the_run(tmp_path, count, gpus) -> None:
    _write(tmp_path, "a.yaml", GPU_JOB.format(count=count, gpus=gpus))
    _write(tmp_path, "b.yaml", DEPLOYMENT.format(name="web", replicas=3, gpus=1))
    result = run_cli(str(tmp_path), "--select", "KG101")
    assert result.returncode == 1, result.stderr
    assert b"internal error" not in result.stderr and b"Traceback" not in result.stderr
    lines = result.stdout.decode().splitlines()
    assert lines[0].startswith(f"{tmp_path / 'b.yaml'}:") and "KG101" in lines[0] and "Deployment web" in lines[0]


def test_huge_replicas_on_a_deployment_are_unknown_and_the_rest_is_reported(tmp_path) -> None:
    _write(tmp_path, "a.yaml", DEPLOYMENT.format(name="huge", replicas="9" * 4301, gpus=1))
    _write(tmp_path, "b.yaml", DEPLOYMENT.format(name="web", replicas=3, gpus=1))
    result = run_cli(str(tmp_path), "--select", "KG101")
    assert result.returncode == 1, result.stderr
    assert result.stderr == b""
    assert [line.split(": ")[0] for line in result.stdout.decode().splitlines()[:-1]] == \
        [f"{tmp_path / 'b.yaml'}:8:5"]


def test_the_same_with_workers(tmp_path) -> None:
    # --jobs uses workers for inputs over 1 MB: pad the stream with ConfigMaps.
    filler = "".join(f"---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c{i}\ndata:\n  k: '{'x' * 60}'\n"
                     for i in range(12_000))
    _write(tmp_path, "a.yaml", GPU_JOB.format(count="9" * 309, gpus="9" * 4301) + filler)
    _write(tmp_path, "b.yaml", DEPLOYMENT.format(name="web", replicas=3, gpus=1))
    single = run_cli(str(tmp_path), "--select", "KG101")
    workers = run_cli_subprocess(str(tmp_path), "--select", "KG101", "--jobs", "2")  # real workers
    assert single.returncode == workers.returncode == 1, workers.stderr
    assert workers.stdout == single.stdout and b"KG101" in workers.stdout


def test_counts_out_of_the_int32_range_are_unknown() -> None:
    assert as_count(2**31 - 1) == 2**31 - 1
    assert as_count(2**31) is None
    assert as_count("2147483648") is None
    assert as_count("9" * 5000) is None
    assert as_count("²") is None
    assert as_count(" 12 ") == 12
    assert parse_quantity(10**400) is None
    assert parse_quantity("1" * 5000) is None
    assert parse_quantity("8Gi") == 8 * 2**30


def test_an_internal_error_in_one_document_is_reported_there_and_the_rest_is_linted(monkeypatch) -> None:
    from kubegap_lint.workloads import views

    original = views.workload_view

    def broken(resource, rule, context):
        if resource.data["metadata"]["name"] == "bad":
            raise ZeroDivisionError("planted")
        return original(resource, rule, context)

    monkeypatch.setattr(views, "workload_view", broken)
    linter = Linter(Settings(select=["KG101"]))
    result = linter.lint_texts([
        ("a.yaml", DEPLOYMENT.format(name="bad", replicas=3, gpus=1)),
        ("b.yaml", DEPLOYMENT.format(name="web", replicas=3, gpus=1)),
    ])
    assert [(f.location.path, f.location.line, f.rule_id) for f in result.iter_findings()] == [("b.yaml", 8, "KG101")]
    assert [e.display() for e in result.errors] == [
        "a.yaml:1:1: internal error reading Deployment bad as a workload: planted"
        " (please report this with the input that caused it)"]


def test_a_message_over_deeply_nested_values_is_still_reported() -> None:
    from kubegap_lint.catalog.policies import _display

    value: list = ["c"]
    for _ in range(2000):
        value = [value]
    assert _display(value) == "..."
    assert _display([1, [2, [3]]]) == "1, 2, 3"


def _item(text: str, indent: int) -> str:
    """A document as an item of a YAML list, indented by `indent` spaces."""
    lines = text.splitlines()
    pad = " " * indent
    return pad + "- " + lines[0] + "\n" + "".join(pad + "  " + line + "\n" for line in lines[1:])


def test_workloads_inside_a_nested_list_are_linted() -> None:
    text = ("apiVersion: v1\nkind: List\nitems:\n"
            "- apiVersion: v1\n  kind: List\n  items:\n"
            "  - apiVersion: v1\n    kind: List\n    items:\n"
            + _item(DEPLOYMENT.format(name="inner", replicas=3, gpus=1), 4)
            + _item(DEPLOYMENT.format(name="outer", replicas=3, gpus=1), 0))
    result = Linter(Settings(select=["KG101"])).lint_texts([("list.yaml", text)])
    assert result.errors == []
    assert sorted((f.location.line, f.resource.name) for f in result.iter_findings()) == [(17, "inner"), (31, "outer")]


def test_claim_names_that_are_not_strings_are_no_claims() -> None:
    # Found by tests/fuzz/mutate.py: `resources.claims[].name: [1, 2]` raised "unhashable type:
    # 'list'" while the workload's view was built (an internal error, the workload not linted).
    deployment = """apiVersion: apps/v1
kind: Deployment
metadata: {name: d}
spec:
  replicas: 2
  template:
    spec:
      containers:
      - name: ctr
        image: ubuntu:22.04
        resources:
          claims: [{name: gpus}, {name: [1, 2]}, {name: {a: 1}}]
          limits: {nvidia.com/gpu: 1}
      resourceClaims:
      - {name: gpus, resourceClaimTemplateName: node-gpus}
      - {name: [1, 2], resourceClaimName: other}
"""
    linter = Linter(Settings(select=["KG103"]))  # a GPU Deployment's replicas: it is linted
    result = linter.lint_texts([("d.yaml", deployment)])
    assert result.errors == [] and result.workloads == 1
    assert [(f.rule_id, f.location.line) for f in result.findings] == [("KG103", 6)]


@pytest.mark.parametrize("name", ["-1", "8", "{a: 1}", "[x]"])
def test_a_container_name_that_is_not_a_string_fails_no_policy(name: str) -> None:
    # Found by tests/fuzz/mutate.py: KG104 and KG403 join the container's name into their
    # message, and `join` refused a number or a mapping: "policy ... could not be evaluated".
    pod = f"""apiVersion: v1
kind: Pod
metadata: {{name: p}}
spec:
  containers:
  - name: {name}
    image: vllm/vllm-openai:v0.6.0
    command: [sleep, infinity]
    resources: {{limits: {{nvidia.com/gpu: 1}}}}
"""
    result = Linter(Settings(select=["KG104", "KG403"])).lint_texts([("p.yaml", pod)])
    assert result.errors == []
    assert {f.rule_id for f in result.findings} == {"KG403"}


def test_selector_requirements_with_a_key_or_values_of_the_wrong_type_select_nothing() -> None:
    # Found by tests/fuzz/mutate.py on the merged code: `matchExpressions[].key: {a: 1}` in an
    # anti-affinity term raised "unhashable type: 'dict'" while the view was built (an internal
    # error, the workload not linted). A requirement Kubernetes would refuse never selects.
    text = """apiVersion: apps/v1
kind: Deployment
metadata: {name: d}
spec:
  replicas: 2
  template:
    metadata:
      labels: {app: d}
    spec:
      affinity:
        podAntiAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
          - labelSelector:
              matchExpressions:
              - {key: {a: 1}, operator: In, values: [d]}
            topologyKey: topology.kubernetes.io/zone
      containers:
      - name: ctr
        image: ubuntu:22.04
        resources:
          limits: {nvidia.com/gpu: 1}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: d}
spec:
  maxUnavailable: 1
  selector:
    matchExpressions:
    - {key: [app], operator: In, values: [d]}
    - {key: app, operator: In, values: 5}
"""
    linter = Linter(Settings(select=["KG101", "KG103"]))
    result = linter.lint_texts([("d.yaml", text)])
    assert result.errors == [] and result.workloads == 1
    # The anti-affinity term's only requirement is dropped as unknown, so the term may select the
    # pods and spreads them over zones: no KG101. The PDB's selector selects nothing: KG103.
    assert [(f.rule_id, f.location.line) for f in result.findings] == [("KG103", 8)]


@pytest.mark.parametrize("value", ["0o" + "7" * 100_000, "0x" + "f" * 100_000, "0o" + "7" * 3001])
def test_an_env_value_of_a_huge_octal_or_hex_number_is_text_not_an_internal_error(value: str) -> None:
    from kubegap_lint.config.settings import Settings
    from kubegap_lint.engine.run import Linter

    text = ("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  replicas: 2\n"
            "  selector: {matchLabels: {a: b}}\n  template:\n    metadata: {labels: {a: b}}\n    spec:\n"
            "      containers:\n        - name: c\n          image: x\n          env:\n"
            f"            - name: NCCL_TIMEOUT\n              value: {value}\n"
            "          resources: {limits: {nvidia.com/gpu: 1}}\n")
    result = Linter(Settings(select=["KG101"])).lint_texts([("d.yaml", text)])
    assert result.errors == []
    assert [(f.rule_id, f.location.line) for f in result.findings] == [("KG101", 9)]  # the pod spec


def test_a_memory_limit_or_size_limit_that_is_no_quantity_fails_no_policy() -> None:
    # Found by tests/fuzz/mutate.py (seed 20261203): `memory: []` in a Ray container's limits
    # became the sizeLimit of the /dev/shm KubeRay adds, and quantity() refused the list:
    # "policy KG501 ... could not be evaluated". A value that is no quantity is unknown.
    import jmespath

    from kubegap_lint.catalog.functions import PolicyInterpreter

    interpreter = PolicyInterpreter({})
    quantity = jmespath.compile("[quantity(a), quantity(b), quantity(c), quantity(d), quantity(e)]")
    assert interpreter.search(quantity, {"a": [], "b": {"x": 1}, "c": True, "d": None, "e": "8Gi"}) == \
        [None, None, None, None, 8 * 2**30]
    job = GPU_JOB.format(count=2, gpus=2).replace("""        resources:
""", """        resources:
          requests: {memory: [1]}
""") + """        volumeMounts: [{name: shm, mountPath: /dev/shm}]
      volumes:
      - name: shm
        emptyDir: {medium: Memory, sizeLimit: [1Gi]}
"""
    result = Linter(Settings(select=["KG501"])).lint_texts([("j.yaml", job)])
    assert result.errors == [] and result.workloads == 1
    # An unknown size is not judged too small: the memory-backed /dev/shm counts, as without one.
    assert result.findings == []
    small = job.replace("sizeLimit: [1Gi]", "sizeLimit: 1Mi")
    result = Linter(Settings(select=["KG501"])).lint_texts([("j.yaml", small)])
    assert [(f.rule_id, f.location.line, f.location.column) for f in result.findings] == [("KG501", 19, 9)]  # the volume


@pytest.mark.parametrize("image", ["-.inf", "8", "[x]", "{a: 1}"])
def test_an_image_that_is_not_a_string_fails_no_policy(image: str) -> None:
    # Found by tests/fuzz/mutate.py (seed 20261203): KG407 joins the images of an Indexed Job's
    # pods, and `join` refused the float -inf: "policy KG407 ... could not be evaluated".
    job = GPU_JOB.format(count=2, gpus=1).replace("image: x:1", f"image: {image}").replace(
        "  completions: 2\n", "  completions: 2\n  completionMode: Indexed\n")
    result = Linter(Settings(select=["KG407"])).lint_texts([("j.yaml", job)])
    assert result.errors == [] and result.workloads == 1
    assert [(f.rule_id, f.severity.value, f.location.line) for f in result.findings] == [("KG407", "note", 5)]


def test_a_node_selector_or_limits_that_are_no_mapping_fail_no_policy() -> None:
    # Found by tests/fuzz/mutate.py (seed 20261204): `nodeSelector: cloud.google.com/gk` (a
    # string) made KG108's keys() fail: "policy KG108 ... could not be evaluated". KG405 read a
    # JobSet's container limits with keys() the same way. Either is no selector, no GPU limit.
    jobset = """apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: js}
spec:
  replicatedJobs:
  - name: odd
    replicas: 2
    template:
      spec:
        template:
          spec:
            restartPolicy: Never
            nodeSelector: cloud.google.com/gke-nodepool
            containers:
            - name: t
              image: x:1
              resources: {limits: "nvidia.com/gpu"}
  - name: workers
    replicas: 2
    template:
      spec:
        template:
          spec:
            restartPolicy: Never
            nodeSelector: cloud.google.com/gke-nodepool
            containers:
            - name: t
              image: x:1
              resources: {limits: {nvidia.com/gpu: 8}}
"""
    result = Linter(Settings(select=["KG108", "KG405"])).lint_texts([("js.yaml", jobset)])
    assert result.errors == [] and result.workloads == 1
    # KG108 at the missing annotations (their parent, metadata); KG405 at the GPU job's spec only.
    assert [(f.rule_id, f.location.line, f.location.column) for f in result.findings] == \
        [("KG108", 3, 1), ("KG405", 21, 7)]


def test_a_probe_that_is_no_mapping_fails_no_policy() -> None:
    # Like the fuzz's finds: probe_window() refused a string probe ("policy KG205 ... could not
    # be evaluated"). A probe that is no mapping has no window: no finding.
    deployment = DEPLOYMENT.format(name="vllm", replicas=2, gpus=1).replace(
        "image: x:1", "image: vllm/vllm-openai:v0.6.0\n        command: [vllm, serve, m]\n"
                      "        startupProbe: x\n        livenessProbe: {periodSeconds: 1, failureThreshold: 1}")
    result = Linter(Settings(select=["KG205"])).lint_texts([("d.yaml", deployment)])
    assert result.errors == [] and result.findings == []
    short = deployment.replace("        startupProbe: x\n", "")
    result = Linter(Settings(select=["KG205"])).lint_texts([("d.yaml", short)])
    assert [(f.rule_id, f.location.line, f.location.column) for f in result.findings] == [("KG205", 13, 9)]  # the probe


VOLCANO_JOB = """apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata:
  name: volcano-ddp
spec:
  minAvailable: 2
  schedulerName: volcano
  policies:
    - events: {events}
      action: {action}
  tasks:
    - name: worker
      replicas: 2
      template:
        spec:
          restartPolicy: Never
          containers:
            - name: trainer
              image: registry.example/ddp:1
              resources: {{limits: {{nvidia.com/gpu: 8}}}}
"""


@pytest.mark.parametrize("events, action", [
    ("7", "RestartJob"), ("true", "RestartJob"), ("PodFailed", "RestartJob"),
    ("[PodFailed]", "7"), ("[PodFailed]", "[RestartJob]"), ("[PodFailed]", "{a: 1}"),
])
def test_a_volcano_policy_with_events_or_action_of_the_wrong_type_restarts_nothing(events: str, action: str) -> None:
    # Found by mutating every node of the examples to values of other types (the fuzzers' finds,
    # done for every node): KG401's contains() and starts_with() failed on a number, a boolean
    # or a list. Such a policy restarts nothing, so the first failure ends the Job: KG401.
    result = Linter(Settings(select=["KG401"])).lint_texts([("v.yaml", VOLCANO_JOB.format(events=events, action=action))])
    assert result.errors == [] and result.workloads == 1
    assert [(f.rule_id, f.location.line, f.location.column) for f in result.findings] == [("KG401", 8, 3)]
    fine = Linter(Settings(select=["KG401"])).lint_texts(
        [("v.yaml", VOLCANO_JOB.format(events="[PodEvicted, PodFailed]", action="RestartJob"))])
    assert fine.errors == [] and fine.findings == []


def test_dynamo_env_and_volume_names_that_are_not_text_are_no_internal_error() -> None:
    # Found by putting every node of ../shared/corpus to values of other types (mutate.py's
    # --nodes pass over the corpus): an env entry's or a volume's name that is a list or a
    # mapping could not be looked up in a set while the operator's completion of a Dynamo
    # component was made: "internal error ... unhashable type", the workload not linted.
    graph = """apiVersion: nvidia.com/v1alpha1
kind: DynamoGraphDeployment
metadata:
  name: g
spec:
  envs: [{name: [HF_TOKEN]}, {name: NCCL_DEBUG, value: INFO}]
  services:
    Worker:
      componentType: worker
      replicas: 2
      resources:
        limits:
          gpu: "1"
      envs: [{name: {a: 1}, value: x}]
      extraPodSpec:
        volumes: [{name: [v], emptyDir: {}}]
        mainContainer:
          image: nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.7.0
          env: [{name: [x]}]
          command: [python3, -m, dynamo.vllm, --model, Qwen/Qwen3-8B]
"""
    result = Linter(Settings(select=["KG101", "KG103"])).lint_texts([("g.yaml", graph)])
    assert result.errors == [] and result.workloads == 1
    assert [(f.rule_id, f.location.line, f.location.column) for f in result.findings] == \
        [("KG103", 8, 5), ("KG101", 15, 7)]
