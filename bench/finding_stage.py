"""What a finding costs once a rule's violation is true, stage by stage (issue 17), in one process.

    python bench/finding_stage.py bench/out/stream-10k.yaml [ROUNDS]

Lints the file once (as `--format json --jobs 1` does), recording every call of
`_Workload.finding` with its workload. Then, ROUNDS times each, alternated: `finding` makes
every finding again (locating it, its message, the Finding itself) on a fresh `_Workload` a
workload, as the run did; `take` re-reads the suppressions and chart notes of every resource
(`Suppressor.collect`, `TemplateMapper.note`); `store` adds the findings to a sorted store in
their order of arrival and reads it twice (the tally, then the report); `json` writes the JSON
report of the lint. Prints the median CPU seconds of each. It uses only names main has too, so
the same script measures another version of the code given on PYTHONPATH (alternate them).
"""

from __future__ import annotations

import gc
import statistics
import sys
import time
from typing import Any


def main() -> None:
    from kubegap_lint.config.settings import Settings
    from kubegap_lint.core.model import Finding
    from kubegap_lint.engine import evaluate
    from kubegap_lint.engine import run as engine_run
    from kubegap_lint.report.formats import ReportOptions, render
    from kubegap_lint.store.spill import SortedSpill

    path, rounds = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 5
    calls: list[tuple[Any, Any, Any, list[Any], int, Any]] = []  # workload args, policy, elements...
    arrived: list[Any] = []
    resources: list[Any] = []
    made = evaluate._Workload.finding
    added = SortedSpill.add
    take = engine_run._Run.take

    def finding(self: Any, policy: Any, elements: list[Any], number: int, element: Any) -> Any:
        calls.append(((self.view, self.resource, self.interpreter, self.tracked), policy, elements, number, element))
        return made(self, policy, elements, number, element)

    def add(self: Any, item: Any) -> None:
        if isinstance(item, Finding):
            arrived.append(item)
        added(self, item)

    def taken(self: Any, item: Any) -> Any:
        if not hasattr(item, "message"):
            resources.append(item)
        return take(self, item)

    evaluate._Workload.finding = finding  # type: ignore[method-assign]
    SortedSpill.add = add  # type: ignore[method-assign]
    engine_run._Run.take = taken  # type: ignore[method-assign]
    try:
        linter = engine_run.Linter(Settings())
        result = linter.lint_paths([path])
    finally:
        evaluate._Workload.finding = made  # type: ignore[method-assign]
        SortedSpill.add = added  # type: ignore[method-assign]
        engine_run._Run.take = take  # type: ignore[method-assign]
    key = Finding.sort_key
    gc.disable()  # as a run has it (run.collector_paused)

    def findings() -> None:
        workload = None
        last = None
        for args, policy, elements, number, element in calls:
            if args[0] is not last:
                last = args[0]
                workload = evaluate._Workload(args[0], args[1], args[2], None, args[3])
            workload.finding(policy, elements, number, element)  # type: ignore[union-attr]

    def takes() -> None:
        from kubegap_lint.helm.mapping import TemplateMapper
        from kubegap_lint.suppress.suppressor import Suppressor

        suppressor = Suppressor(linter)
        mapper = TemplateMapper(linter.settings.chart_dirs, linter.template_places)
        for resource in resources:
            suppressor.collect(resource)
            mapper.note(resource)

    def store() -> None:
        spill = SortedSpill(key)
        for item in arrived:
            spill.add(item)
        for _ in range(2):
            for _ in spill:
                pass
        spill.close()

    def report() -> None:
        result._tally = None
        for _ in render("json", result, ReportOptions(params=linter.params)).pieces:
            pass

    stages = {"finding": findings, "take": takes, "store": store, "json": report}
    times: dict[str, list[float]] = {name: [] for name in stages}
    for _ in range(rounds):
        for name, stage in stages.items():
            start = time.process_time()
            stage()
            times[name].append(time.process_time() - start)
    print(f"{len(calls)} findings made, {len(arrived)} stored, {len(resources)} resources")
    for name, spent in times.items():
        print(f"{name:8} {statistics.median(spent):7.3f} CPU s  runs: {' '.join(f'{t:.3f}' for t in spent)}")


if __name__ == "__main__":
    main()
