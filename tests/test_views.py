"""The workload table and the views built from it, over the kinds the table covers."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import CORPUS, EXAMPLES, requires_shared

from kubegap_lint.config.settings import Settings
from kubegap_lint.engine.run import Linter


def _views(text: str, settings: Settings | None = None) -> list[dict]:
    result = Linter(settings or Settings(select=["KG001"])).lint_texts([("m.yaml", text)], keep_views=True)
    return result.views


def _summary(view: dict) -> tuple:
    return (view["kind"], [(p["role"], p["replicas"], p["gpus"]) for p in view["pods"]],
            view["pods_total"], view["gpus_total"], view["training"], view["serving"])


def test_pytorchjob_roles_replicas_and_gpus() -> None:
    (view,) = _views("""
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: p}
spec:
  pytorchReplicaSpecs:
    Master: {replicas: 1, template: {spec: {containers: [{name: m, resources: {limits: {nvidia.com/gpu: 8}}}]}}}
    Worker: {replicas: 3, template: {spec: {containers: [{name: w, resources: {limits: {nvidia.com/gpu: "8"}}}]}}}
""")
    assert _summary(view) == ("PyTorchJob", [("Master", 1, 8), ("Worker", 3, 8)], 4, 32, True, False)
    assert view["distributed_pytorch"] is True


def test_jobset_multiplies_replicas_by_parallelism() -> None:
    (view,) = _views("""
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: js}
spec:
  replicatedJobs:
    - name: workers
      replicas: 2
      template: {spec: {parallelism: 4, template: {spec: {containers: [{name: c, resources: {limits: {google.com/tpu: 4}}}]}}}}
""")
    assert _summary(view) == ("JobSet", [("workers", 8, 4)], 8, 32, True, False)
    assert view["nccl_gpu"] is False


def test_leaderworkerset_counts_groups_and_the_leader() -> None:
    (view,) = _views("""
apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata: {name: lws}
spec:
  replicas: 3
  leaderWorkerTemplate:
    size: 4
    leaderTemplate: {spec: {containers: [{name: l, resources: {limits: {nvidia.com/gpu: 8}}}]}}
    workerTemplate: {spec: {containers: [{name: w, resources: {limits: {nvidia.com/gpu: 8}}}]}}
""")
    assert _summary(view) == ("LeaderWorkerSet", [("leader", 3, 8), ("worker", 9, 8)], 12, 96, False, True)
    assert view["replicas"] == 3


def test_raycluster_and_rayservice_groups() -> None:
    views = _views("""
apiVersion: ray.io/v1
kind: RayService
metadata: {name: rs}
spec:
  rayClusterConfig:
    headGroupSpec: {template: {spec: {containers: [{name: h}]}}}
    workerGroupSpecs:
      - {groupName: gpu, replicas: 2, template: {spec: {containers: [{name: w, resources: {limits: {nvidia.com/gpu: 1}}}]}}}
---
apiVersion: ray.io/v1
kind: RayCluster
metadata: {name: rc}
spec:
  headGroupSpec: {template: {spec: {containers: [{name: h}]}}}
  workerGroupSpecs:
    - {groupName: g, replicas: 1, numOfHosts: 4, template: {spec: {containers: [{name: w}]}}}
""")
    assert _summary(views[0]) == ("RayService", [("head", 1, 0), ("gpu", 2, 1)], 3, 2, False, True)
    assert views[0]["replicas"] == 2
    assert _summary(views[1]) == ("RayCluster", [("head", 1, 0), ("g", 4, 0)], 5, 0, False, False)


def test_unrendered_counts_are_unknown_but_requests_still_count() -> None:
    (view,) = _views("""
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: p}
spec:
  pytorchReplicaSpecs:
    Worker: {replicas: $N, template: {spec: {containers: [{name: w, resources: {limits: {nvidia.com/gpu: $G}}}]}}}
""")
    assert _summary(view) == ("PyTorchJob", [("Worker", None, None)], None, None, True, False)
    assert view["has_gpu"] is True


def test_cronjob_volcano_trainjob_and_inferred_kinds() -> None:
    views = _views("""
apiVersion: batch/v1
kind: CronJob
metadata: {name: cj}
spec: {jobTemplate: {spec: {parallelism: 2, template: {spec: {containers: [{name: c}]}}}}}
---
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: vj}
spec:
  tasks:
    - {name: worker, replicas: 4, template: {spec: {containers: [{name: c, resources: {limits: {nvidia.com/gpu: 8}}}]}}}
---
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: tj}
spec:
  runtimeRef: {name: torch-distributed}
  trainer: {numNodes: 2, resourcesPerNode: {limits: {nvidia.com/gpu: 4}}}
