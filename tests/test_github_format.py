"""`--format github`: workflow commands the Actions runner turns into annotations."""

from __future__ import annotations

from pathlib import Path

from conftest import EXAMPLES, REPO, run_cli

from kubegap_lint.report.github import command, escape_data, escape_property

GPU_JOB = EXAMPLES / "KG201-training-checkpoint-volume" / "bad-job-no-volumes.yaml"


def test_escaping_follows_the_runner() -> None:
    assert escape_data("50% done\r\nnext") == "50%25 done%0D%0Anext"
    assert escape_data("%0A") == "%250A"  # an escape in the input stays text
    assert escape_property("a:b,c%d\ne") == "a%3Ab%2Cc%25d%0Ae"
    assert escape_data("red \x1b[31m bell \x07") == "red \\x1b[31m bell \\x07"
    assert command("warning", "m", file="a,b.yaml", line=3, col=None) == "::warning file=a%2Cb.yaml,line=3::m"
    assert command("notice", "just text") == "::notice::just text"


def test_findings_become_annotations_with_file_line_column_and_title() -> None:
    proc = run_cli("--format", "github", "--select", "KG201,KG501", str(GPU_JOB.relative_to(REPO)))
    assert proc.returncode == 1
    lines = proc.stdout.decode().splitlines()
    assert lines[0] == (
        "::error file=examples/KG201-training-checkpoint-volume/bad-job-no-volumes.yaml,line=9,col=5,"
        "title=KG201 training-checkpoint-volume::Job finetune: pods (1 GPU each) mount no persistent volume"
        " and name no object store: checkpoints written there die with the pod, and a restart starts training over")
    assert lines[1].startswith("::warning file=examples/KG201-training-checkpoint-volume/bad-job-no-volumes.yaml,"
                               "line=12,col=11,title=KG501 gpu-shm-default::")
    assert lines[-1].startswith("1 file, 1 document")  # the summary, as plain log text


def test_a_manifest_cannot_inject_a_workflow_command(tmp_path: Path) -> None:
    text = GPU_JOB.read_text().replace("name: finetune", 'name: "x\\n::add-mask::secret\\r\\n::error::fake"')
    path = tmp_path / "evil.yaml"
    path.write_text(text)
    proc = run_cli("--format", "github", "--select", "KG201", str(path))
    lines = proc.stdout.decode().splitlines()
    assert len(lines) == 2
    assert lines[0].startswith("::error file=")
    assert "x%0A::add-mask::secret%0D%0A::error::fake" in lines[0]


def test_input_errors_are_error_commands() -> None:
    proc = run_cli("--format", "github", "no/such/file.yaml")
    assert proc.returncode == 2
    assert proc.stdout.decode().splitlines()[0] == (
        "::error file=no/such/file.yaml,title=kubegap-lint%3A input not linted::no such file or folder")


def test_suppressed_findings_are_not_annotated(linter_factory) -> None:
    from kubegap_lint.core.model import Suppression
    from kubegap_lint.core.record import replace
    from kubegap_lint.report.github import render_github
    from kubegap_lint.report.sarif_paths import UriMapper

    result = linter_factory(("KG201",)).lint_paths([str(GPU_JOB)])
    first, *others = result.findings
    result.findings = [replace(first, suppression=Suppression("inline", "reviewed")), *others]
    output = render_github(result, UriMapper(REPO, str(REPO)))
    assert "::error" not in output and "(1 suppressed)" in output
