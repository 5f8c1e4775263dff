"""Policy evaluation alone, the interpreter against the compiler (issue 17), in one process.

    python bench/policy_eval.py bench/out/stream-1k.yaml [ROUNDS]

Lints the file once to get the workload views, then evaluates every workload policy on every
view as a run does (applies_to; for_each; on each element violation, and for a violation the
`at` places, the message and severity_expr), alternating the two evaluators ROUNDS times.
Prints CPU seconds (median) of each and their ratio.
"""

from __future__ import annotations

import gc
import statistics
import sys
import time
from typing import Any

import jmespath
from jmespath.visitor import TreeInterpreter

from kubegap_lint.catalog.compile import is_true as truthy
from kubegap_lint.catalog.functions import PolicyFunctions, PolicyInterpreter
from kubegap_lint.config.settings import Settings
from kubegap_lint.engine.run import Linter


class TreeSearch:
    """jmespath's own interpreter, one a run: what the compiler replaced."""

    def __init__(self, params: dict[str, Any]) -> None:
        self._visit = TreeInterpreter(jmespath.Options(custom_functions=PolicyFunctions(params))).visit

    def search(self, expression: Any, value: Any) -> Any:
        return self._visit(expression.parsed, value)


def evaluate_all(linter: Linter, views: list[dict[str, Any]], interpreter: Any) -> int:
    found = 0
    search = interpreter.search
    for view in views:
        for policy in linter.workload_policies:
            if not truthy(search(policy.applies_to, view)):
                continue
            value = search(policy.for_each, view) if policy.for_each else [view]
            elements = value if isinstance(value, list) else ([value] if truthy(value) else [])
            for element in elements:
                if not truthy(search(policy.violation, element)):
                    continue
                found += 1
                for _, expression in policy.at:
                    try:
                        search(expression, element)
                    except Exception:
                        pass
                if policy.message is not None:
                    policy.message.render(element, interpreter)
                if policy.severity_expr is not None:
                    search(policy.severity_expr, element)
    return found


def main() -> None:
    path, rounds = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 5
    linter = Linter(Settings())
    views = linter.lint_paths([path], keep_views=True).views
    gc.disable()  # as a run has it (parallel.collector_paused)
    times: dict[str, list[float]] = {"interpreter": [], "compiled": []}
    counts = {}
    for _ in range(rounds):
        for name in times:
            interpreter = PolicyInterpreter(linter.params) if name == "compiled" else TreeSearch(linter.params)
            start = time.process_time()
            counts[name] = evaluate_all(linter, views, interpreter)
            times[name].append(time.process_time() - start)
    assert counts["interpreter"] == counts["compiled"], counts
    slow, fast = statistics.median(times["interpreter"]), statistics.median(times["compiled"])
    print(f"{len(views)} views, {len(linter.workload_policies)} policies, {counts['compiled']} findings")
    print(f"| evaluator | CPU s (median of {rounds}) |\n|---|---:|")
    print(f"| jmespath TreeInterpreter (one a run) | {slow:.3f} |\n| compiled closures | {fast:.3f} |")
    print(f"\ncompiled: {slow / fast:.2f}x the interpreter's speed")


if __name__ == "__main__":
    main()
