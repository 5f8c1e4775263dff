"""Workloads past the parsed budget are spilled as plain data and read back (input/stream.py
PendingWorkloads, store/records.py RecordSpill), never parsed a second time: the findings, their
order, the views and the estimates are exactly those of a run that keeps every workload parsed."""

from __future__ import annotations

import errno
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import EXAMPLES, run_cli, run_cli_subprocess

from kubegap_lint.core.record import replace
from kubegap_lint.input import stream
from kubegap_lint.store import records

GPU_JOB = (EXAMPLES / "KG201-training-checkpoint-volume" / "bad-job-no-volumes.yaml").read_text()
PINNED = ("KG201", "KG501")  # the two rules GPU_JOB trips


def _jobs(count: int, prefix: str = "w") -> str:
    return "---\n".join(GPU_JOB.replace("name: ", f"name: {prefix}{n}-", 1) for n in range(count))


def _indented(text: str, by: int) -> str:
    pad = " " * by
    return "".join(pad + line if line.strip() else line for line in text.splitlines(True))


def _list_of_jobs(count: int) -> str:
    items = "".join("  - " + _indented(GPU_JOB.replace("name: finetune", f"name: item-{n}"), 4)[4:]
                    for n in range(count))
    return "apiVersion: v1\nkind: List\nitems:\n" + items


def _spills(monkeypatch: pytest.MonkeyPatch, budget: int = 0) -> list[records.RecordSpill]:
    """Set the parsed budget; the spills the runs make are appended to the list returned."""
    made: list[records.RecordSpill] = []
    real = records.RecordSpill.__init__

    def init(self: records.RecordSpill) -> None:
        real(self)
        made.append(self)

    monkeypatch.setattr(records.RecordSpill, "__init__", init)
    monkeypatch.setattr(stream.PendingWorkloads.__init__, "__defaults__", (budget,))
    return made


def _same_run(kept: Any, spilled: Any, views: bool = True) -> None:
    assert spilled.findings == kept.findings
    assert spilled.errors == kept.errors
    assert spilled.estimates == kept.estimates
    if views:  # (data 2,400 levels deep is too deep for ==)
        assert spilled.views == kept.views
    assert spilled.workloads == kept.workloads


def _all_kept(monkeypatch: pytest.MonkeyPatch, linter: Any, paths: list[str]) -> Any:
    with monkeypatch.context() as patch:
        patch.setattr(stream.PendingWorkloads.__init__, "__defaults__", (sys.maxsize,))
        return linter.lint_paths(paths, keep_views=True)


@pytest.mark.parametrize("budget", [0, 3_000, 20_000])
def test_spilled_workloads_give_what_kept_ones_give(linter_factory, monkeypatch, tmp_path: Path, budget: int) -> None:
    # The budget runs out before the first workload, inside the List, and after it; a List in a
    # List (its items' key paths are not ("items", n)) and the examples follow.
    nested = ("apiVersion: v1\nkind: List\nitems:\n  - apiVersion: v1\n    kind: List\n    items:\n"
              + _indented(_list_of_jobs(2).split("items:\n", 1)[1], 4))
    (tmp_path / "a-list.yaml").write_text(_list_of_jobs(3), encoding="utf-8")
    (tmp_path / "b-nested.yaml").write_text(nested, encoding="utf-8")
    paths = [str(tmp_path), str(EXAMPLES)]
    linter = linter_factory(None)
    kept = _all_kept(monkeypatch, linter, paths)
    monkeypatch.setattr(records, "WRITE_BYTES", 4096)  # many writes, records cut across reads
    monkeypatch.setattr(records, "READ_BYTES", 1000)
    made = _spills(monkeypatch, budget)
    spilled = linter.lint_paths(paths, keep_views=True)
    _same_run(kept, spilled)
    assert kept.workloads > 30
    nested_items = [v for v in spilled.views if str(v["name"]).startswith("item-")]
    assert len(nested_items) == 5
    (spill,) = made
    assert spill.count == spill.spilled > 20 and not spill.held  # spilled as bytes, none held
    assert spill.file is None  # closed once read back


