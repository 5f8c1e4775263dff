"""What the second parse of a streaming run costs: one lint in this process with the default
parsed-workload budget (input/stream.py's RETAIN_CHARS: workloads past it are parsed again
once the index is complete), or with none (every workload kept parsed). CPU seconds and peak
memory. Run each in its own process:

    python bench/second_parse.py default bench/out/stream-10k.yaml
    python bench/second_parse.py all bench/out/stream-10k.yaml
"""

from __future__ import annotations

import resource
import sys
import time


def main() -> None:
    budget, path = sys.argv[1], sys.argv[2]
    from kubegap_lint.input import stream

    if budget == "all":
        stream.PendingWorkloads.__init__.__defaults__ = (sys.maxsize,)
    elif budget != "default":
        raise SystemExit("usage: second_parse.py default|all FILE")
    sys.argv = ["kubegap-lint", "--format", "json", "-o", "/dev/null", "--jobs", "1", path]
    from kubegap_lint.cli.main import main as lint

    start = time.process_time()
    try:
        lint()
    except SystemExit:
        pass
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"budget {budget}: {time.process_time() - start:.2f} CPU s, peak {peak:.0f} MB", file=sys.stderr)


if __name__ == "__main__":
    main()
