"""Names in any encoding reach every format escaped; our colour codes stay ours; write errors are one line."""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import REPO, run_cli, run_cli_subprocess

SPREAD = REPO / "examples" / "KG101-gpu-replicas-share-power-domain" / "bad-no-spread.yaml"


def _plant(folder: Path, name: bytes, resource: str = "llm-server") -> Path:
    path = Path(os.fsdecode(os.path.join(os.fsencode(folder), name)))
    path.write_bytes(SPREAD.read_bytes().replace(b"llm-server", resource.encode("utf-8")))
    return path


def _lint(folder: Path, *args: str, env: dict[str, str] | None = None) -> Any:
    """In this process; in a new interpreter when env sets a variable it reads at start-up."""
    run = run_cli_subprocess if env else run_cli
    return run(".", "--select", "KG101", *args, cwd=folder, env=env)


def test_a_file_name_that_is_not_utf8_reaches_sarif_and_github(tmp_path) -> None:
    _plant(tmp_path, b"bad-\xff\xfe.yaml")
    sarif = _lint(tmp_path, "--format", "sarif", "--sarif-root", ".")
    assert sarif.returncode == 1, sarif.stderr
    results = json.loads(sarif.stdout)["runs"][0]["results"]
    assert [r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in results] == ["bad-%FF%FE.yaml"]
    github = _lint(tmp_path, "--format", "github", "--sarif-root", ".")
    assert github.returncode == 1, github.stderr
    assert github.stdout.decode("ascii").startswith("::warning file=bad-\\udcff\\udcfe.yaml,line=14,col=5,")


def test_an_emoji_in_a_latin1_locale_is_escaped(tmp_path) -> None:
    _plant(tmp_path, "emoji-\U0001f600.yaml".encode(), resource="llm-\U0001f600")
    result = _lint(tmp_path, env={"PYTHONIOENCODING": "latin-1"})
    assert result.returncode == 1, result.stderr
    assert result.stdout.decode("latin-1").splitlines()[0].startswith(
        "emoji-\\U0001f600.yaml:14:5: warning KG101 gpu-replicas-share-power-domain: Deployment llm-\\U0001f600:")


@pytest.mark.parametrize("stdout", ["full", "closed"])
def test_a_report_that_cannot_be_written_is_one_line(tmp_path, stdout) -> None:
    _plant(tmp_path, b"a.yaml")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    command = [sys.executable, "-m", "kubegap_lint", ".", "--select", "KG101"]
    if stdout == "full":
        with open("/dev/full", "wb") as full:
            result = subprocess.run(command, cwd=tmp_path, env=env, stdout=full, stderr=subprocess.PIPE)
        expected = b"kubegap-lint: cannot write the report to standard output: No space left on device\n"
    else:
        result = subprocess.run(command, cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                preexec_fn=lambda: os.close(1))
        expected = b"kubegap-lint: cannot write the report: standard output is closed\n"
    assert (result.returncode, result.stderr) == (2, expected)


def test_a_file_named_like_a_workflow_command_is_no_command(tmp_path) -> None:
    _plant(tmp_path, b"::error::x.yaml")
    for fmt in ("text", "github"):
        result = _lint(tmp_path, "--format", fmt, "--sarif-root", ".")
        assert result.returncode == 1
        lines = result.stdout.decode().splitlines()
        assert not any(line.startswith("::error") for line in lines), lines
    text = _lint(tmp_path).stdout.decode().splitlines()
    assert text[0].startswith("\\x3a:error::x.yaml:14:5: warning KG101")


def test_bidi_and_zero_width_characters_are_escaped_everywhere(tmp_path) -> None:
    _plant(tmp_path, "bidi-\u202e.yaml".encode(), resource="llm-\u200bserver\u2066")
    text = _lint(tmp_path).stdout.decode()
    github = _lint(tmp_path, "--format", "github", "--sarif-root", ".").stdout.decode()
    sarif = _lint(tmp_path, "--format", "sarif", "--sarif-root", ".").stdout.decode()
    for output in (text, github, sarif):
        assert not any(c in output for c in "\u202e\u200b\u2066")
    assert "bidi-\\u202e.yaml:14:5: warning KG101 gpu-replicas-share-power-domain: Deployment llm-\\u200bserver\\u2066:" \
        in text
    assert "file=bidi-\\u202e.yaml" in github
    message = json.loads(sarif)["runs"][0]["results"][0]["message"]["text"]
    assert message.startswith("Deployment llm-\\u200bserver\\u2066: 3 replicas")


def test_names_cannot_put_links_into_sarif_messages(tmp_path) -> None:
    _plant(tmp_path, b"a.yaml", resource="'x[click](https://example.invalid)'")
    sarif = _lint(tmp_path, "--format", "sarif", "--sarif-root", ".")
    assert sarif.returncode == 1, sarif.stderr
    message = json.loads(sarif.stdout)["runs"][0]["results"][0]["message"]["text"]
    assert message.startswith("Deployment x\\[click\\](https://example.invalid): 3 replicas")


def _on_a_terminal(args: list[str], cwd: Path) -> bytes:
    """Run the CLI with stdout on a pseudo-terminal (colour on) and return what it wrote there."""
    main, secondary = pty.openpty()
    env = {**os.environ, "PYTHONPATH": str(REPO), "TERM": "xterm"}
    env.pop("NO_COLOR", None)
    proc = subprocess.Popen([sys.executable, "-m", "kubegap_lint", *args], cwd=cwd, env=env,
                            stdin=subprocess.DEVNULL, stdout=secondary, stderr=subprocess.PIPE)
    os.close(secondary)
    out = b""
    while True:
        ready, _, _ = select.select([main], [], [], 60)
        if not ready:
            break
        try:
            chunk = os.read(main, 65536)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        out += chunk
    proc.wait(timeout=60)
    os.close(main)
    return out


def test_colour_codes_reach_a_terminal_and_input_escapes_stay_escaped(tmp_path) -> None:
    _plant(tmp_path, b"a.yaml", resource='"llm-\\e[31mred"')
    out = _on_a_terminal([".", "--select", "KG101"], tmp_path)
    first = out.splitlines()[0]
    assert first.startswith(b"\x1b[1ma.yaml:14:5\x1b[0m: \x1b[33m\x1b[1mwarning\x1b[0m KG101"), first
    assert b"Deployment llm-\\x1b[31mred:" in first
    assert b"\\x1b[1m" not in first


def test_no_line_starts_with_a_workflow_command_even_after_blanks(tmp_path) -> None:
    """The runner strips a line's leading blanks before it looks for `::` (issue 35): the
    estimate lines, and arguments echoed by `explain` and `baseline create`."""
    import shutil

    from conftest import EXAMPLES

    training = EXAMPLES / "KG401-training-no-restart-budget" / "good-restart-budgets.yaml"
    shutil.copy(training, tmp_path / "::error::x.yaml")
    proc = run_cli("--no-config", "--select", "KG201", "::error::x.yaml", cwd=tmp_path)
    lines = proc.stdout.decode().splitlines()
    assert any(line.startswith("  \\x3a:error::x.yaml:") for line in lines), lines
    for args in (("explain", "x\n::error::boom"), ("baseline", "create", "x\n::error::boom")):
        proc = run_cli(*args, cwd=tmp_path)
        out = (proc.stdout + proc.stderr).decode().splitlines()
        assert proc.returncode == 2 and not any(line.lstrip().startswith("::") for line in out), out