---
apiVersion: example.com/v1
kind: Unknown
metadata: {name: u}
spec: {replicas: 2, template: {spec: {containers: [{name: c}]}}}
""")
    assert [_summary(v) for v in views] == [
        ("CronJob", [("pod", 2, 0)], 2, 0, True, False),
        ("Job", [("worker", 4, 8)], 4, 32, True, False),
        ("TrainJob", [("node", 2, 4)], 2, 8, True, False),
        ("Unknown", [("pod", 2, 0)], 2, 0, False, True),  # `replicas` and no completion field: serving (shape.py)
    ]
    assert views[2]["pods"][0]["partial"] is True


def test_env_merges_lists_configmaps_and_scripts() -> None:
    (view,) = _views("""
apiVersion: v1
kind: ConfigMap
metadata: {name: nccl}
data: {NCCL_DEBUG: WARN}
---
apiVersion: batch/v1
kind: Job
metadata: {name: j}
spec:
  template:
    spec:
      containers:
        - name: c
          command: [bash, -c, "export NCCL_IB_TIMEOUT=22; mpirun -x NCCL_SOCKET_IFNAME=eth0 -x LD_LIBRARY_PATH python t.py"]
          env:
            - {name: A, value: "1"}
            - {name: B, valueFrom: {fieldRef: {fieldPath: metadata.name}}}
            - {name: C, value: "$(A)"}
          envFrom: [{configMapRef: {name: nccl}}]
""")
    assert view["pods"][0]["env"] == {
        "A": "1", "B": None, "C": None, "NCCL_DEBUG": "WARN", "NCCL_IB_TIMEOUT": "22",
        "NCCL_SOCKET_IFNAME": "eth0", "LD_LIBRARY_PATH": None,
    }


def test_budgets_select_pods_by_labels() -> None:
    (view,) = _views("""
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: pdb, namespace: serve}
spec: {maxUnavailable: 1, selector: {matchLabels: {app: llm}}}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: other, namespace: serve}
spec: {maxUnavailable: 1, selector: {matchExpressions: [{key: app, operator: In, values: [x]}]}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: d, namespace: serve}
spec: {replicas: 2, template: {metadata: {labels: {app: llm}}, spec: {containers: [{name: c}]}}}
""")
    assert [b["name"] for b in view["pods"][0]["budgets"]] == ["pdb"]


def test_dra_claims_in_the_input_count_as_gpus() -> None:
    (view,) = _views("""
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: two-gpus}
spec: {spec: {devices: {requests: [{name: g, exactly: {deviceClassName: gpu.nvidia.com, count: 2}}]}}}
---
apiVersion: batch/v1
kind: Job
metadata: {name: j}
spec:
  template:
    spec:
      resourceClaims: [{name: gpus, resourceClaimTemplateName: two-gpus}]
      containers: [{name: c, resources: {claims: [{name: gpus}]}}]
""")
    pod = view["pods"][0]
    assert (pod["has_gpu"], pod["gpus"], pod["nccl_gpu"]) == (True, 2, True)


def test_dra_mig_slices_are_gpus_and_a_shared_claim_counts_once() -> None:
    # NVIDIA's DRA driver names MIG slices `mig.nvidia.com` (no "gpu" in the name). Containers
    # that share a claim share its devices; one that names a request of the claim gets that
    # request's devices only (as the driver's gpu-test4 and gpu-test5 demos write them).
    (view,) = _views("""
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: slices}
spec:
  spec:
    devices:
      requests:
        - {name: small, exactly: {deviceClassName: mig.nvidia.com}}
        - {name: large, exactly: {deviceClassName: mig.nvidia.com, count: 2}}
        - {name: nic, exactly: {deviceClassName: mrdma.google.com}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: d}
spec:
  replicas: 2
  template:
    spec:
      resourceClaims: [{name: mig, resourceClaimTemplateName: slices}]
      containers:
        - {name: a, resources: {claims: [{name: mig, request: small}]}}
        - {name: b, resources: {claims: [{name: mig, request: large}]}}
        - {name: c, resources: {claims: [{name: mig, request: large}]}}
        - {name: d, resources: {claims: [{name: mig}]}}
""")
    pod = view["pods"][0]
    assert (pod["has_gpu"], pod["gpus"], pod["nccl_gpu"]) == (True, 3, True)
    assert [c["gpus"] for c in pod["containers"]] == [1, 2, 2, 3]


def test_gpu_device_classes_is_a_parameter() -> None:
    text = """
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: one}
spec: {devices: {requests: [{name: x, exactly: {deviceClassName: mig.nvidia.com}}]}}
---
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  resourceClaims: [{name: m, resourceClaimName: one}]
  containers: [{name: c, resources: {claims: [{name: m}]}}]
