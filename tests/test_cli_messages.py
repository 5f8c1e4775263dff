"""What the command line says when the user slips or the tool breaks: --statistics is counts
only, a subcommand typo names the subcommand meant, and --show-traceback (or
KUBEGAP_LINT_DEBUG=1) shows the traceback behind an internal error."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from conftest import EXAMPLES, run_cli


def test_statistics_prints_counts_only() -> None:
    proc = run_cli("--statistics", str(EXAMPLES / "KG501-gpu-shm-default"))
    assert proc.returncode == 1
    lines = proc.stdout.decode().splitlines()
    assert lines[0].split() == ["8", "KG501", "gpu-shm-default", "warning"]
    assert not any("nterruption" in line for line in lines)
    assert lines[-1].startswith("9 files, 13 documents")
    # One line a rule (the unknown CRD of the examples is serving by its shape: KG101, KG103, KG104).
    assert [line.split()[1] for line in lines[:-1]] == ["KG501", "KG101", "KG103", "KG104", "KG201"]


def test_a_subcommand_typo_names_the_subcommand(tmp_path: Path) -> None:
    proc = run_cli("baselin", "create", ".", cwd=tmp_path)
    assert proc.returncode == 2 and proc.stdout == b""
    assert proc.stderr.decode() == (
        "kubegap-lint: no such file, folder or command 'baselin': did you mean `kubegap-lint baseline`?\n")
    (tmp_path / "baselin").mkdir()  # an existing path still wins: it is linted
    (tmp_path / "baselin" / "cm.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n")
    assert run_cli("baselin", cwd=tmp_path).returncode == 0


def _broken_run(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *flags: str) -> str:
    """An internal error, made by a stand-in bug: the run loop raises."""
    from kubegap_lint.cli.main import main
    from kubegap_lint.engine import parallel

    def bug(*args: object, **kwargs: object) -> None:
        raise RuntimeError("stand-in bug")

    monkeypatch.setattr(parallel, "lint_sources", bug)
    monkeypatch.setattr(sys, "argv", ["kubegap-lint", *flags, str(EXAMPLES / "KG501-gpu-shm-default")])
    with pytest.raises(SystemExit) as ended:
        main()
    assert ended.value.code == 2
    err = capsys.readouterr().err
    assert err.splitlines()[-1] == ("kubegap-lint: internal error: RuntimeError: stand-in bug"
                                    " (please report this with the input that caused it)")
    return err


def test_show_traceback_shows_what_broke(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("KUBEGAP_LINT_DEBUG", raising=False)
    assert "Traceback" not in _broken_run(monkeypatch, capsys)
    err = _broken_run(monkeypatch, capsys, "--show-traceback")
    assert err.startswith("Traceback (most recent call last):") and 'raise RuntimeError("stand-in bug")' in err
    monkeypatch.setenv("KUBEGAP_LINT_DEBUG", "1")
    assert _broken_run(monkeypatch, capsys).startswith("Traceback (most recent call last):")
