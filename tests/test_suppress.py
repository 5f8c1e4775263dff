"""Suppressions: annotations (resource, pod template, container scope), inline comments,
configuration exemptions and baselines; and the reports on suppressions that do nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import EXAMPLES, GPU_JOB, run_cli

from kubegap_lint.config.settings import Exemption, Settings
from kubegap_lint.engine.run import Linter, LintResult
from kubegap_lint.suppress.directives import parse_inline, split_entries

CUSTOM = EXAMPLES / "custom-policy" / "policies"

# KG901 (the worked custom policy) reports each GPU container on its own: trainer and profiler.
TWO_CONTAINERS = """\
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: llm
  namespace: research
  annotations:
    kubegap.io/ignore: "{ignore}"
    kubegap.io/ignore-reason: "{reason}"
spec:
  pytorchReplicaSpecs:
    Worker:
      replicas: 4
      template:
        spec:
          containers:
            - name: trainer
              image: registry.example/llm:1
              env:
                - name: TORCH_NCCL_ASYNC_ERROR_HANDLING
                  value: "1"
              resources:
                limits:
                  nvidia.com/gpu: 8
            - name: profiler
              image: registry.example/profiler:1
              resources:
                limits:
                  nvidia.com/gpu: 1
"""



def lint(text: str, select: list[str] | None = None, exemptions: list[Exemption] | None = None,
         path: str = "m.yaml") -> LintResult:
    settings = Settings(select=select, policy_dirs=[CUSTOM], exemptions=list(exemptions or []))
    return Linter(settings).lint_texts([(path, text)])


def rows(result: LintResult, *rules: str) -> list[tuple[str, int, str | None, str | None]]:
    """(rule, line, container, suppression kind) of the findings of the given rules."""
    return [(f.rule_id, f.location.line, f.container, f.suppression.kind if f.suppression else None)
            for f in result.findings if not rules or f.rule_id in rules]


def _validate_output(document: dict) -> None:
    import jsonschema
    from conftest import REPO

    schema = json.loads((REPO / "schemas" / "output.schema.json").read_text(encoding="utf-8"))
    jsonschema.validate(document, schema)


def two_containers(ignore: str, reason: str = "profiling build") -> str:
    return TWO_CONTAINERS.format(ignore=ignore, reason=reason)


# ---------------------------------------------------------------- annotations

def test_container_scoped_annotation_leaves_the_other_containers_findings() -> None:
    result = lint(two_containers("KG901[trainer]"), select=["KG901", "KG005", "KG006"])
    assert rows(result) == [
        ("KG901", 19, "trainer", "annotation"),
        ("KG901", 24, "profiler", None),
    ]
    suppressed = result.findings[0].suppression
    assert suppressed is not None and suppressed.reason == "profiling build"
    assert suppressed.source == "m.yaml:7"


def test_container_scope_by_name_and_several_containers() -> None:
    result = lint(two_containers("async-error-handling-not-3[trainer, profiler]"), select=["KG901", "KG005"])
    assert rows(result) == [("KG901", 19, "trainer", "annotation"), ("KG901", 24, "profiler", "annotation")]


def test_container_scope_applies_to_a_pod_finding_that_points_into_the_container() -> None:
    # KG501 reports the pod, at its first GPU container: a scope naming that container matches,
    # a scope naming another container does not (and is reported as unused).
    pod_level = two_containers("KG501[trainer]")
    assert rows(lint(pod_level, select=["KG501", "KG005"])) == [("KG501", 16, None, "annotation")]
    wrong = two_containers("KG501[profiler]")
    assert rows(lint(wrong, select=["KG501", "KG005"])) == [("KG005", 7, None, None), ("KG501", 16, None, None)]


def test_an_annotation_naming_an_unknown_rule_is_reported() -> None:
    result = lint(two_containers("KG9O1, async-error-handling-not3"), select=["KG901", "KG006"])
    kg006 = [f for f in result.findings if f.rule_id == "KG006"]
    assert [(f.location.line, f.location.column, f.severity.value) for f in kg006] == [(7, 5, "warning")] * 2
    messages = sorted(f.message for f in kg006)
    assert messages == [
        "kubegap.io/ignore: 'KG9O1' is no rule (did you mean KG901?): this suppression does nothing"
        " (see `kubegap-lint rules`)",
        "kubegap.io/ignore: 'async-error-handling-not3' is no rule (did you mean async-error-handling-not-3?):"
        " this suppression does nothing (see `kubegap-lint rules`)",
    ]
    assert [r[3] for r in rows(result, "KG901")] == [None, None]  # nothing was suppressed


def test_unreadable_entries_and_missing_reason_are_reported() -> None:
    result = lint(two_containers("KG901[", reason=""), select=["KG901", "KG006"])
    assert [f.message for f in result.findings if f.rule_id == "KG006"] == [
        "kubegap.io/ignore: cannot read 'KG901[': write a rule id or name, optionally followed by [container, ...]"]
    no_reason = TWO_CONTAINERS.replace('    kubegap.io/ignore-reason: "{reason}"\n', "").format(ignore="KG901")
    result = lint(no_reason, select=["KG901", "KG006"])
    assert rows(result) == [("KG006", 7, None, None), ("KG901", 18, "trainer", "annotation"),
                            ("KG901", 23, "profiler", "annotation")]
    assert result.findings[1].suppression.reason == "no reason given"  # type: ignore[union-attr]


def test_pod_template_annotation_covers_only_that_template() -> None:
    text = """\
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: llm
spec:
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      template:
        spec:
          containers:
            - {name: pytorch, image: x, resources: {limits: {nvidia.com/gpu: 8}}}
    Worker:
      replicas: 3
      template:
        metadata:
          annotations:
            kubegap.io/ignore: training-checkpoint-volume
            kubegap.io/ignore-reason: workers never write checkpoints
        spec:
          containers:
            - {name: pytorch, image: x, resources: {limits: {nvidia.com/gpu: 8}}}