"""
    (view,) = _views(text)
    assert view["pods"][0]["has_gpu"]
    (view,) = _views(text, Settings(select=["KG001"], params={"gpu_device_classes": ["*gpu*"]}))
    assert not view["pods"][0]["has_gpu"]


def test_empty_budget_selector_selects_all_in_v1_and_none_in_v1beta1() -> None:
    views = _views("""
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: all}
spec: {maxUnavailable: 1, selector: {}}
---
apiVersion: policy/v1beta1
kind: PodDisruptionBudget
metadata: {name: none}
spec: {maxUnavailable: 1, selector: {}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: d}
spec: {replicas: 2, template: {metadata: {labels: {app: x}}, spec: {containers: [{name: c}]}}}
""")
    assert [b["name"] for b in views[0]["pods"][0]["budgets"]] == ["all"]


def test_explicit_torch_backend() -> None:
    from kubegap_lint.workloads.commandline import torch_backend

    assert torch_backend(["python", "train.py", "--backend", "gloo"]) == "gloo"
    assert torch_backend(["python", "train.py", "--dist-backend=NCCL"]) == "nccl"
    assert torch_backend(["torchrun", "train.py"]) is None


@pytest.mark.parametrize(("command", "backend", "words"), [
    ("[python, train.py, --backend, gloo]", "gloo", ["python", "train.py", "--backend", "gloo"]),
    ("[bash, -c, 'torchrun --rdzv_backend=c10d t.py --dist-backend=gloo']", "gloo",
     ["bash", "-c", "torchrun", "--rdzv_backend=c10d", "t.py", "--dist-backend=gloo"]),
    ('[python, t.py, --dist"-back"end=gloo]', "gloo", ["python", "t.py", "--dist-backend=gloo"]),  # quotes in a word
    (r'[python, t.py, "--back\\end", gloo]', "gloo", ["python", "t.py", "--backend", "gloo"]),  # and a backslash
    ("[torchrun, --rdzv_backend=c10d, t.py]", None, ["torchrun", "--rdzv_backend=c10d", "t.py"]),  # not one
    ("[python, t.py]", None, ["python", "t.py"]),
])
def test_lean_views_read_the_backend_without_the_words(monkeypatch: pytest.MonkeyPatch, command: str,
                                                        backend: str | None, words: list[str]) -> None:
    """No built-in rule reads a container's `words`: a run's views split a command line only
    where a word can be a backend flag (else `words` is empty) and read the same backend;
    kept views hold every container's words."""
    from conftest import GPU_JOB

    job = GPU_JOB.replace("image: registry.example/t:1", f"image: registry.example/t:1\n          command: {command}")
    (lean,) = _lean_views(monkeypatch, ["KG301"], job)
    (kept,) = Linter(Settings(select=["KG301"])).lint_texts([("m.yaml", job)], keep_views=True).views
    assert lean["torch_backend"] == kept["torch_backend"] == backend
    assert lean["pods"][0]["containers"][0]["words"] == (words if backend else [])  # split only for a flag
    assert kept["pods"][0]["containers"][0]["words"] == words


def _every_workload_policy() -> list[str]:
    from kubegap_lint.catalog.policies import load_catalog

    return [p.id for p in load_catalog().policies if p.scope == "workload"]


@pytest.mark.parametrize("rule", _every_workload_policy())
def test_a_rule_alone_finds_the_same_with_only_the_facts_it_reads(rule: str) -> None:
    """Views hold only the facts the active rules name (engine/evaluate.view_needs); kept views
    hold every fact. The rule's findings (and errors) on the examples must be the same either
    way (with every rule at once nothing is left out)."""
    from conftest import EXAMPLES

    linter = Linter(Settings(select=[rule]))
    lean, full = linter.lint_paths([str(EXAMPLES)]), linter.lint_paths([str(EXAMPLES)], keep_views=True)
    assert list(lean.iter_findings()) == list(full.iter_findings())
    assert [e.display() for e in lean.errors] == [e.display() for e in full.errors]
    assert any(f.rule_id == rule for f in full.iter_findings())  # the rule is exercised


def _capture_views(monkeypatch: pytest.MonkeyPatch) -> list[dict]:
    """A list that receives every view workload_view returns from now on."""
    from kubegap_lint.workloads import views

    built: list[dict] = []
    original = views.workload_view

    def keep(resource, rule, context):  # type: ignore[no-untyped-def]
        view = original(resource, rule, context)
        built.append(view)
        return view

    monkeypatch.setattr(views, "workload_view", keep)
    return built


def _facts_held(view: dict) -> set[str]:
    """The registry's facts a view holds, each on the level it is made at."""
    from kubegap_lint.workloads.facts import FACTS

    pod, container = view["pods"][0], view["pods"][0]["containers"][0]
    holders = {"workload": view, "pod": pod, "container": container}
    return {name for name, fact in FACTS.items() if name in holders[fact.level]}


