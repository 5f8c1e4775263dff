"""Whole-repository facts for partial runs (workloads/repofacts.py), through the command line in
scratch git repositories: which files give facts, findings only for the named files, the JSON
cache (plain data, a damaged or planted entry ignored), exemptions judged only where linted."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from conftest import EXAMPLES, GPU_DEPLOYMENT, PDB, run_cli

GPU_JOB = (EXAMPLES / "KG201-training-checkpoint-volume" / "bad-job-no-volumes.yaml").read_text()
KG103 = ("deploy/app.yaml:11:7: warning KG103 gpu-serving-without-pdb: Deployment infer: no PodDisruptionBudget"
         " in the input selects its GPU pods: a node drain or upgrade may evict every replica at once")


@pytest.fixture()
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "deploy").mkdir(parents=True)
    (root / "deploy" / "app.yaml").write_text(GPU_DEPLOYMENT)
    (root / "policy").mkdir()
    (root / "policy" / "pdb.yaml").write_text(PDB)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


def _lint(root: Path, *args: str, cache: Path | None = None) -> subprocess.CompletedProcess[bytes]:
    env = {"KUBEGAP_LINT_CACHE_DIR": str(cache or root.parent / "cache")}
    env.pop("KUBEGAP_LINT_NO_CACHE", None)
    return run_cli("--no-config", "--select", "KG103", *args, cwd=root, env=env)


def test_a_file_linted_alone_sees_the_facts_of_the_work_tree(repo: Path) -> None:
    proc = _lint(repo, "deploy/app.yaml")
    assert proc.returncode == 0, proc.stdout
    # The PDB's file is read for its facts only: not counted, not linted.
    assert proc.stdout.decode().splitlines() == [
        "1 file, 1 document (0 empty, 0 not Kubernetes), 1 resource, 1 workload: 0 errors, 0 warnings, 0 notes"]
    assert _lint(repo, "--no-repo-facts", "deploy/app.yaml").stdout.decode().splitlines()[0] == KG103
    # Untracked but not ignored files count (a new PDB not yet added); ignored files do not.
    (repo / ".gitignore").write_text("policy/\n")
    assert _lint(repo, "deploy/app.yaml").stdout.decode().splitlines()[0] == KG103
    # Outside a work tree there is no context.
    os.remove(repo / ".gitignore")
    subprocess.run(["rm", "-rf", str(repo / ".git")], check=True)
    assert _lint(repo, "deploy/app.yaml").stdout.decode().splitlines()[0] == KG103


def test_findings_only_for_the_named_files(repo: Path) -> None:
    (repo / "other").mkdir()
    (repo / "other" / "job.yaml").write_text(GPU_JOB)
    proc = run_cli("--no-config", "--select", "KG201,KG103", "deploy/app.yaml", cwd=repo,
                   env={"KUBEGAP_LINT_NO_CACHE": "1"})
    assert proc.returncode == 0 and b"other/job.yaml" not in proc.stdout


def _cache_payload(cache: Path) -> tuple[bytes, dict]:
    """The facts cache as catalog/cache.py keeps it: a header (magic, key, digest) and JSON."""
    header, _, payload = (cache / "repo-facts-v2.json").read_bytes().partition(b"\n\n")
    return header, json.loads(payload)


def _write_cache(cache: Path, header: bytes, document: dict, *, digest: bool) -> None:
    """Plant an entry; with digest=True as the tool itself would (a new digest of the bytes)."""
    import hashlib

    payload = json.dumps(document).encode()
    if digest:
        magic, key, _ = header.split(b"\n")
        header = b"\n".join([magic, key, hashlib.sha256(payload).hexdigest().encode()])
    (cache / "repo-facts-v2.json").write_bytes(header + b"\n\n" + payload)


def test_the_cache_is_json_keyed_by_content_and_a_bad_entry_is_read_again(repo: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    assert _lint(repo, "deploy/app.yaml", cache=cache).returncode == 0
    header, document = _cache_payload(cache)
    (entry,) = [v for v in document.values() if v]
    assert entry == [["budget", "infer", None, {"matchLabels": {"app": "infer"}}, None, 1, 1]]
    # A planted entry of the wrong shape is not used: the file is read again.
    _write_cache(cache, header, {key: [["budget", "x"]] for key in document}, digest=True)
    assert _lint(repo, "deploy/app.yaml", cache=cache).returncode == 0
    # An edited cache whose digest no longer matches is ignored: it cannot remove KG103.
    _write_cache(cache, header, {key: [] for key in document}, digest=False)
    proc = _lint(repo, "deploy/app.yaml", cache=cache)
    assert proc.returncode == 0 and b"does not match its digest: ignored" in proc.stderr
    # A well-formed entry under a good digest is believed for the same bytes (only the user can
    # write the folder); an edit to the file gives a new key and fresh facts.
    _write_cache(cache, header, {key: [] for key in document}, digest=True)
    assert _lint(repo, "deploy/app.yaml", cache=cache).returncode == 1
    (repo / "policy" / "pdb.yaml").write_text(PDB + "# edited\n")
    assert _lint(repo, "deploy/app.yaml", cache=cache).returncode == 0
    (cache / "repo-facts-v2.json").write_text("not json {")
    assert _lint(repo, "deploy/app.yaml", cache=cache).returncode == 0


def test_a_fifo_or_a_world_writable_facts_cache_is_ignored(repo: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    assert _lint(repo, "deploy/app.yaml", cache=cache).returncode == 0
    os.chmod(cache / "repo-facts-v2.json", 0o666)
    proc = _lint(repo, "deploy/app.yaml", cache=cache)
    assert proc.returncode == 0 and b"writable by other users: ignored" in proc.stderr
    os.remove(cache / "repo-facts-v2.json")
    os.mkfifo(cache / "repo-facts-v2.json")  # would block a plain open() for ever
    proc = _lint(repo, "deploy/app.yaml", cache=cache)
    assert proc.returncode == 0 and b"is not a regular file: ignored" in proc.stderr


def test_a_manifest_linked_to_dev_zero_or_a_fifo_gives_no_facts_and_no_crash(repo: Path) -> None:
    os.symlink("/dev/zero", repo / "policy" / "zero.yaml")
    os.mkfifo(repo / "policy" / "fifo.yaml")
    os.symlink("/proc/self/environ", repo / "policy" / "env.yaml")
    proc = _lint(repo, "deploy/app.yaml")
    assert proc.returncode == 0 and proc.stderr == b"", proc.stderr
    assert proc.stdout.decode().splitlines() == [
        "1 file, 1 document (0 empty, 0 not Kubernetes), 1 resource, 1 workload: 0 errors, 0 warnings, 0 notes"]


def test_an_exemption_is_unused_only_where_its_paths_were_linted(repo: Path) -> None:
    (repo / "other").mkdir()
    (repo / "other" / "job.yaml").write_text(GPU_JOB)
    (repo / ".kubegap-lint.yaml").write_text(
        "select: [KG201, KG005]\n"
        "exemptions:\n"
        "  - rules: [KG201]\n    paths: [other/*.yaml]\n    reason: legacy\n"
        "  - rules: [KG201]\n    names: [nothing-by-this-name]\n    reason: kept\n")
    env = {"KUBEGAP_LINT_NO_CACHE": "1"}
    partial = run_cli("deploy/app.yaml", cwd=repo, env=env)
    assert partial.returncode == 0 and b"KG005" not in partial.stdout, partial.stdout  # neither judged
    whole = run_cli(".", cwd=repo, env=env).stdout.decode().splitlines()
    unused = [line for line in whole if "KG005" in line]
    # The whole run judges both: the first matched other/job.yaml's finding, the second nothing.
    assert unused == [".kubegap-lint.yaml:6:5: note KG005 unused-suppression: exemption for KG201 (kept)"
                      " matches no finding: remove it, or it will hide a future regression"]
    # A partial run over the exemption's own files judges it.
    (repo / "other" / "job.yaml").write_text(GPU_DEPLOYMENT.replace("infer", "serve"))
    proc = run_cli("other/job.yaml", cwd=repo, env=env).stdout.decode()
    assert ".kubegap-lint.yaml:3:5: note KG005 unused-suppression: exemption for KG201 (legacy)" in proc
    assert "(kept)" not in proc


def test_fact_records_reads_only_the_kinds_it_records() -> None:
    """fact_records passes over every other kind at once (_RECORDED_KINDS): each kind it
    records still gives its record, and a kind it does not gives none."""
    from kubegap_lint.core.model import Position
    from kubegap_lint.input.parse import PositionIndex
    from kubegap_lint.input.read import Resource
    from kubegap_lint.workloads.index import _RECORDED_KINDS, fact_records

    specs = {
        "PodDisruptionBudget": ("policy/v1", {"spec": {"maxUnavailable": 1, "selector": {}}}),
        "HorizontalPodAutoscaler": ("autoscaling/v2", {"spec": {"scaleTargetRef": {"kind": "Deployment", "name": "d"}}}),
        "ScaledObject": ("keda.sh/v1alpha1", {"spec": {"scaleTargetRef": {"name": "d"}}}),
        "LocalModelCache": ("serving.kserve.io/v1alpha1", {"spec": {"sourceModelUri": "s3://m"}}),
        "PersistentVolumeClaim": ("v1", {}),
        "ConfigMap": ("v1", {"data": {"A": "1"}}),
        "TrainingRuntime": ("trainer.kubeflow.org/v1alpha1", {}),
        "ClusterTrainingRuntime": ("trainer.kubeflow.org/v1alpha1", {}),
        "ResourceClaimTemplate": ("resource.k8s.io/v1", {"spec": {"spec": {}}}),
        "ResourceClaim": ("resource.k8s.io/v1", {"spec": {}}),
    }
    assert set(specs) == _RECORDED_KINDS

    def records(kind: str, api_version: str, extra: dict) -> list:
        data = {"apiVersion": api_version, "kind": kind, "metadata": {"name": "x", "namespace": "n"}, **extra}
        return fact_records(Resource("m.yaml", 0, data, PositionIndex(), Position(1, 1)))

    for kind, (api_version, extra) in specs.items():
        assert records(kind, api_version, extra), kind
    assert records("Deployment", "apps/v1", {"spec": {"replicas": 1}}) == []
    assert records("configmap", "v1", {"data": {"A": "1"}}) == []  # kinds are spelt exactly


SCALED_VLLM = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: vllm, namespace: llm}
spec:
  replicas: 1
  selector: {matchLabels: {app: vllm}}
  template:
    metadata: {labels: {app: vllm}}
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.10.1
          args: ["--model", "/models/llama"]
          resources: {limits: {nvidia.com/gpu: 1}}
"""
SCALED_OBJECT = """\
apiVersion: keda.sh/v1alpha1
kind: ScaledObject
metadata: {name: vllm, namespace: llm}
spec:
  scaleTargetRef: {name: vllm}
  minReplicaCount: 1
  maxReplicaCount: 20
"""


