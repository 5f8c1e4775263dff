"""SARIF output: golden files, both validators, GitHub's rules, fingerprints, roots, limits."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import CORPUS, EXAMPLES, REPO, SHARED, requires_shared, run_cli, run_cli_subprocess
from sarif_checks import (
    SCHEMA,
    github_problems,
    install_multitool,
    multitool_binary,
    multitool_problems,
    multitool_results,
    schema_problems,
)

from kubegap_lint.core.record import replace

GOLDEN = REPO / "tests" / "golden" / "sarif"
EXAMPLE_DIRS = sorted(p for p in EXAMPLES.glob("KG[0-9][0-9][0-9]-*") if p.is_dir())
GPU_JOB = EXAMPLES / "KG201-training-checkpoint-volume" / "bad-job-no-volumes.yaml"
needs_schema = needs_corpus = requires_shared  # the schema and the corpus are in ../shared


def sarif_of(*args: str, cwd: Path | None = None, stdin: bytes | None = None) -> tuple[dict[str, Any], Any]:
    proc = run_cli("--format", "sarif", *args, cwd=cwd, stdin=stdin)
    assert proc.returncode in (0, 1), proc.stderr.decode()
    return json.loads(proc.stdout), proc


def golden_args(folder: Path) -> list[str]:
    """The command scripts/regenerate.py runs for one example folder."""
    return ["lint", "--format", "sarif", "--select", folder.name.split("-")[0], "--sarif-root", ".",
            f"examples/{folder.name}"]


@pytest.mark.parametrize("folder", EXAMPLE_DIRS, ids=lambda p: p.name)
def test_golden_sarif_of_each_example_folder(folder: Path) -> None:
    golden = GOLDEN / f"{folder.name}.sarif"
    assert golden.is_file(), f"no golden SARIF for {folder.name}: run `bash scripts/regenerate.sh`"
    proc = run_cli(*golden_args(folder))
    assert proc.returncode in (0, 1), proc.stderr.decode()
    assert proc.stdout == golden.read_bytes(), (
        f"SARIF of examples/{folder.name} differs from {golden.relative_to(REPO)}: if the change is"
        " intended, run `bash scripts/regenerate.sh` and review the diff")


HELM_ARGS = ["lint", "--format", "sarif", "--select", "KG201,KG303,KG501", "--sarif-root", ".",
             "examples/helm/rendered.yaml"]


def test_golden_sarif_of_the_helm_example() -> None:
    golden = GOLDEN / "helm-gpu-train.sarif"
    proc = run_cli(*HELM_ARGS)
    assert proc.returncode == 1, proc.stderr.decode()
    assert golden.is_file() and proc.stdout == golden.read_bytes(), (
        "SARIF of examples/helm differs from its golden file: run `bash scripts/regenerate.sh`")


def test_no_golden_without_an_example_folder() -> None:
    assert sorted(p.stem for p in GOLDEN.glob("*.sarif")) == sorted([p.name for p in EXAMPLE_DIRS] + ["helm-gpu-train"])


@needs_schema
def test_helm_findings_point_at_templates_with_the_rendered_line_related() -> None:
    log, _ = sarif_of("--select", "KG201,KG303,KG501", "examples/helm/rendered.yaml")
    assert schema_problems(log) == [] and github_problems(log) == []
    results = log["runs"][0]["results"]
    assert len(results) == 5  # the preflight hook's nvidia-smi is diagnostic: no KG201 there
    rendered_lines = (REPO / "examples" / "helm" / "rendered.yaml").read_text().splitlines()
    for result in results:
        primary = result["locations"][0]["physicalLocation"]
        assert primary["artifactLocation"]["uri"].startswith("examples/helm/gpu-train/")
        (related,) = result["relatedLocations"]
        assert related["physicalLocation"]["artifactLocation"]["uri"] == "examples/helm/rendered.yaml"
        line = related["physicalLocation"]["region"]["startLine"]
        assert f"(rendered output: [examples/helm/rendered.yaml:{line}](1))" in result["message"]["text"]
        assert rendered_lines[line - 1].strip()  # the rendered line holds the node
    kg303 = next(r for r in results if r["ruleId"] == "KG303")
    assert kg303["locations"][0]["physicalLocation"]["region"]["startLine"] == 32
    assert kg303["properties"]["helmTemplate"] == "gpu-train/templates/job.yaml"
    # The subchart's container is inside the define its pod template is included from: exact.
    approximate = [r for r in results if r["properties"].get("lineApproximate")]
    assert approximate == []
    assert "examples/helm/gpu-train/charts/inference/templates/_helpers.tpl" in {
        r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in results}


def test_helm_command_writes_sarif_on_the_templates(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    helm = bin_dir / "helm"
    standin = REPO / "tests" / "helm_standin" / "helm.py"
    helm.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{standin}" "$@"\n')
    helm.chmod(0o755)
    env = {"PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
           "HELM_STANDIN_LOG": str(tmp_path / "calls.jsonl")}
    proc = run_cli("helm", "examples/helm/gpu-train", "--release", "demo", "--namespace", "ml",
                   "--format", "sarif", "--sarif-category", "charts/gpu-train", "--select", "KG201,KG303,KG501",
                   env=env)
    assert proc.returncode == 1, proc.stderr.decode()
    log = json.loads(proc.stdout)
    run = log["runs"][0]
    assert run["automationDetails"] == {"id": "charts/gpu-train/"}
    results = run["results"]
    assert len(results) == 5  # the preflight hook's nvidia-smi is diagnostic: no KG201 there
    for result in results:
        assert result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].startswith(
            "examples/helm/gpu-train/")
        assert "relatedLocations" not in result  # the rendered output is not a file
        assert result["properties"]["renderedLocation"]["path"] == "<helm template examples/helm/gpu-train>"
    if SCHEMA.is_file():
        assert schema_problems(log) == [] and github_problems(log) == []


def test_same_input_same_bytes() -> None:
    first = run_cli("--format", "sarif", "examples")
    second = run_cli_subprocess("--format", "sarif", "examples", env={"PYTHONHASHSEED": "99"})
    assert first.stdout and first.stdout == second.stdout


@needs_schema
def test_examples_sarif_passes_schema_and_github_rules() -> None:
    log, _ = sarif_of("examples")
    assert schema_problems(log) == []
    assert github_problems(log) == []
    assert len(log["runs"][0]["results"]) >= 30


@needs_schema
@needs_corpus
def test_corpus_sarif_passes_schema_and_github_rules(tmp_path: Path) -> None:
    log, proc = sarif_of("--sarif-root", str(SHARED), str(CORPUS))
    assert b"Traceback" not in proc.stderr
    results = log["runs"][0]["results"]
    assert len(results) > 100
    assert all(r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].startswith("corpus/")
               for r in results)
    assert schema_problems(log) == []
    assert github_problems(log) == []
    _assert_fingerprints_unique(log)


def test_validators_catch_what_they_should() -> None:
    """Negative controls: a broken log must fail the checks these tests rely on."""
    log, _ = sarif_of(str(GPU_JOB.relative_to(REPO)), "--select", "KG201")
    broken = json.loads(json.dumps(log))
    result = broken["runs"][0]["results"][0]
    result["level"] = "critical"
    result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] = "../x.yaml"
    broken["runs"][0]["tool"]["driver"]["rules"][0]["properties"]["security-severity"] = "high"
    del result["partialFingerprints"]
    problems = " ".join(github_problems(broken))
    for text in ("level 'critical'", "not repository-relative", "security-severity", "partialFingerprints"):
        assert text in problems
    if SCHEMA.is_file():
        assert any("critical" in p for p in schema_problems(broken))


def _multitool() -> Path:
    binary = multitool_binary() or install_multitool()
    if binary is None:
        pytest.skip("npm not found: cannot install @microsoft/sarif-multitool (scripts/test.sh installs it)")
    return binary


@pytest.mark.slow
def test_multitool_accepts_the_examples_and_the_corpus(tmp_path: Path) -> None:
    binary = _multitool()
    files = []
    examples = tmp_path / "examples.sarif"
    examples.write_bytes(run_cli("--format", "sarif", "examples").stdout)
    files.append(examples)
    files.append(GOLDEN / "helm-gpu-train.sarif")  # related locations: the rendered output
    if CORPUS.is_dir():
        corpus = tmp_path / "corpus.sarif"
        corpus.write_bytes(run_cli("--format", "sarif", "--sarif-root", str(SHARED), str(CORPUS)).stdout)
        files.append(corpus)
    else:
        print(f"shared corpus not found at {CORPUS}: multitool checked the examples only")
    for path in files:
        assert multitool_problems(binary, path, tmp_path) == [], path.name


@pytest.mark.slow
def test_multitool_reports_github_errors_on_a_broken_log(tmp_path: Path) -> None:
    """The multitool exits 0 even on errors: prove that its output file is read."""
    binary = _multitool()
    log, _ = sarif_of("examples")
    results = log["runs"][0]["results"]
    results[0]["locations"][0]["physicalLocation"]["artifactLocation"] = {"uri": "file:///abs/job.yaml"}
    del results[1]["locations"]
    path = tmp_path / "broken.sarif"
    path.write_text(json.dumps(log))
    found = {(r["ruleId"], r["level"]) for r in multitool_results(binary, path, tmp_path)}
    assert ("GH1006", "error") in found  # absolute file: URI (enabled by tools/sarif-multitool's config)
    assert ("GH1015", "error") in found  # a result without locations


def test_driver_rules_help_and_properties() -> None:
    log, _ = sarif_of(str(GPU_JOB.relative_to(REPO)))
    driver = log["runs"][0]["tool"]["driver"]
    from kubegap_lint import __version__
    from kubegap_lint.catalog.policies import load_catalog

    catalog = load_catalog()
    enabled = [p for p in catalog.policies if p.enabled]
    assert (driver["name"], driver["version"], driver["semanticVersion"]) == ("kubegap-lint", __version__, __version__)
    assert driver["informationUri"].startswith("https://")
    assert [r["id"] for r in driver["rules"]] == [p.id for p in enabled]
    rules = {r["id"]: r for r in driver["rules"]}
    kg201, kg501 = rules["KG201"], rules["KG501"]
    assert kg201["name"] == "training-checkpoint-volume"
    assert kg201["defaultConfiguration"] == {"level": "error"}
    assert kg501["defaultConfiguration"] == {"level": "warning"}  # equal to the schema default: kept
    # Resilience findings are not security alerts: no security-severity, GitHub ranks them by
    # problem.severity. Only the rules tagged security (KG004, KG007: hostile input) carry one.
    assert "security-severity" not in kg201["properties"] and "security-severity" not in kg501["properties"]
    assert (kg201["properties"]["problem.severity"], kg501["properties"]["problem.severity"]) == ("error", "warning")
    secured = {r["id"]: r["properties"]["security-severity"] for r in driver["rules"]
               if "security-severity" in r["properties"]}
    assert secured == {"KG004": "7.5", "KG007": "7.5"}  # both errors
    assert all(("security" in r["properties"]["tags"]) == (r["id"] in secured) for r in driver["rules"])
    assert kg201["properties"]["precision"] == "medium"
    assert kg201["properties"]["tags"] == ["checkpoint", "storage", "gpu", "training"]
    assert "466" in kg201["fullDescription"]["text"]
    markdown, text = kg201["help"]["markdown"], kg201["help"]["text"]
    assert "persistentVolumeClaim:" in markdown and "```yaml" in markdown  # the fix
    assert "[Llama 3 405B pre-training: 466 interruptions in 54 days](https://arxiv.org/abs/2407.21783)" in markdown
    assert "https://arxiv.org/abs/2407.21783" in text and "Evidence:" in text
    assert kg201["helpUri"].endswith("/docs/rules.md#kg201-training-checkpoint-volume")


def _github_anchor(heading: str) -> str:
    """GitHub's heading anchor: lower case, punctuation other than - and _ dropped, spaces to -."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_help_uris_point_at_sections_of_docs_rules_md() -> None:
    from kubegap_lint.report.sarif import rules_doc_url

    anchors = {_github_anchor(line.lstrip("#")) for line in (REPO / "docs" / "rules.md").read_text().splitlines()
               if line.startswith("#")}
    log, _ = sarif_of("examples")
    run = log["runs"][0]
    uris = [r["helpUri"] for r in run["tool"]["driver"]["rules"]]
    uris += [t["helpUri"] for t in run["taxonomies"][0]["taxa"]] + [run["taxonomies"][0]["informationUri"]]
    for uri in uris:
        base, _, fragment = uri.partition("#")
        assert base == rules_doc_url()
        assert fragment in anchors, uri


