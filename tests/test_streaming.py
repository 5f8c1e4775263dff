"""Memory that does not grow with the input (issue 5): the sorted store that spills findings to
disk, reports written in pieces, and no garbage left for a paused collector."""

from __future__ import annotations

import gc
import json
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubegap_lint.config.settings import Settings
from kubegap_lint.engine.run import Linter
from kubegap_lint.store import spill
from kubegap_lint.store.spill import SortedSpill
from kubegap_lint.workloads.index import InputIndex, selector_matches

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = REPO / "examples"


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5), st.integers()), max_size=60), st.integers(1, 7))
def test_spilled_items_come_back_as_one_stable_sort(items: list[tuple[int, int]], limit: int) -> None:
    store: SortedSpill[tuple[int, int]] = SortedSpill(lambda item: item[0], limit=limit)
    store.extend(items)
    expected = sorted(items, key=lambda item: item[0])  # stable: ties keep insertion order
    assert list(store) == expected
    assert list(store) == expected  # a second reading gives the same
    assert len(store) == len(items)
    if len(items) >= limit:
        assert store.runs  # the test really went through files
    store.close()


def test_many_runs_are_merged_into_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(spill, "MAX_RUNS", 3)
    store: SortedSpill[int] = SortedSpill(lambda item: item, limit=2)
    numbers = [(n * 7919) % 101 for n in range(40)]
    store.extend(numbers)
    assert len(store.runs) < 3
    assert list(store) == sorted(numbers)