def test_an_autoscaler_in_another_file_of_the_work_tree_makes_a_deployment_replicated(tmp_path: Path) -> None:
    """pre-commit lints the Deployment alone: the ScaledObject committed beside it still makes it
    replicated serving for KG104, and its cached record is believed as the file's facts."""
    root = tmp_path / "repo"
    (root / "deploy").mkdir(parents=True)
    (root / "deploy" / "vllm.yaml").write_text(SCALED_VLLM)
    (root / "scale").mkdir()
    (root / "scale" / "keda.yaml").write_text(SCALED_OBJECT)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    cache = tmp_path / "cache"

    def lint(*args: str) -> str:
        return run_cli("--no-config", "--select", "KG104", *args, "deploy/vllm.yaml", cwd=root,
                       env={"KUBEGAP_LINT_CACHE_DIR": str(cache)}).stdout.decode()

    assert "deploy/vllm.yaml:11:11: warning KG104" in lint()
    assert "KG104" not in lint("--no-repo-facts")  # one replica, as written
    header, document = _cache_payload(cache)
    (entry,) = [v for v in document.values() if v]
    assert entry == [["autoscaler", "ScaledObject", "vllm", "llm", "Deployment", "vllm", 1, 20, 1]]
    # The cached record is what the run reads for those bytes (not the file again): planted with
    # a maximum of 1 under a good digest, the Deployment is one replica again.
    _write_cache(cache, header, {key: [[*entry[0][:7], 1, 1]] for key in document if document[key]}, digest=True)
    assert "KG104" not in lint()
