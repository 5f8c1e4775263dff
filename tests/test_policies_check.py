"""`kubegap-lint policies check`: a user's policy folder is held to the built-in standard."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import EXAMPLES, run_cli

WORKED = EXAMPLES / "custom-policy" / "policies"
POLICY = "KG901-async-error-handling-not-3.yaml"
BAD = Path("examples") / "KG901-async-error-handling-not-3" / "bad-mode-1.yaml"


@pytest.fixture()
def folder(tmp_path: Path) -> Path:
    target = tmp_path / "policies"
    shutil.copytree(WORKED, target)
    return target


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new), encoding="utf-8")


def test_the_worked_example_passes() -> None:
    proc = run_cli("policies", "check", str(WORKED))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.decode().splitlines() == [
        "ok   KG901 async-error-handling-not-3: 1 bad, 1 good example(s)",
        "1 policy checked: all pass",
    ]


def test_a_wrong_expectation_fails_with_its_line(folder: Path) -> None:
    _edit(folder / BAD, "            # expect: KG901\n            - name: profiler",
          "            - name: profiler")
    proc = run_cli("policies", "check", str(folder))
    assert proc.returncode == 1
    out = proc.stdout.decode()
    assert "FAIL KG901 async-error-handling-not-3" in out
    assert ("bad-mode-1.yaml: line 22 column 15: unexpected KG901 finding (annotate it with"
            " `# expect: KG901` on the line before, `KG901@15` inside a line)") in out


def test_a_good_example_that_triggers_fails(folder: Path) -> None:
    good = folder / "examples" / "KG901-async-error-handling-not-3" / "good-mode-3.yaml"
    _edit(good, 'value: "3"', 'value: "1"')
    proc = run_cli("policies", "check", str(folder))
    assert proc.returncode == 1
    assert b"good-mode-3.yaml: line 18: unexpected KG901 finding" in proc.stdout


def test_missing_examples_fail(folder: Path) -> None:
    shutil.rmtree(folder / "examples")
    proc = run_cli("policies", "check", str(folder))
    assert proc.returncode == 1
    assert b"needs at least one bad-*.yaml and one good-*.yaml example" in proc.stdout


@pytest.mark.parametrize("old,new,message", [
    ("evidence: [pytorch-fr-asynceh1, torchtitan-forces-asynceh-3]", "evidence: [pytorch-fr-asynceh1, no-such-incident]",
     "evidence: unknown incident id(s) no-such-incident"),
    ("for_each: \"pods[?nccl_gpu].containers[] | [?gpus != `0`]\"", "for_each: \"pods[?nccl_gpu\"",
     "for_each: JMESPath does not compile"),
    ("violation: >-", "violation: >-\n  nccl_magic(env) ||", "unknown function(s) nccl_magic"),
    ("severity: warning", "severity: fatal", "severity:"),
    ("precision: high", "precision: high\nrun: rm -rf /", "Additional properties are not allowed ('run' was unexpected)"),
])
def test_broken_policies_exit_2_with_one_line_each(folder: Path, old: str, new: str, message: str) -> None:
    _edit(folder / POLICY, old, new)
    proc = run_cli("policies", "check", str(folder))
    assert proc.returncode == 2, proc.stdout
    text = (proc.stdout + proc.stderr).decode()
    assert message in text, text
    assert "Traceback" not in text


def test_user_incident_file_is_validated(folder: Path) -> None:
    _edit(folder / "incidents.yaml", "    organisation: PyTorch (torchtitan)\n", "")
    proc = run_cli("policies", "check", str(folder))
    assert proc.returncode == 2
    assert b"organisation" in proc.stdout


def test_a_folder_without_policies_or_a_clash_with_a_built_in(tmp_path: Path, folder: Path) -> None:
    proc = run_cli("policies", "check", str(tmp_path / "nothing"))
    assert proc.returncode == 2 and b"not a folder" in proc.stdout
    empty = tmp_path / "empty"
    empty.mkdir()
    proc = run_cli("policies", "check", str(empty))
    assert proc.returncode == 2 and b"no policy files" in proc.stdout
    (folder / POLICY).rename(folder / "KG201-async-error-handling-not-3.yaml")
    _edit(folder / "KG201-async-error-handling-not-3.yaml", "id: KG901", "id: KG201")
    proc = run_cli("policies", "check", str(folder))
    assert proc.returncode == 2 and b"'KG201' is already used by" in proc.stdout
