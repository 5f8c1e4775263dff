"""The tool never writes to what it lints, and its output is the same bytes on every run and
under every PYTHONHASHSEED (issue 5)."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import CORPUS, EXAMPLES, run_cli, run_cli_subprocess


def _snapshot(root: Path) -> dict[str, tuple[bytes, int, int]]:
    return {str(p): (p.read_bytes(), p.stat().st_mtime_ns, p.stat().st_mode)
            for p in sorted(root.rglob("*")) if p.is_file()}


def _inputs() -> list[str]:
    paths = [str(EXAMPLES)]
    if CORPUS.is_dir():
        paths += sorted(str(p) for p in CORPUS.iterdir() if p.is_dir())[:6]
    return paths


def test_linting_writes_nothing_to_the_linted_paths(tmp_path: Path) -> None:
    import shutil

    copy = tmp_path / "in"
    shutil.copytree(EXAMPLES, copy)
    (copy / "broken.yaml").write_bytes(b"a: [\x00\xff\n---\nkind: Job\n")
    before = _snapshot(copy)
    folder_mtime = copy.stat().st_mtime_ns
    for fmt in ("text", "json"):
        proc = run_cli("--format", fmt, "-o", str(tmp_path / f"report.{fmt}"), str(copy))
        assert proc.returncode in (1, 2), proc.stderr
    assert _snapshot(copy) == before
    assert copy.stat().st_mtime_ns == folder_mtime  # no file created or removed either


@pytest.mark.slow
def test_output_is_byte_identical_across_runs_and_hash_seeds() -> None:
    inputs = _inputs()
    for fmt in ("text", "json"):
        outputs = {run_cli_subprocess("--format", fmt, "--no-color", *inputs, env={"PYTHONHASHSEED": seed}).stdout
                   for seed in ("0", "1", "4242", "random")}
        assert len(outputs) == 1, f"{fmt} output differs between runs"
        assert outputs.pop().count(b"\n") > 10
