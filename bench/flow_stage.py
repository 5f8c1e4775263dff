"""The run's own flow around evaluation (issue 17), stage by stage, in one process.

    python -P bench/flow_stage.py bench/out/stream-10k.yaml [ROUNDS] [OTHER_ROOT]

Lints the file once (as `--format json --jobs 1` does), keeping the workloads the run queued
(with their rules), the resources it took and the findings it stored. Then, ROUNDS times each,
alternated: `spill` queues every workload in a fresh `PendingWorkloads` (the streaming budget:
most are spilled) and reads them all back; `take` re-reads the suppressions and chart notes of
every resource; `store` adds the findings to a tallied sorted store and reads it once; `json`
writes the JSON report through cli/common.write to /dev/null. Prints the median CPU seconds
of each. With OTHER_ROOT (a checkout or a `git archive` of one), that version's package is
loaded beside this one under another name (as bench/ab_lint.py does) and each stage is timed
with both, alternated, in one process: on a shared machine, the fair comparison.
"""

from __future__ import annotations

import gc
import importlib
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any


def stages(package: str, path: str) -> dict[str, Callable[[], None]]:
    """The stages of one version of the package, over what its own lint of path queued."""
    def module(name: str) -> Any:
        return importlib.import_module(f"{package}.{name}")

    common, engine_run, stream = module("cli.common"), module("engine.run"), module("input.stream")
    Settings, Finding = module("config.settings").Settings, module("core.model").Finding
    formats, SortedSpill = module("report.formats"), module("store.spill").SortedSpill
    ReportOptions, render = formats.ReportOptions, formats.render
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

    def spill() -> None:
        pending = stream.PendingWorkloads()
        for resource, rule in queued:
            pending.add(resource, rule)
        for _ in pending:
            pass

    def takes() -> None:
        TemplateMapper, Suppressor = module("helm.mapping").TemplateMapper, module("suppress.suppressor").Suppressor
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

    print(f"{package}: {len(queued)} workloads queued, {len(arrived)} findings stored, {len(resources)} resources")
    return {"spill": spill, "take": takes, "store": store, "json": report}


def main() -> None:
    path, rounds = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 5
    with tempfile.TemporaryDirectory() as folder:
        versions = {"this": stages("kubegap_lint", path)}
        if len(sys.argv) > 3:
            sys.path.insert(0, str(Path(__file__).resolve().parent))
            from ab_lint import _renamed_copy

            _renamed_copy(Path(sys.argv[3]).resolve(), Path(folder), "kgother")
            sys.path.insert(0, folder)
            versions["other"] = stages("kgother", path)
        gc.disable()  # as a run has it (run.collector_paused)
        times: dict[tuple[str, str], list[float]] = {(version, name): [] for version in versions for name in versions[version]}
        for number in range(rounds):
            order = list(versions) if number % 2 == 0 else list(reversed(versions))
            for name in versions["this"]:
                for version in order:
                    gc.collect()
                    start = time.process_time()
                    versions[version][name]()
                    times[version, name].append(time.process_time() - start)
    for (version, name), spent in times.items():
        print(f"{version:5} {name:6} {statistics.median(spent):7.3f} CPU s  runs: {' '.join(f'{t:.3f}' for t in spent)}")


if __name__ == "__main__":
    main()
