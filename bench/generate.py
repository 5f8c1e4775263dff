"""Generate helm-template-like rendered streams for the benchmark, deterministically.

Each stream is what `helm template` prints for many releases of GPU charts: documents headed by
`# Source: chart/templates/x.yaml`, mixing Deployments, StatefulSets, Services, ConfigMaps,
Jobs, PyTorchJobs, JobSets, LeaderWorkerSets and RayClusters, with GPU requests, NCCL env
lists, volumes and launcher scripts. GPU workloads are about 5 KB each. Some are written to
break the rules (no /dev/shm, no checkpoint volume, flight recorder off) so the lint has
findings to report, as real charts do.

The same size and seed always give the same bytes (a seeded `random.Random`, a fixed emitter;
nothing depends on the clock, the machine or dict order from outside). Beside each YAML stream
the same documents are written as JSON lines, the floor any Python linter can reach.

    python bench/generate.py [--out bench/out] [--sizes 1000,10000,50000] [--seed 7]
"""

from __future__ import annotations

import argparse
import json
import random
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

DEFAULT_SIZES = (1_000, 10_000, 50_000)
DEFAULT_SEED = 7
SIZE_NAMES = {1_000: "1k", 10_000: "10k", 50_000: "50k"}

# (kind, weight): about half GPU workloads, the rest the objects charts ship beside them.
_MIX = (
    ("Deployment", 14), ("StatefulSet", 6), ("Service", 14), ("ConfigMap", 12), ("Job", 8),
    ("PyTorchJob", 12), ("JobSet", 8), ("LeaderWorkerSet", 8), ("RayCluster", 8),
    ("PodDisruptionBudget", 4), ("ServiceAccount", 6),
)
_GPU_RESOURCES = ("nvidia.com/gpu", "nvidia.com/gpu", "nvidia.com/gpu", "amd.com/gpu")
_IMAGES = ("nvcr.io/nvidia/pytorch:24.05-py3", "rocm/pytorch:rocm6.1_ubuntu22.04_py3.10_pytorch_2.1.2",
           "vllm/vllm-openai:v0.6.3", "rayproject/ray-ml:2.34.0-gpu", "ghcr.io/example/trainer:1.8.2",
           "nvcr.io/nvidia/tritonserver:24.05-py3")
_NCCL_ENV = (
    ("NCCL_DEBUG", ("INFO", "WARN", "VERSION")), ("NCCL_SOCKET_IFNAME", ("eth0", "^lo,docker")),
    ("NCCL_IB_DISABLE", ("0", "1")), ("NCCL_IB_HCA", ("mlx5_0,mlx5_1,mlx5_2,mlx5_3", "=mlx5_0")),
    ("NCCL_NET_GDR_LEVEL", ("PHB", "SYS")), ("NCCL_P2P_LEVEL", ("NVL", "PIX")),
    ("NCCL_CROSS_NIC", ("0", "1")), ("NCCL_ALGO", ("Ring", "Tree")),
    ("NCCL_MIN_NCHANNELS", ("4", "8", "16")), ("NCCL_BUFFSIZE", ("8388608", "4194304")),
    ("NCCL_ASYNC_ERROR_HANDLING", ("1",)), ("TORCH_NCCL_ASYNC_ERROR_HANDLING", ("1", "3")),
    ("TORCH_NCCL_ENABLE_MONITORING", ("1",)), ("TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC", ("600", "1800")),
    ("TORCH_NCCL_TRACE_BUFFER_SIZE", ("0", "2000", "20000")), ("TORCH_NCCL_DUMP_ON_TIMEOUT", ("1", "true")),
    ("TORCH_NCCL_DEBUG_INFO_TEMP_FILE", ("/checkpoints/nccl_trace_rank_",)),
    ("NCCL_TIMEOUT", ("1800",)), ("CUDA_DEVICE_MAX_CONNECTIONS", ("1",)),
    ("PYTORCH_CUDA_ALLOC_CONF", ("expandable_segments:True",)), ("OMP_NUM_THREADS", ("8", "16")),
    ("HF_HOME", ("/cache/huggingface",)), ("TRANSFORMERS_OFFLINE", ("1",)),
    ("WANDB_MODE", ("offline", "disabled")), ("LOGLEVEL", ("INFO",)),
)
_WORDS = ("llama", "mistral", "bert", "vit", "whisper", "sdxl", "gemma", "qwen", "falcon", "phi",
          "t5", "clip", "resnet", "yolo", "mixtral", "deepseek")
