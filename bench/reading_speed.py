"""Reading alone: the stages of input/read.py on one stream, against the C parser, in CPU seconds.

    python bench/reading_speed.py FILE [--runs 5] [--stages split,read,cparser]

Each run, in this process and alternated stage by stage: `split` (the scan a lint runs:
scan.split_texts over stream.source_texts' pieces of text), `lines` (scan.split_documents over
stream.source_lines, one line at a time, as parallel.py reads), `read` (everything a lint's
readers.SourceReader does: split, compose, walk and the resources), and
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
    try:
        from kubegap_lint.input.scan import split_texts
        from kubegap_lint.input.stream import source_texts
    except ImportError:  # code from before split_texts: the line scan was the lint's
        return _lines(path)

    with open(path, "rb") as handle:
        return sum(1 for _ in split_texts(source_texts(handle, [])))


def _lines(path: str) -> int:
    from kubegap_lint.input.scan import split_documents
    from kubegap_lint.input.stream import source_lines

    with open(path, "rb") as handle:
        return sum(1 for _ in split_documents(source_lines(handle, [])))


def _read(path: str) -> int:
    from kubegap_lint.input.read import ReadStats
    from kubegap_lint.input.readers import SourceReader
    from kubegap_lint.input.sources import Source

    reader = SourceReader([Source(path, path)])
    return sum(1 for _ in reader.read(ReadStats(), []))


def _cparser(path: str) -> int:
    from baselines import compose_all

    return compose_all([path])


STAGES: dict[str, Callable[[str], int]] = {"split": _split, "lines": _lines, "read": _read, "cparser": _cparser}


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
