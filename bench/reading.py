"""Bounded reading (issue 19): time and peak memory of the hostile inputs, as they double.

    python bench/reading.py [--runs 3] [--only line,emoji,sparse,flow,values,helm]

Each case is generated at three sizes, each twice the one before, in a temporary folder outside
the repository, and linted by the CLI in a child process (`--select KG001,KG007`, output to
/dev/null); the child's wall time and peak RSS (wait4) are taken over `--runs` runs and the
median is printed, with the ratio of each median to the one before: about 2 is linear. The Helm
case times the template-line mapping in this process (scan, marking and locate of one line).

- line: one line of N MB (`a: xxxx...`), the document over the 16 MiB limit (KG007).
- emoji: the same with one emoji at its start (a 4-byte-per-character string if held whole).
- sparse: a sparse file of N GB (NUL bytes, no line end; takes no disk).
- flow: one document of `x: [{},{},...]` of N MiB, over the 1,000,000-value bound (KG007).
- values: the same, under the bound: parsed and linted whole (memory per document).
- helm: one template line of N KB (a value, then a run of spaces).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
MB = 1_000_000
MIB = 1024 * 1024


def write_line(path: Path, size: int, head: bytes = b"a: ") -> None:
    with open(path, "wb") as handle:
        handle.write(head)
        block = b"x" * MIB
        left = size - len(head)
        while left > 0:
            handle.write(block[:left])
            left -= MIB
        handle.write(b"\n")


def write_sparse(path: Path, size: int) -> None:
    with open(path, "wb") as handle:
        handle.truncate(size)


def write_flow(path: Path, size: int) -> None:
    items = (size - 6) // 3
    path.write_text("x: [" + ",".join(["{}"] * items) + "]\n")


CASES: dict[str, tuple[str, list[int], Callable[[Path, int], None]]] = {
    "line": ("MB", [50 * MB, 100 * MB, 200 * MB], write_line),
    "emoji": ("MB", [75 * MB, 150 * MB, 300 * MB], lambda p, n: write_line(p, n, "a: 🙂".encode())),
    "sparse": ("MB", [500 * MB, 1000 * MB, 2000 * MB], write_sparse),
    "flow": ("MiB", [4 * MIB, 8 * MIB, 16 * MIB - 64], write_flow),
    "values": ("MiB", [MIB * 7 // 10, MIB * 14 // 10, MIB * 28 // 10], write_flow),
}


def lint_child(path: Path) -> tuple[float, int, int]:
    """Wall seconds, peak RSS in KiB and exit code of one CLI lint of path."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    start = time.perf_counter()
    from console import kubegap_lint

    proc = subprocess.Popen(kubegap_lint("--select", "KG001,KG007", str(path)),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return time.perf_counter() - start, usage.ru_maxrss, proc.returncode


def helm_seconds(size: int) -> float:
    from kubegap_lint.helm.marked import mark_template
    from kubegap_lint.helm.template_lines import locate, scan_template

    template = "kind: Job\nspec:\n  k: v" + " " * size + "x\n  parallelism: 2\n"
    start = time.perf_counter()
    scan_template(template.splitlines(True))
    mark_template(template, 0)
    locate(template, "Job", 0, 1, ("spec", "parallelism"))
    return time.perf_counter() - start


def unit(size: int, name: str) -> str:
    return f"{size / (MIB if name == 'MiB' else MB):g} {name}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--only", default="line,emoji,sparse,flow,values,helm")
    args = parser.parse_args()
    wanted = args.only.split(",")
    print("| case | size | median s | ratio to the size before | peak RSS MiB (median) | exit |")
    print("| --- | --- | --- | --- | --- | --- |")
    with tempfile.TemporaryDirectory(prefix="kubegap-bench-reading-") as folder:
        for name, (units, sizes, write) in CASES.items():
            if name not in wanted:
                continue
            before = None
            for size in sizes:
                path = Path(folder) / f"{name}.yaml"
                write(path, size)
                runs = [lint_child(path) for _ in range(args.runs)]
                path.unlink()
                seconds = statistics.median(r[0] for r in runs)
                rss = statistics.median(r[1] for r in runs) / 1024
                ratio = f"{seconds / before:.2f}" if before else ""
                print(f"| {name} | {unit(size, units)} | {seconds:.2f} | {ratio} | {rss:.0f} | {runs[0][2]} |", flush=True)
                before = seconds
    if "helm" in wanted:
        sys.path.insert(0, str(REPO))
        before = None
        for size in (50_000, 100_000, 200_000):
            seconds = statistics.median(helm_seconds(size) for _ in range(args.runs))
            ratio = f"{seconds / before:.2f}" if before else ""
            print(f"| helm | {size // 1000} KB | {seconds:.3f} | {ratio} | (in process) | |", flush=True)
            before = seconds


if __name__ == "__main__":
    main()
