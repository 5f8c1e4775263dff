"""Peak memory and time of linting one large stream, as the stream grows (issue 5).

    python bench/stream_memory.py [MB ...]        # default: 10 40 100

Writes a stream of ordinary manifests (GPU Jobs, Deployments, ConfigMaps, Services, PVCs,
PodDisruptionBudgets, in Helm's order) of each size to a temporary file outside the repository,
lints it with the CLI in a child process, and prints wall time and the child's peak RSS, for
the streaming reader and for the same run with every workload kept parsed (the budget lifted:
what memory would be without the second pass; only up to COMPARE_MB, as it is slow).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

DOCS = [
    """apiVersion: v1
kind: ConfigMap
metadata:
  name: cfg-{i}
  namespace: ns-{n}
data:
  NCCL_DEBUG: WARN
  config.yaml: |
    epochs: 3
    lr: 0.0001
""",
    """apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: ckpt-{i}
  namespace: ns-{n}
spec:
  accessModes: [ReadWriteMany]
  resources:
    requests:
      storage: 1Ti
""",
    """apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: pdb-{i}
  namespace: ns-{n}
spec:
  maxUnavailable: 1
  selector:
    matchLabels:
      app: serve-{i}
""",
    """apiVersion: v1
kind: Service
metadata:
  name: svc-{i}
  namespace: ns-{n}
spec:
  selector:
    app: serve-{i}
  ports:
    - port: 8000
""",
    """apiVersion: apps/v1
kind: Deployment
metadata:
  name: serve-{i}
  namespace: ns-{n}
spec:
  replicas: 2
  selector:
    matchLabels:
      app: serve-{i}
  template:
    metadata:
      labels:
        app: serve-{i}
    spec:
      containers:
        - name: server
          image: registry.example/serve:{i}
          args: ["--model", "/models/m-{i}", "--port", "8000"]
          envFrom:
            - configMapRef:
                name: cfg-{i}
          resources:
            limits:
              nvidia.com/gpu: 1
              memory: 64Gi
""",
    """apiVersion: batch/v1
kind: Job
metadata:
  name: train-{i}
  namespace: ns-{n}
spec:
  completions: 4
  parallelism: 4
  completionMode: Indexed
  template:
    spec:
      restartPolicy: OnFailure
      containers:
        - name: trainer
          image: registry.example/train:{i}
          command: ["torchrun", "--nproc-per-node=8", "train.py", "--save", "/ckpt/run-{i}"]
          env:
            - name: NCCL_DEBUG
              value: INFO
          resources:
            limits:
              nvidia.com/gpu: 8
          volumeMounts:
            - name: ckpt
              mountPath: /ckpt
            - name: shm
              mountPath: /dev/shm
      volumes:
        - name: ckpt
          persistentVolumeClaim:
            claimName: ckpt-{i}
        - name: shm
          emptyDir:
            medium: Memory
            sizeLimit: 64Gi
""",
]


def write_stream(path: Path, megabytes: int) -> int:
    target = megabytes * 1_000_000
    written = 0
    i = 0
    with open(path, "w") as out:
        while written < target:
            for doc in DOCS:
                text = "---\n# Source: chart/templates/x.yaml\n" + doc.format(i=i, n=i % 50)
                out.write(text)
                written += len(text)
            i += 1
    return written


def run(path: Path, keep_all: bool) -> tuple[float, float]:
    code = "from kubegap_lint.cli.main import main; main()"
    if keep_all:
        code = "import kubegap_lint.input.stream as s; s.PendingWorkloads.__init__.__defaults__ = (1 << 62,); " + code
    env = dict(os.environ, PYTHONPATH=str(REPO))
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", code, "--format", "json", "-o", os.devnull, str(path)],
                            env=env, cwd=str(REPO), stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    code_out = os.waitstatus_to_exitcode(status)
    if code_out not in (0, 1):
        raise SystemExit(f"lint failed with exit {code_out}: {proc.stderr.read().decode()[-2000:]}")
    return elapsed, usage.ru_maxrss / 1024  # KiB -> MiB on Linux


COMPARE_MB = 10


def main() -> None:
    sizes = [int(a) for a in sys.argv[1:]] or [10, 40, 100]
    with tempfile.TemporaryDirectory(prefix="kubegap-bench-") as tmp:
        print(f"{'stream':>8} {'mode':>16} {'seconds':>8} {'peak RSS MiB':>13}")
        for megabytes in sizes:
            path = Path(tmp) / f"stream-{megabytes}.yaml"
            size = write_stream(path, megabytes)
            for keep_all in (False, True) if megabytes <= COMPARE_MB else (False,):
                seconds, peak = run(path, keep_all)
                mode = "all kept parsed" if keep_all else "streaming"
                print(f"{size / 1e6:7.1f}M {mode:>16} {seconds:8.1f} {peak:13.0f}", flush=True)
            path.unlink()


if __name__ == "__main__":
    main()
