"""What rendering in the engine's child process costs (helm/worker.py, issue 35).

    python bench/render_worker.py --runs 3                      # every render of ../shared/charts/renders.yaml
    python bench/render_worker.py --runs 3 --checkout ../main   # the end-to-end part with another checkout

For each render of renders.yaml (chart, values, sets), in one process: the engine in-process
(sdk.render, warm: what the tool did before), the engine through the warm child process
(worker.render: the same text plus a JSON line each way), and the start of a child (once, as a
run pays it). Then the end-to-end ratio the Helm speed target speaks of: `kubegap-lint helm`
(render, the marked render for exact lines, lint) against a process that only renders
(python + helm_python + sdk.render), for the same renders. Wall-clock seconds, the fastest of
--runs; the machine is shared, so read ratios rather than absolutes.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
CHARTS = REPO.parent / "shared" / "charts"


def options_of(render: dict) -> object:
    from kubegap_lint.helm.render import RenderOptions

    return RenderOptions(list(render.get("values_files") or []), list(render.get("set") or []), render.get("release"),
                         render.get("namespace"), list(render.get("set_string") or []),
                         list(render.get("set_file") or []), None, [], bool(render.get("include_crds")))


def flags_of(render: dict) -> list[str]:
    flags = []
    for path in render.get("values_files") or []:
        flags += ["-f", path]
    for flag, key in (("--set", "set"), ("--set-string", "set_string"), ("--set-file", "set_file")):
        for value in render.get(key) or []:
            flags += [flag, value]
    if render.get("release"):
        flags += ["--release", render["release"]]
    if render.get("namespace"):
        flags += ["--namespace", render["namespace"]]
    if render.get("include_crds"):
        flags.append("--include-crds")
    return flags


def fastest(run, runs: int) -> float:
    best = float("inf")
    for _ in range(runs):
        started = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - started)
    return best


RENDER_ONLY = ("import sys; sys.path.insert(0, sys.argv[1]); from kubegap_lint.helm import sdk;"
               " from bench.render_worker import options_of; import json;"
               " sdk.render(sys.argv[2], options_of(json.loads(sys.argv[3])))")


def main() -> None:
    import json

    from ruamel.yaml import YAML

    from kubegap_lint.helm import sdk, worker

    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--cli", type=int, default=6, help="renders timed end to end (the first N)")
    parser.add_argument("--checkout", type=Path, default=REPO, help="time this checkout's CLI end to end (../main)")
    args = parser.parse_args()
    os.chdir(CHARTS)
    renders = list(YAML(typ="safe").load((CHARTS / "renders.yaml").read_text(encoding="utf-8")))
    started = time.perf_counter()
    worker.installed()
    print(f"child start (python, kubegap_lint.helm, helm_python): {time.perf_counter() - started:.3f} s")
    total_in = total_child = 0.0
    for render in renders:
        options = options_of(render)
        try:
            sdk.render(render["chart"], options)
        except Exception as exc:  # noqa: BLE001 - a render the engine refuses is left out
            print(f"{render['id']}: not rendered ({exc})"[:120])
            continue
        chart = render["chart"]
        here = fastest(lambda: sdk.render(chart, options), args.runs)  # noqa: B023 - called at once
        child = fastest(lambda: worker.render(chart, options), args.runs)  # noqa: B023
        total_in += here
        total_child += child
        print(f"{render['id']:<42} in-process {here:.3f} s  child {child:.3f} s  (+{(child - here) * 1000:.0f} ms)")
    print(f"total: in-process {total_in:.2f} s, child {total_child:.2f} s: {total_child / total_in:.2f}x")
    env = dict(os.environ, PYTHONPATH=str(args.checkout.resolve()))
    ratios = []
    for render in renders[:args.cli]:
        from bench.console import kubegap_lint

        lint_command = kubegap_lint("helm", render["chart"], *flags_of(render), "--format", "json")
        render_command = [sys.executable, "-c", RENDER_ONLY, str(REPO), render["chart"], json.dumps(render)]
        lint = fastest(lambda: subprocess.run(lint_command, env=env, capture_output=True), args.runs)  # noqa: B023
        alone = fastest(lambda: subprocess.run(render_command, env=env, capture_output=True), args.runs)  # noqa: B023
        ratios.append(lint / alone)
        print(f"{render['id']:<42} kubegap-lint helm {lint:.2f} s  render alone {alone:.2f} s: {lint / alone:.2f}x")
    if ratios:
        print(f"end to end: {min(ratios):.2f}x to {max(ratios):.2f}x (median {sorted(ratios)[len(ratios) // 2]:.2f}x)")


if __name__ == "__main__":
    main()