def test_incident_taxonomy_and_rule_relationships() -> None:
    log, _ = sarif_of("examples")
    run = log["runs"][0]
    taxonomy = run["taxonomies"][0]
    assert run["tool"]["driver"]["supportedTaxonomies"] == [{"name": taxonomy["name"], "index": 0}]
    taxa = taxonomy["taxa"]
    assert [t["id"] for t in taxa] == sorted(t["id"] for t in taxa)
    from kubegap_lint.catalog.policies import load_catalog

    catalog = load_catalog()
    for rule in run["tool"]["driver"]["rules"]:
        policy = catalog.find(rule["id"])
        targets = [rel["target"] for rel in rule.get("relationships", [])]
        assert [t["id"] for t in targets] == list(policy.evidence)
        for target in targets:
            assert taxa[target["index"]]["id"] == target["id"]
            assert target["toolComponent"] == {"name": taxonomy["name"], "index": 0}
    llama = next(t for t in taxa if t["id"] == "meta-llama3-405b-54d")
    assert llama["properties"]["urls"] == ["https://arxiv.org/abs/2407.21783"]
    assert llama["shortDescription"]["text"] == catalog.incidents["meta-llama3-405b-54d"].title


def test_one_result_as_github_reads_it() -> None:
    log, _ = sarif_of(str(GPU_JOB.relative_to(REPO)), "--select", "KG201")
    (result,) = log["runs"][0]["results"]
    assert result["ruleId"] == "KG201" and result["ruleIndex"] == 0 and result["level"] == "error"
    assert result["message"]["text"].startswith("Job finetune: pods (1 GPU each) mount no persistent volume")
    (location,) = result["locations"]
    physical = location["physicalLocation"]
    assert physical["artifactLocation"] == {
        "uri": "examples/KG201-training-checkpoint-volume/bad-job-no-volumes.yaml", "uriBaseId": "%SRCROOT%"}
    line = GPU_JOB.read_text().splitlines()[8]
    assert line == "    spec:"
    assert physical["region"] == {"startLine": 9, "startColumn": 5, "endLine": 9, "endColumn": 10}
    assert [e["id"] for e in result["properties"]["evidence"]] == [
        "meta-llama3-405b-54d", "meta-opt175b-logbook", "bigscience-bloom-176b"]
    assert result["properties"]["resource"] == {"apiVersion": "batch/v1", "kind": "Job", "name": "finetune"}
    assert set(result["partialFingerprints"]) == {"kubegapFingerprint/v1", "primaryLocationLineHash"}
    assert "suppressions" not in result and "relatedLocations" not in result
    invocation = log["runs"][0]["invocations"][0]
    assert invocation == {"executionSuccessful": True}


