"""Building workload views alone (issue 17), in one process.

    python bench/view_build.py bench/out/stream-1k.yaml [ROUNDS] [all]

Reads the file as a run does (every resource indexed, the workloads kept parsed), then builds
the view of every workload ROUNDS times with a fresh ViewContext each round, as a run
would: only the facts the active rules read (engine/evaluate.view_needs), the deferred
ones only where a rule that reads them applies (engine/guards.py; the `applies_to` it asks is
counted here, though a run's evaluation then reuses the answer), or every fact with `all`
(what keep_views builds: Linter.lint_paths(..., keep_views=True)). Prints the median CPU seconds
of one round. Run it with PYTHONPATH set to compare two checkouts on the same interpreter.
"""

from __future__ import annotations

import dataclasses
import gc
import statistics
import sys
import time
from typing import Any

from kubegap_lint.config.settings import Settings
from kubegap_lint.engine.run import Linter, _Run
from kubegap_lint.input.read import ReadStats, Resource
from kubegap_lint.input.readers import SourceReader
from kubegap_lint.input.sources import discover
from kubegap_lint.workloads.views import workload_view


def workloads(linter: Linter, path: str) -> tuple[_Run, list[tuple[Resource, Any]]]:
    sources, errors = discover([path], linter.settings.exclude)
    run = _Run(linter, list(errors), keep_views=False)
    found = []
    for _, item in SourceReader(sources).read(ReadStats(), run.errors):
        rule = run.take(item)
        if rule is not None:
            assert isinstance(item, Resource)
            found.append((item, rule))
    return run, found


def main() -> None:
    path = sys.argv[1]
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    every = len(sys.argv) > 3 and sys.argv[3] == "all"
    linter = Linter(Settings())
    run, items = workloads(linter, path)
    gc.disable()  # as a run has it (engine/run.collector_paused)
    base = run.context  # as a run makes it: the facts the rules read, the deferred ones guarded
    times = []
    built = 0
    for _ in range(rounds):
        # A fresh context each round (its caches empty), as a run starts with.
        context = dataclasses.replace(base, needs=None if every else base.needs, gpu_names={}, nccl_names={},
                                      commands={})
        start = time.process_time()
        views = [workload_view(resource, rule, context) for resource, rule in items]
        times.append(time.process_time() - start)
        built = sum(v is not None for v in views)
        del views
    print(f"{built} views ({'every fact' if every else 'the facts the rules read'}): "
          f"{statistics.median(times):.3f} CPU s a round (median of {rounds})")


if __name__ == "__main__":
    main()