def test_only_the_facts_the_active_rules_name_are_made(monkeypatch: pytest.MonkeyPatch) -> None:
    from conftest import GPU_DEPLOYMENT

    from kubegap_lint.engine.evaluate import view_needs
    from kubegap_lint.workloads.facts import COSTLY, FACTS

    built = _capture_views(monkeypatch)
    linter = Linter(Settings(select=["KG301"]))
    needs = view_needs(linter.workload_policies)
    assert needs is not None and not COSTLY & needs
    linter.lint_texts([("d.yaml", GPU_DEPLOYMENT)])
    assert _facts_held(built[0]) == set(FACTS) - COSTLY  # the cheap ones only
    linter.lint_texts([("d.yaml", GPU_DEPLOYMENT)], keep_views=True)  # kept views: every fact
    assert _facts_held(built[1]) == set(FACTS)
    assert "env_list" in (view_needs(Linter(Settings(select=["KG305"])).workload_policies) or ())


def test_a_policy_not_from_the_catalog_gets_every_fact(tmp_path: Path) -> None:
    from kubegap_lint.core.record import replace
    from kubegap_lint.engine.evaluate import view_needs

    policies = Linter(Settings(select=["KG301"])).workload_policies
    assert view_needs(policies) is not None
    moved = [replace(policies[0], path=str(tmp_path / "KG301-x.yaml"))]
    assert view_needs(moved) is None


def _lean_views(monkeypatch: pytest.MonkeyPatch, select: list[str], text: str) -> list[dict]:
    """The views a run builds for its rules (not kept: the builder's own)."""
    built = _capture_views(monkeypatch)
    Linter(Settings(select=select)).lint_texts([("m.yaml", text)])
    return built


_ENV = """
          env: [{name: NCCL_DEBUG, value: INFO}]
          volumeMounts: [{name: c, mountPath: /ckpt}]
      volumes: [{name: c, emptyDir: {}}]
"""


def test_deferred_facts_are_made_only_where_a_rule_that_reads_them_applies(monkeypatch: pytest.MonkeyPatch) -> None:
    """locations (KG202: training && has_gpu), env_list (KG305: distributed_pytorch && nccl_gpu)
    and elastic (KG401) wait for the rest of the view; a serving Deployment gets none of them,
    a one-pod GPU Job the locations its checkpoint rule reads, a two-pod torchrun job all three.
    A fact not made is not in the view (no rule that applies reads it)."""
    from conftest import GPU_DEPLOYMENT, GPU_JOB

    job = GPU_JOB + _ENV
    torchrun = job.replace("image: registry.example/t:1", "image: registry.example/t:1\n          "
                           "command: [torchrun, '--nnodes=1:2', --nproc-per-node=8, train.py]")
    torchrun = torchrun.replace("nvidia.com/gpu: 1", "nvidia.com/gpu: 8").replace(
        "spec:\n  template:", "spec:\n  parallelism: 2\n  template:")  # KG401: more than one pod
    serving = GPU_DEPLOYMENT + _ENV
    select = ["KG202", "KG305", "KG401"]
    (served,) = _lean_views(monkeypatch, select, serving)
    (trained,) = _lean_views(monkeypatch, select, job)
    (launched,) = _lean_views(monkeypatch, select, torchrun)
    container = served["pods"][0]["containers"][0]
    assert not {"locations", "env_list"} & set(container) and "elastic" not in served
    container = trained["pods"][0]["containers"][0]
    assert [(x["path"], x["from"], x["covered"]) for x in container["locations"]] == [("/ckpt", "volumeMounts", True)]
    assert "env_list" not in container and "elastic" not in trained and not trained["distributed_pytorch"]
    container = launched["pods"][0]["containers"][0]
    assert [x["name"] for x in container["env_list"]] == ["NCCL_DEBUG"]
    assert launched["elastic"] == {"source": "torchrun", "min_nodes": 1, "max_nodes": 2, "max_restarts": 0}
    # Kept views hold every fact, made at once, whatever applies.
    (kept,) = Linter(Settings(select=select)).lint_texts([("m.yaml", serving)], keep_views=True).views
    assert [x["name"] for x in kept["pods"][0]["containers"][0]["env_list"]] == ["NCCL_DEBUG"]
    assert [x["path"] for x in kept["pods"][0]["containers"][0]["locations"]] == ["/ckpt"]


