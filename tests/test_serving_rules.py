"""The serving, bare-pod and batch rules (KG104, KG105, KG204, KG403, KG404) and the view facts
they read (kubegap_lint/workloads/facts/): serving engines, model download directories,
drain timing, idling commands, autoscaler floors and batch deadlines. Each linter test pins
the rule it is about."""

from __future__ import annotations

import pytest

from kubegap_lint.config.settings import Settings
from kubegap_lint.engine.run import Linter
from kubegap_lint.workloads.facts.batch import idle_facts
from kubegap_lint.workloads.facts.serving import (
    download_dir,
    engine_drain,
    flag_value,
    hub_model,
    prestop_seconds,
    script_words,
    serving_engine,
)
from kubegap_lint.workloads.index import Autoscaler, InputIndex


def _findings(rule: str, *texts: str) -> list[tuple[str, str, str, int, int, str]]:
    files = [(f"f{i}.yaml", text) for i, text in enumerate(texts)]
    result = Linter(Settings(select=[rule])).lint_texts(files)
    assert not result.errors
    return [(f.rule_id, f.severity.value, f.location.path, f.location.line, f.location.column, f.message)
            for f in result.findings]


def _views(*texts: str) -> list[dict]:
    files = [(f"f{i}.yaml", text) for i, text in enumerate(texts)]
    return Linter(Settings(select=["KG001"])).lint_texts(files, keep_views=True).views


# -- facts ----------------------------------------------------------------------------------

def test_the_command_names_the_engine_and_the_image_only_without_a_command() -> None:
    assert serving_engine("registry/x:1", "python3 -m vllm.entrypoints.openai.api_server --model m", True) == "vllm"
    assert serving_engine("vllm/vllm-openai:v0.10.1", "--model org/m", False) == "vllm"
    assert serving_engine("lmsysorg/sglang:latest", "python3 -m sglang.launch_server --model-path x", True) == "sglang"
    assert serving_engine("nvcr.io/nim/meta/llama-3.1-8b-instruct:1.3.3", "", False) == "nim"
    assert serving_engine("nvcr.io/nvidia/tritonserver:24.08-py3", "", False) == "triton"
    assert serving_engine("ghcr.io/huggingface/text-generation-inference:2.4.1", "", False) == "tgi"
    # An engine image that runs a script of its own (a Ray worker join) is not the engine.
    assert serving_engine("vllm/vllm-openai:v0.8.5", "sh -c bash multi-node-serving.sh worker", True) is None
    assert serving_engine("nvcr.io/nvidia/pytorch:24.07-py3", "", False) is None


def test_script_words_split_sh_c_scripts_and_flags_take_either_spelling() -> None:
    words = script_words("sh -c 'vllm serve org/m --download-dir=/cache --tensor-parallel-size 8'")
    assert words[:5] == ["sh", "-c", "vllm", "serve", "org/m"]
    assert flag_value(words, ("--download-dir",)) == "/cache"
    assert flag_value(words, ("--tensor-parallel-size",)) == "8"
    assert flag_value(["--model", "--other"], ("--model",)) is None  # a flag is not a value


@pytest.mark.parametrize("engine,text,env,expected", [
    ("vllm", "vllm serve meta-llama/Llama-3.1-8B-Instruct --port 8000", {}, "meta-llama/Llama-3.1-8B-Instruct"),
    ("vllm", "python3 -m vllm.entrypoints.openai.api_server --model=Qwen/Qwen3-8B", {}, "Qwen/Qwen3-8B"),
    ("sglang", "python3 -m sglang.launch_server --model-path deepseek-ai/DeepSeek-R1", {}, "deepseek-ai/DeepSeek-R1"),
    ("tgi", "", {"MODEL_ID": "mistralai/Mistral-7B-Instruct-v0.3"}, "mistralai/Mistral-7B-Instruct-v0.3"),
    ("vllm", "vllm serve /models/Qwen3-8B", {}, None),           # a local path
    ("vllm", "vllm serve $(MODEL)", {}, None),                   # unrendered
    ("vllm", "vllm serve", {"HF_MODEL_ID": None}, None),         # set, value unknown
])
def test_hub_model(engine: str, text: str, env: dict, expected: str | None) -> None:
    assert hub_model(engine, script_words(text), env) == expected