def _fingerprints(log: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [(r["partialFingerprints"]["kubegapFingerprint/v1"], r["ruleId"],
             r["partialFingerprints"].get("primaryLocationLineHash", "")) for r in log["runs"][0]["results"]]


def _assert_fingerprints_unique(log: dict[str, Any]) -> None:
    results = log["runs"][0]["results"]
    ours = [r["partialFingerprints"]["kubegapFingerprint/v1"] for r in results]
    assert len(set(ours)) == len(ours), "two findings share a kubegapFingerprint/v1"
    # GitHub folds results with the same rule, file and line hash into one alert. The hash tells
    # lines apart (even identical ones, by its :n count), so only findings of one rule on one line
    # share an alert (docs/sarif.md).
    def place(r: dict[str, Any]) -> tuple[str, str]:
        physical = r["locations"][0]["physicalLocation"]
        return r["ruleId"], physical["artifactLocation"]["uri"]
    github_keys = {(*place(r), r["partialFingerprints"].get("primaryLocationLineHash")) for r in results}
    lines = {(*place(r), r["locations"][0]["physicalLocation"]["region"]["startLine"]) for r in results}
    assert len(github_keys) == len(lines), "findings on different lines would become one GitHub alert"


def test_fingerprints_survive_lines_inserted_above(tmp_path: Path) -> None:
    original = (EXAMPLES / "KG201-training-checkpoint-volume" / "bad-pytorchjob-emptydir.yaml").read_text()
    path = tmp_path / "job.yaml"
    path.write_text(original)
    before, _ = sarif_of("--sarif-root", str(tmp_path), str(path))
    path.write_text("# a comment\n\n# and another, then a document marker\n---\n" + original)
    after, _ = sarif_of("--sarif-root", str(tmp_path), str(path))
    assert len(_fingerprints(before)) >= 3
    assert _fingerprints(after) == _fingerprints(before)
    lines = [r["locations"][0]["physicalLocation"]["region"]["startLine"] for r in before["runs"][0]["results"]]
    moved = [r["locations"][0]["physicalLocation"]["region"]["startLine"] for r in after["runs"][0]["results"]]
    assert moved == [line + 4 for line in lines]


def test_two_different_findings_never_share_a_fingerprint(tmp_path: Path) -> None:
    log, _ = sarif_of("examples")
    _assert_fingerprints_unique(log)
    # The same resource in two files, and two resources that differ only in namespace.
    text = GPU_JOB.read_text()
    (tmp_path / "a.yaml").write_text(text)
    (tmp_path / "b.yaml").write_text(text)
    (tmp_path / "c.yaml").write_text(text + "---\n" + text.replace("name: finetune", "name: finetune\n  namespace: ml"))
    log, _ = sarif_of("--select", "KG201,KG501", "--sarif-root", str(tmp_path), str(tmp_path))
    assert len(log["runs"][0]["results"]) == 8  # four resources, two rules
    _assert_fingerprints_unique(log)


def test_a_clean_run_still_has_an_empty_results_array(tmp_path: Path) -> None:
    clean = b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: clean\n"
    log, proc = sarif_of("-", stdin=clean)
    assert proc.returncode == 0
    assert log["runs"][0]["results"] == []
    assert log["runs"][0]["invocations"] == [{"executionSuccessful": True}]
    if SCHEMA.is_file():
        assert schema_problems(log) == []


def test_file_outside_the_sarif_root_is_one_line_and_exit_2(tmp_path: Path) -> None:
    outside = tmp_path / "job.yaml"
    outside.write_text(GPU_JOB.read_text())
    proc = run_cli("--format", "sarif", "--sarif-root", str(REPO), str(outside))
    assert proc.returncode == 2
    lines = proc.stderr.decode().splitlines()
    assert len(lines) == 1 and "outside the SARIF root" in lines[0] and str(outside) in lines[0]
    assert proc.stdout == b""


def test_stdin_is_never_refused_its_findings_have_no_location() -> None:
    log, proc = sarif_of("-", "--select", "KG201", stdin=GPU_JOB.read_bytes())
    assert proc.returncode == 1, proc.stderr
    results = log["runs"][0]["results"]
    assert [r["ruleId"] for r in results] == ["KG201"]
    assert "locations" not in results[0]
    assert results[0]["properties"]["unplacedLocation"]["path"] == "<stdin>"
    assert proc.stderr.decode() == (
        "kubegap-lint: 1 result(s) have no file in the repository (piped input): written without a"
        " location; name the input with --stdin-filename NAME, or lint a file\n")
    if SCHEMA.is_file():
        assert schema_problems(log) == []


def test_stdin_filename_names_piped_input() -> None:
    name = str(GPU_JOB.relative_to(REPO))
    log, proc = sarif_of("--stdin-filename", name, "-", "--select", "KG201", stdin=GPU_JOB.read_bytes())
    assert proc.returncode == 1 and proc.stderr == b""
    [result] = log["runs"][0]["results"]
    assert result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == name
    proc = run_cli("--stdin-filename", "piped/job.yaml", "-", "--select", "KG201", stdin=GPU_JOB.read_bytes())
    assert proc.stdout.decode().startswith("piped/job.yaml:")


def test_every_helm_run_writes_sarif(tmp_path: Path) -> None:
    """In-process (the Helm engine): the rendered place is related when kept in the repository;
    a duplicate key (an input fault, no template line) points at its template, approximate."""
    pytest.importorskip("helm_python", reason="the Helm engine is not installed (pip install -e '.[helm]')")
    chart = tmp_path / "chart"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: dup\nversion: 0.1.0\n")
    (chart / "templates" / "job.yaml").write_text(
        GPU_JOB.read_text().replace("metadata:\n", "metadata:\n  labels: {a: b}\n  labels: {c: d}\n", 1))
    kept = tmp_path / "rendered"
    proc = run_cli("helm", "chart", "--format", "sarif", "--keep-rendered", "rendered", "--sarif-root", ".",
                   "--select", "KG002,KG201", cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    log = json.loads(proc.stdout)
    found = {r["ruleId"]: r for r in log["runs"][0]["results"]}
    assert set(found) == {"KG002", "KG201"}

    def uri(result: dict[str, Any]) -> str:
        return result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]

    assert uri(found["KG201"]) == "chart/templates/job.yaml"
    assert found["KG201"]["relatedLocations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "rendered/chart.yaml"
    assert uri(found["KG002"]) == "rendered/chart.yaml"  # about the rendered text: it stays there
    assert (kept / "chart.yaml").is_file()
    if SCHEMA.is_file():
        assert schema_problems(log) == [] and github_problems(log) == []
    # Not kept: the input fault points at the template its `# Source:` names, approximate.
    proc = run_cli("helm", "chart", "--format", "sarif", "--sarif-root", ".", "--select", "KG002,KG201", cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    log = json.loads(proc.stdout)
    found = {r["ruleId"]: r for r in log["runs"][0]["results"]}
    assert uri(found["KG002"]) == uri(found["KG201"]) == "chart/templates/job.yaml"
    assert found["KG002"]["properties"]["lineApproximate"] is True
    assert found["KG002"]["properties"]["renderedLocation"]["path"] == "<helm template chart>"
    if SCHEMA.is_file():
        assert schema_problems(log) == [] and github_problems(log) == []


def test_default_root_is_the_git_top_level(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "k8s" / "jobs").mkdir(parents=True)
    (tmp_path / "k8s" / "jobs" / "job.yaml").write_text(GPU_JOB.read_text())
    log, _ = sarif_of("job.yaml", "--select", "KG201", cwd=tmp_path / "k8s" / "jobs")
    uri = log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert uri == "k8s/jobs/job.yaml"


def test_uris_are_percent_encoded_and_symlinks_resolved(tmp_path: Path) -> None:
    (tmp_path / "real dir").mkdir()
    target = tmp_path / "real dir" / "job #1.yaml"
    target.write_text(GPU_JOB.read_text())
    (tmp_path / "link.yaml").symlink_to(target)
    log, _ = sarif_of("--sarif-root", str(tmp_path), "--select", "KG201", str(tmp_path / "link.yaml"))
    uri = log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert uri == "real%20dir/job%20%231.yaml"


def test_input_errors_become_notifications_and_execution_fails(tmp_path: Path) -> None:
    out = tmp_path / "out.sarif"
    proc = run_cli("--format", "sarif", "--output", str(out), "--select", "KG201",
                   str(GPU_JOB.relative_to(REPO)), "no/such/file.yaml")
    assert proc.returncode == 2
    # The input error, then the summary (with --output it goes to stderr).
    assert proc.stderr.decode().splitlines() == [
        "kubegap-lint: no/such/file.yaml: no such file or folder",
        "1 file, 1 document (0 empty, 0 not Kubernetes), 1 resource, 1 workload: 1 error, 0 warnings,"
        f" 0 notes; 1 input error; report written to {out}"]
    log = json.loads(out.read_text())
    invocation = log["runs"][0]["invocations"][0]
    assert invocation["executionSuccessful"] is False
    (notification,) = invocation["toolExecutionNotifications"]
    assert notification["level"] == "error"
    assert notification["message"]["text"] == "no/such/file.yaml: no such file or folder"
    assert len(log["runs"][0]["results"]) == 1  # the readable file was still linted
    if SCHEMA.is_file():
        assert schema_problems(log) == []


def test_sarif_category_sets_the_automation_id() -> None:
    log, _ = sarif_of("--sarif-category", "gpu-manifests", str(GPU_JOB.relative_to(REPO)))
    assert log["runs"][0]["automationDetails"] == {"id": "gpu-manifests/"}
    log, _ = sarif_of("--sarif-category", "team/gpu/", str(GPU_JOB.relative_to(REPO)))
    assert log["runs"][0]["automationDetails"] == {"id": "team/gpu/"}
    log, _ = sarif_of(str(GPU_JOB.relative_to(REPO)))
    assert "automationDetails" not in log["runs"][0]
    proc = run_cli("--format", "sarif", "--sarif-category", " ", str(GPU_JOB.relative_to(REPO)))
    assert proc.returncode == 2 and b"--sarif-category" in proc.stderr


# In-process tests for what the pipeline does not produce yet (suppressions, Helm mapping) and for
# limits that would need 25,000 findings.

def _result(linter_factory: Any, *paths: Path, select: tuple[str, ...] = ("KG201", "KG501")) -> Any:
    return linter_factory(select).lint_paths([str(p) for p in paths])


def _render(result: Any, root: Path = REPO, **kwargs: Any) -> dict[str, Any]:
    from kubegap_lint.report.sarif import render_sarif

    return json.loads(render_sarif(result, root, cwd=str(REPO), **kwargs).text)


def test_suppressed_findings_stay_with_their_justification(linter_factory: Any) -> None:
    from kubegap_lint.core.model import Suppression

    result = _result(linter_factory, GPU_JOB)
    suppressed = replace(result.findings[0], suppression=Suppression(
        "annotation", "checkpoints go to the team's S3 bucket via the sidecar", "kubegap.io/ignore"))
    result.findings = [suppressed, *result.findings[1:]]
    log = _render(result)
    results = log["runs"][0]["results"]
    assert len(results) == len(result.findings)
    assert results[0]["suppressions"] == [{
        "kind": "inSource", "status": "accepted",
        "justification": "checkpoints go to the team's S3 bucket via the sidecar",
        "properties": {"kubegapKind": "annotation", "source": "kubegap.io/ignore"}}]
    assert "suppressions" not in results[1]
    result.findings = [replace(suppressed, suppression=Suppression("baseline", "accepted in review")),
                       *result.findings[1:]]
    assert _render(result)["runs"][0]["results"][0]["suppressions"][0]["kind"] == "external"
    if SCHEMA.is_file():
        assert schema_problems(log) == [] and github_problems(log) == []


def test_rendered_output_location_is_a_related_location(linter_factory: Any, tmp_path: Path) -> None:
    from kubegap_lint.core.model import Location

    result = _result(linter_factory, GPU_JOB)
    template = "examples/KG501-gpu-shm-default/bad-training-no-shm.yaml"  # stands in for a chart template
    finding, *others = result.findings
    moved = replace(finding, location=Location(template, 7, 5), rendered_location=finding.location,
                                template="chart/templates/job.yaml")
    result.findings = [moved, *others]

    def mapped_result(log: dict[str, Any]) -> dict[str, Any]:
        (found,) = [r for r in log["runs"][0]["results"] if r["properties"].get("helmTemplate")]
        return found

    log = _render(result)
    mapped = mapped_result(log)
    assert mapped["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == template
    (related,) = mapped["relatedLocations"]
    assert related["id"] == 1
    assert related["physicalLocation"]["artifactLocation"]["uri"] == str(GPU_JOB.relative_to(REPO))
    assert related["physicalLocation"]["region"]["startLine"] == finding.location.line
    assert f"[{GPU_JOB.relative_to(REPO)}:{finding.location.line}](1)" in mapped["message"]["text"]
    assert mapped["properties"]["helmTemplate"] == "chart/templates/job.yaml"
    if SCHEMA.is_file():
        assert schema_problems(log) == [] and github_problems(log) == []
    # Rendered output read from stdin has no file: the place is kept in the properties.
    result.findings = [replace(moved, rendered_location=Location("<stdin>", 40, 3)), *others]
    mapped = mapped_result(_render(result))
    assert "relatedLocations" not in mapped
    assert mapped["properties"]["renderedLocation"] == {"path": "<stdin>", "line": 40, "column": 3}


def test_results_beyond_the_limit_keep_the_most_severe(linter_factory: Any) -> None:
    from kubegap_lint.report.sarif import render_sarif
    from kubegap_lint.report.sarif_limits import Limits

    result = _result(linter_factory, *sorted((EXAMPLES / "KG501-gpu-shm-default").glob("*.yaml")), GPU_JOB)
    levels = [f.severity.value for f in result.findings]
    errors = levels.count("error")  # the examples' errors, as many as they hold
    assert errors >= 1 and levels.count("warning") >= 3
    limit = errors + 1  # every error and one warning
    report = render_sarif(result, REPO, cwd=str(REPO), limits=Limits(max_results=limit))
    log = json.loads(report.text)
    kept = log["runs"][0]["results"]
    assert [r["level"] for r in kept].count("error") == errors and len(kept) == limit
    assert [r["locations"][0]["physicalLocation"]["region"]["startLine"] for r in kept] != []
    assert report.warnings == [f"GitHub code scanning accepts at most {limit} results a run: the SARIF keeps the"
                               f" {limit} most severe of {len(levels)} findings"]
    notes = log["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    assert [(n["level"], n["message"]["text"]) for n in notes] == [("warning", report.warnings[0])]
    assert log["runs"][0]["invocations"][0]["executionSuccessful"] is True


def test_a_log_too_large_once_gzipped_is_cut(linter_factory: Any) -> None:
    from kubegap_lint.report.sarif import render_sarif
    from kubegap_lint.report.sarif_limits import Limits, gzip_size

    result = _result(linter_factory, *sorted(EXAMPLES.glob("KG*/*.yaml")))
    full = render_sarif(result, REPO, cwd=str(REPO)).text
    limit = gzip_size(full) - 500
    report = render_sarif(result, REPO, cwd=str(REPO), limits=Limits(max_gzip_bytes=limit))
    assert gzip_size(report.text) <= limit
    kept = json.loads(report.text)["runs"][0]["results"]
    assert 0 < len(kept) < len(result.findings)
    assert "MB of gzipped SARIF" in report.warnings[0]


def test_cli_says_on_stderr_when_results_are_cut(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from click.testing import CliRunner

    from kubegap_lint.cli.main import cli
    from kubegap_lint.report import sarif_limits

    monkeypatch.setattr(sarif_limits, "GITHUB_LIMITS", sarif_limits.Limits(max_results=1))
    monkeypatch.chdir(REPO)
    out = tmp_path / "out.sarif"
    runner = CliRunner()
    proc = runner.invoke(cli, ["lint", "--format", "sarif", "--output", str(out), "--select", "KG201,KG501",
                               str(GPU_JOB.relative_to(REPO))])
    assert proc.exit_code == 1
    assert "kubegap-lint: GitHub code scanning accepts at most 1 results a run" in proc.output
    assert len(json.loads(out.read_text())["runs"][0]["results"]) == 1


def test_descriptions_are_clipped_to_githubs_limit() -> None:
    from kubegap_lint.report.sarif import _clip

    sentence = "A checkpoint that dies with the pod restarts training from the beginning. "
    clipped = _clip(sentence * 30)
    assert len(clipped) <= 1024 and clipped.endswith("beginning.")
    assert _clip("x" * 2000) == "x" * 1023 + "\u2026"
    assert _clip("short  text\n") == "short text"


def test_limits_are_githubs() -> None:
    from kubegap_lint.report.sarif_limits import GITHUB_LIMITS

    assert GITHUB_LIMITS.max_results == 25_000
    assert GITHUB_LIMITS.max_locations == 1_000
    assert GITHUB_LIMITS.max_gzip_bytes == 10_000_000


def test_sarif_does_not_write_the_linted_files(tmp_path: Path) -> None:
    path = tmp_path / "job.yaml"
    path.write_text(GPU_JOB.read_text())
    os.chmod(path, 0o444)
    before = (path.read_bytes(), path.stat().st_mtime_ns)
    sarif_of("--sarif-root", str(tmp_path), str(path))
    assert (path.read_bytes(), path.stat().st_mtime_ns) == before


def test_a_users_own_policy_has_no_help_uri_into_our_docs(tmp_path: Path) -> None:
    from kubegap_lint.config.settings import Settings
    from kubegap_lint.engine.run import Linter

    text = (REPO / "policies" / "KG501-gpu-shm-default.yaml").read_text()
    (tmp_path / "KG901-team-shm.yaml").write_text(text.replace("id: KG501", "id: KG901")
                                                  .replace("name: gpu-shm-default", "name: team-shm"))
    result = Linter(Settings(select=["KG901"], policy_dirs=[tmp_path])).lint_paths([str(GPU_JOB)])
    log = _render(result)
    (rule,) = log["runs"][0]["tool"]["driver"]["rules"]
    assert rule["id"] == "KG901" and "helpUri" not in rule and "Reference:" not in rule["help"]["text"]
    assert [r["ruleId"] for r in log["runs"][0]["results"]] == ["KG901"]
    if SCHEMA.is_file():
        assert schema_problems(log) == []


def test_a_finding_of_a_rule_outside_the_selection_still_resolves(linter_factory: Any) -> None:
    result = _result(linter_factory, GPU_JOB, select=("KG201",))
    other = replace(result.findings[0], rule_id="KG501", rule_name="gpu-shm-default")
    result.findings = [*result.findings, other]
    log = _render(result)
    assert [r["id"] for r in log["runs"][0]["tool"]["driver"]["rules"]] == ["KG201", "KG501"]
    assert [(r["ruleId"], r["ruleIndex"]) for r in log["runs"][0]["results"]] == [("KG201", 0), ("KG501", 1)]


def test_real_suppressions_carry_their_reason() -> None:
    """Annotation and inline suppressions from the suppression stage, end to end."""
    path = "examples/KG005-unused-suppression/good-used-ignores.yaml"
    log, proc = sarif_of("--select", "KG201,KG303,KG501", path)
    assert proc.returncode == 0  # each of these findings is suppressed
    suppressed = {(r["ruleId"], s["properties"]["kubegapKind"], s["justification"])
                  for r in log["runs"][0]["results"] for s in r.get("suppressions", [])}
    assert ("KG201", "inline", "the smoke test writes no checkpoint") in suppressed
    assert ("KG303", "annotation", "two-pod smoke test of the image; a hang fails CI by timeout") in suppressed
    assert len(log["runs"][0]["results"]) == 3 and all(r.get("suppressions") for r in log["runs"][0]["results"])
