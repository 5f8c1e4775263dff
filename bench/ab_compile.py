"""The policy compiler alone, two versions alternated in one process (issue 28): every workload
policy on every view of FILE, evaluated as bench/policy_eval.py evaluates them, by this
checkout's catalog/compile.py and by another compile.py (a file of an older checkout).

    python -P bench/ab_compile.py OTHER_COMPILE_PY FILE [ROUNDS] [THIS_COMPILE_PY]

Views are built once (every fact, as kept views have them). Each round makes a fresh
interpreter of each version and evaluates the views 25 at a time, alternating the versions
chunk by chunk (the order swapped each chunk), so a shared machine's load falls on both alike;
prints the medians of the per-round CPU sums and the ratios round by round. The findings
counted must agree.
"""

from __future__ import annotations

import gc
import importlib.util
import statistics
import sys
import time
from pathlib import Path
from types import ModuleType

sys.path.insert(0, str(Path(__file__).resolve().parent))
from policy_eval import evaluate_all  # noqa: E402

from kubegap_lint.catalog.functions import PolicyInterpreter  # noqa: E402
from kubegap_lint.config.settings import Settings  # noqa: E402
from kubegap_lint.engine.run import Linter  # noqa: E402

CHUNK = 25


def _module(name: str, path: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main() -> None:
    args = sys.argv[1:]
    rounds = int(args[2]) if len(args) > 2 else 5
    this_path = args[3] if len(args) > 3 else str(Path(__file__).resolve().parent.parent
                                                   / "kubegap_lint" / "catalog" / "compile.py")
    versions = {"other": _module("other_compile", args[0]), "this": _module("this_compile", this_path)}
    linter = Linter(Settings())
    views = linter.lint_paths([args[1]], keep_views=True).views
    gc.disable()  # as a run has it (parallel.collector_paused)
    times: dict[str, list[float]] = {name: [] for name in versions}
    counts = dict.fromkeys(versions, 0)
    for number in range(rounds):
        interpreters = {}
        for name, module in versions.items():
            interpreters[name] = interpreter = PolicyInterpreter(linter.params)
            interpreter.compiler = module.Compiler(interpreter._functions, interpreter.budget)
        spent = dict.fromkeys(versions, 0.0)
        for chunk in range(0, len(views), CHUNK):
            order = ("other", "this") if (chunk // CHUNK + number) % 2 == 0 else ("this", "other")
            for name in order:
                start = time.process_time()
                counts[name] += evaluate_all(linter, views[chunk:chunk + CHUNK], interpreters[name])
                spent[name] += time.process_time() - start
        for name, seconds in spent.items():
            times[name].append(seconds)
    assert counts["other"] == counts["this"], counts
    other, this = statistics.median(times["other"]), statistics.median(times["this"])
    ratios = sorted(b / a for a, b in zip(times["other"], times["this"], strict=True))
    print(f"{len(views)} views, {rounds} rounds: other {other:.3f} this {this:.3f} CPU s (medians); "
          f"this/other {this / other:.3f}; round by round {', '.join(f'{r:.2f}' for r in ratios)}")


if __name__ == "__main__":
    main()
