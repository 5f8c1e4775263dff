"""The resilience facts added to workload views (kubegap_lint/workloads/facts/): spreads,
disruption budgets, elastic launches, restart policies, accelerator requests and limits."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kubegap_lint.config.settings import Settings
from kubegap_lint.engine.run import Linter
from kubegap_lint.workloads.facts.accelerators import accelerator_mismatches
from kubegap_lint.workloads.facts.budgets import disruptions_allowed
from kubegap_lint.workloads.facts.elastic import torchrun_flags
from kubegap_lint.workloads.facts.spread import selector_may_select, spread_facts

GPU = ["nvidia.com/gpu", "nvidia.com/mig-*", "amd.com/gpu"]


def _views(*texts: str) -> list[dict]:
    files = [(f"f{i}.yaml", text) for i, text in enumerate(texts)]
    return Linter(Settings(select=["KG001"])).lint_texts(files, keep_views=True).views


# -- spreading ------------------------------------------------------------------------------

def test_selector_contradiction_misses_but_unknown_keys_get_the_benefit_of_the_doubt() -> None:
    labels = {"app": "llm"}
    assert selector_may_select({"matchLabels": {"app": "llm"}}, labels)
    assert not selector_may_select({"matchLabels": {"app": "other"}}, labels)
    # A label the controller adds (not in the template) cannot be judged: assume it matches.
    assert selector_may_select({"matchLabels": {"leaderworkerset.sigs.k8s.io/name": "x"}}, labels)
    assert not selector_may_select({"matchExpressions": [{"key": "app", "operator": "NotIn", "values": ["llm"]}]}, labels)
    assert not selector_may_select(None, labels)  # no selector selects nothing


def test_spread_facts_split_hard_and_soft() -> None:
    spec = {
        "topologySpreadConstraints": [
            {"topologyKey": "topology.kubernetes.io/zone", "labelSelector": {"matchLabels": {"app": "a"}}},
            {"topologyKey": "kubernetes.io/hostname", "whenUnsatisfiable": "ScheduleAnyway",
             "labelSelector": {"matchLabels": {"app": "a"}}},
            {"topologyKey": "rack", "whenUnsatisfiable": "DoNotSchedule"},  # no selector: ignored
            {"topologyKey": "block", "matchLabelKeys": ["pod-template-hash"]},
        ],
        "affinity": {"podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {"topologyKey": "row", "labelSelector": {"matchLabels": {"app": "a"}}}],
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 1, "podAffinityTerm": {"topologyKey": "pdu", "labelSelector": {"matchLabels": {"app": "a"}}}}],
        }},
    }
    assert spread_facts(spec, {"app": "a"}) == {
        "hard": ["block", "row", "topology.kubernetes.io/zone"],
        "soft": ["kubernetes.io/hostname", "pdu"],
    }


# -- disruption budgets ---------------------------------------------------------------------

@pytest.mark.parametrize("min_available,max_unavailable,pods,expected", [
    (None, 1, 3, 1),
    (None, 0, 3, 0),
    (None, "0%", 3, 0),
    (None, "34%", 3, 2),      # rounded up: ceil(1.02)
    (3, None, 3, 0),
    (4, None, 3, 0),
    (2, None, 3, 1),
    ("100%", None, 4, 0),
    ("90%", None, 2, 0),      # ceil(1.8) = 2 must stay
    ("50%", None, 3, 1),      # ceil(1.5) = 2 must stay
    (2, None, None, None),    # unknown pod count
    ("x", None, 3, None),     # unreadable value
    (None, None, 3, None),
])
def test_disruptions_allowed(min_available, max_unavailable, pods, expected) -> None:
    assert disruptions_allowed(min_available, max_unavailable, pods) == expected


@given(st.integers(min_value=0, max_value=500), st.integers(min_value=0, max_value=200),
       st.booleans())
def test_disruptions_allowed_stays_within_the_pods(value: int, pods: int, as_max: bool) -> None:
    allowed = disruptions_allowed(None, value, pods) if as_max else disruptions_allowed(value, None, pods)
    assert allowed is not None and 0 <= allowed <= pods


def test_budgets_are_joined_across_files_and_count_selected_pods() -> None:
    (view,) = _views("""
apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata: {name: lws, namespace: s}
spec:
  replicas: 2
  leaderWorkerTemplate:
    size: 3
    leaderTemplate:
      metadata: {labels: {app: lws, role: leader}}
      spec: {containers: [{name: l, resources: {limits: {nvidia.com/gpu: 8}}}]}
    workerTemplate:
      metadata: {labels: {app: lws}}
      spec: {containers: [{name: w, resources: {limits: {nvidia.com/gpu: 8}}}]}