@pytest.mark.parametrize("engine,text,env,expected", [
    ("vllm", "--download-dir /mnt/m", {"HF_HOME": "/x"}, ("/mnt/m", "--download-dir")),
    ("vllm", "", {"HF_HUB_CACHE": "/c", "HF_HOME": "/x"}, ("/c", "HF_HUB_CACHE")),
    ("vllm", "", {"HUGGINGFACE_HUB_CACHE": "/c2"}, ("/c2", "HUGGINGFACE_HUB_CACHE")),
    ("vllm", "", {"HF_HOME": "/hf/"}, ("/hf/hub", "HF_HOME")),
    ("vllm", "", {"HF_HOME": None}, (None, "HF_HOME")),           # from a Secret or ConfigMap: unknown
    ("tgi", "", {}, ("/data", "the default of TGI's examples")),
    ("sglang", "", {"HOME": "/home/ray"}, ("/home/ray/.cache/huggingface", "HOME")),
    ("vllm", "", {}, ("/root/.cache/huggingface", "the default")),
])
def test_download_dir_precedence(engine: str, text: str, env: dict, expected: tuple) -> None:
    assert download_dir(engine, script_words(text), env) == expected


def test_prestop_seconds_and_engine_drain_flags() -> None:
    assert prestop_seconds({"sleep": {"seconds": 15}}) == 15
    assert prestop_seconds({"exec": {"command": ["/bin/sh", "-c", "sleep 10"]}}) == 10
    assert prestop_seconds({"exec": {"command": ["sleep", "20"]}}) == 20
    assert prestop_seconds({"httpGet": {"path": "/drain", "port": 8000}}) is None
    assert engine_drain("vllm", script_words("vllm serve m --shutdown-timeout 40")) == ("--shutdown-timeout", 40)
    assert engine_drain("triton", ["tritonserver", "--exit-timeout-secs=60"]) == ("--exit-timeout-secs", 60)
    assert engine_drain("sglang", ["--shutdown-timeout", "40"]) == (None, None)
    assert engine_drain("vllm", ["vllm", "serve", "m"]) == (None, None)


def test_idle_facts() -> None:
    assert idle_facts("sleep infinity") == {"forever": True, "sleep_seconds": 0}
    assert idle_facts("/bin/sh -c service ssh restart;\nsleep infinity;") == {"forever": True, "sleep_seconds": 0}
    assert idle_facts("tail -f /dev/null")["forever"]
    assert idle_facts("bash -c while true; do sleep 30; done")["forever"]
    assert idle_facts("bash -c nvidia-smi -L; trap 'exit 0' TERM; sleep 9999 & wait") == {
        "forever": False, "sleep_seconds": 9999}
    assert idle_facts("python train.py") == {"forever": False, "sleep_seconds": 0}


def test_autoscalers_are_found_by_target_and_namespace_in_memory_and_on_disk() -> None:
    scalers = [Autoscaler("HorizontalPodAutoscaler", "a", "prod", "Deployment", "vllm", 1, 4, "a.yaml", 1),
               Autoscaler("ScaledObject", "b", "staging", "Deployment", "vllm", 1, None, "b.yaml", 3),
               Autoscaler("HorizontalPodAutoscaler", "c", None, "LeaderWorkerSet", "vllm", 2, 3, "c.yaml", 5)]
    for limit in (None, 0):  # in memory, and on disk from the first fact
        index = InputIndex(facts_in_memory=limit)
        for scaler in scalers:
            index.add_autoscaler(scaler)
        assert [s.name for s in index.autoscalers_for("prod", "Deployment", "vllm")] == ["a"]
        assert [s.name for s in index.autoscalers_for(None, "Deployment", "vllm")] == ["a", "b"]
        assert [s.name for s in index.autoscalers_for("x", "LeaderWorkerSet", "vllm")] == ["c"]
        assert index.autoscalers_for("prod", "StatefulSet", "vllm") == []


