"""The pre-commit hook's time on a repository of 2,000 manifests, one changed file.

pre-commit runs `kubegap-lint lint --skip-chart-templates --allow-empty FILES` with the changed
files only; kubegap-lint then reads the cross-resource facts of the rest of the work tree
(workloads/repofacts.py). This builds a git repository of N one-document manifest files
(bench/generate.py's documents: Deployments, Jobs, ConfigMaps, PDBs ... as charts render them,
one file each under releases/<release>/), commits it, and times, as whole processes:

- `hook, cold cache`: the hook's command on one changed Deployment, with an empty facts cache
  (the first commit after a clone);
- `hook, warm cache`: the same again (every later commit: only changed files are parsed);
- `hook, --no-repo-facts`: the changed file alone, what the hook cost before;
- `whole repository`: `kubegap-lint lint .` at the top level (the CI run).

    python bench/hook_repo.py [--files 2000] [--runs 3] [--out bench/out/hook-repo]

Medians of --runs runs each (the cold run clears the cache before each of its runs).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from console import kubegap_lint  # noqa: E402
from generate import DEFAULT_SEED, StreamGenerator, _Emitter  # noqa: E402

GIT_ENV = {"GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.invalid",
           "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@example.invalid",
           "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}


def build(root: Path, files: int, seed: int = DEFAULT_SEED) -> Path:
    """The repository; returns the Deployment file the runs treat as changed."""
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    emitter = _Emitter()
    changed: Path | None = None
    for number, (source, data) in enumerate(StreamGenerator(seed + files).documents(files)):
        release = source.split("/")[0]
        path = root / "releases" / release / f"{number:05d}-{data['kind'].lower()}.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(emitter.document(data), encoding="utf-8")
        if changed is None and data["kind"] == "Deployment":
            changed = path
    env = {**os.environ, **GIT_ENV}
    subprocess.run(["git", "init", "-q"], cwd=root, check=True, env=env)
    subprocess.run(["git", "add", "-A"], cwd=root, check=True, env=env)
    subprocess.run(["git", "commit", "-q", "-m", "manifests"], cwd=root, check=True, env=env)
    assert changed is not None
    return changed


def _time(command: list[str], cwd: Path, env: dict[str, str], before: object = None) -> tuple[float, float, int]:
    if callable(before):
        before()
    start = time.perf_counter()
    usage = os.times()
    proc = subprocess.run(command, cwd=cwd, env=env, capture_output=True)
    after = os.times()
    cpu = (after.children_user - usage.children_user) + (after.children_system - usage.children_system)
    return time.perf_counter() - start, cpu, proc.returncode


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "out" / "hook-repo")
    args = parser.parse_args()
    root = args.out / "repo"
    changed = build(root, args.files)
    cache = args.out / "cache"
    env = {**os.environ, "KUBEGAP_LINT_CACHE_DIR": str(cache)}
    relative = str(changed.relative_to(root))
    hook = kubegap_lint("lint", "--skip-chart-templates", "--allow-empty")

    def clear() -> None:
        (cache / "repo-facts-v1.json").unlink(missing_ok=True)

    cases = [
        ("hook, cold cache", hook + [relative], clear),
        ("hook, warm cache", hook + [relative], None),
        ("hook, --no-repo-facts", hook + ["--no-repo-facts", relative], None),
        ("whole repository", hook + ["."], None),
    ]
    _time(hook + [relative], root, env)  # warm the catalog cache and the OS file cache
    print(f"{args.files} manifest files in {root}; changed file {relative}; median of {args.runs}")
    print("| run | wall s | CPU s | exit |\n|---|---:|---:|---:|")
    for name, command, before in cases:
        runs = [_time(command, root, env, before) for _ in range(args.runs)]
        wall = statistics.median(r[0] for r in runs)
        cpu = statistics.median(r[1] for r in runs)
        print(f"| {name} | {wall:.2f} | {cpu:.2f} | {runs[-1][2]} |")


if __name__ == "__main__":
    main()
