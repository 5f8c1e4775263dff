"""The evaluation stage of a real run, views apart (issue 17), in one process.

    python bench/evaluate_stage.py bench/out/stream-1k.yaml [ROUNDS]

Lints the file once, keeping each workload's view as the run built it (only the facts the
rules read). Then, ROUNDS times, runs `_Run.evaluate` again on every workload with its view
given back instead of built: what remains is the stage after the views, the policies on each
view and everything a finding goes through (locating it, its message, the template mapping,
the suppressions, the sorted store), plus the small interruption estimate. Prints the median
CPU seconds. It calls only `_Run.evaluate` and `workloads.views.workload_view` (a ViewBuilder's
before issue 28), so the same script measures another version of the code given on PYTHONPATH
(alternate them to compare).
"""

from __future__ import annotations

import gc
import statistics
import sys
import time
from typing import Any

from kubegap_lint.config.settings import Settings
from kubegap_lint.core.model import Finding
from kubegap_lint.engine import run as engine_run
from kubegap_lint.store.spill import SortedSpill


def main() -> None:
    path, rounds = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 5
    captured: list[tuple[Any, int, Any, Any, Any]] = []
    evaluate = engine_run._Run.evaluate

    from kubegap_lint.workloads import views as views_module

    def build(run: Any, resource: Any, rule: Any) -> Any:
        if hasattr(run, "builder"):  # a version from before the records (issue 28)
            return run.builder.workload_view(resource, rule)
        return views_module.workload_view(resource, rule, run.context)

    def capture(run: Any, order: int, resource: Any, rule: Any) -> None:
        captured.append((run, order, resource, rule, build(run, resource, rule)))
        evaluate(run, order, resource, rule)

    engine_run._Run.evaluate = capture  # type: ignore[method-assign]
    try:
        linted = engine_run.Linter(Settings()).lint_paths([path])
        expected = sum(1 for _ in linted.iter_findings())
    finally:
        engine_run._Run.evaluate = evaluate  # type: ignore[method-assign]
    if not captured:
        sys.exit(f"{path}: no workloads")
    run = captured[0][0]
    views = {id(resource): view for _, _, resource, _, view in captured}
    if hasattr(run, "builder"):
        run.builder.workload_view = lambda resource, rule: views[id(resource)]
    else:
        views_module.workload_view = lambda resource, rule, context: views[id(resource)]  # type: ignore[assignment]
    gc.disable()  # as a run has it (run.collector_paused)
    times = []
    found = 0
    for _ in range(rounds):
        run.findings = SortedSpill(Finding.sort_key, limit=sys.maxsize)  # kept in memory: no spill timed
        run.estimates = SortedSpill(lambda pair: pair[0], limit=sys.maxsize)
        start = time.process_time()
        for _, order, resource, rule, _ in captured:
            run.evaluate(order, resource, rule)
        times.append(time.process_time() - start)
        found = len(run.findings)
    print(f"{len(captured)} workloads, {found} findings ({expected} in the lint, with faults and notes)")
    print(f"evaluation after the views: median {statistics.median(times):.3f} CPU s of {rounds} "
          f"(min {min(times):.3f})")


if __name__ == "__main__":
    main()