def test_a_scaled_object_targets_a_deployment_unless_it_says_otherwise() -> None:
    (view,) = _views("""
apiVersion: apps/v1
kind: Deployment
metadata: {name: triton}
spec:
  template:
    spec:
      containers: [{name: t, image: "nvcr.io/nvidia/tritonserver:24.08-py3", resources: {limits: {nvidia.com/gpu: 1}}}]
""", """
apiVersion: keda.sh/v1alpha1
kind: ScaledObject
metadata: {name: s}
spec: {scaleTargetRef: {name: triton}, minReplicaCount: 1, maxReplicaCount: 5}
---
apiVersion: keda.sh/v1alpha1
kind: ScaledObject
metadata: {name: other-kind}
spec: {scaleTargetRef: {name: triton, kind: StatefulSet}, minReplicaCount: 1}
""")
    assert view["autoscalers"] == [{"kind": "ScaledObject", "name": "s", "min_replicas": 1, "max_replicas": 5,
                                    "path": "f1.yaml", "line": 2}]
    assert view["scaling"]["max"] == 5
    assert [(f["source"], f["min"], f["max"], f["min_set"]) for f in view["scaling"]["floors"]] == [
        ("ScaledObject s (f1.yaml:2)", 1, 5, True)]


# -- rules ----------------------------------------------------------------------------------

VLLM_EMPTYDIR = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: vllm
spec:
  replicas: 2
  template:
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.10.1
          args: ["--model", "Qwen/Qwen3-8B"]
          env: ENV
          resources:
            limits: {nvidia.com/gpu: 1}
          volumeMounts:
            - {name: cache, mountPath: /root/.cache/huggingface}
      volumes:
        - {name: cache, emptyDir: {}}
"""


def test_model_fetched_at_start_points_at_the_container_and_names_the_directory() -> None:
    assert _findings("KG204", VLLM_EMPTYDIR.replace("ENV", "[]")) == [(
        "KG204", "warning", "f0.yaml", 10, 11,
        "container vllm (vllm) downloads Qwen/Qwen3-8B from the hub at start into"
        " /root/.cache/huggingface (the default), which is an emptyDir at /root/.cache/huggingface, and"
        " HF_HUB_OFFLINE is not 1: every replacement pod (eviction, drain, reschedule, scale-up) downloads"
        " the whole model again, against per-IP hub rate limits (HTTP 429) and hub outages")]
    # Offline mode, or a value that says otherwise, clears it; `0` does not.
    assert _findings("KG204", VLLM_EMPTYDIR.replace("ENV", '[{name: HF_HUB_OFFLINE, value: "1"}]')) == []
    assert len(_findings("KG204", VLLM_EMPTYDIR.replace("ENV", '[{name: HF_HUB_OFFLINE, value: "0"}]'))) == 1
    # One replica: outside the rule.
    assert _findings("KG204", VLLM_EMPTYDIR.replace("ENV", "[]").replace("replicas: 2", "replicas: 1")) == []


def test_model_fetched_at_start_counts_an_hpa_maximum_from_another_file() -> None:
    single = VLLM_EMPTYDIR.replace("ENV", "[]").replace("replicas: 2", "replicas: 1")
    hpa = """\
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: vllm}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: vllm}
  minReplicas: 2
  maxReplicas: 4
"""
    assert [(r, s, p, line, col) for r, s, p, line, col, _ in _findings("KG204", single, hpa)] == [
        ("KG204", "warning", "f0.yaml", 10, 11)]


def test_model_fetched_at_start_accepts_another_home_cache_for_the_default() -> None:
    text = VLLM_EMPTYDIR.replace("ENV", "[]").replace("/root/.cache/huggingface", "/home/ray/.cache/huggingface")
    assert _findings("KG204", text) != []  # an emptyDir there is still an emptyDir
    pvc = text.replace("emptyDir: {}", "persistentVolumeClaim: {claimName: models}")
    assert _findings("KG204", pvc) == []


DRAIN = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: vllm
spec:
  replicas: 2
  template:
    spec:
      GRACE
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.18.0
          args: ARGS
          LIFECYCLE
          resources:
            limits: {nvidia.com/gpu: 1}
"""