def test_a_fact_whose_reader_applies_on_a_deferred_fact_is_made_at_once() -> None:
    """A rule whose applies_to reads a deferred fact would be asked before the fact is made:
    every fact it reads is made with the view (engine/guards.fact_guards)."""
    from kubegap_lint.catalog.policies import load_catalog
    from kubegap_lint.core.record import replace
    from kubegap_lint.engine.guards import fact_guards
    from kubegap_lint.workloads.facts import COSTLY

    policies = {p.id: p for p in load_catalog().policies}
    guards = fact_guards([policies["KG202"], policies["KG305"]], COSTLY)
    assert {fact: len(guards[fact]) for fact in ("locations", "env_list", "elastic")} == {
        "locations": 1, "env_list": 1, "elastic": 0}
    # KG401 reads `elastic` in its violation; with KG202's applies_to standing in as one that
    # reads `env_list`, both of the reader's facts must be made at once.
    reads_env = replace(policies["KG401"], applies_to=policies["KG305"].for_each)
    guards = fact_guards([reads_env, policies["KG202"]], COSTLY)
    assert "locations" in guards and not {"env_list", "elastic"} & set(guards)


@pytest.mark.parametrize("path", [pytest.param(EXAMPLES, id="examples"),
                                  pytest.param(CORPUS, id="corpus", marks=requires_shared)])
def test_every_rule_at_once_finds_the_same_with_deferred_facts(path: Path) -> None:
    """All the built-in rules together (the deferred facts in play) against kept views (every
    fact made at once): the same findings and errors on the examples and the shared corpus."""
    linter = Linter(Settings())
    lean, full = linter.lint_paths([str(path)]), linter.lint_paths([str(path)], keep_views=True)
    assert list(lean.iter_findings()) == list(full.iter_findings())
    assert [e.display() for e in lean.errors] == [e.display() for e in full.errors]


@pytest.mark.parametrize(("env", "distributed"), [
    ("[{name: MASTER_ADDR, value: a}]", True),
    ("[{name: X, value: '1'}, {name: WORLD_SIZE, value: '2'}]", True),
    ("[{name: A, value: '1'}, {name: PET_NNODES, value: '2'}]", True),
    ("[{name: XPET_NNODES, value: '2'}, {name: PET, value: '1'}, {name: pet_x, value: '1'}]", False),
    ("[]", False),
])
def test_torch_distributed_variables_make_a_multi_gpu_pod_distributed_pytorch(env: str, distributed: bool) -> None:
    from conftest import GPU_JOB

    job = GPU_JOB.replace("nvidia.com/gpu: 1", "nvidia.com/gpu: 8").replace(
        "image: registry.example/t:1", f"image: registry.example/t:1\n          env: {env}")
    (view,) = _views(job)
    assert view["distributed_pytorch"] is distributed and view["launchers"] == []


APPWRAPPER = """
apiVersion: workload.codeflare.dev/v1beta2
kind: AppWrapper
metadata: {name: train}
spec:
  components:
    - template:
        apiVersion: kubeflow.org/v1
        kind: PyTorchJob
        metadata: {name: p}
        spec:
          pytorchReplicaSpecs:
            Worker: {replicas: 3, template: {spec: {containers: [{name: w, resources: {limits: {nvidia.com/gpu: 8}}}]}}}
    - template:
        apiVersion: batch/v1
        kind: Job
        metadata: {name: j}
        spec: {parallelism: 2, template: {spec: {containers: [{name: c}]}}}
---
apiVersion: workload.codeflare.dev/v1beta2
kind: AppWrapper
metadata: {name: serve}
spec:
  components:
    - template:
        apiVersion: leaderworkerset.x-k8s.io/v1
        kind: LeaderWorkerSet
        metadata: {name: lws}
        spec:
          replicas: 2
          leaderWorkerTemplate:
            size: 3
            workerTemplate: {spec: {containers: [{name: w, resources: {limits: {nvidia.com/gpu: 1}}}]}}
---
apiVersion: workload.codeflare.dev/v1beta2
kind: AppWrapper
metadata: {name: mixed}
spec:
  components:
    - template:
        apiVersion: apps/v1
        kind: Deployment
        metadata: {name: d}
        spec: {replicas: 2, template: {spec: {containers: [{name: c, resources: {limits: {nvidia.com/gpu: 1}}}]}}}
    - template:
        apiVersion: batch/v1
        kind: Job
        metadata: {name: j}
        spec: {template: {spec: {containers: [{name: c}]}}}
"""


def test_appwrapper_components_are_read_by_their_own_entries_and_decide_the_class() -> None:
    """Each component is a whole resource read by its own entry (paths under its component);
    components of one class give the AppWrapper that class, and their own replica count (an
    LWS counts groups, not pods); mixed classes keep the table's `other`, each pod its own."""
    train, serve, mixed = _views(APPWRAPPER)
    assert _summary(train) == ("AppWrapper", [("Worker", 3, 8), ("pod", 2, 0)], 5, 24, True, False)
    assert [p["path"] for p in train["pods"]] == [
        "spec.components[0].template.spec.pytorchReplicaSpecs.Worker.template",
        "spec.components[1].template.spec.template"]
    assert _summary(serve) == ("AppWrapper", [("worker", 6, 1)], 6, 6, False, True)
    assert (serve["replicas"], serve["class"]) == (2, "serving")
    assert (mixed["class"], [p["class"] for p in mixed["pods"]]) == ("other", ["serving", "training"])
    assert [p["embedded"]["kind"] for p in mixed["pods"]] == ["Deployment", "Job"]


