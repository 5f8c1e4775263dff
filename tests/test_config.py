"""Configuration: discovery, every key, the command line over it, errors and `config show`."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
from conftest import EXAMPLES, GPU_JOB, run_cli

from kubegap_lint.config.discover import discover_config
from kubegap_lint.config.load import resolve
from kubegap_lint.config.read import read_config
from kubegap_lint.core.errors import DataFileError
from kubegap_lint.engine.run import Linter

SHM_2GI = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: server
spec:
  replicas: 1
  template:
    spec:
      containers:
        - name: server
          image: registry.example/s:1
          resources:
            limits:
              nvidia.com/gpu: 2
          volumeMounts:
            - {name: dshm, mountPath: /dev/shm}
      volumes:
        - name: dshm
          emptyDir: {medium: Memory, sizeLimit: 2Gi}
"""


def _write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def _rules(folder: Path, *paths: str, **kwargs) -> list[tuple[str, bool]]:
    """(rule, suppressed) of each finding when linting paths with the discovered configuration."""
    resolved = resolve(list(paths), **kwargs)
    result = Linter(resolved.settings).lint_paths(list(paths))
    assert not result.errors, result.errors
    return sorted((f.rule_id, f.suppression is not None) for f in result.findings)


def _json(proc) -> dict:
    return json.loads(proc.stdout)


# ---------------------------------------------------------------- discovery