"""
    result = lint(text, select=["KG201", "KG005"])
    assert [(f.role, f.suppression.kind if f.suppression else None) for f in result.findings] == [
        ("Master", None), ("Worker", "annotation")]


@pytest.mark.parametrize("annotations", [
    # through a merge key, an inline mapping and an alias of the Master's (the Worker's own
    # annotations hold no ignore key of their own text), and a quoted key
    "annotations:\n            <<: {kubegap.io/ignore: training-checkpoint-volume}\n"
    "            kubegap.io/ignore-reason: workers never write checkpoints",
    "annotations: *shared",
    "annotations: {\"kubegap.io/ignore\": training-checkpoint-volume,"
    " kubegap.io/ignore-reason: workers never write checkpoints}",
])
def test_pod_template_annotation_through_merges_and_aliases(annotations: str) -> None:
    # Suppressor.collect skips the walk for a document whose keys hold no ignore key: a key
    # reached through a merge or an alias is still one of the document's.
    text = f"""\
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: llm
  labels: &shared
    kubegap.io/ignore: training-checkpoint-volume
    kubegap.io/ignore-reason: workers never write checkpoints
spec:
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      template:
        spec:
          containers:
            - {{name: pytorch, image: x, resources: {{limits: {{nvidia.com/gpu: 8}}}}}}
    Worker:
      replicas: 3
      template:
        metadata:
          {annotations}
        spec:
          containers:
            - {{name: pytorch, image: x, resources: {{limits: {{nvidia.com/gpu: 8}}}}}}
