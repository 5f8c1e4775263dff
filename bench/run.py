"""The benchmark: one command, every figure of bench/RESULTS.md, ratios measured in the same run.

    python bench/run.py                    # 1k, 10k, 50k streams, the corpus, start-up, Checkov on 1k
    python bench/run.py --full             # also Checkov on the 10k stream (minutes, GBs)
    python bench/run.py --sizes 1k --runs 5 --no-checkov

Every measurement is a whole process (start-up included), run `--runs` times with the
candidates interleaved so that the machine's noise falls on all of them alike; the figures
are medians. Peak memory is the largest resident set of the process and the children it
waited for (`wait4`'s ru_maxrss). Streams come from bench/generate.py into bench/out/
(git-ignored); Checkov is installed into bench/.venv (git-ignored), never into the project.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
sys.path.insert(0, str(BENCH))

from console import kubegap_lint  # noqa: E402
from generate import DEFAULT_SEED, stream_paths, write_repository, write_stream  # noqa: E402

CHECKOV_VERSION = "3.3.30"
# Every lint here uses this start-up cache, warmed once before the first measurement, as a user's
# second run has it. Not the platform's folder (other checkouts of the tool on the machine
# replace its catalog with theirs), and not below bench/out (a cache inside a linted tree is
# not used).
CACHE = BENCH / ".cache"
VENV = BENCH / ".venv"
SIZES = {"1k": 1_000, "10k": 10_000, "50k": 50_000}
REPOSITORY_FILES = 2_000  # the pre-commit case: a repository of this many manifests ...
CHANGED_FILES = 50  # ... of which one commit changes this many
IMPORT_LINE = 'python -c "import ruamel.yaml, click, jmespath"'
CPARSER = "CParser compose (ruamel nodes + Resolver)"
# Figures the summary compares with the targets (issue 17), filled in as parts run.
SUMMARY: dict[str, float] = {}
ONE_DOCUMENT = """apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
data:
  NCCL_DEBUG: WARN
