"""Two checkouts on the same streams, interleaved run by run, so the shared machine's load falls
on both alike: wall and CPU seconds, documents per second and peak memory of the full lint.

    git worktree add /tmp/before <commit>
    python bench/compare.py --before /tmp/before --sizes 10k --runs 3

Each run is `python -m kubegap_lint --format json --jobs 1 STREAM` (every policy, output to
/dev/null) with PYTHONPATH set to the checkout; the streams are this checkout's bench/out ones
(bench/generate.py, the same bytes for both). Figures are medians, as in bench/run.py.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
sys.path.insert(0, str(BENCH))

from console import kubegap_lint  # noqa: E402
from generate import generate, stream_paths  # noqa: E402
from run import SIZES, Sample  # noqa: E402


def run_lint(checkout: Path, stream: Path, sample: Sample) -> None:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(checkout)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(BENCH / "out" / "pycache-compare" / checkout.name)
    cmd = kubegap_lint("--format", "json", "--jobs", "1", str(stream))
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, cwd=str(checkout))
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 1):
        stderr = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
        raise SystemExit(f"{checkout}: exit {code}\n{stderr[-2000:]}")
    sample.wall.append(elapsed)
    sample.cpu.append(usage.ru_utime + usage.ru_stime)
    sample.rss_kb.append(usage.ru_maxrss)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, required=True, help="the other checkout")
    parser.add_argument("--after", type=Path, default=REPO,
                        help="the checkout to compare (default this one; a copy keeps edits out of the runs)")
    parser.add_argument("--sizes", default="10k")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    checkouts = {"before": args.before.resolve(), "after": args.after.resolve()}
    print("| stream | checkout | median s (wall) | docs/s | CPU s | peak MB |")
    print("|---|---|---:|---:|---:|---:|")
    for size in args.sizes.split(","):
        count = SIZES[size]
        yaml_path, _ = stream_paths(BENCH / "out", count)
        if not yaml_path.exists():
            generate(BENCH / "out", (count,))
        samples = {name: Sample() for name in checkouts}
        for _ in range(args.runs):
            for name, checkout in checkouts.items():
                run_lint(checkout, yaml_path, samples[name])
        for name, sample in samples.items():
            print(f"| {size} | {name} | {sample.seconds:.2f} | {count / sample.seconds:,.0f} |"
                  f" {sample.cpu_seconds:.2f} | {sample.peak_mb:.0f} |", flush=True)


if __name__ == "__main__":
    main()