def test_raycronjob_reads_its_rayjob_template() -> None:
    (view,) = _views("""
apiVersion: ray.io/v1
kind: RayCronJob
metadata: {name: nightly}
spec:
  schedule: "0 2 * * *"
  jobTemplate:
    rayClusterSpec:
      headGroupSpec: {template: {spec: {containers: [{name: head}]}}}
      workerGroupSpecs:
        - {groupName: gpu, replicas: 2, numOfHosts: 2, template: {spec: {containers: [{name: w, resources: {limits: {nvidia.com/gpu: 4}}}]}}}
    submitterPodTemplate: {spec: {containers: [{name: submit}]}}
""")
    assert _summary(view) == ("RayCronJob", [("head", 1, 0), ("gpu", 4, 4), ("submitter", 1, 0)], 6, 16, True, False)


@pytest.mark.parametrize("kind,templates", [
    ("Workflow", "spec.templates"), ("WorkflowTemplate", "spec.templates"),
    ("ClusterWorkflowTemplate", "spec.templates"), ("CronWorkflow", "spec.workflowSpec.templates")])
def test_argo_templates_are_partial_pods_of_unknown_count(kind: str, templates: str) -> None:
    """container, script and containerSet templates are pods Argo completes (partial); how many
    pods each makes is up to the steps that call it (unknown); steps templates make none."""
    body = """
- name: main
  steps: [[{name: a, template: train}]]
- name: train
  container: {image: i, command: [python, t.py], resources: {limits: {nvidia.com/gpu: 8}}}
- name: prep
  script: {image: python, command: [python], source: print(1)}
- name: set
  containerSet: {containers: [{name: main, image: i, resources: {limits: {nvidia.com/gpu: 2}}}]}
"""
    *parents, leaf = templates.split(".")
    nested = "\n".join(f"{'  ' * n}{key}:" for n, key in enumerate(parents))
    indent = "  " * len(parents)
    text = (f"apiVersion: argoproj.io/v1alpha1\nkind: {kind}\nmetadata: {{name: w}}\n{nested}\n"
            f"{indent}{leaf}:" + "".join(f"\n{indent}  {line}" for line in body.strip().splitlines()))
    (view,) = _views(text)
    assert _summary(view) == (kind, [("train", None, 8), ("prep", None, 0), ("set", None, 2)], None, None, True, False)
    assert [p["partial"] for p in view["pods"]] == [True, True, True]
    assert [p["path"] for p in view["pods"]] == [f"{templates}[1].container", f"{templates}[2].script",
                                                 f"{templates}[3].containerSet"]


def test_mpijob_v1alpha1_has_a_launcher_made_from_the_workers_template() -> None:
    (view,) = _views("""
apiVersion: kubeflow.org/v1alpha1
kind: MPIJob
metadata: {name: m}
spec:
  replicas: 1
  template: {spec: {containers: [{name: w, image: i, resources: {limits: {nvidia.com/gpu: 4}}}]}}
""")
    assert _summary(view) == ("MPIJob", [("launcher", 1, 0), ("worker", 1, 4)], 2, 4, True, False)
    assert view["pods"][0]["spec"]["containers"][0].get("resources") is None
MPI_NO_COMMAND = """\
apiVersion: kubeflow.org/v2beta1
kind: MPIJob
metadata: {name: m}
spec:
  mpiReplicaSpecs:
    Launcher:
      replicas: 1
      template: {spec: {containers: [{name: l, image: t, command: [mpirun, -np, "16", LAUNCHED]}]}}
    Worker:
      replicas: 2
      template: {spec: {containers: [{name: w, image: t, WORKER resources: {limits: {amd.com/gpu: 8}}}]}}
"""


@pytest.mark.parametrize("launched,worker,diagnostic", [
    ("/workspace/rccl-tests/build/all_reduce_perf", "", True),  # the operator's sshd runs what the launcher runs
    ("python train.py", "", False),
    ("/workspace/rccl-tests/build/all_reduce_perf", "args: [python, train.py],", False),  # args of its own
    ("/workspace/rccl-tests/build/all_reduce_perf", "command: [/entrypoint.sh],", False),
])
def test_mpijob_workers_without_a_command_follow_the_launcher(launched: str, worker: str, diagnostic: bool) -> None:
    (view,) = _views(MPI_NO_COMMAND.replace("LAUNCHED", launched).replace("WORKER", worker))
    assert view["class"] == ("diagnostic" if diagnostic else "training")
    assert [p["follows"] for p in view["pods"]] == [False, worker == ""]