def test_runs_in_key_order_are_read_one_after_the_other(monkeypatch: pytest.MonkeyPatch) -> None:
    # Items that arrive nearly in order (findings in input order): runs that follow each other
    # are chained, ties included (a later run's first key equal to an earlier run's last);
    # one run out of order makes it a merge again. Both read as one stable sort.
    merged: list[int] = []
    real_merge = spill.heapq.merge

    def merge(*sources: Any, key: Any) -> Any:
        merged.append(len(sources))
        return real_merge(*sources, key=key)

    monkeypatch.setattr(spill.heapq, "merge", merge)
    ordered = [(n // 3, n) for n in range(20)]  # ties across the runs' edges (limit 4)
    store: SortedSpill[tuple[int, int]] = SortedSpill(lambda item: item[0], limit=4)
    store.extend(ordered)
    assert len(store.runs) == 5 and list(store) == ordered and merged == []
    late = [*ordered, (2, -1)]  # its key falls inside the runs already written
    store = SortedSpill(lambda item: item[0], limit=4)
    store.extend(late)
    assert list(store) == sorted(late, key=lambda item: item[0]) and merged == [6]


def test_a_store_counts_what_is_added_as_its_tally_names() -> None:
    store: SortedSpill[tuple[int, str]] = SortedSpill(lambda item: item[0], limit=2, tally=lambda item: item[1])
    store.extend([(3, "a"), (1, "b"), (2, "a"), (0, "a")])
    assert store.counts == {"a": 3, "b": 1} and store.runs
    assert SortedSpill(lambda item: item).counts is None


def test_the_tally_counted_as_stored_is_the_tally_of_every_finding(monkeypatch: pytest.MonkeyPatch) -> None:
    # LintResult.tally reads the counts the run's store kept; a result whose store keeps none
    # (or with a baseline, applied as the findings are read) counts them as they are read.
    monkeypatch.setattr(spill, "SPILL_ITEMS", 7)
    result = Linter(Settings()).lint_paths([str(EXAMPLES)])
    assert result.store.counts is not None
    counted = result.tally()
    found = result.findings
    assert any(f.suppression for f in found) and len({f.severity for f in found}) == 3
    result.findings = found  # a new store, with no counts
    assert result.store.counts is None
    assert result.tally() == counted
    assert sum(counted.by_severity.values()) + counted.suppressed == len(found)


def _reports(linter: Linter, paths: list[str]) -> dict[str, str]:
    from kubegap_lint.report.github import render_github
    from kubegap_lint.report.jsonfmt import render_json
    from kubegap_lint.report.sarif import render_sarif
    from kubegap_lint.report.sarif_paths import UriMapper
    from kubegap_lint.report.text import render_text

    result = linter.lint_paths(paths)
    return {
        "text": render_text(result, show_suppressed=True, params=linter.params),
        "json": render_json(result, linter.params),
        "github": render_github(result, UriMapper(REPO, str(REPO))),
        "sarif": render_sarif(result, REPO, cwd=str(REPO)).text,
    }


def test_reports_are_the_same_bytes_when_findings_and_facts_spill(monkeypatch: pytest.MonkeyPatch) -> None:
    from kubegap_lint.store import facts
    paths = [str(EXAMPLES)]
    linter = Linter(Settings())
    in_memory = _reports(linter, paths)
    assert json.loads(in_memory["json"])["findings"], "the examples must give findings"
    monkeypatch.setattr(spill, "SPILL_ITEMS", 3)
    monkeypatch.setattr(facts, "FACTS_IN_MEMORY", 0)  # the index on disk from its first fact
    spilled = _reports(linter, paths)
    for name in in_memory:
        assert spilled[name] == in_memory[name], name


def test_json_written_in_pieces_is_what_one_dump_gives() -> None:
    from kubegap_lint.core.model import InputError
    from kubegap_lint.report.jsonfmt import json_pieces

    linter = Linter(Settings())
    training = (EXAMPLES / "KG303-nccl-flight-recorder-off" / "bad-torchrun-job.yaml").read_text(encoding="utf-8")
    full = linter.lint_texts([("a.yaml", training), ("b.yaml", "a: [\n")])
    full.errors.append(InputError("gone.yaml", "cannot be read: No such file or directory"))
    empty = linter.lint_texts([("c.yaml", "kind: ConfigMap\n")])
    for result, listed in ((full, True), (empty, False)):
        text = "".join(json_pieces(result, linter.params))
        assert text == json.dumps(json.loads(text), indent=2, ensure_ascii=True) + "\n"
        document = json.loads(text)
        assert bool(document["findings"]) is listed and bool(document["estimates"]) is listed
        assert bool(document["errors"]) is listed


def test_a_run_leaves_no_garbage_for_the_paused_collector() -> None:
    """A run pauses the cyclic collector, so a reference cycle made per document or per search
    would stay until the run ends: memory growing with the input (jmespath's own `search`
    made one per call)."""
    linter = Linter(Settings())
    linter.lint_paths([str(EXAMPLES)])  # warm: imports and caches made once are not garbage
    gc.collect()
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        result = linter.lint_paths([str(EXAMPLES)])
        assert result.workloads > 50
        assert gc.collect() < 100  # the run's own interpreter and functions: a few dozen objects
    finally:
        if was_enabled:
            gc.enable()


label_values = st.sampled_from(["a", "b", "c"])
labels = st.dictionaries(st.sampled_from(["app", "team", "tier"]), label_values, max_size=3)
selectors = st.one_of(
    st.none(),
    st.fixed_dictionaries({}, optional={"matchLabels": labels}),
    st.fixed_dictionaries({"matchExpressions": st.lists(st.fixed_dictionaries({
        "key": st.sampled_from(["app", "team"]), "operator": st.sampled_from(["In", "NotIn", "Exists"]),
        "values": st.lists(label_values, max_size=2)}), max_size=2)}, optional={"matchLabels": labels}),
)


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(selectors, st.sampled_from([None, "ns1", "ns2"])), max_size=12),
       labels, st.sampled_from([None, "ns1", "ns2"]))
def test_budget_lookup_finds_what_testing_every_budget_finds(
        budgets: list[tuple[dict[str, Any] | None, str | None]], pod_labels: dict[str, str],
        namespace: str | None) -> None:
    from kubegap_lint.workloads.index import DisruptionBudget

    every = [DisruptionBudget(f"pdb-{number}", budget_namespace, selector, 1, None, "p.yaml", number)
             for number, (selector, budget_namespace) in enumerate(budgets)]
    expected = [b for b in every
                if not (b.namespace is not None and namespace is not None and b.namespace != namespace)
                and selector_matches(b.selector, pod_labels)]
    for limit in (None, 0):  # in memory, and on disk from the first fact
        index = InputIndex(facts_in_memory=limit)
        for budget in every:
            index.add_budget(budget)
        assert index.budgets_for(namespace, pod_labels) == expected


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=10,
)


