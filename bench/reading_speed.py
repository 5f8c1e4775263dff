"""Reading alone: the stages of input/read.py on one stream, against the C parser, in CPU seconds.

    python bench/reading_speed.py FILE [--runs 5] [--stages split,read,cparser]

Each run, in this process and alternated stage by stage: `split` (the line scan of
scan.split_documents over the decoded lines), `read` (everything read.read_lines does: split,
compose, walk and the resources; lines from stream.source_lines as a lint reads them), and
`cparser` (ruamel.yaml.clib's CParser with ruamel's Resolver and node classes composing every
document of the same bytes, as `baselines.py cparser`). Prints the median CPU seconds of each
and the ratio of `read` to `cparser` (below 1: reading is faster than the bare composing).
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))


def _split(path: str) -> int:
    from kubegap_lint.input.scan import split_documents
    from kubegap_lint.input.stream import source_lines

    with open(path, "rb") as handle:
        return sum(1 for _ in split_documents(source_lines(handle, [])))


def _read(path: str) -> int:
    from kubegap_lint.input.read import ReadStats, read_lines
    from kubegap_lint.input.stream import source_lines

    bad: list[int] = []
    with open(path, "rb") as handle:
        return sum(1 for _ in read_lines(path, source_lines(handle, bad), ReadStats(), bad))


def _cparser(path: str) -> int:
    from baselines import compose_all

    return compose_all([path])


STAGES: dict[str, Callable[[str], int]] = {"split": _split, "read": _read, "cparser": _cparser}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("file")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--stages", default="split,read,cparser")
    args = parser.parse_args()
    stages = args.stages.split(",")
    times: dict[str, list[float]] = {stage: [] for stage in stages}
    counts: dict[str, int] = {}
    for _ in range(args.runs):
        for stage in stages:
            gc.collect()
            start = time.process_time()
            counts[stage] = STAGES[stage](args.file)
            times[stage].append(time.process_time() - start)
    for stage in stages:
        print(f"{stage:8} {statistics.median(times[stage]):7.3f} CPU s  ({counts[stage]} items)"
              f"  runs: {' '.join(f'{t:.3f}' for t in times[stage])}")
    if "read" in times and "cparser" in times:
        print(f"read / cparser: {statistics.median(times['read']) / statistics.median(times['cparser']):.2f}")


if __name__ == "__main__":
    main()