def _drain(grace: str = "", args: str = "[]", lifecycle: str = "") -> str:
    return DRAIN.replace("GRACE", grace or "hostIPC: false").replace("ARGS", args).replace(
        "LIFECYCLE", lifecycle or "imagePullPolicy: IfNotPresent")


def test_no_graceful_drain_without_prestop_and_with_the_default_grace() -> None:
    assert _findings("KG104", _drain()) == [(
        "KG104", "warning", "f0.yaml", 11, 11,
        "container vllm (vllm) has no preStop hook and terminationGracePeriodSeconds unset"
        " (30 s): on a drain or scale-down the pod gets SIGTERM while load balancers may still send it"
        " requests, and generations still running when the grace period ends are killed")]
    assert len(_findings("KG104", _drain(grace="terminationGracePeriodSeconds: 30"))) == 1
    assert _findings("KG104", _drain(grace="terminationGracePeriodSeconds: 120")) == []
    # An unrendered grace period is unknown, not short.
    assert _findings("KG104", _drain(grace="terminationGracePeriodSeconds: ${GRACE}")) == []


def test_no_graceful_drain_when_the_engine_drain_does_not_fit() -> None:
    lifecycle = "lifecycle: {preStop: {sleep: {seconds: 15}}}"
    args = '["--shutdown-timeout", "50"]'
    assert _findings("KG104", _drain(grace="terminationGracePeriodSeconds: 60", args=args, lifecycle=lifecycle)) == [(
        "KG104", "warning", "f0.yaml", 14, 23,
        "container vllm needs 65 s to stop (preStop 15 s + --shutdown-timeout 50) but"
        " terminationGracePeriodSeconds is 60: the kubelet kills the engine before its own drain ends")]
    assert _findings("KG104", _drain(grace="terminationGracePeriodSeconds: 65", args=args, lifecycle=lifecycle)) == []


def test_autoscales_to_one_points_at_the_workload_and_names_the_hpa() -> None:
    hpa = """\
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: h}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: vllm}
  maxReplicas: 3
"""
    assert _findings("KG105", _drain(), hpa) == [(
        "KG105", "note", "f0.yaml", 3, 1,
        "HorizontalPodAutoscaler h (f1.yaml:1) lets this GPU serving workload scale down to"
        " 1 replica (minimum 1, maximum 3): at the floor a node drain, an eviction or a node failure takes the"
        " whole service down until a new pod has loaded its model")]
    assert _findings("KG105", _drain(), hpa.replace("  maxReplicas: 3", "  minReplicas: 2\n  maxReplicas: 3")) == []


BARE = """\
apiVersion: v1
kind: Pod
metadata:
  name: box
spec:
  RESTART
  containers:
    - name: cuda
      image: nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04
      command: COMMAND
      resources:
        limits: {nvidia.com/gpu: 2}
"""


def _bare(command: str, restart: str = "") -> str:
    return BARE.replace("COMMAND", command).replace("RESTART", restart or "hostIPC: false")


