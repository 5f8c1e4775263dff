"""Two versions of the whole lint in one process, alternated (issue 17): this checkout's
package against another checkout's, for a CPU comparison on a shared, noisy machine.

    python -P bench/ab_lint.py OTHER_ROOT FILE [ROUNDS] [--json]

OTHER_ROOT is a checkout (or a `git archive` of one) with `kubegap_lint/`, `policies/` and
`schemas/`. Its package is copied to a temporary folder under another name (every
`kubegap_lint` in its modules renamed), so both import side by side; each round lints FILE
once with each version (`Linter.lint_paths`, findings read, no report written), their order
swapped every round, and prints the CPU seconds. Each version's Linter (catalog, kind table)
is made once. The two share the interpreter, its warm caches and the machine's load at that
moment, which separate processes one after the other do not; compare the medians and the
round-by-round ratios. Set KUBEGAP_LINT_CACHE_DIR to a folder of its own. With `--json`, each
lint also writes its JSON report (as `--format json` does: formats.render, cli/common.write) to
the null device, counted in its time.
"""

from __future__ import annotations

import gc
import importlib
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

_HERE = Path(__file__).resolve().parent.parent


def _renamed_copy(root: Path, into: Path, name: str) -> None:
    target = into / name
    shutil.copytree(root / "kubegap_lint", target, ignore=shutil.ignore_patterns("__pycache__"))
    for module in target.rglob("*.py"):
        module.write_text(module.read_text(encoding="utf-8").replace("kubegap_lint", name), encoding="utf-8")
    for folder in ("policies", "schemas"):  # core/datapaths: next to the package
        (into / folder).symlink_to(root / folder)


def _linter(package: str) -> Any:
    run = importlib.import_module(f"{package}.engine.run")
    settings = importlib.import_module(f"{package}.config.settings")
    return run.Linter(settings.Settings())


def _json_report(package: str, linter: Any, result: Any) -> int:
    import os

    common = importlib.import_module(f"{package}.cli.common")
    formats = importlib.import_module(f"{package}.report.formats")
    common.write(formats.render("json", result, formats.ReportOptions(params=linter.params)).pieces, os.devnull)
    return sum(result.tally().by_severity.values())


def main() -> None:
    report = "--json" in sys.argv
    args = [a for a in sys.argv[1:] if a != "--json"]
    other, path = Path(args[0]).resolve(), args[1]
    rounds = int(args[2]) if len(args) > 2 else 4
    with tempfile.TemporaryDirectory() as folder:
        _renamed_copy(other, Path(folder), "kgother")
        sys.path[:0] = [folder, str(_HERE)]
        linters = {"other": _linter("kgother"), "this": _linter("kubegap_lint")}
        times: dict[str, list[float]] = {"other": [], "this": []}
        found: dict[str, int] = {}
        for number in range(rounds):
            for name in ("other", "this") if number % 2 == 0 else ("this", "other"):
                gc.collect()
                start = time.process_time()
                result = linters[name].lint_paths([path])
                if report:
                    found[name] = _json_report("kgother" if name == "other" else "kubegap_lint", linters[name], result)
                else:
                    found[name] = sum(1 for _ in result.iter_findings())
                times[name].append(time.process_time() - start)
                del result
            print(f"round {number}: other {times['other'][-1]:.2f} this {times['this'][-1]:.2f} CPU s", flush=True)
    for name, values in times.items():
        print(f"{name:5}: median {statistics.median(values):.3f} CPU s, min {min(values):.3f} ({found[name]} findings)")
    ratios = sorted(this / other for other, this in zip(times["other"], times["this"], strict=True))
    print(f"this/other: {statistics.median(times['this']) / statistics.median(times['other']):.3f} of the medians; "
          f"round by round {', '.join(f'{r:.3f}' for r in ratios)}")


if __name__ == "__main__":
    main()