def _mounts(pod: dict) -> dict:
    return {m["path"]: (m["volume_type"], m["medium"], (m["volume"] or {}).get("emptyDir", {}).get("sizeLimit"))
            for c in pod["containers"] for m in c["mounts"]}


def test_dynamo_components_are_completed_as_the_operator_completes_them() -> None:
    """v1alpha1: the service's resources.limits.gpu (of gpuType) goes to the main container, its
    envs and PVC volumeMounts join it, /dev/shm is a memory emptyDir of sharedMemory.size (8Gi
    unset, none when disabled); replicas x multinode.nodeCount pods; the workload's replicas are
    the most replicas of one GPU role, not every pod."""
    (view,) = _views("""
apiVersion: nvidia.com/v1alpha1
kind: DynamoGraphDeployment
metadata: {name: g}
spec:
  pvcs: [{name: models, create: false}]
  envs: [{name: NCCL_DEBUG, value: WARN}, {name: HF_HUB_OFFLINE, value: "1"}]
  services:
    Frontend: {replicas: 2, extraPodSpec: {mainContainer: {image: dynamo}}}
    Decode:
      replicas: 3
      resources: {limits: {gpu: "2", gpuType: amd.com/gpu}}
      envs: [{name: HF_HUB_OFFLINE, value: "1"}]
      volumeMounts: [{name: models, mountPoint: /models}]
      extraPodMetadata: {labels: {tier: decode}}
      extraPodSpec: {mainContainer: {image: dynamo, env: [{name: HF_HUB_OFFLINE, value: "0"}]}}
    Prefill:
      replicas: 1
      multinode: {nodeCount: 2}
      sharedMemory: {disabled: true}
      resources: {requests: {gpu: "8"}}
      extraPodSpec: {mainContainer: {image: dynamo}}
""")
    assert _summary(view) == ("DynamoGraphDeployment", [("Frontend", 2, 0), ("Decode", 3, 2), ("Prefill", 2, 8)],
                              7, 22, False, True)
    assert view["replicas"] == 3  # Decode's 3, not 7 pods nor the Frontend's
    frontend, decode, prefill = view["pods"]
    assert _mounts(frontend) == {"/dev/shm": ("emptyDir", "Memory", "8Gi")}
    assert _mounts(decode) == {"/models": ("persistentVolumeClaim", None, None), "/dev/shm": ("emptyDir", "Memory", "8Gi")}
    assert _mounts(prefill) == {}
    assert decode["accelerators"] == {"amd.com/gpu": 2} and decode["containers"][0]["name"] == "main"
    assert decode["env"]["HF_HUB_OFFLINE"] == "0"  # the container's own value wins
    assert prefill["env"] == {"NCCL_DEBUG": "WARN", "HF_HUB_OFFLINE": "1"}  # the graph's spec.envs
    assert decode["labels"] == {"tier": "decode"}


def test_dynamo_v1beta1_components_and_shared_memory_size() -> None:
    views = _views("""
apiVersion: nvidia.com/v1beta1
kind: DynamoGraphDeployment
metadata: {name: g}
spec:
  components:
    - name: worker
      replicas: 2
      sharedMemorySize: 200Gi
      podTemplate: {spec: {containers: [{name: main, resources: {limits: {nvidia.com/gpu: 4}}}, {name: sidecar}]}}
    - name: idle
      sharedMemorySize: "0"
      podTemplate: {spec: {containers: [{name: main, resources: {limits: {nvidia.com/gpu: 4}}}]}}
""")
    (view,) = views
    assert _summary(view) == ("DynamoGraphDeployment", [("worker", 2, 4), ("idle", 1, 4)], 3, 12, False, True)
    worker, idle = view["pods"]
    assert _mounts(worker) == {"/dev/shm": ("emptyDir", "Memory", "200Gi")}  # on main only
    assert [c["mounts"] != [] for c in worker["containers"]] == [True, False]
    assert _mounts(idle) == {}
    assert view["found_by"] == "table:nvidia.com/v1beta1/DynamoGraphDeployment"