def test_bare_gpu_pod_warning_and_idle_note() -> None:
    assert [(r, s, line, col) for r, s, _, line, col, _ in _findings("KG403", _bare('["sleep", "infinity"]'))] == [
        ("KG403", "warning", 3, 1), ("KG403", "note", 10, 7)]  # the note on the idle `command:`
    assert [(r, s, line, col) for r, s, _, line, col, _ in _findings("KG403", _bare('["nvidia-smi"]'))] == [
        ("KG403", "warning", 3, 1)]
    # A finite sleep idles for ever only when the kubelet restarts it.
    assert len(_findings("KG403", _bare('["sh", "-c", "nvidia-smi; sleep 3600"]'))) == 2
    assert len(_findings("KG403", _bare('["sh", "-c", "nvidia-smi; sleep 3600"]', "restartPolicy: Never"))) == 1
    assert len(_findings("KG403", _bare('["sleep", "infinity"]', "activeDeadlineSeconds: 7200"))) == 1
    owned = _bare('["sleep", "infinity"]').replace(
        "  name: box\n", "  name: box\n  ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: r, uid: u}]\n")
    assert _findings("KG403", owned) == []


MPIJOB = """\
apiVersion: kubeflow.org/v2beta1
kind: MPIJob
metadata:
  name: nccl
spec:
  RUNPOLICY
  mpiReplicaSpecs:
    Launcher:
      replicas: 1
      template:
        spec:
          containers:
            - name: launcher
              image: nccl-tests:latest
              command: COMMAND
    Worker:
      replicas: 2
      template:
        spec:
          containers:
            - name: worker
              image: nccl-tests:latest
              resources:
                limits: {nvidia.com/gpu: 8}
"""


def _mpijob(command: str, runpolicy: str = "slotsPerWorker: 8") -> str:
    return MPIJOB.replace("COMMAND", command).replace("RUNPOLICY", runpolicy)


def test_batch_without_deadline_for_nccl_tests_and_mpi() -> None:
    run = '["mpirun", "-np", "16", "/opt/nccl-tests/build/all_reduce_perf", "-b", "8", "-e", "2G"]'
    assert _findings("KG404", _mpijob(run)) == [(
        "KG404", "warning", "f0.yaml", 5, 1,
        "nccl-tests run on 16 GPUs has no activeDeadlineSeconds (Job, runPolicy or pod) and no"
        " -T/--timeout or timeout wrapper: a hung collective holds all of them until someone notices")]
    assert [(line, col) for *_, line, col, _ in _findings("KG404", _mpijob(run, "runPolicy: {cleanPodPolicy: Running}"))] == [(6, 3)]
    assert _findings("KG404", _mpijob(run, "runPolicy: {activeDeadlineSeconds: 1800}")) == []
    assert _findings("KG404", _mpijob(run.replace('"2G"]', '"2G", "-T", "300"]'))) == []
    assert _findings("KG404", _mpijob('["sh", "-c", "timeout 900 mpirun -np 16 ./app"]')) == []


def test_pytorch_without_deadline_only_when_its_watchdog_is_weakened() -> None:
    job = """\
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: ft
spec:
  pytorchReplicaSpecs:
    Worker:
      replicas: 2
      template:
        spec:
          containers:
            - name: pytorch
              image: nvcr.io/nvidia/pytorch:24.07-py3
              command: ["torchrun", "--nproc_per_node=8", "train.py"]
              env: ENV
              resources:
                limits: {nvidia.com/gpu: 8}
"""
    assert _findings("KG404", job.replace("ENV", "[]")) == []
    assert _findings("KG404", job.replace("ENV", '[{name: TORCH_NCCL_ENABLE_MONITORING, value: "0"}]')) == [(
        "KG404", "note", "f0.yaml", 5, 1,
        "PyTorch job on 16 GPUs has no activeDeadlineSeconds (Job, runPolicy or pod), and its"
        " manifest weakens the PyTorch watchdog (TORCH_NCCL_ENABLE_MONITORING=0): a hung collective holds all"
        " of them until someone notices")]