def test_a_lists_items_share_their_document_once_spilled(monkeypatch) -> None:
    from kubegap_lint.input.read import ReadStats, Resource, read_text

    items = [i for i in read_text("l.yaml", _list_of_jobs(4), ReadStats()) if isinstance(i, Resource)]
    pending = stream.PendingWorkloads(0)
    for item in items:
        assert pending.add(item, "rule") is False
    assert pending.spill is not None
    written = list(pending.spill)
    assert [record[0] is not None for record in written] == [True, False, False, False]
    back = list(pending)
    assert [rule for _, rule in back] == ["rule"] * 4
    assert all(b.positions is back[0][0].positions for b, _ in back)  # one PositionIndex, as parsed
    for (resource, _), original in zip(back, items, strict=True):
        assert resource.positions.entries() == original.positions.entries()
        assert resource.positions.offset == original.positions.offset
        assert replace(resource, positions=None) == replace(original, positions=None)
        assert resource.base == original.base and resource.ref() == original.ref()


ALIASED = """\
apiVersion: batch/v1
kind: Job
metadata:
  name: aliased
  labels: &labels {app: train, team: ml}
spec:
  template:
    metadata:
      labels: *labels
    spec:
      restartPolicy: Never
      containers:
        - &trainer
          name: trainer
          image: registry.example/train:1
          env: &env [{name: NCCL_DEBUG, value: INFO}]
          resources:
            limits: {nvidia.com/gpu: 8}
        - <<: *trainer
          name: second
          env: *env
"""


def test_aliases_stay_shared_and_a_recursive_alias_stays_a_fault(linter_factory, monkeypatch, tmp_path: Path) -> None:
    from kubegap_lint.input.read import ReadStats, Resource, read_text

    recursive = "apiVersion: batch/v1\nkind: Job\nmetadata: {name: loop}\nspec: &a\n  x: [*a]\n"
    (tmp_path / "aliases.yaml").write_text(ALIASED + "---\n" + recursive + "---\n" + GPU_JOB, encoding="utf-8")
    linter = linter_factory(None)
    kept = _all_kept(monkeypatch, linter, [str(tmp_path)])
    made = _spills(monkeypatch)
    spilled = linter.lint_paths([str(tmp_path)], keep_views=True)
    _same_run(kept, spilled)
    assert spilled.workloads == 2
    assert [f.rule_name for f in spilled.findings if f.rule_id == "KG004"] or \
        any("alias" in f.message for f in spilled.findings)  # the loop is reported, not linted
    assert made[0].spilled == 2

    # marshal keeps a shared object shared: the aliased data has the walker's shape.
    (resource,) = [i for i in read_text("a.yaml", ALIASED, ReadStats()) if isinstance(i, Resource)]
    pending = stream.PendingWorkloads(0)
    pending.add(resource, None)
    ((back, _),) = list(pending)
    assert back.data == resource.data
    assert back.data["spec"]["template"]["metadata"]["labels"] is back.data["metadata"]["labels"]
    containers = back.data["spec"]["template"]["spec"]["containers"]
    assert containers[0]["env"] is containers[1]["env"]


def _nest(inner: str) -> str:
    return "[" * 400 + inner + "]" * 400


# Each anchor nests 400 levels (under the parser's 500-level limit) and holds the one before it.
# Merged keys come after the mapping's own, so marshal meets x5 first and reaches x4 ... x0
# inside it: 2,400 levels, past marshal's limit (2,000). The workload is held as parsed.
TOO_DEEP = ("apiVersion: batch/v1\nkind: Job\nmetadata: {name: deep}\nspec:\n  <<: ["
            + ", ".join(f"{{x{n}: &x{n} {_nest(f'*x{n - 1}' if n else '1')}}}" for n in range(5))
            + "]\n  x5: " + _nest("*x4") + "\n  template:\n    spec:\n      containers:"
            " [{name: a, image: x, resources: {limits: {nvidia.com/gpu: 1}}}]\n")