""", """
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: all, namespace: s}
spec: {minAvailable: 6, selector: {matchLabels: {app: lws}}}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: leaders, namespace: s}
spec: {maxUnavailable: 1, selector: {matchLabels: {role: leader}}}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: elsewhere, namespace: other}
spec: {maxUnavailable: 1, selector: {matchLabels: {app: lws}}}
""")
    budgets = {b["name"]: (b["pods"], b["disruptions_allowed"], b["selects_gpu_pods"]) for b in view["budgets"]}
    # 2 leaders + 2 x 2 workers = 6 pods selected by "all": minAvailable 6 leaves no disruption.
    assert budgets == {"all": (6, 0, True), "leaders": (2, 1, True)}


# -- elastic launch and restarts -------------------------------------------------------------

def test_torchrun_flags_in_scripts_both_spellings_and_unrendered() -> None:
    text = "bash -c 'torchrun --nnodes 2:4 --rdzv_backend=c10d --max-restarts=$R train.py'"
    assert torchrun_flags(text) == {"nnodes": "2:4", "rdzv_backend": "c10d", "max_restarts": None}
    assert torchrun_flags("torchrun --max_restarts 3 --nnodes=2 x.py") == {"nnodes": "2", "max_restarts": "3"}


def test_elastic_facts_precedence_flag_over_env_over_policy() -> None:
    base = """
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: p}
spec:
  elasticPolicy: {rdzvBackend: c10d, minReplicas: 1, maxReplicas: 4, maxRestarts: 7}
  pytorchReplicaSpecs:
    Worker:
      replicas: 4
      template: {spec: {containers: [{name: c, command: [%s], env: [%s], resources: {limits: {nvidia.com/gpu: 8}}}]}}
"""
    (policy_only,) = _views(base % ("torchrun, train.py", ""))
    assert policy_only["elastic"] == {"source": "elasticPolicy", "min_nodes": 1, "max_nodes": 4, "max_restarts": 7}
    (env,) = _views(base % ("torchrun, train.py", "{name: PET_MAX_RESTARTS, value: '2'}"))
    assert env["elastic"]["max_restarts"] == 2
    (flag,) = _views(base % ("torchrun, --max-restarts=0, train.py", "{name: PET_MAX_RESTARTS, value: '2'}"))
    assert flag["elastic"]["max_restarts"] == 0


def test_static_torchrun_is_not_elastic_and_unset_restarts_default_to_zero() -> None:
    job = """
apiVersion: batch/v1
kind: Job
metadata: {name: j}
spec:
  parallelism: 2
  template: {spec: {containers: [{name: c, command: [sh, -c, "%s"], resources: {limits: {nvidia.com/gpu: 8}}}]}}
"""
    (static,) = _views(job % "torchrun --nnodes=2 --nproc-per-node=8 train.py")
    assert static["elastic"] is None
    (elastic,) = _views(job % "torchrun --nnodes=1:2 train.py")
    assert elastic["elastic"] == {"source": "torchrun", "min_nodes": 1, "max_nodes": 2, "max_restarts": 0}


def test_restart_policy_reads_the_replica_spec_first_and_gpu_pods_count() -> None:
    (view,) = _views("""
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: p}
spec:
  pytorchReplicaSpecs:
    Master: {replicas: 1, restartPolicy: Never, template: {spec: {restartPolicy: OnFailure, containers: [{name: m, resources: {limits: {nvidia.com/gpu: 1}}}]}}}
    Worker: {replicas: 2, template: {spec: {restartPolicy: OnFailure, containers: [{name: w, resources: {limits: {nvidia.com/gpu: 1}}}]}}}
    Helper: {replicas: 5, template: {spec: {containers: [{name: h}]}}}
""")
    assert [(p["role"], p["restart_policy"]) for p in view["pods"]] == [
        ("Master", "Never"), ("Worker", "OnFailure"), ("Helper", None)]
    assert view["gpu_pods"] == 3
    (unknown,) = _views("""
apiVersion: batch/v1
kind: Job
metadata: {name: j}
spec: {parallelism: $N, template: {spec: {containers: [{name: c, resources: {limits: {nvidia.com/gpu: 1}}}]}}}
""")
    assert unknown["gpu_pods"] is None


# -- requests and limits -----------------------------------------------------------------------

def test_accelerator_mismatches() -> None:
    def mismatches(requests: dict, limits: dict) -> list:
        return accelerator_mismatches({"resources": {"requests": requests, "limits": limits}}, GPU)

    assert mismatches({"nvidia.com/gpu": 1}, {}) == [{"name": "nvidia.com/gpu", "request": 1, "limit": None}]
    assert mismatches({"nvidia.com/mig-1g.10gb": 1}, {"nvidia.com/mig-1g.10gb": 2})[0]["limit"] == 2
    assert mismatches({"nvidia.com/gpu": "2"}, {"nvidia.com/gpu": 2}) == []
    assert mismatches({"nvidia.com/gpu": "$N"}, {"nvidia.com/gpu": 2}) == []  # unknown: not compared
    assert mismatches({"cpu": "1"}, {}) == []
    assert accelerator_mismatches({"resources": "broken"}, GPU) == []
    # The same value twice is the same quantity (or unreadable on both sides): no mismatch.
    assert mismatches({"nvidia.com/gpu": 8}, {"nvidia.com/gpu": 8}) == mismatches({"nvidia.com/gpu": "$N"},
                                                                                    {"nvidia.com/gpu": "$N"}) == []
    assert mismatches({"nvidia.com/gpu": True}, {"nvidia.com/gpu": 1}) == mismatches({"nvidia.com/gpu": "1"},
                                                                                       {"nvidia.com/gpu": "1000m"}) == []
    assert mismatches({"nvidia.com/gpu": "1"}, {"nvidia.com/gpu": "2"})[0]["limit"] == "2"