_TEAMS = ("research", "platform", "inference", "vision", "speech", "search", "ads", "nlp")


class _Emitter:
    """A small block-style YAML writer shaped like Helm's output (sequences not indented)."""

    _PLAIN = re.compile(r"[A-Za-z_/][A-Za-z0-9_./:@-]*\Z")
    _SPECIAL = frozenset(("true", "false", "yes", "no", "on", "off", "null", "y", "n", "~"))

    def scalar(self, value: Any) -> str:
        if value is True:
            return "true"
        if value is False:
            return "false"
        if value is None:
            return "null"
        if isinstance(value, (int, float)):
            return str(value)
        text = str(value)
        if self._PLAIN.match(text) and text.lower() not in self._SPECIAL:
            return text
        return json.dumps(text)  # a JSON string is a valid double-quoted YAML scalar

    def lines(self, value: Any, indent: int, out: list[str]) -> None:
        pad = " " * indent
        if isinstance(value, dict):
            for key, item in value.items():
                self._entry(f"{pad}{key}:", item, indent, out)
        else:
            for item in value:
                if isinstance(item, dict) and item:
                    first = True
                    for key, sub in item.items():
                        lead = f"{pad}- {key}:" if first else f"{pad}  {key}:"
                        self._entry(lead, sub, indent + 2, out)
                        first = False
                elif isinstance(item, (dict, list)):
                    out.append(f"{pad}- {'{}' if isinstance(item, dict) else '[]'}")
                else:
                    out.append(f"{pad}- {self.scalar(item)}")

    def _entry(self, lead: str, item: Any, indent: int, out: list[str]) -> None:
        if isinstance(item, dict) and item:
            out.append(lead)
            self.lines(item, indent + 2, out)
        elif isinstance(item, list) and item:
            out.append(lead)
            self.lines(item, indent, out)
        elif isinstance(item, (dict, list)):
            out.append(f"{lead} {'{}' if isinstance(item, dict) else '[]'}")
        elif isinstance(item, str) and "\n" in item:
            out.append(f"{lead} |")
            body = " " * (indent + 2)
            out.extend(f"{body}{line}" if line else "" for line in item.rstrip("\n").split("\n"))
        else:
            out.append(f"{lead} {self.scalar(item)}")

    def document(self, data: dict[str, Any]) -> str:
        out: list[str] = []
        self.lines(data, 0, out)
        return "\n".join(out) + "\n"