def test_data_too_deep_for_marshal_is_held_parsed_in_its_place(linter_factory, monkeypatch, tmp_path: Path) -> None:
    import marshal

    from kubegap_lint.input.read import ReadStats, read_text

    (deep,) = read_text("deep.yaml", TOO_DEEP, ReadStats())
    with pytest.raises(ValueError, match="too deeply nested"):
        marshal.dumps(deep.data)  # type: ignore[union-attr]
    (tmp_path / "deep.yaml").write_text(_jobs(2, "a") + "---\n" + TOO_DEEP + "---\n" + _jobs(2, "b"), encoding="utf-8")
    linter = linter_factory(PINNED)
    kept = _all_kept(monkeypatch, linter, [str(tmp_path)])
    made = _spills(monkeypatch)
    spilled = linter.lint_paths([str(tmp_path)], keep_views=True)
    _same_run(kept, spilled, views=False)
    assert [v["name"] for v in spilled.views] == [v["name"] for v in kept.views] == ["a0-finetune", "a1-finetune", "deep", "b0-finetune", "b1-finetune"]
    assert [(f.rule_id, f.location.line) for f in spilled.findings if f.resource.name == "deep"] == [
        ("KG201", 42), ("KG501", 43)]
    assert (made[0].count, made[0].spilled) == (5, 4)


def test_without_a_temporary_folder_the_serial_bytes_stay_in_memory(linter_factory, monkeypatch, tmp_path: Path) -> None:
    from kubegap_lint.core import tempdir

    (tmp_path / "jobs.yaml").write_text(_jobs(40), encoding="utf-8")
    linter = linter_factory(PINNED)
    kept = _all_kept(monkeypatch, linter, [str(tmp_path)])
    monkeypatch.setattr(tempdir, "private_temp_dir", lambda: None)
    monkeypatch.setattr(records, "WRITE_BYTES", 1000)
    opened: list[Any] = []
    monkeypatch.setattr("tempfile.TemporaryFile", lambda *a, **k: opened.append(a) or pytest.fail("a file"))
    made = _spills(monkeypatch)
    spilled = linter.lint_paths([str(tmp_path)], keep_views=True)
    _same_run(kept, spilled)
    assert len(spilled.findings) == 80 and not opened
    assert made[0].in_memory and made[0].spilled == 40


class _FillsUp:
    """Stand-in for a disk that fills: takes `room` bytes (the last write only in part), then
    refuses with ENOSPC."""

    def __init__(self, real: Any, room: int) -> None:
        self.real = real
        self.room = room

    def write(self, data: Any) -> int:
        if self.room <= 0:
            raise OSError(errno.ENOSPC, "No space left on device")
        taken = self.real.write(bytes(data[:self.room]))
        self.room -= taken
        return int(taken)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)


def test_a_disk_that_fills_keeps_the_rest_in_memory(linter_factory, monkeypatch, tmp_path: Path) -> None:
    import tempfile

    (tmp_path / "jobs.yaml").write_text(_jobs(40), encoding="utf-8")
    linter = linter_factory(PINNED)
    kept = _all_kept(monkeypatch, linter, [str(tmp_path)])
    real = tempfile.TemporaryFile
    monkeypatch.setattr(tempfile, "TemporaryFile", lambda *a, **k: _FillsUp(real(*a, **k), 10_001))
    monkeypatch.setattr(records, "WRITE_BYTES", 4000)
    made = _spills(monkeypatch)
    spilled = linter.lint_paths([str(tmp_path)], keep_views=True)
    _same_run(kept, spilled)
    assert len(spilled.findings) == 80
    assert made[0].in_memory and made[0].on_disk == 10_001  # a record cut between file and memory


def test_the_spill_file_is_anonymous_in_the_private_folder(monkeypatch, tmp_path: Path) -> None:
    from kubegap_lint.core.tempdir import private_temp_dir

    monkeypatch.chdir(tmp_path)
    folder = private_temp_dir()
    assert folder is not None and (os.stat(folder).st_mode & 0o777) == 0o700
    before = sorted(os.listdir(folder))
    spill = records.RecordSpill()
    monkeypatch.setattr(records, "WRITE_BYTES", 10)
    for n in range(50):
        spill.add(({"n": n, "text": "x" * n}, (n, None)))
    assert spill.file is not None and spill.on_disk > 0
    assert sorted(os.listdir(folder)) == before and os.listdir(tmp_path) == []  # no name anywhere
    if sys.platform == "linux":
        assert os.readlink(f"/proc/self/fd/{spill.file.fileno()}").startswith(folder + "/")
    assert os.fstat(spill.file.fileno()).st_nlink == 0
    assert list(spill) == [({"n": n, "text": "x" * n}, (n, None)) for n in range(50)]
    spill.close()