def test_only_the_leader_of_a_leader_worker_set_takes_requests() -> None:
    lws = """\
apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata: {name: sglang}
spec:
  replicas: 2
  leaderWorkerTemplate:
    size: 2
    LEADER
    workerTemplate:
      spec:
        containers:
          - name: worker
            image: lmsysorg/sglang:latest
            command: ["python3", "-m", "sglang.launch_server", "--node-rank", "$(LWS_WORKER_INDEX)"]
            resources: {limits: {nvidia.com/gpu: 1}}
"""
    leader = """leaderTemplate:
      spec:
        containers:
          - name: leader
            image: lmsysorg/sglang:latest
            command: ["python3", "-m", "sglang.launch_server", "--node-rank", "$(LWS_WORKER_INDEX)"]
            resources: {limits: {nvidia.com/gpu: 1}}"""
    assert [(line, col) for *_, line, col, _ in _findings("KG104", lws.replace("LEADER", leader))] == [(11, 13)]
    # Without a leader template the worker template makes the leader too.
    assert [(line, col) for *_, line, col, _ in _findings("KG104", lws.replace("LEADER", "restartPolicy: RecreateGroupOnPodRestart"))] == [(12, 13)]


def test_a_local_model_cache_in_the_input_stops_the_kserve_note() -> None:
    isvc = """\
apiVersion: serving.kserve.io/v1beta1
kind: InferenceService
metadata: {name: llama3}
spec:
  predictor:
    minReplicas: 2
    model:
      modelFormat: {name: huggingface}
      storageUri: hf://meta-llama/meta-llama-3-8b-instruct
      resources: {limits: {nvidia.com/gpu: "1"}}
"""
    cache = """\
apiVersion: serving.kserve.io/v1alpha1
kind: LocalModelCache
metadata: {name: llama3}
spec:
  sourceModelUri: URI
  modelSize: 10Gi
  nodeGroups: [gpu]
"""
    assert [(r, s, line, col) for r, s, _, line, col, _ in _findings("KG204", isvc)] == [("KG204", "note", 7, 5)]
    assert _findings("KG204", isvc, cache.replace("URI", "hf://meta-llama/meta-llama-3-8b-instruct")) == []
    assert len(_findings("KG204", isvc, cache.replace("URI", "hf://other/model"))) == 1


def test_the_idle_note_says_whether_the_container_only_idles_or_works_first() -> None:
    notes = {m for *_, m in _findings("KG403", _bare('["sh", "-c", "python bench.py; sleep infinity"]')) if "idles" in m}
    assert notes == {"container cuda holds 2 accelerator(s) and idles once its work is done (sh -c python"
                     " bench.py; sleep infinity) with no activeDeadlineSeconds on the Pod: the GPUs stay allocated,"
                     " doing nothing, until someone deletes it"}
    for command in ('["sleep", "infinity"]', '["/bin/bash", "-c", "--", "while true; do sleep infinity; done;"]',
                    '''["bash", "-c", "trap 'exit 0' TERM; sleep infinity & wait"]'''):
        (note,) = [m for *_, m in _findings("KG403", _bare(command)) if "idles" in m]
        assert "and only idles (" in note, command


def test_batch_names_rccl_tests_by_what_it_runs() -> None:
    rccl = '["mpirun", "-np", "16", "/workspace/rccl-tests/build/all_reduce_perf", "-b", "8"]'
    (finding,) = _findings("KG404", _mpijob(rccl))
    assert finding[5].startswith("rccl-tests run on 16 GPUs has no activeDeadlineSeconds")
    amd = _mpijob('["mpirun", "-np", "16", "/opt/tests/all_reduce_perf"]').replace("nvidia.com/gpu", "amd.com/gpu")
    assert _findings("KG404", amd)[0][5].startswith("rccl-tests run on 16 GPUs")
    nccl = '["mpirun", "-np", "16", "/opt/nccl-tests/build/all_reduce_perf"]'
    assert _findings("KG404", _mpijob(nccl))[0][5].startswith("nccl-tests run on 16 GPUs")


SERVER = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: api}
spec:
  replicas: 2
  template:
    spec:
      containers:
        - name: api
          image: registry.example/detector:4
          PORTS
          resources:
            limits: {nvidia.com/gpu: 1}
        - name: sidecar
          image: registry.example/proxy:1
          ports: [{containerPort: 9901}]
