"""The spill record format alone: every resource of a stream read once, then each one's spill
record (input/stream.py: its document's part and its own, as PendingWorkloads writes them)
marshalled and loaded back, in this process, repeated; the bytes, and the median CPU
milliseconds of the dumps and of the loads, of the positions part, the data part and both
in one call (as the spill writes them: the keys are written once, as references).

    python bench/spill_records.py bench/out/stream-1k.yaml [--runs 5]
"""

from __future__ import annotations

import argparse
import marshal
import statistics
import time
from typing import Any


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("file")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    from kubegap_lint.input.read import ReadStats, Resource, read_lines
    from kubegap_lint.input.stream import _document_record, _item_record, source_lines

    bad: list[int] = []
    with open(args.file, "rb") as handle:
        resources = [r for r in read_lines(args.file, source_lines(handle, bad), ReadStats(), bad)
                     if isinstance(r, Resource)]
    parts: dict[str, list[Any]] = {"positions": [], "data": [], "both": []}
    for resource in resources:
        document, item = _document_record(resource), _item_record(resource)
        parts["positions"].append(document)
        parts["data"].append(item)
        parts["both"].append((document, item, 0))
    for name, records in parts.items():
        dumps: list[float] = []
        loads: list[float] = []
        size = 0
        for _ in range(args.runs):
            start = time.process_time()
            blobs = [marshal.dumps(record) for record in records]
            middle = time.process_time()
            for blob in blobs:
                marshal.loads(blob)
            dumps.append(middle - start)
            loads.append(time.process_time() - middle)
            size = sum(map(len, blobs))
        print(f"{name:9} {size / 1e6:6.2f} MB  dumps {1000 * statistics.median(dumps):5.0f} ms"
              f"  loads {1000 * statistics.median(loads):5.0f} ms  ({len(records)} resources)")


if __name__ == "__main__":
    main()