class StreamGenerator:
    """Yields (helm source, document) pairs; one instance per stream, seeded."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.release = 0

    def choice(self, items: Any) -> Any:
        return items[self.rng.randrange(len(items))]

    def documents(self, count: int) -> Iterator[tuple[str, dict[str, Any]]]:
        kinds = [k for k, w in _MIX for _ in range(w)]
        made = 0
        while made < count:
            self.release += 1
            chart = f"{self.choice(_WORDS)}-{self.choice(_TEAMS)}"
            name = f"{chart}-r{self.release}"
            namespace = self.choice(_TEAMS)
            # A release renders a ConfigMap (NCCL settings), a workload and a few neighbours.
            group = ["ConfigMap", self.choice(kinds), self.choice(kinds), self.choice(kinds)]
            for kind in group:
                if made >= count:
                    return
                made += 1
                builder = getattr(self, f"_{kind.lower()}")
                yield f"{chart}/templates/{kind.lower()}.yaml", builder(name, namespace)

    # -- shared pieces -------------------------------------------------------------------
    def _meta(self, name: str, namespace: str, component: str) -> dict[str, Any]:
        return {
            "name": f"{name}-{component}",
            "namespace": namespace,
            "labels": {
                "app.kubernetes.io/name": name.rsplit("-r", 1)[0],
                "app.kubernetes.io/instance": name,
                "app.kubernetes.io/component": component,
                "app.kubernetes.io/managed-by": "Helm",
                "helm.sh/chart": f"{name.rsplit('-r', 1)[0]}-0.{self.rng.randrange(1, 9)}.{self.rng.randrange(20)}",
            },
        }

    def _env(self) -> list[dict[str, Any]]:
        env: list[dict[str, Any]] = []
        for key, values in _NCCL_ENV:
            if self.rng.random() < 0.8:
                env.append({"name": key, "value": self.choice(values)})
        env.append({"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}})
        env.append({"name": "POD_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}})
        return env

    def _script(self, launcher: bool) -> str:
        model = self.choice(_WORDS)
        steps = self.rng.randrange(1000, 200000)
        lines = [
            "set -euo pipefail",
            "echo \"starting on $(hostname) rank ${RANK:-0}\"",
            f"export MODEL_NAME={model}",
            "pip list | grep -i torch || true",
        ]
        if launcher:
            lines.append(
                "torchrun --nnodes=${NNODES} --nproc_per_node=${GPUS_PER_NODE} "
                "--rdzv_backend=c10d --rdzv_endpoint=${MASTER_ADDR}:${MASTER_PORT} \\"
            )
            lines.append(f"  train.py --model {model} --max-steps {steps} --save-dir /checkpoints/{model} \\")
            lines.append("  --bf16 --gradient-checkpointing --log-every 50")
        else:
            lines.append(f"python -m server --model /models/{model} --port 8000 --max-batch 64")
        return "\n".join(lines) + "\n"

    def _container(self, release: str, name: str, gpus: int, gpu_resource: str, launcher: bool, shm: bool,
                   checkpoint: bool) -> dict[str, Any]:
        mounts = [{"name": "cache", "mountPath": "/cache"}, {"name": "config", "mountPath": "/etc/trainer",
                                                             "readOnly": True}]
        if shm:
            mounts.append({"name": "dshm", "mountPath": "/dev/shm"})
        if checkpoint:
            mounts.append({"name": "checkpoints", "mountPath": "/checkpoints"})
        memory = self.choice(("64Gi", "128Gi", "256Gi", "512Gi"))
        return {
            "name": name,
            "image": self.choice(_IMAGES),
            "imagePullPolicy": "IfNotPresent",
            "command": ["/bin/bash", "-c"],
            "args": [self._script(launcher)],
            "ports": [{"name": "http", "containerPort": 8000, "protocol": "TCP"},
                      {"name": "metrics", "containerPort": 9090, "protocol": "TCP"}],
            "env": self._env(),
            "envFrom": [{"configMapRef": {"name": f"{release}-config"}}],
            "resources": {
                "limits": {"cpu": str(self.rng.randrange(8, 96)), "memory": memory, gpu_resource: gpus},
                "requests": {"cpu": str(self.rng.randrange(4, 48)), "memory": memory, gpu_resource: gpus},
            },
            "volumeMounts": mounts,
            "readinessProbe": {"httpGet": {"path": "/health", "port": "http"}, "initialDelaySeconds": 30,
                               "periodSeconds": 10, "failureThreshold": 6},
            "securityContext": {"capabilities": {"add": ["IPC_LOCK"]}, "allowPrivilegeEscalation": False},
        }

    def _pod_spec(self, name: str, gpus: int, launcher: bool) -> dict[str, Any]:
        gpu_resource = self.choice(_GPU_RESOURCES)
        shm = self.rng.random() < 0.7
        checkpoint = launcher and self.rng.random() < 0.7
        volumes: list[dict[str, Any]] = [
            {"name": "cache", "persistentVolumeClaim": {"claimName": f"{name}-cache"}},
            {"name": "config", "configMap": {"name": f"{name}-config", "defaultMode": 420}},
        ]
        if shm:
            size = self.choice(("16Gi", "32Gi", "64Gi", "512Mi"))
            volumes.append({"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": size}})
        if checkpoint:
            volumes.append({"name": "checkpoints", "persistentVolumeClaim": {"claimName": f"{name}-ckpt"}})
        return {
            "serviceAccountName": name,
            "restartPolicy": "OnFailure" if launcher else "Always",
            "terminationGracePeriodSeconds": 120,
            "nodeSelector": {"nvidia.com/gpu.product": self.choice(("NVIDIA-H100-80GB-HBM3", "NVIDIA-A100-SXM4-80GB"))},
            "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
            "affinity": {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 100, "podAffinityTerm": {"topologyKey": "kubernetes.io/hostname",
                                                     "labelSelector": {"matchLabels": {"app.kubernetes.io/instance": name}}}}]}},
            "containers": [self._container(name, "main", gpus, gpu_resource, launcher, shm, checkpoint)],
            "volumes": volumes,
        }

    def _template(self, name: str, gpus: int, launcher: bool) -> dict[str, Any]:
        return {
            "metadata": {"labels": {"app.kubernetes.io/instance": name},
                         "annotations": {"prometheus.io/scrape": "true", "prometheus.io/port": "9090"}},
            "spec": self._pod_spec(name, gpus, launcher),
        }

    def _gpus(self) -> int:
        return self.choice((1, 2, 4, 8, 8, 8))

    # -- kinds ---------------------------------------------------------------------------
    def _configmap(self, name: str, namespace: str) -> dict[str, Any]:
        data = {key: self.choice(values) for key, values in _NCCL_ENV[:12]}
        data["train.yaml"] = "".join(f"{k}: {self.rng.randrange(1, 4096)}\n" for k in
                                     ("batch_size", "seq_len", "warmup_steps", "save_every", "eval_every"))
        return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": self._meta(name, namespace, "config"),
                "data": data}

    def _serviceaccount(self, name: str, namespace: str) -> dict[str, Any]:
        return {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": self._meta(name, namespace, "sa")}

    def _service(self, name: str, namespace: str) -> dict[str, Any]:
        return {
            "apiVersion": "v1", "kind": "Service", "metadata": self._meta(name, namespace, "svc"),
            "spec": {"type": "ClusterIP",
                     **({"clusterIP": "None"} if self.rng.random() < 0.3 else {}),
                     "ports": [{"name": "http", "port": 8000, "targetPort": "http"},
                               {"name": "metrics", "port": 9090, "targetPort": "metrics"}],
                     "selector": {"app.kubernetes.io/instance": name}},
        }

    def _poddisruptionbudget(self, name: str, namespace: str) -> dict[str, Any]:
        return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": self._meta(name, namespace, "pdb"),
                "spec": {"maxUnavailable": 1, "selector": {"matchLabels": {"app.kubernetes.io/instance": name}}}}

    def _deployment(self, name: str, namespace: str) -> dict[str, Any]:
        return {
            "apiVersion": "apps/v1", "kind": "Deployment", "metadata": self._meta(name, namespace, "server"),
            "spec": {"replicas": self.rng.randrange(1, 6),
                     "selector": {"matchLabels": {"app.kubernetes.io/instance": name}},
                     "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}},
                     "template": self._template(name, self._gpus(), False)},
        }

    def _statefulset(self, name: str, namespace: str) -> dict[str, Any]:
        return {
            "apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": self._meta(name, namespace, "store"),
            "spec": {"replicas": self.rng.randrange(1, 4), "serviceName": f"{name}-svc",
                     "selector": {"matchLabels": {"app.kubernetes.io/instance": name}},
                     "template": self._template(name, self._gpus(), False),
                     "volumeClaimTemplates": [{"metadata": {"name": "data"}, "spec": {
                         "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "500Gi"}}}}]},
        }

    def _job(self, name: str, namespace: str) -> dict[str, Any]:
        return {
            "apiVersion": "batch/v1", "kind": "Job", "metadata": self._meta(name, namespace, "finetune"),
            "spec": {"backoffLimit": 3, "completions": 1, "parallelism": 1,
                     "template": self._template(name, self._gpus(), True)},
        }

    def _pytorchjob(self, name: str, namespace: str) -> dict[str, Any]:
        return {
            "apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "metadata": self._meta(name, namespace, "train"),
            "spec": {"runPolicy": {"cleanPodPolicy": "None", "backoffLimit": 5},
                     "pytorchReplicaSpecs": {
                         "Master": {"replicas": 1, "restartPolicy": "OnFailure",
                                    "template": self._template(name, 8, True)},
                         "Worker": {"replicas": self.rng.randrange(1, 64), "restartPolicy": "OnFailure",
                                    "template": self._template(name, 8, True)}}},
        }

    def _jobset(self, name: str, namespace: str) -> dict[str, Any]:
        nodes = self.rng.randrange(2, 32)
        return {
            "apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet", "metadata": self._meta(name, namespace, "jobset"),
            "spec": {"failurePolicy": {"maxRestarts": 3},
                     "replicatedJobs": [{"name": "workers", "replicas": 1, "template": {"spec": {
                         "parallelism": nodes, "completions": nodes, "backoffLimit": 0,
                         "template": self._template(name, 8, True)}}}]},
        }

    def _leaderworkerset(self, name: str, namespace: str) -> dict[str, Any]:
        return {
            "apiVersion": "leaderworkerset.x-k8s.io/v1", "kind": "LeaderWorkerSet",
            "metadata": self._meta(name, namespace, "lws"),
            "spec": {"replicas": self.rng.randrange(1, 4), "leaderWorkerTemplate": {
                "size": self.choice((2, 4)), "restartPolicy": "RecreateGroupOnPodRestart",
                "leaderTemplate": self._template(name, 8, False),
                "workerTemplate": self._template(name, 8, False)}},
        }

    def _raycluster(self, name: str, namespace: str) -> dict[str, Any]:
        return {
            "apiVersion": "ray.io/v1", "kind": "RayCluster", "metadata": self._meta(name, namespace, "ray"),
            "spec": {"rayVersion": "2.34.0", "enableInTreeAutoscaling": True,
                     "headGroupSpec": {"rayStartParams": {"dashboard-host": "0.0.0.0", "num-gpus": "0"},
                                       "template": self._template(name, 1, False)},
                     "workerGroupSpecs": [{"groupName": "gpu-workers", "replicas": self.rng.randrange(1, 16),
                                           "minReplicas": 1, "maxReplicas": 32,
                                           "rayStartParams": {"num-gpus": "8"},
                                           "template": self._template(name, 8, True)}]},
        }


def write_stream(count: int, seed: int, yaml_out: TextIO, json_out: TextIO | None = None) -> int:
    """Write `count` documents as a rendered YAML stream (and as JSON lines); return bytes of YAML."""
    emitter = _Emitter()
    written = 0
    for number, (source, data) in enumerate(StreamGenerator(seed + count).documents(count)):
        text = ("---\n" if number else "") + f"# Source: {source}\n" + emitter.document(data)
        yaml_out.write(text)
        written += len(text.encode("utf-8"))
        if json_out is not None:
            json_out.write(json.dumps(data, separators=(",", ":")) + "\n")
    return written


def write_repository(folder: Path, count: int, seed: int) -> list[Path]:
    """A repository of `count` plain manifests, one document a file (no `# Source:` header), in
    subfolders of 100 as teams keep them; the same count and seed give the same bytes."""
    emitter = _Emitter()
    files = []
    for number, (_, data) in enumerate(StreamGenerator(seed + count).documents(count)):
        kind = str(data.get("kind", "doc")).lower()
        path = folder / f"team-{number // 100:02d}" / f"{number:05d}-{kind}.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(emitter.document(data))
        files.append(path)
    return files


def stream_paths(out: Path, count: int) -> tuple[Path, Path]:
    name = SIZE_NAMES.get(count, str(count))
    return out / f"stream-{name}.yaml", out / f"stream-{name}.jsonl"


def generate(out: Path, sizes: tuple[int, ...] = DEFAULT_SIZES, seed: int = DEFAULT_SEED) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    made = []
    for count in sizes:
        yaml_path, json_path = stream_paths(out, count)
        with open(yaml_path, "w", encoding="utf-8", newline="\n") as y, \
                open(json_path, "w", encoding="utf-8", newline="\n") as j:
            write_stream(count, seed, y, j)
        made.append(yaml_path)
    return made


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "out")
    parser.add_argument("--sizes", default=",".join(map(str, DEFAULT_SIZES)))
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    args = parser.parse_args()
    sizes = tuple(int(s) for s in args.sizes.split(","))
    for path in generate(args.out, sizes, args.seed):
        print(f"{path}  {path.stat().st_size / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