"""
    result = lint(text, select=["KG201", "KG005"])
    assert [(f.role, f.suppression.kind if f.suppression else None) for f in result.findings] == [
        ("Master", None), ("Worker", "annotation")]


# ---------------------------------------------------------------- inline comments

def test_inline_on_the_line_or_the_line_above() -> None:
    same_line = GPU_JOB.replace("    spec:\n      restartPolicy", "    spec:  # kubegap:ignore KG201 eval job, no state\n      restartPolicy")
    assert rows(lint(same_line, select=["KG201", "KG005"])) == [("KG201", 8, None, "inline")]
    above = GPU_JOB.replace("    spec:\n      restartPolicy", "    # kubegap:ignore KG201 eval job, no state\n    spec:\n      restartPolicy")
    result = lint(above, select=["KG201", "KG005"])
    assert rows(result) == [("KG201", 9, None, "inline")]
    assert result.findings[0].suppression.reason == "eval job, no state"  # type: ignore[union-attr]
    two_above = GPU_JOB.replace("  template:\n", "  # kubegap:ignore KG201 too far away\n  template:\n")
    assert rows(lint(two_above, select=["KG201", "KG005"])) == [("KG005", 7, None, None), ("KG201", 9, None, None)]


def test_inline_with_several_rules_and_names() -> None:
    text = GPU_JOB.replace("        - name: trainer", "        # kubegap:ignore KG201, gpu-shm-default: smoke test\n        - name: trainer")
    text = text.replace("    spec:\n      restartPolicy", "    spec:  # kubegap:ignore training-checkpoint-volume smoke test\n      restartPolicy")
    result = lint(text, select=["KG201", "KG501", "KG005"])
    assert rows(result) == [("KG201", 8, None, "inline"), ("KG005", 11, None, None), ("KG501", 12, None, "inline")]
    assert "`# kubegap:ignore KG201` matches no KG201 finding" in result.findings[1].message


def test_inline_problems_are_reported() -> None:
    text = GPU_JOB.replace("    spec:\n      restartPolicy", "    spec:  # kubegap:ignore KG201\n      restartPolicy")
    result = lint(text, select=["KG201", "KG006"])
    assert rows(result) == [("KG201", 8, None, "inline"), ("KG006", 8, None, None)]
    assert "gives no reason" in result.findings[1].message
    text = GPU_JOB.replace("  template:\n", "  template:  # kubegap:ignore\n")
    assert [f.message for f in lint(text, select=["KG006"]).findings] == [
        "`# kubegap:ignore` names no rule: write `# kubegap:ignore KG305 reason`"]
    text = GPU_JOB.replace("  template:\n", "  template:  # kubegap:ingore KG201 typo\n")
    assert [f.message for f in lint(text, select=["KG006"]).findings] == [
        "`kubegap:ingore` is no directive (did you mean kubegap:ignore?): this suppression does nothing"]


def test_inline_suppresses_an_input_fault_in_a_parsed_document() -> None:
    text = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: 1\n  k: 2  # kubegap:ignore KG002 generated\n"
    assert rows(lint(text, select=["KG002", "KG005"])) == [("KG002", 7, None, "inline")]


def test_parsers() -> None:
    assert split_entries("KG201, KG305[a, b] ,x") == ["KG201", "KG305[a, b]", "x"]
    assert parse_inline("# kubegap:ignore KG305,KG303 - old image") == ("KG305,KG303", "old image")
    assert parse_inline("# kubegap:ignore KG305[trainer] sidecar") == ("KG305[trainer]", "sidecar")
    assert parse_inline("# kubegap:other KG305") is None
    assert parse_inline("# kubegap:ignore") == ("", "")
    assert parse_inline("# kubegap:ignoreKG305") is None


def test_unused_suppression_only_for_rules_that_ran() -> None:
    stale = two_containers("KG303")  # KG303 does fire here (no flight recorder): not stale
    assert rows(lint(stale, select=["KG303", "KG005"]), "KG005") == []
    stale = two_containers("KG203")  # unknown to this catalog: KG006, not KG005
    assert rows(lint(stale, select=["KG901", "KG005"]), "KG005") == []
    fixed = GPU_JOB.replace("  name: train\n", "  name: train\n  annotations:\n    kubegap.io/ignore: KG303\n"
                            "    kubegap.io/ignore-reason: single GPU\n")
    assert rows(lint(fixed, select=["KG201", "KG005"]), "KG005") == []  # KG303 did not run
    assert rows(lint(fixed, select=["KG303", "KG005"]), "KG005") == [("KG005", 6, None, None)]


# ---------------------------------------------------------------- configuration exemptions

def _exemption(**kwargs) -> Exemption:
    kwargs.setdefault("reason", "third-party chart")
    kwargs.setdefault("origin", (".kubegap-lint.yaml", 3, 5))
    return Exemption(**kwargs)


@pytest.mark.parametrize("criteria,suppressed", [
    ({"rules": ["KG201"]}, True),
    ({"rules": ["training-checkpoint-volume"]}, True),
    ({"rules": ["*"]}, True),
    ({"rules": ["gpu-shm-default"]}, True),
    ({"rules": ["KG201"], "kinds": ["Job"]}, True),
    ({"rules": ["KG201"], "kinds": ["Deploy*"]}, False),
    ({"rules": ["KG201"], "namespaces": ["m?"]}, True),
    ({"rules": ["KG201"], "namespaces": ["prod"]}, False),
    ({"rules": ["KG201"], "names": ["tr*"]}, True),
    ({"rules": ["KG201"], "names": ["eval-*"]}, False),
    ({"rules": ["KG201"], "paths": ["vendor/*"]}, True),
    ({"rules": ["KG201"], "paths": ["*.yaml"]}, True),
    ({"rules": ["KG201"], "paths": ["ours/*"]}, False),
    ({"rules": ["KG201"], "paths": ["gpu-operator/templates/*"]}, True),  # the Helm template
    ({"rules": ["KG201"], "kinds": ["Job"], "names": ["other"]}, False),  # every criterion must match
    ({"rules": ["KG501"], "containers": ["train*"]}, True),  # a pod finding inside the container
    ({"rules": ["KG501"], "containers": ["sidecar"]}, False),
])
def test_exemption_criteria(criteria: dict, suppressed: bool) -> None:
    text = "# Source: gpu-operator/templates/job.yaml\n" + GPU_JOB
    target = {"*": "KG201", "training-checkpoint-volume": "KG201", "gpu-shm-default": "KG501"}.get(criteria["rules"][0], criteria["rules"][0])
    result = lint(text, select=["KG201", "KG501"], exemptions=[_exemption(**criteria)], path="vendor/job.yaml")
    findings = [f for f in result.findings if f.rule_id == target]
    assert findings
    assert all((f.suppression is not None) == suppressed for f in findings)
    if suppressed:
        assert findings[0].suppression.kind == "config"  # type: ignore[union-attr]
        assert findings[0].suppression.reason == "third-party chart"  # type: ignore[union-attr]
        assert findings[0].suppression.source == ".kubegap-lint.yaml:3"  # type: ignore[union-attr]


def test_exemption_suppresses_input_faults_by_path() -> None:
    result = lint("a: [\n", select=["KG001", "KG005"], path="vendor/broken.yaml",
                  exemptions=[_exemption(rules=["KG001"], paths=["vendor/*"])])
    assert rows(result) == [("KG001", 1, None, "config")]  # the file's only line (no line 2)


def test_unused_exemption_is_reported_at_its_line() -> None:
    result = lint(GPU_JOB, select=["KG201", "KG005"],
                  exemptions=[_exemption(rules=["KG201"], names=["nothing-*"])])
    assert rows(result, "KG005") == [("KG005", 3, None, None)]
    unused = [f for f in result.findings if f.rule_id == "KG005"][0]
    assert unused.location.path == ".kubegap-lint.yaml"
    assert unused.message.startswith("exemption for KG201 (third-party chart) matches no finding")


def test_exemptions_from_a_config_file(tmp_path: Path) -> None:
    (tmp_path / "vendor").mkdir()
    (tmp_path / "vendor" / "job.yaml").write_text(GPU_JOB, encoding="utf-8")
    (tmp_path / ".kubegap-lint.yaml").write_text("""\
