"""The view facts behind KG202 and KG203: path-like values found in commands, scripts and env
values, and the mount that covers each of them."""

from __future__ import annotations

import pytest
from conftest import EXAMPLES

from kubegap_lint.config.settings import Settings
from kubegap_lint.engine.run import Linter
from kubegap_lint.workloads.commandline import path_values
from kubegap_lint.workloads.facts.storage import covering_mount


def test_path_values_reads_flags_scripts_and_skips_urls() -> None:
    text = ('bash -c "python train.py --save=/ckpt/a --out /data/run1; '
            'gsutil cp -r /ckpt gs://bucket/ckpt/b && echo done > /tmp/x."')
    assert path_values(text) == ["/ckpt/a", "/data/run1", "/ckpt", "/tmp/x"]


def test_path_values_ignores_relative_paths_and_the_root() -> None:
    assert path_values("train.py --dir ./checkpoints --root / --log=logs/ckpt") == []


def test_covering_mount_takes_the_longest_directory_prefix() -> None:
    mounts = [{"path": "/data"}, {"path": "/data/ckpt"}, {"path": "/datasets"}]
    assert covering_mount(mounts, "/data/ckpt/run1") == {"path": "/data/ckpt"}
    assert covering_mount(mounts, "/data/other") == {"path": "/data"}
    assert covering_mount(mounts, "/datasets2/x") is None  # a prefix of the name is not a parent


def test_covering_mount_edges() -> None:
    first, second, root = {"path": "/data/", "n": 1}, {"path": "/data", "n": 2}, {"path": "/"}
    assert covering_mount([first, second], "/data/x") is first  # equal directories: the first
    assert covering_mount([first, second], "/data") is first  # the directory itself
    assert covering_mount([root, first], "/other") is root and covering_mount([root, first], "/data/y") is first
    assert covering_mount([{"path": None}, {"path": ""}], "/x") == {"path": None}  # no path: the root
    assert covering_mount([], "/x") is None


def _locations(text: str) -> list[tuple]:
    result = Linter(Settings(select=["KG001"])).lint_texts([("m.yaml", text)], keep_views=True)
    (view,) = result.views
    (container,) = view["pods"][0]["containers"]
    return [(loc["path"], loc["from"], loc["covered"], loc["volume_type"]) for loc in container["locations"]]


def test_container_locations_join_mounts_commands_and_env_values() -> None:
    found = _locations("""
apiVersion: batch/v1
kind: Job
metadata: {name: j}
spec:
  template:
    spec:
      containers:
        - name: c
          command: [bash, -c, "torchrun train.py --ckpt /scratch/ckpt --data=/data/in"]
          env:
            - {name: OUT, value: /results/ckpt}
            - {name: CHECKPOINT_PATH, value: relative/ckpt}
            - {name: FROM_SECRET, valueFrom: {secretKeyRef: {name: s, key: k}}}
          volumeMounts:
            - {name: scratch, mountPath: /scratch}
            - {name: data, mountPath: /data}
      volumes:
        - {name: scratch, emptyDir: {}}
        - {name: data, persistentVolumeClaim: {claimName: d}}
""")
    assert found == [
        ("/scratch", "volumeMounts", True, "emptyDir"),
        ("/data", "volumeMounts", True, "persistentVolumeClaim"),
        ("/scratch/ckpt", "command", True, "emptyDir"),
        ("/data/in", "command", True, "persistentVolumeClaim"),
        ("/results/ckpt", "env OUT", False, None),
    ]


def test_env_records_name_every_variable_with_its_entry() -> None:
    result = Linter(Settings(select=["KG001"])).lint_texts([("m.yaml", """
apiVersion: batch/v1
kind: Job
metadata: {name: j}
spec:
  template:
    spec:
      containers:
        - name: c
          command: [bash, -c, "export NCCL_DEBUG=INFO; mpirun -x NCCL_IB_HCA=mlx5 a.out"]
          env:
            - {name: NCCL_IB_TIMEOUT, value: "20"}
""")], keep_views=True)
    (container,) = result.views[0]["pods"][0]["containers"]
    records = {r["name"]: (r["value"], r["from"], r["entry"] is not None) for r in container["env_list"]}
    assert records == {
        "NCCL_IB_TIMEOUT": ("20", "env", True),
        "NCCL_DEBUG": ("INFO", "command or envFrom", False),
        "NCCL_IB_HCA": ("mlx5", "command or envFrom", False),
    }


def test_a_variable_inside_a_path_is_part_of_it_and_a_command_substitution_ends_it() -> None:
    assert path_values("CKPT=/data/$(USER)/checkpoint/$(JOB_NAME) --out=/runs/${RUN}/ckpt") == [
        "/data/$(USER)/checkpoint/$(JOB_NAME)", "/runs/${RUN}/ckpt"]
    assert path_values("cp -r /ckpt/$(date +%s) /x/$HOME/y") == ["/ckpt/", "/x/$HOME/y"]


@pytest.mark.parametrize("path,expected", [
    ("/checkpoints", True), ("/scratch/Checkpoints/run-1", True), ("/ckpt_dir", True), ("/mnt/ckpts", True),
    ("/data/modelCheckpoints", True), ("/DATA/CKPT", True), ("/checkpoints/train.py", True),
    ("/opt/amazon/examples/llama3/llama3_70b_pretrain_checkpointless.py", False),
    ("/opt/app/save_checkpoint.py", False), ("/mnt/checkpointing", False), ("/data/models", False), (None, False),
])
def test_path_names_any_matches_words_not_substrings(path: str | None, expected: bool) -> None:
    from kubegap_lint.catalog.functions import PolicyFunctions

    assert PolicyFunctions({})._func_path_names_any(path, ["checkpoint", "ckpt"]) is expected


HYPERPOD = EXAMPLES / "KG203-checkpoint-grace-period-short" / "bad-hyperpod-checkpoint-env.yaml"


def test_kg203_names_the_whole_persistent_path_and_the_variable_it_comes_from() -> None:
    result = Linter(Settings(select=["KG203"])).lint_paths([str(HYPERPOD)])
    assert [f.message for f in result.findings] == [
        "nodes pods (8 GPUs each) checkpoint to"
        " /data/$(USER)/checkpoint/llama_70b/$(JOB_NAME) (env CHECKPOINT_DIR) but have terminationGracePeriodSeconds"
        " unset (30 s): a drain or preemption gives them only that long to save their state"]


def test_kg202_passes_over_a_script_named_checkpointless() -> None:
    folder = EXAMPLES / "KG202-checkpoint-on-ephemeral-storage"
    result = Linter(Settings(select=["KG202"])).lint_paths(
        [str(folder / "good-checkpointless-script.yaml"), str(folder / "bad-checkpoint-dir-with-variables.yaml")])
    assert [(f.location.line, f.message) for f in result.findings] == [(22, (
        "nodes pods (8 GPUs each) keep checkpoints at /local/$(USER)/checkpoint/llama_70b/$(JOB_NAME)"
        " (env CHECKPOINT_DIR), the writable layer of the container: they die with the pod, and a restart"
        " starts training over"))]
