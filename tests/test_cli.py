"""The command line as a user meets it: formats, exit codes, stdin, errors without tracebacks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import EXAMPLES, REPO, run_cli, run_cli_subprocess

GPU_JOB = EXAMPLES / "KG201-training-checkpoint-volume" / "bad-job-no-volumes.yaml"
CLEAN = b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: clean\n"


def test_text_output_reads_like_a_compiler() -> None:
    proc = run_cli(str(GPU_JOB.relative_to(REPO)), "--select", "KG201")
    assert proc.returncode == 1
    lines = proc.stdout.decode().splitlines()
    assert lines[0] == (
        "examples/KG201-training-checkpoint-volume/bad-job-no-volumes.yaml:9:5: error KG201"
        " training-checkpoint-volume: Job finetune: pods (1 GPU each) mount no persistent volume"
        " and name no object store: checkpoints written there die with the pod, and a restart"
        " starts training over"
    )
    assert lines[-1].startswith("1 file, 1 document")
    assert "1 error, 0 warnings, 0 notes" in lines[-1]
    assert proc.stderr == b""


def test_clean_input_exits_zero_and_stdin_works() -> None:
    proc = run_cli("-", stdin=CLEAN)
    assert proc.returncode == 0, proc.stderr
    assert b"0 errors, 0 warnings, 0 notes" in proc.stdout


def test_kubectl_list_is_expanded(tmp_path: Path) -> None:
    body = [line for line in GPU_JOB.read_text().splitlines() if not line.startswith("#")]
    text = "apiVersion: v1\nkind: List\nitems:\n  - " + "\n    ".join(body) + "\n"
    proc = run_cli("--format", "json", "--select", "KG201", "-", stdin=text.encode())
    document = json.loads(proc.stdout)
    assert [(f["rule"], f["resource"]["name"]) for f in document["findings"]] == [("KG201", "finetune")]
    assert document["summary"]["resources"] == 1


def test_json_shape() -> None:
    proc = run_cli("--format", "json", "--select", "KG201", str(GPU_JOB))
    document = json.loads(proc.stdout)
    assert document["version"] == 1
    assert document["tool"]["name"] == "kubegap-lint"
    finding = document["findings"][0]
    assert finding["location"]["line"] == 9
    assert finding["resource"] == {"apiVersion": "batch/v1", "kind": "Job", "namespace": None, "name": "finetune"}
    assert [e["id"] for e in finding["evidence"]] == [
        "meta-llama3-405b-54d", "meta-opt175b-logbook", "bigscience-bloom-176b"]
    assert all(e["urls"] for e in finding["evidence"])


def test_fail_on_threshold() -> None:
    path = str(EXAMPLES / "KG501-gpu-shm-default" / "bad-small-size-limit.yaml")
    assert run_cli("--select", "KG501", path).returncode == 1
    assert run_cli("--select", "KG501", "--fail-on", "error", path).returncode == 0


def test_missing_file_is_exit_2_with_one_line() -> None:
    proc = run_cli("no/such/file.yaml")
    assert proc.returncode == 2
    assert proc.stderr.decode() == "kubegap-lint: no/such/file.yaml: no such file or folder\n"


def test_unknown_rule_and_bad_option_exit_2_without_traceback() -> None:
    for args in (["--select", "KG999", "x.yaml"], ["--format", "xml", "x.yaml"], []):
        proc = run_cli(*args)
        assert proc.returncode == 2, args
        assert b"Traceback" not in proc.stderr


def test_broken_document_does_not_hide_other_findings(tmp_path: Path) -> None:
    bad = tmp_path / "a-broken.yaml"
    bad.write_text("a: [1, 2\n---\nb: {\n")
    proc = run_cli("--format", "json", str(bad), str(GPU_JOB), "--select", "KG001,KG201")
    # Findings are sorted by path; the two files' folders sort differently on other machines.
    found = sorted((f["location"]["path"] == str(bad), f["rule"]) for f in json.loads(proc.stdout)["findings"])
    assert found == [(False, "KG201"), (True, "KG001"), (True, "KG001")]
    assert proc.returncode == 1


def test_a_selection_never_hides_an_input_it_could_not_read(tmp_path: Path) -> None:
    """`--select` picks the rules that judge; the verdicts that a document was not read (KG001
    syntax, KG003 unrendered template, KG004 alias bomb, KG007 too large) stay on, as KG009
    does: a run that picks its rules still says what it could not lint. `--ignore` turns one off."""
    bad = tmp_path / "broken.yaml"
    bad.write_text("a: [1, 2\n")
    template = tmp_path / "template.yaml"
    template.write_text("apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: j\nspec:\n  parallelism: {{ .Values.n }}\n")
    proc = run_cli("--format", "json", "--select", "KG303", str(bad), str(template))
    assert sorted(f["rule"] for f in json.loads(proc.stdout)["findings"]) == ["KG001", "KG003"]
    assert proc.returncode == 1
    proc = run_cli("--format", "json", "--select", "KG303", "--ignore", "KG001,KG003", str(bad), str(template))
    assert json.loads(proc.stdout)["findings"] == []
    assert proc.returncode == 0


def test_version_and_module_entry_point() -> None:
    from kubegap_lint import __version__

    proc = run_cli("--version")
    assert proc.returncode == 0
    assert proc.stdout.decode().strip() == f"kubegap-lint, version {__version__}"


def test_no_colour_unless_a_terminal() -> None:
    proc = run_cli(str(GPU_JOB), "--select", "KG201")
    assert b"\x1b[" not in proc.stdout


def test_control_characters_in_names_are_neutralised(tmp_path: Path) -> None:
    text = GPU_JOB.read_text().replace("name: finetune", 'name: "evil\\e[31mred\\x07"')
    path = tmp_path / "evil.yaml"
    path.write_text(text)
    proc = run_cli(str(path), "--select", "KG201")
    out = proc.stdout.decode()
    assert "\x1b" not in out and "\x07" not in out
    assert "evil\\x1b[31mred\\x07" in out


@pytest.mark.slow
def test_same_input_same_bytes() -> None:
    first = run_cli("--format", "json", "examples")
    second = run_cli_subprocess("--format", "json", "examples", env={"PYTHONHASHSEED": "123"})
    assert first.stdout == second.stdout
    assert run_cli("examples").stdout == run_cli_subprocess("examples", env={"PYTHONHASHSEED": "7"}).stdout


def test_rules_and_explain() -> None:
    proc = run_cli("rules")
    assert proc.returncode == 0
    assert any(line.startswith("KG201  training-checkpoint-volume") for line in proc.stdout.decode().splitlines())
    proc = run_cli("explain", "training-checkpoint-volume")
    assert proc.returncode == 0
    assert b"466" in proc.stdout and b"https://arxiv.org/abs/2407.21783" in proc.stdout
    assert run_cli("explain", "KG999").returncode == 2


def test_json_output_matches_its_schema() -> None:
    import jsonschema

    schema = json.loads((REPO / "schemas" / "output.schema.json").read_text())
    proc = run_cli("--format", "json", "examples")
    jsonschema.validate(json.loads(proc.stdout), schema)


def test_format_names_of_the_command_line_are_the_registry() -> None:
    from kubegap_lint.cli.options import FORMAT_NAMES
    from kubegap_lint.report.formats import names

    assert list(names()) == FORMAT_NAMES


@pytest.mark.parametrize(("args", "stdin"), [
    (("--format", "json", "examples/KG201-training-checkpoint-volume"), None),
    (("--format", "sarif", "--select", "KG201", "-"), GPU_JOB.read_bytes()),
    (("examples/KG101-gpu-replicas-share-power-domain", "does-not-exist.yaml"), None),
    (("explain", "KG999"), None),
    (("-",), b""),
])
def test_run_cli_in_process_gives_what_a_process_gives(args: tuple[str, ...], stdin: bytes | None) -> None:
    """run_cli (main() in the test's process) stands in for a process in most tests: the same
    exit code and the same bytes on both streams, findings, input errors and usage errors alike."""
    inside, process = run_cli(*args, stdin=stdin), run_cli_subprocess(*args, stdin=stdin)
    assert (inside.returncode, inside.stdout, inside.stderr) == (process.returncode, process.stdout, process.stderr)
    assert inside.stdout or inside.stderr


def test_the_console_entry_leaves_the_exit_nothing_to_collect() -> None:
    """`kubegap-lint` (the console script: cli/entry.main, the collector on again after the run)
    freezes what the run made before the interpreter exits, keeping its exit status: the exit
    would otherwise walk every object with the collector (tens of milliseconds a run)."""
    import subprocess
    import sys

    probe = ("import atexit, gc, sys\n"
             "atexit.register(lambda: print('frozen', gc.get_freeze_count(), 'enabled', gc.isenabled(),"
             " file=sys.stderr))\n"
             "sys.argv = ['kubegap-lint', '--select', 'KG201', sys.argv[1]]\n"
             "from kubegap_lint.cli.entry import main\n"
             "sys.exit(main())\n")
    proc = subprocess.run([sys.executable, "-c", probe, str(GPU_JOB)], capture_output=True, cwd=REPO, timeout=120,
                          check=False)
    assert proc.returncode == 1, proc.stderr
    words = proc.stderr.decode().split()
    assert words[words.index("frozen") + 1].isdigit() and int(words[words.index("frozen") + 1]) > 10_000
    assert words[words.index("enabled") + 1] == "True"  # frozen, not by a collector left off


def test_ctrl_c_while_the_command_line_loads_is_one_line() -> None:
    """A Ctrl-C that comes while the console entry imports the command line (the first 0.1 s
    of a run on a loaded machine) ends the run as one later does: one line, exit 130. The
    interrupt is raised by an import hook at that import: a signal cannot be timed that well."""
    import subprocess
    import sys

    probe = ("import builtins, sys\n"
             "real = builtins.__import__\n"
             "def hooked(name, *args, **kwargs):\n"
             "    if name == 'kubegap_lint.cli.main':\n"
             "        raise KeyboardInterrupt\n"
             "    return real(name, *args, **kwargs)\n"
             "builtins.__import__ = hooked\n"
             "sys.argv = ['kubegap-lint', 'helm', 'chart']\n"
             "from kubegap_lint.cli.entry import main\n"
             "main()\n")
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, cwd=REPO, timeout=120, check=False)
    assert (proc.returncode, proc.stdout, proc.stderr.decode()) == (130, b"", "kubegap-lint: interrupted\n")
