"""What a run's exit costs: from the last atexit handler to the process's end, as the console
script (`kubegap-lint`, `kubegap_lint.cli.entry:main`) runs, this checkout against another.

    python bench/exit_cost.py --checkout /tmp/old --runs 7 -- --format json --output /dev/null examples/
    python bench/exit_cost.py --checkout /tmp/old -- helm CHART --format json --output /dev/null

A probe registered before the entry runs is the last atexit handler to run; it writes the time,
and the process's end is taken when the parent's wait returns. Medians of --runs alternated
runs, wall-clock milliseconds, the whole run's seconds beside them.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))
from console import ENTRY  # noqa: E402 - after the path is set

PROBE = "import atexit, sys, time; atexit.register(lambda: sys.stderr.write('LAST %.6f\\n' % time.time())); " + ENTRY


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--checkout", type=Path, required=True, help="the other checkout")
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("args", nargs=argparse.REMAINDER, help="the command line, after --")
    options = parser.parse_args()
    args = options.args[1:] if options.args[:1] == ["--"] else options.args
    checkouts = {"other": options.checkout.resolve(), "this": REPO}
    exits: dict[str, list[float]] = {name: [] for name in checkouts}
    walls: dict[str, list[float]] = {name: [] for name in checkouts}
    for _ in range(options.runs + 1):  # the first round writes bytecode and caches, untimed
        for name, checkout in checkouts.items():
            # A cache folder each: the catalog cache holds one version, and two checkouts
            # alternating would each find the other's and load the catalog cold every run.
            env = {**os.environ, "PYTHONPATH": str(checkout), "KUBEGAP_LINT_CACHE_DIR": os.path.join(tempfile.gettempdir(), f"kubegap-exit-cost-{name}")}
            env.pop("PYTHONDONTWRITEBYTECODE", None)
            started = time.time()
            done = subprocess.run([sys.executable, "-c", PROBE, *args], env=env, capture_output=True, check=False)
            ended = time.time()
            said = done.stderr.decode(errors="replace")
            if "LAST " not in said:
                raise SystemExit(f"{name}: no probe line (exit {done.returncode}): {said[-300:]}")
            exits[name].append(ended - float(said.rsplit("LAST ", 1)[1].split()[0]))
            walls[name].append(ended - started)
    for name in checkouts:
        exit_ms = statistics.median(exits[name][1:]) * 1000
        print(f"{name:<6} exit {exit_ms:6.1f} ms   whole run {statistics.median(walls[name][1:]):.3f} s")


if __name__ == "__main__":
    main()
