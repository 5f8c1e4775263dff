"""The run's own flow around evaluation (issue 17), stage by stage, in one process.

    python bench/flow_stage.py bench/out/stream-10k.yaml [ROUNDS]

Lints the file once (as `--format json --jobs 1` does), keeping the workloads the run queued
(with their rules), the resources it took and the findings it stored. Then, ROUNDS times each,
alternated: `spill` queues every workload in a fresh `PendingWorkloads` (the streaming budget:
most are spilled) and reads them all back; `take` re-reads the suppressions and chart notes of
every resource; `store` adds the findings to a tallied sorted store and reads it once; `json`
writes the JSON report through cli/common.write to /dev/null. Prints the median CPU seconds
of each. It uses only names main has too, so the same script measures another version of the
code given on PYTHONPATH (alternate them).
"""

from __future__ import annotations

import gc
import os
import statistics
import sys
import time
from typing import Any


def main() -> None:
    from kubegap_lint.cli import common
    from kubegap_lint.config.settings import Settings
    from kubegap_lint.core.model import Finding
    from kubegap_lint.engine import run as engine_run
    from kubegap_lint.input import stream
    from kubegap_lint.report.formats import ReportOptions, render
    from kubegap_lint.store.spill import SortedSpill

    path, rounds = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 5
    queued: list[tuple[Any, Any]] = []
    arrived: list[Any] = []
    resources: list[Any] = []
    queue = stream.PendingWorkloads.add
    added = SortedSpill.add
    take = engine_run._Run.take

    def add_workload(self: Any, resource: Any, rule: Any) -> bool:
        queued.append((resource, rule))
        return queue(self, resource, rule)

    def add(self: Any, item: Any) -> None:
        if isinstance(item, Finding):
            arrived.append(item)
        added(self, item)

    def taken(self: Any, item: Any) -> Any:
        if not hasattr(item, "message"):
            resources.append(item)
        return take(self, item)

    stream.PendingWorkloads.add = add_workload  # type: ignore[method-assign]
    SortedSpill.add = add  # type: ignore[method-assign]
    engine_run._Run.take = taken  # type: ignore[method-assign]
    try:
        linter = engine_run.Linter(Settings())
        result = linter.lint_paths([path])
    finally:
        stream.PendingWorkloads.add = queue  # type: ignore[method-assign]
        SortedSpill.add = added  # type: ignore[method-assign]
        engine_run._Run.take = take  # type: ignore[method-assign]
    gc.disable()  # as a run has it (run.collector_paused)

    def spill() -> None:
        pending = stream.PendingWorkloads()
        for resource, rule in queued:
            pending.add(resource, rule)
        for _ in pending:
            pass

    def takes() -> None:
        from kubegap_lint.helm.mapping import TemplateMapper
        from kubegap_lint.suppress.suppressor import Suppressor

        suppressor = Suppressor(linter)
        mapper = TemplateMapper(linter.settings.chart_dirs, linter.template_places)
        for resource in resources:
            suppressor.collect(resource)
            mapper.note(resource)

    def store() -> None:
        kept = SortedSpill(Finding.sort_key, tally=engine_run._tally_key)
        for item in arrived:
            kept.add(item)
        for _ in kept:
            pass
        kept.close()

    def report() -> None:
        result._tally = None
        common.write(render("json", result, ReportOptions(params=linter.params)).pieces, os.devnull)

    stages = {"spill": spill, "take": takes, "store": store, "json": report}
    times: dict[str, list[float]] = {name: [] for name in stages}
    for _ in range(rounds):
        for name, stage in stages.items():
            gc.collect()
            start = time.process_time()
            stage()
            times[name].append(time.process_time() - start)
    print(f"{len(queued)} workloads queued, {len(arrived)} findings stored, {len(resources)} resources")
    for name, spent in times.items():
        print(f"{name:8} {statistics.median(spent):7.3f} CPU s  runs: {' '.join(f'{t:.3f}' for t in spent)}")


if __name__ == "__main__":
    main()