select: [KG201, KG501, KG005]
exemptions:
  - rules: [KG201]
    paths: [vendor/*]
    reason: upstream chart; checkpoints go to the operator's bucket
  - rules: [KG501]
    kinds: [Deployment]
    reason: no such thing here
""", encoding="utf-8")
    proc = run_cli("--format", "json", "vendor", cwd=tmp_path)
    document = json.loads(proc.stdout)
    got = [(f["rule"], f["location"]["path"], f["location"]["line"], f["suppressed"]) for f in document["findings"]]
    assert got == [
        ("KG005", ".kubegap-lint.yaml", 6, None),
        ("KG201", "vendor/job.yaml", 8, {"kind": "config",
                                         "reason": "upstream chart; checkpoints go to the operator's bucket"}),
        ("KG501", "vendor/job.yaml", 11, None),
    ]
    _validate_output(document)


# ---------------------------------------------------------------- output

def test_suppressed_findings_stay_in_json_and_hide_in_text(tmp_path: Path) -> None:
    path = tmp_path / "job.yaml"
    path.write_text(GPU_JOB.replace("  name: train\n", "  name: train\n  annotations:\n"
                                    "    kubegap.io/ignore: KG201,KG501\n    kubegap.io/ignore-reason: eval only\n"),
                    encoding="utf-8")
    proc = run_cli("--no-config", "--select", "KG201,KG501", str(path))
    assert proc.returncode == 0  # nothing counted
    assert proc.stdout.decode().splitlines() == [
        "1 file, 1 document (0 empty, 0 not Kubernetes), 1 resource, 1 workload: 0 errors, 0 warnings,"
        " 0 notes (2 suppressed)"]
    proc = run_cli("--no-config", "--select", "KG201,KG501", "--show-suppressed", str(path))
    assert proc.stdout.decode().count("[suppressed by annotation: eval only]") == 2
    proc = run_cli("--no-config", "--select", "KG201,KG501", "--format", "json", str(path))
    document = json.loads(proc.stdout)
    assert [f["suppressed"] for f in document["findings"]] == [{"kind": "annotation", "reason": "eval only"}] * 2
    _validate_output(document)
    assert document["summary"]["suppressed"] == 2


# ---------------------------------------------------------------- baseline

def test_baseline_reports_only_new_findings(tmp_path: Path) -> None:
    (tmp_path / "manifests").mkdir()
    job = tmp_path / "manifests" / "job.yaml"
    job.write_text(GPU_JOB, encoding="utf-8")
    rules = ("--select", "KG201,KG501")  # the rules GPU_JOB breaks; a new rule changes nothing here
    create = run_cli("baseline", "create", "--no-config", *rules, "manifests", cwd=tmp_path)
    assert create.returncode == 0, create.stderr
    assert create.stdout == run_cli("baseline", "create", "--no-config", *rules, "manifests", cwd=tmp_path).stdout
    baseline = json.loads(create.stdout)
    assert baseline["version"] == 2
    assert baseline["paths"] in ("git-top-level", "working-folder")  # tmp_path may lie in a work tree
    assert sorted(e["rule"] for e in baseline["findings"]) == ["KG201", "KG501"]
    (tmp_path / ".kubegap-baseline.json").write_bytes(create.stdout)

    proc = run_cli("--no-config", *rules, "--baseline", ".kubegap-baseline.json", "manifests", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout
    assert b"(2 suppressed)" in proc.stdout

    # Lines move and a new workload appears: only the new one's findings count.
    job.write_text("# moved down\n\n" + GPU_JOB + "---\n" + GPU_JOB.replace("name: train", "name: train-2"),
                   encoding="utf-8")
    (tmp_path / ".kubegap-lint.yaml").write_text("select: [KG201, KG501]\nbaseline: .kubegap-baseline.json\n",
                                                 encoding="utf-8")
    proc = run_cli("--format", "json", "manifests", cwd=tmp_path)
    assert proc.returncode == 1
    findings = json.loads(proc.stdout)["findings"]
    counted = [(f["rule"], f["resource"]["name"]) for f in findings if f["suppressed"] is None]
    assert counted == [("KG201", "train-2"), ("KG501", "train-2")]
    assert [f["suppressed"]["kind"] for f in findings if f["suppressed"]] == ["baseline", "baseline"]
    _validate_output(json.loads(proc.stdout))
    # --no-baseline shows everything again.
    proc = run_cli("--no-baseline", "--format", "json", "manifests", cwd=tmp_path)
    assert all(f["suppressed"] is None for f in json.loads(proc.stdout)["findings"])


def test_baseline_paths_are_from_the_git_top_level(tmp_path: Path) -> None:
    """Created at the top level, used from a subfolder (and the other way round): same match."""
    import subprocess

    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "deploy").mkdir()
    (tmp_path / "deploy" / "job.yaml").write_text(GPU_JOB, encoding="utf-8")
    create = run_cli("baseline", "create", "--no-config", "--select", "KG201,KG501", "deploy", cwd=tmp_path)
    assert create.returncode == 0, create.stderr
    baseline = json.loads(create.stdout)
    assert baseline["paths"] == "git-top-level"
    assert [e["path"] for e in baseline["findings"]] == ["deploy/job.yaml", "deploy/job.yaml"]
    (tmp_path / "base.json").write_bytes(create.stdout)
    proc = run_cli("--no-config", "--select", "KG201,KG501", "--baseline", "../base.json", "job.yaml",
                   cwd=tmp_path / "deploy")
    assert proc.returncode == 0, proc.stdout
    assert b"0 errors, 0 warnings, 0 notes (2 suppressed)" in proc.stdout
    # From the subfolder, the same fingerprints.
    again = run_cli("baseline", "create", "--no-config", "--select", "KG201,KG501", "job.yaml",
                    cwd=tmp_path / "deploy")
    assert again.stdout == create.stdout


def test_version_1_baselines_still_match_from_their_folder(tmp_path: Path) -> None:
    from kubegap_lint.suppress.fingerprint import fingerprint

    (tmp_path / "job.yaml").write_text(GPU_JOB, encoding="utf-8")
    found = run_cli("--no-config", "--select", "KG201", "--format", "json", "job.yaml", cwd=tmp_path)
    assert found.returncode == 1
    findings = lint(GPU_JOB, select=["KG201"], path="job.yaml").findings
    old = {"version": 1, "findings": [{"fingerprint": fingerprint(f)} for f in findings]}
    (tmp_path / "old.json").write_text(json.dumps(old), encoding="utf-8")
    proc = run_cli("--no-config", "--select", "KG201", "--baseline", "old.json", "job.yaml", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout
    assert b"(1 suppressed)" in proc.stdout


def test_baseline_counts_repeated_fingerprints() -> None:
    from collections import Counter

    from kubegap_lint.suppress.fingerprint import fingerprint
    from kubegap_lint.suppress.suppressor import apply_baseline

    findings = lint(GPU_JOB, select=["KG201"]).findings
    twice = findings + findings
    accepted = Counter({fingerprint(findings[0]): 1})
    marked = apply_baseline(twice, accepted, "b.json")
    assert [f.suppression is not None for f in marked] == [True, False]


def test_baseline_errors_are_one_line(tmp_path: Path) -> None:
    (tmp_path / "job.yaml").write_text(GPU_JOB, encoding="utf-8")
    proc = run_cli("--no-config", "--baseline", "missing.json", "job.yaml", cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.decode().splitlines() == [
        "kubegap-lint: " + str(tmp_path / "missing.json") + ": baseline file not found; create it with"
        " `kubegap-lint baseline create PATHS > FILE`"]
    (tmp_path / "bad.json").write_text('{"version": 1, "findings": [}', encoding="utf-8")
    proc = run_cli("--no-config", "--baseline", "bad.json", "job.yaml", cwd=tmp_path)
    assert proc.returncode == 2 and b"baseline is not valid JSON" in proc.stderr
    assert len(proc.stderr.splitlines()) == 1
