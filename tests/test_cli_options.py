"""The command-line options of issue 16, as a user runs them (a process each): a path named like
a subcommand, empty input, -o with the summary on stderr, --quiet, --statistics, --exit-zero,
--no-estimate, --stdin-filename, selection by prefix, glob and tag, rules and explain with the
configured policy folders. Every run pins its rules (--select) and uses --no-config unless the
configuration is the point."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import EXAMPLES, REPO, run_cli

GPU_JOB = EXAMPLES / "KG201-training-checkpoint-volume" / "bad-job-no-volumes.yaml"
KG201_LINE = ("job.yaml:9:5: error KG201 training-checkpoint-volume: Job finetune: pods (1 GPU each) mount no"
              " persistent volume and name no object store: checkpoints written there die with the pod, and a"
              " restart starts training over")
KG501_LINE = ("job.yaml:12:11: warning KG501 gpu-shm-default: Job finetune: pods (1 GPU each) have no /dev/shm"
              " backed by an emptyDir with medium Memory of at least 1Gi: the runtime default is 64 MB, and"
              ' DataLoader workers die with "Bus error"')
SUMMARY = "1 file, 1 document (0 empty, 0 not Kubernetes), 1 resource, 1 workload: 1 error, 1 warning, 0 notes"
TRAINING = EXAMPLES / "KG401-training-no-restart-budget" / "good-restart-budgets.yaml"


@pytest.fixture()
def job(tmp_path: Path) -> Path:
    path = tmp_path / "job.yaml"
    shutil.copy(GPU_JOB, path)
    return path


def _out(proc: subprocess.CompletedProcess[bytes]) -> list[str]:
    return proc.stdout.decode().splitlines()


@pytest.mark.parametrize("name", ["config", "helm", "rules", "explain", "baseline", "policies"])
def test_a_folder_named_like_a_subcommand_is_linted(tmp_path: Path, name: str) -> None:
    (tmp_path / name).mkdir()
    shutil.copy(GPU_JOB, tmp_path / name / "job.yaml")
    proc = run_cli(name, "--no-config", "--select", "KG201", cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    assert _out(proc)[0] == f"{name}/{KG201_LINE}"


def test_subcommands_still_run_where_such_a_folder_exists(tmp_path: Path) -> None:
    for name in ("config", "explain", "rules"):
        (tmp_path / name).mkdir()
    proc = run_cli("config", "show", "--no-config", cwd=tmp_path)
    assert proc.returncode == 0 and _out(proc)[0] == "# configuration file: none"
    proc = run_cli("explain", "KG201", "--no-config", cwd=tmp_path)
    assert proc.returncode == 0 and _out(proc)[0] == "KG201 training-checkpoint-volume (error)"
    proc = run_cli("rules", "--markdown", cwd=tmp_path)  # not a lint option: the subcommand
    assert proc.returncode == 0 and _out(proc)[0] == "# Rules"
    # Words that are a valid lint line over existing paths: the path wins (documented).
    proc = run_cli("rules", "--no-config", cwd=tmp_path)
    assert proc.returncode == 2 and b"the input holds no YAML document" in proc.stderr
    # `lint` is always the subcommand, the explicit form.
    proc = run_cli("lint", "--no-config", "--select", "KG201", "config", cwd=tmp_path)
    assert proc.returncode == 2  # an empty folder: no input
    assert "the input holds no YAML document" in proc.stderr.decode()


def test_empty_input_is_an_error_unless_allowed(tmp_path: Path) -> None:
    proc = run_cli("--no-config", "-", stdin=b"")
    assert proc.returncode == 2 and proc.stdout == b""
    assert proc.stderr.decode() == (
        "kubegap-lint: the input holds no YAML document (an empty stdin, e.g. from a `helm template` that"
        " failed, or no manifest in the named folders); pass --allow-empty to accept that\n")
    proc = run_cli("--no-config", "--allow-empty", "-", stdin=b"# only a comment\n")
    assert proc.returncode == 0
    assert _out(proc) == ["1 file, 0 documents (0 empty, 0 not Kubernetes), 0 resources, 0 workloads:"
                          " 0 errors, 0 warnings, 0 notes"]
    (tmp_path / "empty").mkdir()
    assert run_cli("--no-config", "empty", cwd=tmp_path).returncode == 2
    assert run_cli("--no-config", "--allow-empty", "empty", cwd=tmp_path).returncode == 0


def test_output_file_keeps_the_summary_on_stderr(job: Path) -> None:
    proc = run_cli("--no-config", "--select", "KG201,KG501", "-o", "report.txt", "job.yaml", cwd=job.parent)
    assert proc.returncode == 1 and proc.stdout == b""
    assert proc.stderr.decode() == f"{SUMMARY}; report written to report.txt\n"
    assert (job.parent / "report.txt").read_text().splitlines() == [KG201_LINE, KG501_LINE, SUMMARY]
    proc = run_cli("--no-config", "--select", "KG201", "--format", "sarif", "-o", "r.sarif", "-q", "job.yaml",
                   cwd=job.parent)
    assert proc.returncode == 1 and proc.stdout == b"" and proc.stderr == b""


def test_quiet_statistics_and_exit_zero(job: Path) -> None:
    proc = run_cli("--no-config", "--select", "KG201,KG501", "--quiet", "job.yaml", cwd=job.parent)
    assert proc.returncode == 1 and _out(proc) == [KG201_LINE, KG501_LINE]
    proc = run_cli("--no-config", "--select", "KG201,KG501", "--statistics", "job.yaml", cwd=job.parent)
    assert _out(proc) == ["1  KG201  training-checkpoint-volume  error", "1  KG501  gpu-shm-default             warning",
                          SUMMARY]
    proc = run_cli("--no-config", "--select", "KG201,KG501", "--exit-zero", "job.yaml", cwd=job.parent)
    assert proc.returncode == 0 and _out(proc) == [KG201_LINE, KG501_LINE, SUMMARY]
    # Input errors still exit 2.
    proc = run_cli("--no-config", "--exit-zero", "missing.yaml", cwd=job.parent)
    assert proc.returncode == 2
    proc = run_cli("--no-config", "--statistics", "--format", "json", "job.yaml", cwd=job.parent)
    assert proc.returncode == 2 and b"--statistics is for the text format" in proc.stderr


def test_statistics_counts_per_rule_most_first(tmp_path: Path) -> None:
    shutil.copy(TRAINING, tmp_path / "train.yaml")
    proc = run_cli("--no-config", "--select", "KG201,KG501,KG303", "--statistics", "-q", "train.yaml", cwd=tmp_path)
    rows = [line.split() for line in _out(proc)]
    counts = [int(row[0]) for row in rows]
    assert counts == sorted(counts, reverse=True) and sum(counts) > len(rows)
    assert {row[1] for row in rows} <= {"KG201", "KG501", "KG303"}
    full = run_cli("--no-config", "--select", "KG201,KG501,KG303", "--format", "json", "train.yaml", cwd=tmp_path)
    import json

    found = [f["rule"] for f in json.loads(full.stdout)["findings"] if f["suppressed"] is None]
    assert {row[1]: int(row[0]) for row in rows} == {rule: found.count(rule) for rule in set(found)}


def test_estimate_switch(tmp_path: Path) -> None:
    shutil.copy(TRAINING, tmp_path / "train.yaml")
    with_block = _out(run_cli("--no-config", "--select", "KG201", "train.yaml", cwd=tmp_path))
    assert any(line.startswith("Expected interruptions at Llama 3's rate") for line in with_block)
    assert "  train.yaml:2:1: JobSet llama-pretrain: 32 GPUs: one interruption every ~66 days" in with_block
    without = _out(run_cli("--no-config", "--select", "KG201", "--no-estimate", "train.yaml", cwd=tmp_path))
    assert without == [line for line in with_block
                       if not line.startswith(("Expected interruptions", "  train.yaml:"))]


def test_stdin_filename_names_the_input_and_finds_its_configuration(tmp_path: Path) -> None:
    (tmp_path / "deploy").mkdir()
    (tmp_path / "deploy" / ".kubegap-lint.yaml").write_text("select: [KG501]\n")
    proc = run_cli("--stdin-filename", "deploy/job.yaml", "-", stdin=GPU_JOB.read_bytes(), cwd=tmp_path)
    assert proc.returncode == 1
    assert _out(proc)[0] == "deploy/" + KG501_LINE  # only KG501: deploy/'s configuration
    assert len(_out(proc)) == 2


@pytest.mark.parametrize(("selector", "rules"), [
    ("KG3", ["KG301", "KG302", "KG303", "KG304", "KG305", "KG306", "KG307"]),
    ("kg30*", ["KG301", "KG302", "KG303", "KG304", "KG305", "KG306", "KG307"]),
    ("nccl-*", ["KG301", "KG302", "KG303", "KG304", "KG305", "KG306", "KG307"]),
    ("checkpoint", ["KG201", "KG202", "KG203"]),
    ("KG20?", ["KG201", "KG202", "KG203", "KG204", "KG205"]),
    ("gpu-shm-default", ["KG501"]),
])
def test_selection_by_prefix_glob_tag_and_name(selector: str, rules: list[str]) -> None:
    from kubegap_lint.catalog.policies import load_catalog

    assert [p.id for p in load_catalog().select(selector)] == rules


def test_selection_on_the_command_line(job: Path) -> None:
    proc = run_cli("--no-config", "--select", "checkpoint", "--ignore", "KG20*", "--select", "KG5", "-q",
                   "job.yaml", cwd=job.parent)
    assert _out(proc) == [KG501_LINE]
    proc = run_cli("--no-config", "--select", "nosuchtag", "job.yaml", cwd=job.parent)
    assert proc.returncode == 2 and b"unknown rule 'nosuchtag'" in proc.stderr


def test_rules_and_explain_know_the_configured_policies(tmp_path: Path) -> None:
    custom = EXAMPLES / "custom-policy" / "policies"
    (tmp_path / ".kubegap-lint.yaml").write_text(f"policy_dirs: [{custom}]\n")
    ids = [line.split()[0] for line in _out(run_cli("rules", cwd=tmp_path))]
    assert "KG901" in ids and "KG201" in ids
    proc = run_cli("explain", "KG901", cwd=tmp_path)
    assert proc.returncode == 0 and _out(proc)[0].startswith("KG901 ")
    proc = run_cli("explain", "KG901", "--no-config", cwd=tmp_path)
    assert proc.returncode == 2 and b"unknown rule 'KG901'" in proc.stderr
    assert "KG901" not in run_cli("rules", "--no-config", cwd=tmp_path).stdout.decode()


def test_the_repository_readme_set_up_creates_a_virtual_environment() -> None:
    readme = (REPO / "README.md").read_text()
    step = next(line for line in readme.splitlines() if line.startswith("python3 -m venv"))
    assert step == "python3 -m venv .venv && .venv/bin/pip install . && .venv/bin/kubegap-lint examples/"