@settings(max_examples=80, deadline=None)
@given(st.dictionaries(st.text(max_size=4), json_values, min_size=1, max_size=3),
       st.dictionaries(st.text(min_size=5, max_size=6), st.lists(json_values, max_size=4), max_size=3))
def test_json_with_lists_is_one_dump_in_pieces(head: dict[str, Any], lists: dict[str, list[Any]]) -> None:
    from kubegap_lint.core.jsonpieces import json_with_lists

    pieces = "".join(json_with_lists(head, {key: iter(value) for key, value in lists.items()}))
    assert pieces == json.dumps({**head, **lists}, indent=2, ensure_ascii=True) + "\n"


@pytest.mark.slow
def test_memory_does_not_grow_with_a_stream_of_workloads(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Four times the stream, about the same peak. Small limits (a parsed budget of one
    document, 100 findings in memory, runs of 16-finding batches merged past 4 runs, 16 KiB
    blocks of file) put
    everything that could grow with the input to work at this size. A stream of GPU Jobs with
    findings holds no cross-resource facts, which do grow."""
    import tracemalloc

    from kubegap_lint.engine.parallel import collector_paused
    from kubegap_lint.input import stream

    job = (EXAMPLES / "KG303-nccl-flight-recorder-off" / "bad-torchrun-job.yaml").read_text(encoding="utf-8")
    monkeypatch.setattr(stream.PendingWorkloads.__init__, "__defaults__", (len(job) + 100,))
    monkeypatch.setattr(spill, "SPILL_ITEMS", 100)
    monkeypatch.setattr(spill, "MAX_RUNS", 4)
    monkeypatch.setattr(spill, "_BATCH", 16)
    monkeypatch.setattr(stream, "BLOCK_BYTES", 16 * 1024)  # files are read a block at a time
    linter = Linter(Settings())
    peaks = []
    for copies in (150, 300, 1200):  # the first run pays for what is made once (caches)
        path = tmp_path / f"stream-{copies}.yaml"
        path.write_text("".join("---\n" + job.replace("name: ", f"name: c{n}-", 1) for n in range(copies)),
                        encoding="utf-8")
        tracemalloc.start()
        try:
            with collector_paused():  # as the command line runs
                result = linter.lint_paths([str(path)])
                for _ in result.iter_findings():  # as a report reads them
                    pass
            peaks.append(tracemalloc.get_traced_memory()[1])
        finally:
            tracemalloc.stop()
        assert result.workloads == copies and len(result.store) > 4 * 100
    assert peaks[2] < peaks[1] * 1.3, [p // 1024 for p in peaks]  # measured: 1.1-1.2x


def test_without_a_temporary_folder_items_stay_in_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise OSError(30, "Read-only file system")

    import tempfile

    monkeypatch.setattr(tempfile, "TemporaryFile", refuse)
    store: SortedSpill[int] = SortedSpill(lambda item: item, limit=2)
    store.extend([5, 3, 9, 1, 7])
    assert store.runs == [] and list(store) == [1, 3, 5, 7, 9]


def test_a_temporary_folder_that_fails_the_database_is_one_line(tmp_path: Path) -> None:
    import subprocess
    import sys

    (tmp_path / "pvc.yaml").write_text("apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: ckpt\n",
                                       encoding="utf-8")
    # The facts move to disk from the first one, and the database refuses every statement.
    code = ("import sqlite3, sys, kubegap_lint.store.facts as f; f.FACTS_IN_MEMORY = 0; real = sqlite3.connect;"
            " sqlite3.connect = lambda name: (lambda db: (db.close(), db)[1])(real(name));"
            " sys.argv = ['kubegap-lint', 'pvc.yaml']; from kubegap_lint.cli.main import main; main()")
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == [
        "kubegap-lint: cannot keep the input's facts in a temporary database (Cannot operate on a closed"
        " database.): make the temporary folder (TMPDIR) writable, with free space"]
