"""The report writers alone, in CPU seconds: lint FILE once, then write its report in each format.

    python bench/report_speed.py FILE [--runs 5] [--formats json,sarif,text,github]

The lint runs once in this process (`--jobs 1`, as `python -m kubegap_lint` does); each run then
renders the result in every format, alternated format by format, into memory (what
cli/common.write sends to the output). Prints the median CPU seconds of each format.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import time


def main() -> None:
    from kubegap_lint.config.settings import Settings
    from kubegap_lint.engine.parallel import lint_paths
    from kubegap_lint.engine.run import Linter
    from kubegap_lint.report.formats import ReportOptions, render

    parser = argparse.ArgumentParser()
    parser.add_argument("file")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--formats", default="json,sarif,text,github")
    args = parser.parse_args()
    linter = Linter(Settings())
    result = lint_paths(linter, [args.file], jobs=1)
    formats = args.formats.split(",")
    times: dict[str, list[float]] = {fmt: [] for fmt in formats}
    sizes: dict[str, int] = {}
    for _ in range(args.runs):
        for fmt in formats:
            gc.collect()
            start = time.process_time()
            report = render(fmt, result, ReportOptions(params=linter.params, sarif_root="/"))
            sizes[fmt] = sum(len(piece) for piece in report.pieces)
            times[fmt].append(time.process_time() - start)
    for fmt in formats:
        print(f"{fmt:7} {statistics.median(times[fmt]):7.3f} CPU s  ({sizes[fmt]} characters)"
              f"  runs: {' '.join(f'{t:.3f}' for t in times[fmt])}")


if __name__ == "__main__":
    main()