"""


@dataclass
class Sample:
    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    rss_kb: list[int] = field(default_factory=list)

    @property
    def seconds(self) -> float:
        return statistics.median(self.wall)

    @property
    def cpu_seconds(self) -> float:
        return statistics.median(self.cpu)

    @property
    def peak_mb(self) -> float:
        return statistics.median(self.rss_kb) / 1024


def run_once(cmd: list[str], sample: Sample, env: dict[str, str] | None = None) -> None:
    """Run a command to completion; record its wall time, CPU time and peak memory."""
    full_env = dict(os.environ)
    full_env["PYTHONPATH"] = str(REPO) + os.pathsep + full_env.get("PYTHONPATH", "")
    # Bytecode as an installed package has it (pip compiles on install), kept out of the tree.
    full_env.pop("PYTHONDONTWRITEBYTECODE", None)
    full_env["PYTHONPYCACHEPREFIX"] = str(BENCH / "out" / "pycache")
    full_env["KUBEGAP_LINT_CACHE_DIR"] = str(CACHE)
    full_env.update(env or {})
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=full_env)
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    stderr = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    if proc.returncode not in (0, 1):
        raise SystemExit(f"benchmark command failed ({proc.returncode}): {' '.join(cmd)}\n{stderr[-2000:]}")
    sample.wall.append(elapsed)
    sample.cpu.append(usage.ru_utime + usage.ru_stime)
    sample.rss_kb.append(usage.ru_maxrss)


def interleaved(commands: dict[str, list[str]], runs: int, env: dict[str, dict[str, str]] | None = None,
                warmup: bool = False) -> dict[str, Sample]:
    samples = {name: Sample() for name in commands}
    if warmup:
        for name, cmd in commands.items():
            run_once(cmd, Sample(), (env or {}).get(name))
    for _ in range(runs):
        for name, cmd in commands.items():
            run_once(cmd, samples[name], (env or {}).get(name))
    return samples


def ensure_stream(count: int) -> tuple[Path, Path]:
    yaml_path, json_path = stream_paths(BENCH / "out", count)
    if not yaml_path.is_file() or not json_path.is_file():
        yaml_path.parent.mkdir(parents=True, exist_ok=True)
        print(f"generating {yaml_path.name} ...", file=sys.stderr)
        with open(yaml_path, "w", encoding="utf-8", newline="\n") as y, \
                open(json_path, "w", encoding="utf-8", newline="\n") as j:
            write_stream(count, DEFAULT_SEED, y, j)
    return yaml_path, json_path


def checkov_binary() -> Path:
    binary = VENV / "bin" / "checkov"
    if not binary.is_file():
        print(f"installing checkov {CHECKOV_VERSION} into {VENV} ...", file=sys.stderr)
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
        subprocess.run([str(VENV / "bin" / "pip"), "install", "-q", f"checkov=={CHECKOV_VERSION}"], check=True)
    return binary


def lint_cmd(*args: str) -> list[str]:
    return kubegap_lint("--format", "json", *args)


def warm_cache() -> None:
    """Fill CACHE (catalog, workload table) with one lint of one document outside the tree."""
    import shutil
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="kubegap-bench-"))
    try:
        (folder / "one.yaml").write_text(ONE_DOCUMENT, encoding="utf-8")
        run_once(kubegap_lint(str(folder / "one.yaml")), Sample())
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def table(title: str, documents: int, megabytes: float, samples: dict[str, Sample], base: str) -> None:
    print(f"\n### {title}: {documents:,} documents, {megabytes:.1f} MB\n")
    print(f"| what | median s (wall) | docs/s | MB/s | CPU s | peak MB | docs/s vs {base} |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, sample in samples.items():
        rate = documents / sample.seconds
        ratio = samples[base].seconds / sample.seconds
        print(f"| {name} | {sample.seconds:.2f} | {rate:,.0f} | {megabytes / sample.seconds:.1f} "
              f"| {sample.cpu_seconds:.2f} | {sample.peak_mb:.0f} | {ratio:.2f}x |")


def bench_stream(label: str, count: int, runs: int, jobs: int) -> dict[str, Sample]:
    yaml_path, json_path = ensure_stream(count)
    commands = {
        "kubegap-lint (1 process)": lint_cmd("--jobs", "1", str(yaml_path)),
        "CParser compose (ruamel nodes + Resolver)": [sys.executable, str(BENCH / "baselines.py"), "cparser", str(yaml_path)],
        "json.loads of JSON lines": [sys.executable, str(BENCH / "baselines.py"), "json", str(json_path)],
    }
    if jobs > 1:
        commands[f"kubegap-lint --jobs {jobs}"] = lint_cmd("--jobs", str(jobs), str(yaml_path))
    samples = interleaved(commands, runs)
    table(f"{label} stream", count, yaml_path.stat().st_size / 1e6, samples, CPARSER)
    SUMMARY[f"stream {label} vs CParser"] = samples[CPARSER].seconds / samples["kubegap-lint (1 process)"].seconds
    SUMMARY[f"stream {label} peak MB"] = samples["kubegap-lint (1 process)"].peak_mb
    return samples


def corpus_files(corpus: Path) -> list[str]:
    return sorted(str(p) for p in corpus.rglob("*") if p.is_file() and p.suffix in (".yaml", ".yml", ".json")
                  and not any(part.startswith(".") for part in p.relative_to(corpus).parts))


def bench_corpus(corpus: Path, runs: int, jobs: int) -> None:
    files = corpus_files(corpus)
    megabytes = sum(os.path.getsize(f) for f in files) / 1e6
    documents = int(subprocess.run([sys.executable, str(BENCH / "baselines.py"), "cparser", *files],
                                   capture_output=True, text=True, check=True).stdout)
    commands = {
        "kubegap-lint (1 process)": lint_cmd("--jobs", "1", str(corpus)),
        "CParser compose (ruamel nodes + Resolver)": [sys.executable, str(BENCH / "baselines.py"), "cparser", *files],
    }
    if jobs > 1:
        commands[f"kubegap-lint --jobs {jobs}"] = lint_cmd("--jobs", str(jobs), str(corpus))
    samples = interleaved(commands, runs)
    table(f"shared corpus ({len(files)} files)", documents, megabytes, samples,
          "CParser compose (ruamel nodes + Resolver)")


def bench_startup(runs: int) -> None:
    import shutil
    import tempfile

    # Outside any git work tree (a file in one is a partial run that also reads the tree's
    # facts: the pre-commit case below), and not the cache's folder or a parent of it (a
    # cache inside a linted tree is not used).
    folder = Path(tempfile.mkdtemp(prefix="kubegap-bench-"))
    try:
        _bench_startup(folder / "one-document.yaml", runs)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _bench_startup(one: Path, runs: int) -> None:
    one.write_text(ONE_DOCUMENT, encoding="utf-8")
    commands = {
        IMPORT_LINE: [sys.executable, "-c", "import ruamel.yaml, click, jmespath"],
        "kubegap-lint one-document.yaml (cache warm)": kubegap_lint(str(one)),
        "kubegap-lint one-document.yaml (no cache)": kubegap_lint(str(one)),
    }
    env = {"kubegap-lint one-document.yaml (no cache)": {"KUBEGAP_LINT_NO_CACHE": "1"}}
    samples = interleaved(commands, runs, env, warmup=True)
    base = samples[IMPORT_LINE]
    SUMMARY["start-up warm vs import line"] = samples["kubegap-lint one-document.yaml (cache warm)"].seconds / base.seconds
    print("\n### Start-up on a one-document clean manifest (outside a git work tree)\n")
    print("| what | median s (wall) | CPU s | peak MB | wall vs import line | CPU vs import line |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, sample in samples.items():
        print(f"| {name} | {sample.seconds:.3f} | {sample.cpu_seconds:.3f} | {sample.peak_mb:.0f} "
              f"| {sample.seconds / base.seconds:.2f}x | {sample.cpu_seconds / base.cpu_seconds:.2f}x |")


def bench_checkov(label: str, count: int, runs: int) -> None:
    yaml_path, _ = ensure_stream(count)
    binary = checkov_binary()
    commands = {
        "kubegap-lint (1 process)": lint_cmd("--jobs", "1", str(yaml_path)),
        f"checkov {CHECKOV_VERSION} -f --framework kubernetes": [
            str(binary), "-f", str(yaml_path), "--framework", "kubernetes", "--quiet", "--compact", "--skip-download"],
    }
    env = {name: {"PYTHONPATH": ""} for name in commands if name.startswith("checkov")}
    samples = interleaved(commands, runs, env)
    ours, theirs = samples["kubegap-lint (1 process)"], samples[f"checkov {CHECKOV_VERSION} -f --framework kubernetes"]
    table(f"{label} stream, against Checkov", count, yaml_path.stat().st_size / 1e6, samples,
          f"checkov {CHECKOV_VERSION} -f --framework kubernetes")
    SUMMARY[f"checkov {label} speed"] = theirs.seconds / ours.seconds
    SUMMARY[f"checkov {label} memory"] = ours.peak_mb / theirs.peak_mb
    print(f"\nkubegap-lint / Checkov: {theirs.seconds / ours.seconds:.1f}x the documents per second, "
          f"{ours.peak_mb / theirs.peak_mb:.3f}x the peak memory (1/{theirs.peak_mb / ours.peak_mb:.0f})")


def ensure_repository() -> tuple[list[Path], list[Path]]:
    """The pre-commit case's repository (bench/out/repo-2k, a git work tree of its own, so that
    a run reads the whole-repository facts of its 2,000 manifests) and the files one commit
    changes."""
    folder = BENCH / "out" / f"repo-{REPOSITORY_FILES // 1000}k"
    marker = folder / ".complete"
    if not marker.is_file():
        print(f"generating {folder.name} ...", file=sys.stderr)
        write_repository(folder, REPOSITORY_FILES, DEFAULT_SEED)
        marker.write_text("", encoding="utf-8")
    if not (folder / ".git").exists():
        subprocess.run(["git", "init", "-q"], cwd=folder, check=True)
        subprocess.run(["git", "add", "-A"], cwd=folder, check=True)  # tracked: what pre-commit sees
    files = sorted(p for p in folder.rglob("*.yaml") if ".git" not in p.parts)
    step = len(files) // CHANGED_FILES
    return files, files[::step][:CHANGED_FILES]


def bench_precommit(runs: int) -> None:
    """What a pre-commit hook costs: one process linting the changed files of a commit."""
    files, changed = ensure_repository()
    names = [str(p) for p in changed]
    lint = f"kubegap-lint {len(changed)} files (cache warm)"
    commands = {
        IMPORT_LINE: [sys.executable, "-c", "import ruamel.yaml, click, jmespath"],
        CPARSER: [sys.executable, str(BENCH / "baselines.py"), "cparser", *names],
        lint: kubegap_lint("--jobs", "1", *names),
    }
    samples = interleaved(commands, runs, warmup=True)
    megabytes = sum(p.stat().st_size for p in changed) / 1e6
    print(f"\n### Pre-commit: {len(changed)} changed files of a {len(files):,}-manifest repository, "
          f"{megabytes:.2f} MB\n")
    print(f"| what | median s (wall) | CPU s | peak MB | wall vs import line | wall vs {CPARSER} |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, sample in samples.items():
        print(f"| {name} | {sample.seconds:.3f} | {sample.cpu_seconds:.3f} | {sample.peak_mb:.0f} "
              f"| {sample.seconds / samples[IMPORT_LINE].seconds:.2f}x | {sample.seconds / samples[CPARSER].seconds:.2f}x |")
    SUMMARY["pre-commit vs import line"] = samples[lint].seconds / samples[IMPORT_LINE].seconds


TARGETS = [  # (figure, wanted, higher is better, what it is)
    ("stream 10k vs CParser", 0.6, True, "full lint of the 10k stream, docs/s vs the CParser, one core"),
    ("start-up warm vs import line", 1.5, False, "start-up, one document, cache warm, vs the bare import line"),
    ("checkov 1k speed", 10.0, True, "docs/s vs Checkov, 1k stream"),
    ("checkov 1k memory", 0.1, False, "peak memory vs Checkov, 1k stream"),
    ("checkov 10k speed", 30.0, True, "docs/s vs Checkov, 10k stream (--full)"),
    ("checkov 10k memory", 0.1, False, "peak memory vs Checkov, 10k stream (--full)"),
]


def summary() -> None:
    print("\n### Against the targets\n")
    print("| target | wanted | this run | met? |")
    print("|---|---:|---:|---|")
    for key, wanted, higher, what in TARGETS:
        if key not in SUMMARY:
            continue
        got = SUMMARY[key]
        met = got >= wanted if higher else got <= wanted
        sign = ">=" if higher else "<="
        print(f"| {what} | {sign} {wanted:g}x | {got:.3g}x | {'yes' if met else 'no'} |")
    for key in ("stream 10k peak MB", "stream 50k peak MB", "pre-commit vs import line"):
        if key in SUMMARY:
            print(f"\n{key}: {SUMMARY[key]:.3g}")


def main() -> None:
    parser = argparse.ArgumentParser(description="kubegap-lint benchmark (see bench/README.md)")
    parser.add_argument("--sizes", default="1k,10k,50k", help="comma-separated: 1k, 10k, 50k")
    parser.add_argument("--runs", type=int, default=3, help="runs of each measurement; medians are quoted")
    parser.add_argument("--jobs", type=int, default=2, help="also time --jobs N (1 to skip)")
    parser.add_argument("--corpus", type=Path, default=REPO.parent / "shared" / "corpus")
    parser.add_argument("--full", action="store_true", help="also run Checkov on the 10k stream")
    parser.add_argument("--no-checkov", action="store_true")
    parser.add_argument("--checkov-runs", type=int, default=None,
                        help="runs of the Checkov comparisons [default: --runs]; Checkov on 10k takes minutes a run")
    parser.add_argument("--only", default="streams,corpus,startup,precommit,checkov",
                        help="comma-separated parts to run: streams, corpus, startup, precommit, checkov")
    args = parser.parse_args()
    parts = set(args.only.split(","))
    sizes = [s.strip() for s in args.sizes.split(",") if s.strip()]
    print(f"# kubegap-lint benchmark\n\n`{' '.join(['python', 'bench/run.py', *sys.argv[1:]])}` on "
          f"{os.cpu_count()} CPUs, Python {sys.version.split()[0]}, {args.runs} runs each, medians")
    peaks: dict[str, float] = {}
    warm_cache()
    if "streams" in parts:
        for label in sizes:
            samples = bench_stream(label, SIZES[label], args.runs, args.jobs)
            peaks[label] = samples["kubegap-lint (1 process)"].peak_mb
        if "10k" in peaks and "50k" in peaks:
            print(f"\nPeak memory, 50k / 10k stream: {peaks['50k'] / peaks['10k']:.2f}x")
    if "corpus" in parts and args.corpus.is_dir():
        bench_corpus(args.corpus, args.runs, args.jobs)
    if "startup" in parts:
        bench_startup(max(args.runs, 5))
    if "precommit" in parts:
        bench_precommit(max(args.runs, 5))
    if "checkov" in parts and not args.no_checkov:
        checkov_runs = args.checkov_runs or args.runs
        bench_checkov("1k", SIZES["1k"], checkov_runs)
        if args.full:
            bench_checkov("10k", SIZES["10k"], checkov_runs)
    summary()


if __name__ == "__main__":
    main()
