"""What waiting workloads cost a streaming run: one lint in this process with the default
parsed-workload budget (input/stream.py's RETAIN_CHARS; workloads past it are spilled as
marshal records to a private temporary file and read back once the index is complete), with
none (`spill`: every workload spilled), or with no limit (`all`: every workload kept parsed,
the fastest and largest). Since issue 17 no workload is parsed a second time; the name stays
for the comparison it first made. CPU seconds, peak memory, and how many workloads were
spilled. Run each in its own process:

    python bench/second_parse.py default bench/out/stream-10k.yaml
    python bench/second_parse.py spill bench/out/stream-10k.yaml
    python bench/second_parse.py all bench/out/stream-10k.yaml
"""

from __future__ import annotations

import resource
import sys
import time

BUDGETS = {"all": sys.maxsize, "spill": 0}


def main() -> None:
    budget, path = sys.argv[1], sys.argv[2]
    from kubegap_lint.input import stream
    from kubegap_lint.store import records

    if budget in BUDGETS:
        stream.PendingWorkloads.__init__.__defaults__ = (BUDGETS[budget],)
    elif budget != "default":
        raise SystemExit("usage: second_parse.py default|spill|all FILE")
    spills: list[records.RecordSpill] = []
    made = records.RecordSpill.__init__

    def counted(self: records.RecordSpill) -> None:
        made(self)
        spills.append(self)

    records.RecordSpill.__init__ = counted  # type: ignore[method-assign]
    sys.argv = ["kubegap-lint", "--format", "json", "-o", "/dev/null", "--jobs", "1", path]
    from kubegap_lint.cli.main import main as lint

    start = time.process_time()
    try:
        lint()
    except SystemExit:
        pass
    seconds = time.process_time() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    spilled = sum(s.spilled for s in spills)
    written = sum(s.on_disk for s in spills) / 2**20
    print(f"budget {budget}: {seconds:.2f} CPU s, peak {peak:.0f} MB, {spilled} workloads spilled"
          f" ({written:.0f} MiB written)", file=sys.stderr)


if __name__ == "__main__":
    main()
