"""CI report formats: GitLab Code Quality JSON and JUnit XML, and several reports from one lint
(`--format sarif:FILE --format text`)."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from conftest import EXAMPLES, REPO, run_cli

GPU_JOB = EXAMPLES / "KG201-training-checkpoint-volume" / "bad-job-no-volumes.yaml"
SCHEMAS = Path(__file__).resolve().parent / "ci_schemas"


def _gitlab(*args: str, cwd: Path = REPO) -> tuple[int, list[dict]]:
    proc = run_cli("--format", "gitlab", *args, cwd=cwd)
    return proc.returncode, json.loads(proc.stdout)


def _validate_gitlab(report: list[dict]) -> None:
    """Against GitLab's own schema of one issue (each, as its parser does) and the schema written
    from GitLab's documentation (the whole report)."""
    issue_schema = json.loads((SCHEMAS / "gitlab-codeclimate.json").read_text())
    for issue in report:
        jsonschema.validate(issue, issue_schema)
    jsonschema.validate(report, json.loads((SCHEMAS / "codequality-report.schema.json").read_text()))
    fingerprints = [issue["fingerprint"] for issue in report]
    assert len(set(fingerprints)) == len(fingerprints)  # GitLab shows one issue per fingerprint


def test_gitlab_issue_of_a_finding() -> None:
    code, report = _gitlab("--select", "KG201,KG501", str(GPU_JOB.relative_to(REPO)))
    assert code == 1
    _validate_gitlab(report)
    assert [(i["check_name"], i["severity"], i["location"]) for i in report] == [
        ("KG201", "critical", {"path": "examples/KG201-training-checkpoint-volume/bad-job-no-volumes.yaml",
                               "lines": {"begin": 9}}),
        ("KG501", "major", {"path": "examples/KG201-training-checkpoint-volume/bad-job-no-volumes.yaml",
                            "lines": {"begin": 12}}),
    ]
    assert report[0]["description"] == (
        "KG201 training-checkpoint-volume: Job finetune: pods (1 GPU each) mount no persistent volume and"
        " name no object store: checkpoints written there die with the pod, and a restart starts training over")
    # The file named another way (absolute, from another folder): the same fingerprints.
    _, again = _gitlab("--select", "KG201,KG501", str(GPU_JOB), cwd=GPU_JOB.parent)
    assert [i["fingerprint"] for i in again] == [i["fingerprint"] for i in report]


def test_gitlab_on_every_example_validates() -> None:
    code, report = _gitlab("examples")
    assert code == 1
    _validate_gitlab(report)
    json_report = json.loads(run_cli("--format", "json", "examples").stdout)
    counted = [f for f in json_report["findings"] if f["suppressed"] is None]
    assert [(i["check_name"], i["location"]["path"], i["location"]["lines"]["begin"]) for i in report] == [
        (f["rule"], f["location"]["path"], f["location"]["line"]) for f in counted]


def test_gitlab_fingerprints_stay_unique_for_a_repeated_resource(tmp_path: Path) -> None:
    text = GPU_JOB.read_text()
    path = tmp_path / "twice.yaml"
    path.write_text(text + "\n---\n" + text)
    code, report = _gitlab("--select", "KG201", "--sarif-root", str(tmp_path), str(path))
    assert code == 1
    _validate_gitlab(report)
    assert [(i["location"]["path"], i["location"]["lines"]["begin"]) for i in report] == [
        ("twice.yaml", 9), ("twice.yaml", 27)]


def test_gitlab_input_not_linted_is_a_blocker() -> None:
    code, report = _gitlab("--select", "KG201", "examples/KG201-training-checkpoint-volume/bad-job-no-volumes.yaml",
                           "no/such/file.yaml")
    assert code == 2
    _validate_gitlab(report)
    assert report[-1]["check_name"] == "kubegap-lint/input-error"
    assert report[-1]["severity"] == "blocker"
    assert report[-1]["location"] == {"path": "no/such/file.yaml", "lines": {"begin": 1}}
    assert report[-1]["description"] == "input not linted: no such file or folder"


def test_gitlab_empty_report_is_an_empty_array() -> None:
    proc = run_cli("--format", "gitlab", "--select", "KG201",
                   "examples/KG201-training-checkpoint-volume/good-elasticjob-pvc.yaml")
    assert proc.returncode == 0
    assert proc.stdout == b"[]\n"


