"""Building workload views, this checkout against another, interleaved in one process (issue 17).

    python -P bench/ab_views.py OTHER_ROOT FILE [PASSES]

Each version reads FILE with its own reader (every resource indexed, the workloads kept
parsed), then each pass builds every workload's view with a fresh ViewContext of each version
(a ViewBuilder before issue 28), as a run would (the facts the active rules read, the deferred ones where a rule that
reads them applies), 50 workloads of one version, then the same 50 of the other, their order
swapped every chunk. The CPU seconds of each version are summed over the chunks: on a loaded
machine both see the same load within a fraction of a second, which whole rounds one after the
other do not. Prints each pass's totals and their ratio. Set KUBEGAP_LINT_CACHE_DIR to a folder
of its own.
"""

from __future__ import annotations

import dataclasses
import gc
import importlib
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

_HERE = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(_HERE / "bench"))  # `python -P` leaves the script's folder out
from ab_lint import _renamed_copy  # noqa: E402 - the copy ab_lint.py makes

_CHUNK = 50


def _setup(package: str, path: str) -> tuple[list[tuple[Any, Any]], Callable[[], Any]]:
    def module(name: str) -> Any:
        return importlib.import_module(f"{package}.{name}")

    views, diagnostic = module("workloads.views"), module("workloads.diagnostic")
    linter = module("engine.run").Linter(module("config.settings").Settings())
    sources, errors = module("input.sources").discover([path], linter.settings.exclude)
    run = module("engine.run")._Run(linter, list(errors), keep_views=False)
    items = []
    for _, item in module("input.readers").SourceReader(sources).read(module("input.read").ReadStats(), run.errors):
        rule = run.take(item)
        if rule is not None:
            items.append((item, rule))
    params = linter.params
    if hasattr(views, "ViewBuilder"):  # a version from before the records (issue 28)
        needs = module("engine.evaluate").view_needs(linter.workload_policies)
        applies = module("engine.guards").applies_check(linter.workload_policies, views.ViewBuilder.DEFERRED,
                                                        run.plan.applies)

        def builder() -> Any:  # as a run starts: the per-run memories empty
            diagnostic._VERDICTS.clear()
            views._PATHS_OF.clear()
            return views.ViewBuilder(run.index, params.get("gpu_resources", []),
                                     params.get("nccl_gpu_resources", []), linter.kind_table,
                                     params.get("diagnostic_commands", []), needs, applies).workload_view
    else:
        base = run.context

        def builder() -> Any:  # as a run starts: the per-run memories empty
            diagnostic._VERDICTS.clear()
            module("workloads.commandline")._PATHS_OF.clear()
            context = dataclasses.replace(base, gpu_names={}, nccl_names={}, commands={})
            return lambda resource, rule: views.workload_view(resource, rule, context)

    return items, builder


def main() -> None:
    other, path = Path(sys.argv[1]).resolve(), sys.argv[2]
    passes = int(sys.argv[3]) if len(sys.argv) > 3 else 4
    with tempfile.TemporaryDirectory() as folder:
        _renamed_copy(other, Path(folder), "kgother")
        sys.path[:0] = [folder, str(_HERE)]
        setups = {"other": _setup("kgother", path), "this": _setup("kubegap_lint", path)}
        gc.disable()  # as a run has it
        count = len(setups["this"][0])
        for number in range(passes):
            builders = {name: make() for name, (_, make) in setups.items()}
            totals = {"other": 0.0, "this": 0.0}
            for chunk, start in enumerate(range(0, count, _CHUNK)):
                for name in ("other", "this") if chunk % 2 == 0 else ("this", "other"):
                    items, builder = setups[name][0][start:start + _CHUNK], builders[name]
                    began = time.process_time()
                    views = [builder(resource, rule) for resource, rule in items]
                    totals[name] += time.process_time() - began
                    del views
            print(f"pass {number}: other {totals['other']:.3f} this {totals['this']:.3f} CPU s, "
                  f"this/other {totals['this'] / totals['other']:.3f}", flush=True)


if __name__ == "__main__":
    main()