def test_stormservice_rbg_podcliqueset_knative_and_fleet_counts() -> None:
    """StormService: RoleSets x role replicas x podGroupSize; RBG: role replicas x group size
    (v1alpha1 leaderWorkerSet.size, v1alpha2 leaderWorkerPattern.size); PodCliqueSet: set
    replicas x clique replicas; a Knative revision is one pod; a RayClusterFleet multiplies its
    clusters' groups."""
    storm, rbg1, rbg2, pcs, knative, fleet = _views("""
apiVersion: orchestration.aibrix.ai/v1alpha1
kind: StormService
metadata: {name: s}
spec:
  replicas: 2
  template:
    spec:
      roles:
        - {name: routing, template: {spec: {containers: [{name: r}]}}}
        - {name: prefill, replicas: 3, podGroupSize: 2, template: {spec: {containers: [{name: p, resources: {limits: {nvidia.com/gpu: 1}}}]}}}
---
apiVersion: workloads.x-k8s.io/v1alpha1
kind: RoleBasedGroup
metadata: {name: r1}
spec:
  roles:
    - {name: worker, replicas: 2, leaderWorkerSet: {size: 4}, template: {spec: {containers: [{name: w, resources: {limits: {nvidia.com/gpu: 8}}}]}}}
---
apiVersion: workloads.x-k8s.io/v1alpha2
kind: RoleBasedGroup
metadata: {name: r2}
spec:
  roles:
    - {name: router, replicas: 1, standalonePattern: {template: {spec: {containers: [{name: r}]}}}}
    - {name: decode, replicas: 3, leaderWorkerPattern: {size: 2, template: {spec: {containers: [{name: d, resources: {limits: {nvidia.com/gpu: 1}}}]}}}}
---
apiVersion: grove.io/v1alpha1
kind: PodCliqueSet
metadata: {name: p}
spec:
  replicas: 2
  template:
    cliques:
      - {name: worker, labels: {grove.io/role: worker}, spec: {roleName: worker, replicas: 3, podSpec: {containers: [{name: w, resources: {limits: {nvidia.com/gpu: 8}}}]}}}
---
apiVersion: serving.knative.dev/v1
kind: Service
metadata: {name: k}
spec:
  template: {spec: {containers: [{image: vllm, resources: {limits: {nvidia.com/gpu: 1}}}]}}
---
apiVersion: orchestration.aibrix.ai/v1alpha1
kind: RayClusterFleet
metadata: {name: f}
spec:
  replicas: 2
  template:
    spec:
      headGroupSpec: {template: {spec: {containers: [{name: h, resources: {limits: {nvidia.com/gpu: 8}}}]}}}
      workerGroupSpecs:
        - {groupName: g, replicas: 3, template: {spec: {containers: [{name: w, resources: {limits: {nvidia.com/gpu: 8}}}]}}}
""")
    assert _summary(storm) == ("StormService", [("routing", 2, 0), ("prefill", 12, 1)], 14, 12, False, True)
    assert storm["replicas"] == 6  # RoleSets x prefill replicas (pod groups, not their pods)
    assert _summary(rbg1) == ("RoleBasedGroup", [("worker", 8, 8)], 8, 64, False, True)
    assert rbg1["replicas"] == 2  # instances of the role, not its pods
    assert _summary(rbg2) == ("RoleBasedGroup", [("router", 1, 0), ("decode", 6, 1)], 7, 6, False, True)
    assert rbg2["replicas"] == 3
    assert _summary(pcs) == ("PodCliqueSet", [("worker", 6, 8)], 6, 48, False, True) and pcs["replicas"] == 6
    assert pcs["pods"][0]["labels"] == {"grove.io/role": "worker"}  # the clique's own labels
    assert _summary(knative) == ("Service", [("revision", 1, 1)], 1, 1, False, True)
    assert _summary(fleet) == ("RayClusterFleet", [("head", 2, 8), ("g", 6, 8)], 8, 64, False, True)
    assert {p["found_by"] for v in (storm, rbg1, pcs, knative, fleet) for p in v["pods"]} == {
        "table:orchestration.aibrix.ai/StormService", "table:workloads.x-k8s.io/RoleBasedGroup",
        "table:grove.io/PodCliqueSet", "table:serving.knative.dev/Service",
        "table:orchestration.aibrix.ai/RayClusterFleet"}


def test_knative_scale_annotations_bound_the_replicas() -> None:
    """A Knative revision's min-scale / max-scale (and the older minScale / maxScale) are its
    autoscaler's bounds; unset, neither is known."""
    bounded, older, unset = _views("""
apiVersion: serving.knative.dev/v1
kind: Service
metadata: {name: a}
spec:
  template:
    metadata: {annotations: {autoscaling.knative.dev/min-scale: "1", autoscaling.knative.dev/max-scale: "6"}}
    spec: {containers: [{image: vllm, resources: {limits: {nvidia.com/gpu: 1}}}]}
---
apiVersion: serving.knative.dev/v1
kind: Service
metadata: {name: b}
spec:
  template:
    metadata: {annotations: {autoscaling.knative.dev/minScale: "2"}}
    spec: {containers: [{image: vllm}]}
---
apiVersion: serving.knative.dev/v1
kind: Service
metadata: {name: c}
spec:
  template: {spec: {containers: [{image: vllm}]}}
""")
    assert bounded["scaling"]["max"] == 6
    assert [(f["min"], f["max"], f["min_set"]) for f in bounded["scaling"]["floors"]] == [(1, 6, True)]
    assert [(f["min"], f["max"]) for f in older["scaling"]["floors"]] == [(2, None)]
    assert unset["scaling"] == {"max": 1, "floors": []}