"""


def test_no_graceful_drain_counts_any_gpu_container_that_takes_requests() -> None:
    assert _findings("KG104", SERVER.replace("PORTS", "ports: [{containerPort: 8000}]")) == [(
        "KG104", "warning", "f0.yaml", 9, 11,
        "container api (server on port 8000) has no preStop hook and terminationGracePeriodSeconds unset (30 s): on"
        " a drain or scale-down the pod gets SIGTERM while load balancers may still send it requests, and requests"
        " still running when the grace period ends are killed")]
    probe = _findings("KG104", SERVER.replace("PORTS", "readinessProbe: {tcpSocket: {port: 8000}}"))
    assert [m.split(")")[0] for *_, m in probe] == ["container api (server with a readiness probe"]
    # No port, no network probe: a worker that takes no requests; an exec probe says nothing.
    assert _findings("KG104", SERVER.replace("PORTS", "command: [python, worker.py]")) == []
    assert _findings("KG104", SERVER.replace("PORTS", "readinessProbe: {exec: {command: [cat, /ready]}}")) == []
    # One replica is not replicated serving; a worker rank takes no requests.
    assert _findings("KG104", SERVER.replace("PORTS", "ports: [{containerPort: 8000}]").replace("replicas: 2", "replicas: 1")) == []
    assert _findings("KG104", SERVER.replace("PORTS", "ports: [{containerPort: 8000}]\n          args: [--node-rank, '1']")) == []


SHM_JOB = """\
apiVersion: batch/v1
kind: Job
metadata: {name: j}
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: c
          image: busybox
          command: COMMAND
          resources:
            limits: {nvidia.com/gpu: 1}
"""


def test_shm_passes_over_pods_that_only_sleep_but_not_mpi_hosts() -> None:
    assert _findings("KG501", SHM_JOB.replace("COMMAND", '["sleep", "3600"]')) == []
    assert _findings("KG501", SHM_JOB.replace("COMMAND", '["sh", "-c", "echo start\\n# the work\\nsleep 600"]')) == []
    assert len(_findings("KG501", SHM_JOB.replace("COMMAND", '["sh", "-c", "service ssh restart; sleep infinity"]'))) == 1
    assert len(_findings("KG501", SHM_JOB.replace("COMMAND", '["sh", "-c", "python train.py; sleep 600"]'))) == 1
def test_replicated_serving_rules_count_an_autoscalers_maximum() -> None:
    """A one-replica Deployment that an HPA scales to 4 is replicated serving for KG101-KG104;
    a budget's arithmetic (KG103) stays on the replicas written, as the floor may be lower."""
    one = DRAIN.replace("replicas: 2", "replicas: 1").replace(
        "  template:\n", "  template:\n    metadata: {labels: {app: vllm}}\n")
    hpa = """\
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: h}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: vllm}
  minReplicas: 2
  maxReplicas: 4
"""
    bare = one.replace("GRACE", "hostIPC: false").replace("ARGS", "[]").replace("LIFECYCLE", "imagePullPolicy: Always")
    for rule in ("KG101", "KG103", "KG104"):
        assert _findings(rule, bare) == []  # one replica and no autoscaler
    (spread,) = _findings("KG101", bare, hpa)
    assert spread[5].startswith("up to 4 replicas (1 GPU each) have no topology spread")
    assert [f[5] for f in _findings("KG103", bare, hpa)] == [
        "no PodDisruptionBudget in the input selects its GPU pods: a node drain or upgrade may evict every replica at once"]
    assert len(_findings("KG104", bare, hpa)) == 1
    blocking = """\
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: b}
spec:
  minAvailable: 1
  selector: {matchLabels: {app: vllm}}
"""
    # One replica written: a budget of minAvailable 1 allows no eviction of that one, but the
    # HPA keeps 2 or more; not judged. Written as 2 replicas, it is judged (and allows one).
    assert _findings("KG103", bare, hpa, blocking) == []
    two = bare.replace("replicas: 1", "replicas: 2")
    assert _findings("KG103", two, blocking.replace("minAvailable: 1", "minAvailable: 2")) != []