def test_a_file_that_changes_after_it_was_read_changes_nothing(linter_factory, monkeypatch, tmp_path: Path) -> None:
    # Every source is read once: what a file holds after its reading never reaches a finding.
    path = tmp_path / "jobs.yaml"
    path.write_text(_jobs(30), encoding="utf-8")
    linter = linter_factory(PINNED)
    kept = _all_kept(monkeypatch, linter, [str(path)])
    real = stream.PendingWorkloads.__iter__

    def changed_then_read(self: stream.PendingWorkloads) -> Any:
        path.write_text("a: 1\n---\n" + _jobs(5, "other"), encoding="utf-8")
        return real(self)

    monkeypatch.setattr(stream.PendingWorkloads, "__iter__", changed_then_read)
    _spills(monkeypatch)
    spilled = linter.lint_paths([str(path)], keep_views=True)
    _same_run(kept, spilled)
    assert len(spilled.findings) == 60


def test_stdin_past_the_budget_is_spilled_and_read_once() -> None:
    text = (GPU_JOB + "---\n") * 3
    normal = run_cli("--format", "json", "--select", ",".join(PINNED), "-", stdin=text.encode())
    code = ("import sys, kubegap_lint.input.stream as s; s.PendingWorkloads.__init__.__defaults__ = (0,);"
            f" sys.argv = ['kubegap-lint', '--format', 'json', '--select', '{','.join(PINNED)}', '-'];"
            " from kubegap_lint.cli.main import main; main()")
    import json
    import subprocess

    from conftest import REPO

    proc = subprocess.run([sys.executable, "-c", code], input=text.encode(), capture_output=True,
                          cwd=str(REPO), env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=120)
    assert proc.returncode == normal.returncode == 1, proc.stderr.decode()[-500:]
    assert json.loads(proc.stdout)["findings"] == json.loads(normal.stdout)["findings"]
    assert len(json.loads(normal.stdout)["findings"]) == 6  # KG201 and KG501, three times


@pytest.mark.slow
def test_cli_jobs_two_prints_what_a_spilling_jobs_one_prints(tmp_path: Path) -> None:
    # Over MIN_PARALLEL_BYTES: --jobs 2 forks (its workers keep their share parsed), --jobs 1
    # streams and spills all but the first few workloads.
    folder = tmp_path / "many"
    folder.mkdir()
    for n in range(8):
        (folder / f"f{n}.yaml").write_text(_jobs(400, f"f{n}w"), encoding="utf-8")
    assert sum(p.stat().st_size for p in folder.iterdir()) > 1_000_000
    serial = run_cli("--format", "json", "--jobs", "1", "--select", ",".join(PINNED), str(folder))
    forked = run_cli_subprocess("--format", "json", "--jobs", "2", "--select", ",".join(PINNED), str(folder))
    assert serial.returncode == forked.returncode == 1
    assert serial.stdout == forked.stdout
    assert serial.stdout.count(b'"rule_id"') == 8 * 150 * 2 or b"KG201" in serial.stdout


def test_a_spill_file_cut_short_is_a_storage_error_not_a_traceback(monkeypatch) -> None:
    from kubegap_lint.core.errors import StorageError

    monkeypatch.setattr(records, "WRITE_BYTES", 10)
    spill = records.RecordSpill()
    for n in range(20):
        spill.add((n, "x" * 100))
    assert spill.file is not None
    spill.file.truncate(500)  # stand-in for a file the system lost part of
    back = iter(spill)
    assert [next(back) for _ in range(4)] == [(n, "x" * 100) for n in range(4)]
    with pytest.raises(StorageError, match="cannot read back the workloads spilled"):
        next(back)
    spill.close()