def _junit(*args: str) -> tuple[int, object]:
    from junitparser import JUnitXml

    proc = run_cli("--format", "junit", *args)
    return proc.returncode, JUnitXml.fromstring(proc.stdout.decode())


def test_junit_one_case_per_workload_and_rule() -> None:
    code, xml = _junit("--select", "KG201,KG501", str(GPU_JOB.relative_to(REPO)))
    assert code == 1
    suites = list(xml)
    assert len(suites) == 1
    cases = list(suites[0])
    where = "examples/KG201-training-checkpoint-volume/bad-job-no-volumes.yaml Job finetune"
    assert [(c.classname, c.name) for c in cases] == [
        (where, "KG201 training-checkpoint-volume"), (where, "KG501 gpu-shm-default")]
    failures = [[(r.type, r.message) for r in c.result] for c in cases]
    assert failures[0] == [("KG201", "pods (1 GPU each) mount no persistent volume and name no object store:"
                            " checkpoints written there die with the pod, and a restart starts training over")]
    assert failures[1][0][0] == "KG501"
    assert suites[0].tests == 2 and suites[0].failures == 2 and suites[0].errors == 0


def test_junit_clean_workloads_pass_and_inputs_not_linted_are_errors() -> None:
    from junitparser import Error

    code, xml = _junit("--select", "KG201", "examples/KG201-training-checkpoint-volume/good-elasticjob-pvc.yaml",
                       "no/such/file.yaml")
    assert code == 2
    cases = [c for suite in xml for c in suite]
    assert [(c.name, c.is_passed) for c in cases] == [("KG201 training-checkpoint-volume", True),
                                                       ("input not linted", False)]
    assert isinstance(cases[1].result[0], Error)
    assert cases[1].result[0].message == "no such file or folder"
    suite = list(xml)[0]
    assert (suite.tests, suite.failures, suite.errors) == (2, 0, 1)


def test_junit_on_every_example_counts_the_json_findings() -> None:
    code, xml = _junit("examples")
    assert code == 1
    json_report = json.loads(run_cli("--format", "json", "examples").stdout)
    failed = {(f["rule"], f["location"]["path"]) for f in json_report["findings"] if f["suppressed"] is None}
    cases = [c for suite in xml for c in suite if not c.is_passed and not c.is_skipped]
    reported = set()
    for case in cases:
        for result in case.result:
            for line in result.text.splitlines():
                reported.add((result.type, line.split(":", 1)[0]))
    assert reported == failed


def test_two_formats_from_one_run_equal_the_single_runs(tmp_path: Path) -> None:
    args = ("--select", "KG201,KG501", "--no-color", "examples/KG201-training-checkpoint-volume")
    sarif_file = tmp_path / "kubegap.sarif"
    both = run_cli("--format", f"sarif:{sarif_file}", "--format", "text", *args)
    sarif_alone = run_cli("--format", "sarif", *args)
    text_alone = run_cli("--format", "text", *args)
    assert both.returncode == sarif_alone.returncode == text_alone.returncode == 1
    assert both.stdout == text_alone.stdout
    assert sarif_file.read_bytes() == sarif_alone.stdout
    junit_file, json_file = tmp_path / "r.xml", tmp_path / "r.json"
    files = run_cli("--format", f"junit:{junit_file}", "--format", f"json:{json_file}", *args)
    assert files.stdout == b""
    assert junit_file.read_bytes() == run_cli("--format", "junit", *args).stdout
    assert json_file.read_bytes() == run_cli("--format", "json", *args).stdout
    assert f"reports written to {junit_file}, {json_file}" in files.stderr.decode()


@pytest.mark.parametrize("formats", [("text", "json"), ("json:a", "sarif:a")])
def test_two_reports_in_one_place_is_a_usage_error(formats: tuple[str, str], tmp_path: Path) -> None:
    args = [part for name in formats for part in ("--format", name)]
    proc = run_cli(*args, str(GPU_JOB), cwd=tmp_path)
    assert proc.returncode == 2
    assert "would both write to" in proc.stderr.decode()
    assert not (tmp_path / "a").exists()


def test_an_unknown_format_is_a_usage_error() -> None:
    proc = run_cli("--format", "xml:out.xml", str(GPU_JOB))
    assert proc.returncode == 2
    assert "'xml' is not one of" in proc.stderr.decode()
