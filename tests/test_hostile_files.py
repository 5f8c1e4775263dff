"""Files a configuration names (baseline, policy folders, the configuration) are read with bounds."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from conftest import REPO, run_cli

SPREAD = REPO / "examples" / "KG101-gpu-replicas-share-power-domain" / "bad-no-spread.yaml"


@pytest.fixture
def work(tmp_path: Path) -> Path:
    (tmp_path / ".git").mkdir()
    shutil.copy(SPREAD, tmp_path / "in.yaml")
    return tmp_path


def _lint(work: Path, *args: str):
    return run_cli("in.yaml", "--select", "KG101", *args, cwd=work)


def test_a_baseline_that_never_ends_is_one_line(work) -> None:
    result = _lint(work, "--baseline", "/dev/zero")
    assert (result.returncode, result.stderr) == (
        2, b"kubegap-lint: /dev/zero: baseline is not a regular file (FIFO, device or socket)\n")


def test_a_fifo_baseline_does_not_hang(work) -> None:
    os.mkfifo(work / "base.json")
    result = _lint(work, "--baseline", "base.json")
    assert (result.returncode, result.stderr) == (
        2, f"kubegap-lint: {work / 'base.json'}: baseline is not a regular file (FIFO, device or socket)\n".encode())


def test_a_deeply_nested_baseline_is_one_line(work) -> None:
    (work / "base.json").write_text("[" * 100_000 + "]" * 100_000, encoding="ascii")
    result = _lint(work, "--baseline", "base.json")
    assert (result.returncode, result.stderr) == (
        2, f"kubegap-lint: {work / 'base.json'}: baseline is nested too deeply to be a baseline\n".encode())


def test_a_baseline_over_the_size_bound_is_one_line(work, monkeypatch) -> None:
    from kubegap_lint.core import safefile
    from kubegap_lint.core.errors import DataFileError
    from kubegap_lint.suppress.baseline import load_baseline

    (work / "base.json").write_text('{"version": 1, "findings": []}' + " " * 100, encoding="ascii")
    monkeypatch.setattr(safefile, "MAX_BASELINE_BYTES", 64)
    with pytest.raises(DataFileError) as raised:
        load_baseline(work / "base.json")
    assert str(raised.value) == f"{work / 'base.json'}: baseline is over 64 bytes (130)"


def test_policy_folders_skip_fifos_and_devices(work) -> None:
    policies = work / "policies"
    policies.mkdir()
    os.mkfifo(policies / "KG900-a-fifo.yaml")
    (policies / "KG901-a-device.yaml").symlink_to("/dev/zero")
    (work / ".kubegap-lint.yaml").write_text("policy_dirs: [policies]\n", encoding="utf-8")
    result = _lint(work)
    assert result.returncode == 1 and b"KG101" in result.stdout, result.stderr


def test_a_huge_policy_file_is_one_line(work, monkeypatch) -> None:
    from kubegap_lint.catalog.datafile import load_yaml
    from kubegap_lint.core import safefile
    from kubegap_lint.core.errors import DataFileError

    path = work / "KG900-big.yaml"
    path.write_text("id: KG900\n" + "#" * 200 + "\n", encoding="utf-8")
    monkeypatch.setattr(safefile, "MAX_DATA_FILE_BYTES", 100)
    with pytest.raises(DataFileError) as raised:
        load_yaml(path)
    assert str(raised.value) == f"{path}: file is over 100 bytes (211)"


def _peak_mib(work: Path, *args: str) -> tuple[int, bytes, int]:
    """Lint with a baseline in a child whose peak resident size is measured (VmHWM, Linux)."""
    import subprocess
    import sys

    env = dict(os.environ, PYTHONPATH=str(REPO))
    code = ("import runpy, sys\nsys.argv = ['kubegap-lint', *sys.argv[1:]]\ntry:\n"
            "    runpy.run_module('kubegap_lint', run_name='__main__')\nfinally:\n"
            "    print([l for l in open('/proc/self/status') if l.startswith('VmHWM')][0].split()[1], file=sys.stderr)\n")
    proc = subprocess.run([sys.executable, "-c", code, "in.yaml", "--select", "KG101", *args], cwd=work, env=env,
                          capture_output=True, timeout=600)
    *lines, peak = proc.stderr.decode().splitlines()
    return int(peak) // 1024, "\n".join(lines).encode(), proc.returncode


@pytest.mark.skipif(not Path("/proc/self/status").is_file(), reason="VmHWM is read from /proc")
def test_a_huge_baseline_of_empty_objects_is_refused_before_it_is_parsed(work) -> None:
    (work / "base.json").write_text('{"version": 2, "paths": "git-top-level", "findings": ['
                                    + "{}," * 30_000_000 + "{}]}", encoding="ascii")  # 90 MB
    peak, stderr, code = _peak_mib(work, "--baseline", "base.json")
    assert (code, stderr) == (2, f"kubegap-lint: {work / 'base.json'}: baseline holds more than 8,388,608 values:"
                                 " not read (a baseline records six a finding)".encode())
    assert peak < 400, peak  # was 2.2 GB: the text (90 MB, read once as bytes and once as text), no objects


@pytest.mark.skipif(not Path("/proc/self/status").is_file(), reason="VmHWM is read from /proc")
def test_a_baseline_just_under_the_value_bound_stays_near_its_size(work) -> None:
    (work / "base.json").write_text('{"version": 2, "paths": "git-top-level", "findings": ['
                                    + '{"fingerprint": "ab"},' * 8_000_000 + "{}]}", encoding="ascii")  # 176 MB
    peak, stderr, code = _peak_mib(work, "--baseline", "base.json")
    assert (code, stderr) == (2, f"kubegap-lint: {work / 'base.json'}: findings[8000000]: expected an object with a"
                                 " fingerprint string".encode())
    assert peak < 1024, peak


def test_numbers_of_any_length_in_a_baseline_are_no_internal_error(work) -> None:
    big = "1" * 5000
    (work / "base.json").write_text(f'{{"version": 2, "paths": "git-top-level", "x": {big}, "y": {big}.5e3,'
                                    f' "findings": [{{"fingerprint": "f", "line": {big}}}]}}')
    result = _lint(work, "--baseline", "base.json")
    assert result.returncode == 1 and result.stderr == b""  # read; its one fingerprint matches nothing
    (work / "base.json").write_text(f'{{"version": {big}, "paths": "git-top-level", "findings": []}}')
    result = _lint(work, "--baseline", "base.json")
    assert (result.returncode, result.stderr) == (2, f"kubegap-lint: {work / 'base.json'}: not a kubegap-lint"
                                                     " baseline (expected an object with version 2, paths"
                                                     " git-top-level or working-folder, and a findings list)\n".encode())