def test_discovered_from_the_linted_folder_upward(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()  # discovery stops at the repository's top level
    _write(tmp_path, ".kubegap-lint.yaml", "select: [KG201]\n")
    job = _write(tmp_path, "deploy/ml/job.yaml", GPU_JOB)
    assert discover_config(job) == tmp_path / ".kubegap-lint.yaml"
    assert discover_config(job.parent) == tmp_path / ".kubegap-lint.yaml"
    assert _rules(tmp_path, str(job)) == [("KG201", False)]
    # The nearest file wins.
    _write(tmp_path, "deploy/.kubegap-lint.yaml", "select: [KG501]\n")
    assert _rules(tmp_path, str(job)) == [("KG501", False)]


def test_pyproject_table_and_precedence(tmp_path: Path) -> None:
    job = _write(tmp_path, "job.yaml", GPU_JOB)
    _write(tmp_path, "pyproject.toml", "[project]\nname = 'x'\n")
    assert discover_config(job) is None  # a pyproject.toml without the table is not a configuration
    _write(tmp_path, "pyproject.toml", "[project]\nname = 'x'\n\n[tool.kubegap-lint]\nselect = [\"KG501\"]\n")
    assert discover_config(job) == tmp_path / "pyproject.toml"
    assert _rules(tmp_path, str(job)) == [("KG501", False)]
    _write(tmp_path, ".kubegap-lint.yaml", "select: [KG201]\n")  # same folder: the YAML file wins
    assert _rules(tmp_path, str(job)) == [("KG201", False)]


def test_config_option_overrides_and_no_config_ignores(tmp_path: Path) -> None:
    job = _write(tmp_path, "job.yaml", GPU_JOB)
    _write(tmp_path, ".kubegap-lint.yaml", "select: [KG201]\n")
    other = _write(tmp_path, "elsewhere/strict.yaml", "select: [KG501]\n")
    assert _rules(tmp_path, str(job), config_file=str(other)) == [("KG501", False)]
    # Without the configuration the default set runs: KG201 is back. Only the two rules this
    # test is about are compared, so a new default rule does not break it.
    about = ("KG201", "KG501")
    assert [r for r in _rules(tmp_path, str(job), no_config=True) if r[0] in about] == \
        [("KG201", False), ("KG501", False)]
    proc = run_cli("--config", str(other), "--format", "json", str(job))
    assert [f["rule"] for f in _json(proc)["findings"]] == ["KG501"]
    proc = run_cli("--no-config", "--format", "json", str(job))
    assert [f["rule"] for f in _json(proc)["findings"] if f["rule"] in about] == ["KG201", "KG501"]


def test_stdin_discovers_from_the_working_folder(tmp_path: Path) -> None:
    _write(tmp_path, ".kubegap-lint.yaml", "select: [KG501]\n")
    proc = run_cli("--format", "json", "-", stdin=GPU_JOB.encode(), cwd=tmp_path)
    assert [f["rule"] for f in _json(proc)["findings"]] == ["KG501"]


# ---------------------------------------------------------------- keys

def test_select_and_ignore_by_id_or_name(tmp_path: Path) -> None:
    job = _write(tmp_path, "job.yaml", GPU_JOB)
    _write(tmp_path, ".kubegap-lint.yaml", "select: [training-checkpoint-volume, KG501]\nignore: [gpu-shm-default]\n")
    assert _rules(tmp_path, str(job)) == [("KG201", False)]


def test_command_line_merges_over_the_file_like_ruff(tmp_path: Path) -> None:
    job = _write(tmp_path, "job.yaml", GPU_JOB)
    _write(tmp_path, ".kubegap-lint.yaml", "select: [KG201]\nignore: [KG501]\n")
    # --select replaces the file's select, and a rule it names is no longer ignored by the file.
    assert _rules(tmp_path, str(job), select=["KG501"]) == [("KG501", False)]
    # --ignore adds to the file's ignore.
    assert _rules(tmp_path, str(job), ignore=["KG201"]) == []
    proc = run_cli("--select", "KG501", "--format", "json", str(job))
    assert [f["rule"] for f in _json(proc)["findings"]] == ["KG501"]


def test_severity_override(tmp_path: Path) -> None:
    job = _write(tmp_path, "job.yaml", GPU_JOB)
    _write(tmp_path, ".kubegap-lint.yaml",
           "select: [KG201, KG501]\nseverity: {KG201: note, gpu-shm-default: note}\n")
    proc = run_cli("--format", "json", str(job))
    assert {f["rule"]: f["severity"] for f in _json(proc)["findings"]} == {"KG201": "note", "KG501": "note"}
    assert proc.returncode == 0  # notes are below the default fail threshold


def test_fail_on(tmp_path: Path) -> None:
    job = _write(tmp_path, "job.yaml", GPU_JOB)
    _write(tmp_path, ".kubegap-lint.yaml", "select: [KG501]\nfail_on: error\n")
    assert run_cli(str(job)).returncode == 0
    assert run_cli("--fail-on", "warning", str(job)).returncode == 1  # the command line wins


def test_param_min_shm_size(tmp_path: Path) -> None:
    deploy = _write(tmp_path, "deploy.yaml", SHM_2GI)
    _write(tmp_path, ".kubegap-lint.yaml", "select: [KG501]\n")
    assert _rules(tmp_path, str(deploy)) == []
    _write(tmp_path, ".kubegap-lint.yaml", "select: [KG501]\nparams:\n  min_shm_size: 8Gi\n")
    assert _rules(tmp_path, str(deploy)) == [("KG501", False)]


def test_param_gpu_resources(tmp_path: Path) -> None:
    job = _write(tmp_path, "job.yaml", GPU_JOB.replace("nvidia.com/gpu", "example.com/accel"))
    _write(tmp_path, ".kubegap-lint.yaml", "select: [KG201]\n")
    assert _rules(tmp_path, str(job)) == []
    _write(tmp_path, ".kubegap-lint.yaml", "select: [KG201]\nparams:\n  gpu_resources: [example.com/*]\n")
    assert _rules(tmp_path, str(job)) == [("KG201", False)]


@pytest.mark.parametrize("key,good,bad", [
    ("rack_keys", "[example.com/rack]", "example.com/rack"),
    ("power_domain_keys", "[example.com/pdu]", "{a: 1}"),
    ("zone_keys", "[topology.kubernetes.io/zone]", "3"),
    ("gpu_resources", "[nvidia.com/gpu]", "nvidia.com/gpu"),
    ("checkpoint_path_patterns", "[ckpt]", "ckpt"),
    ("min_grace_period_seconds", "120", "2m"),
    ("max_heartbeat_timeout_seconds", "600", "-1"),
    ("min_shm_size", "8Gi", "eight gigs"),
    ("gpu_model_keys", "[nvidia.com/gpu.product]", "[1, 2]"),
])
def test_every_public_param_is_validated(tmp_path: Path, key: str, good: str, bad: str) -> None:
    path = _write(tmp_path, ".kubegap-lint.yaml", f"params:\n  {key}: {good}\n")
    config = read_config(path)
    assert key in config.data["params"]
    path.write_text(f"params:\n  {key}: {bad}\n", encoding="utf-8")
    with pytest.raises(DataFileError) as caught:
        read_config(path)
    for message in caught.value.messages:
        assert ".kubegap-lint.yaml:2:" in message
        assert f"params.{key}" in message and "expected" in message


def test_exclude_globs_are_relative_to_the_config_folder(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    _write(tmp_path, "charts/vendor/job.yaml", GPU_JOB)
    _write(tmp_path, "charts/ours/job.yaml", GPU_JOB)
    _write(tmp_path, "charts/ours/job.tmpl.yaml", GPU_JOB)
    _write(tmp_path, ".kubegap-lint.yaml", "select: [KG201]\nexclude: [charts/vendor/*, '*.tmpl.yaml']\n")
    for cwd in (tmp_path, tmp_path / "charts"):  # the same files, from either folder
        proc = run_cli("--format", "json", str(tmp_path / "charts"), cwd=cwd)
        paths = [f["location"]["path"] for f in _json(proc)["findings"]]
        assert len(paths) == 1 and paths[0].endswith("ours/job.yaml"), paths


def test_policy_dirs_load_custom_policies(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    shutil.copytree(EXAMPLES / "custom-policy" / "policies", tmp_path / "team-policies")
    bad = tmp_path / "team-policies" / "examples" / "KG901-async-error-handling-not-3" / "bad-mode-1.yaml"
    _write(tmp_path, ".kubegap-lint.yaml", "select: [KG901]\npolicy_dirs: [team-policies]\n")
    assert _rules(tmp_path, str(bad)) == [("KG901", False), ("KG901", False)]
    _write(tmp_path, ".kubegap-lint.yaml", "policy_dirs: [missing]\n")
    proc = run_cli(str(bad))
    assert proc.returncode == 2
    assert b"policy_dirs[0]: expected a folder" in proc.stderr and b"Traceback" not in proc.stderr


def test_workloads_teach_a_new_kind(tmp_path: Path) -> None:
    run = _write(tmp_path, "run.yaml", """\
apiVersion: example.com/v1
kind: TrainingRun
metadata:
  name: run
spec:
  workers: 2
  pod:
    spec:
      containers:
        - name: trainer
          image: registry.example/t:1
          resources:
            limits:
              nvidia.com/gpu: 8
""")
    _write(tmp_path, ".kubegap-lint.yaml", "select: [KG201]\n")
    assert _rules(tmp_path, str(run)) == []
    _write(tmp_path, ".kubegap-lint.yaml", """\
select: [KG201]
workloads:
  - group: example.com
    kind: TrainingRun
    class: training
    templates: [{role: worker, template: spec.pod, replicas: [spec.workers]}]
""")
    assert _rules(tmp_path, str(run)) == [("KG201", False)]
    _write(tmp_path, ".kubegap-lint.yaml", "workloads:\n  - {group: example.com, kind: TrainingRun}\n")
    proc = run_cli(str(run))
    assert proc.returncode == 2 and b"Traceback" not in proc.stderr


def test_workloads_completion_metadata_and_replicas_by_role(tmp_path: Path) -> None:
    """The table's fields for operator-built pods (issue 29) are open to a user's entries: a
    component completed as Dynamo's operator completes it (its gpu count joins the main
    container, /dev/shm is 8Gi unless turned off); an unknown completion is a usage error."""
    graph = _write(tmp_path, "graph.yaml", """\
apiVersion: example.com/v1
kind: ModelGraph
metadata: {name: g}
spec:
  parts:
    worker:
      replicas: 2
      sharedMemory: {disabled: true}
      resources: {limits: {gpu: "2"}}
      podMetadata: {labels: {app: g}}
      extraPodSpec: {mainContainer: {image: "registry.example/serve:1"}}
""")
    entry = """\
select: [KG501, KG103]
workloads:
  - group: example.com
    kind: ModelGraph
    class: serving
    replicas_by_role: true
    templates:
      - {each_key: spec.parts, spec: extraPodSpec, model: mainContainer, metadata: podMetadata,
         completion: COMPLETION, replicas: [replicas]}
"""
    _write(tmp_path, ".kubegap-lint.yaml", entry.replace("COMPLETION", "dynamo-component"))
    assert _rules(tmp_path, str(graph)) == [("KG103", False), ("KG501", False)]
    graph.write_text(graph.read_text().replace("sharedMemory: {disabled: true}", "sharedMemory: {size: 16Gi}"))
    assert _rules(tmp_path, str(graph)) == [("KG103", False)]
    _write(tmp_path, ".kubegap-lint.yaml", entry.replace("COMPLETION", "operator-magic"))
    proc = run_cli(str(graph))
    assert proc.returncode == 2 and b"completion" in proc.stderr and b"Traceback" not in proc.stderr


# ---------------------------------------------------------------- errors

def test_unknown_key_names_file_key_and_expected(tmp_path: Path) -> None:
    job = _write(tmp_path, "job.yaml", GPU_JOB)
    _write(tmp_path, ".kubegap-lint.yaml", "select: [KG201]\nignored: [KG501]\n")
    proc = run_cli(str(job), cwd=tmp_path)
    assert proc.returncode == 2
    lines = proc.stderr.decode().splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith("kubegap-lint: .kubegap-lint.yaml:2:1: ignored: unknown key; expected one of:")
    assert "ignore," in lines[0] and "select" in lines[0]


def test_wrong_types_are_one_line_each(tmp_path: Path) -> None:
    job = _write(tmp_path, "job.yaml", GPU_JOB)
    _write(tmp_path, ".kubegap-lint.yaml",
           "select: KG201\nfail_on: loud\nseverity: {KG201: fatal}\nexemptions:\n  - rules: [KG201]\n")
    proc = run_cli(str(job), cwd=tmp_path)
    assert proc.returncode == 2
    lines = proc.stderr.decode().splitlines()
    assert lines == [
        "kubegap-lint: .kubegap-lint.yaml:1:1: select: expected a list, got the string 'KG201'",
        "kubegap-lint: .kubegap-lint.yaml:2:1: fail_on: expected one of: error, warning, note; got the string 'loud'",
        "kubegap-lint: .kubegap-lint.yaml:3:12: severity.KG201: expected one of: error, warning, note; got the string 'fatal'",
        "kubegap-lint: .kubegap-lint.yaml:5:5: exemptions[0]: missing key reason",
    ]


def test_unknown_rule_in_config_is_located(tmp_path: Path) -> None:
    job = _write(tmp_path, "job.yaml", GPU_JOB)
    _write(tmp_path, ".kubegap-lint.yaml", "select:\n  - KG201\n  - KG2O1\n")
    proc = run_cli(str(job), cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.decode().splitlines() == [
        "kubegap-lint: .kubegap-lint.yaml:3:5: select: unknown rule 'KG2O1'; expected a rule id, name,"
        " id prefix (KG3), glob (KG3*) or tag (see `kubegap-lint rules`)"]


def test_pyproject_errors_name_the_table_key_and_line(tmp_path: Path) -> None:
    job = _write(tmp_path, "job.yaml", GPU_JOB)
    _write(tmp_path, "pyproject.toml", "[project]\nname = 'x'\n\n[tool.kubegap-lint]\nselect = ['KG201']\nfail_on = 3\n")
    proc = run_cli(str(job), cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.decode().splitlines() == [
        "kubegap-lint: pyproject.toml:6:1: fail_on: expected one of: error, warning, note; got int 3"]
    _write(tmp_path, "pyproject.toml", "[tool.kubegap-lint]\nselect = [\n")
    proc = run_cli(str(job), cwd=tmp_path)
    assert proc.returncode == 2 and proc.stderr.startswith(b"kubegap-lint: pyproject.toml: not valid TOML")


def test_broken_yaml_config_is_one_line(tmp_path: Path) -> None:
    job = _write(tmp_path, "job.yaml", GPU_JOB)
    _write(tmp_path, ".kubegap-lint.yaml", "select: [KG201\n")
    proc = run_cli(str(job), cwd=tmp_path)
    assert proc.returncode == 2
    assert len(proc.stderr.splitlines()) == 1 and proc.stderr.startswith(b"kubegap-lint: .kubegap-lint.yaml:")
    _write(tmp_path, ".kubegap-lint.yaml", "- KG201\n")
    proc = run_cli(str(job), cwd=tmp_path)
    assert proc.returncode == 2 and b"expected a mapping of keys" in proc.stderr


def test_missing_config_file(tmp_path: Path) -> None:
    proc = run_cli("--config", "nope.yaml", "-", stdin=b"", cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr == b"kubegap-lint: nope.yaml: configuration file not found\n"


# ---------------------------------------------------------------- config show

def test_config_show_says_where_each_value_came_from(tmp_path: Path) -> None:
    _write(tmp_path, ".kubegap-lint.yaml", """\
select: [KG201, KG501]
params:
  min_shm_size: 8Gi
fail_on: error
exemptions:
  - rules: [KG501]
    names: [bench-*]
    reason: benchmarks
""")
    proc = run_cli("config", "show", "--ignore", "KG501", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.decode().splitlines()
    assert lines[0] == "# configuration file: .kubegap-lint.yaml"
    assert "select: [KG201, KG501]  # .kubegap-lint.yaml:1:1" in lines
    assert "ignore: [KG501]  # command line" in lines
    assert "fail_on: error  # .kubegap-lint.yaml:4:1" in lines
    assert "  min_shm_size: 8Gi  # .kubegap-lint.yaml:3:3" in lines
    assert "  min_grace_period_seconds: 30  # default (policies/params.yaml)" in lines
    assert "  - rules: [KG501]  # .kubegap-lint.yaml:6" in lines
    assert "    reason: benchmarks" in lines
    proc = run_cli("config", "show", "--no-config", cwd=tmp_path)
    assert proc.stdout.decode().splitlines()[0] == "# configuration file: none"


@pytest.mark.skipif(sys.version_info >= (3, 11), reason="3.10 reads TOML with tomli")
def test_tomli_is_available_on_python_310() -> None:  # pragma: no cover
    import tomli  # noqa: F401


def test_the_documented_examples_are_valid(tmp_path: Path) -> None:
    """Every YAML and TOML configuration block in docs/configuration.md passes validation."""
    import re

    from conftest import REPO

    text = (REPO / "docs" / "configuration.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```(yaml|toml)\n(.*?)```", text, re.S)
    assert len(blocks) >= 2
    for kind, body in blocks:
        if kind == "yaml":
            path = _write(tmp_path, ".kubegap-lint.yaml", body)
        else:
            path = _write(tmp_path, "pyproject.toml", body)
        config = read_config(path)
        assert config.data, body


def test_pyproject_exemption_tables_are_located(tmp_path: Path) -> None:
    _write(tmp_path, "job.yaml", GPU_JOB)
    _write(tmp_path, "pyproject.toml", """\
[tool.kubegap-lint]
select = ["KG201", "KG005"]

[[tool.kubegap-lint.exemptions]]
rules = ["KG201"]
names = ["train"]
reason = "eval job"

[[tool.kubegap-lint.exemptions]]
rules = ["KG201"]
names = ["nothing-*"]
reason = "stale"
""")
    proc = run_cli("--format", "json", "job.yaml", cwd=tmp_path)
    got = [(f["rule"], f["location"]["path"], f["location"]["line"], (f["suppressed"] or {}).get("reason"))
           for f in _json(proc)["findings"]]
    assert got == [("KG201", "job.yaml", 8, "eval job"), ("KG005", "pyproject.toml", 9, None)]
