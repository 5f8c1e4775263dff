"""Issue 31's Helm speed target: rendering a chart and linting it against rendering it alone.

    python bench/helm_ratio.py --runs 5                      # every render of ../shared/charts/renders.yaml
    python bench/helm_ratio.py --runs 5 --checkout /tmp/old  # another checkout's `kubegap-lint helm`
    python bench/helm_ratio.py --runs 5 --only gpu-operator,hami

For each render of renders.yaml (chart, values, --set flags), alternated, each a fresh process
as a user or the pre-commit hook pays it:
- render and lint: `kubegap-lint helm CHART FLAGS --format json` as the console script runs it
  (`kubegap_lint.cli.entry:main`; the render, the lint, the marked render for exact lines when a
  finding needs it, the report to /dev/null);
- render only: `python -c` rendering the same chart with the same engine (`import helm_python`,
  sdk.render: values composed as the tool composes them, the stream `helm template` prints);
- lint alone: `kubegap-lint FILE --format json` on that render's stream saved to a file (written
  once by `--keep-rendered`, untimed), run from an empty folder: the linter's own process, start-up
  included, with no engine. `kubegap-lint helm` does all of that work and more (the chart copy, the
  engine's process, the template lines), so however well the two processes overlap, render and
  lint cannot take less than the lint alone: its ratio to the render alone is the floor of the
  ratio this benchmark measures.
The median of --runs wall-clock seconds of each, their ratio per render, and the ratio of the
sums (all renders). One untimed run of each first, with bytecode writing allowed, so that both
sides import from `__pycache__` as an installed package does.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
CHARTS = REPO.parent / "shared" / "charts"

from bench.console import kubegap_lint  # noqa: E402 - after the path is set
from bench.render_worker import flags_of  # noqa: E402

RENDER_ONLY = ("import sys, json; from kubegap_lint.helm import sdk;"
               " from kubegap_lint.helm.render import RenderOptions; r = json.loads(sys.argv[2]);"
               " sdk.render(sys.argv[1], RenderOptions(values=r['values_files'], sets=r['set'],"
               " set_strings=r['set_string'], set_files=r['set_file'], release=r['release'],"
               " namespace=r['namespace'], include_crds=r['include_crds']))")


def timed(command: list[str], env: dict[str, str], cwd: Path | None = None) -> float:
    started = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, check=False, cwd=cwd)
    elapsed = time.perf_counter() - started
    if done.returncode not in (0, 1, 2):  # 2: an input error the report says (a subchart left out, before issue 31)
        raise SystemExit(f"{' '.join(command[:6])}... failed ({done.returncode}): {done.stderr.decode()[-300:]}")
    return elapsed


def main() -> None:
    from ruamel.yaml import YAML

    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--checkout", type=Path, default=REPO, help="the checkout whose CLI is timed")
    parser.add_argument("--only", default="", help="render ids, comma-separated")
    args = parser.parse_args()
    os.chdir(CHARTS)
    renders = list(YAML(typ="safe").load((CHARTS / "renders.yaml").read_text(encoding="utf-8")))
    if args.only:
        renders = [r for r in renders if r["id"] in args.only.split(",")]
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = str(args.checkout.resolve())
    sums = {"lint": 0.0, "render": 0.0, "stream": 0.0}
    ratios: list[float] = []
    floors: list[float] = []  # the lint alone over the render alone: no overlap of the two does better
    extras: list[float] = []  # seconds over the render alone: what the lint adds, whatever the render's length
    with tempfile.TemporaryDirectory() as scratch:
        for number, render in enumerate(renders):
            lint_flags = ("--format", "json", "--output", os.devnull)
            kept = Path(scratch, f"kept-{number}")
            empty = Path(scratch, f"empty-{number}")
            empty.mkdir()
            commands = {"lint": kubegap_lint("helm", render["chart"], *flags_of(render), *lint_flags),
                        "render": [sys.executable, "-c", RENDER_ONLY, render["chart"], json.dumps(render)]}
            # warm (bytecode written, files in the page cache), and the stream kept for the lint alone
            timed([*commands["lint"], "--keep-rendered", str(kept)], env)
            timed(commands["render"], env)
            commands["stream"] = kubegap_lint(*(str(path) for path in sorted(kept.glob("*.yaml"))), *lint_flags)
            times: dict[str, list[float]] = {name: [] for name in commands}
            for _ in range(args.runs):
                for name, command in commands.items():
                    times[name].append(timed(command, env, cwd=empty if name == "stream" else None))
            lint, alone, stream = (statistics.median(times[name]) for name in ("lint", "render", "stream"))
            for name, seconds in (("lint", lint), ("render", alone), ("stream", stream)):
                sums[name] += seconds
            ratios.append(lint / alone)
            floors.append(stream / alone)
            extras.append(lint - alone)
            print(f"{render['id']:<30} render and lint {lint:.3f} s  render only {alone:.3f} s  {lint / alone:.2f}x"
                  f"  (+{(lint - alone) * 1000:.0f} ms)  lint alone {stream:.3f} s ({stream / alone:.2f}x)",
                  flush=True)
    print(f"all {len(renders)} renders: render and lint {sums['lint']:.1f} s, render only {sums['render']:.1f} s:"
          f" {sums['lint'] / sums['render']:.2f}x (per render {min(ratios):.2f}x to {max(ratios):.2f}x,"
          f" median {statistics.median(ratios):.2f}x); over the render alone a median"
          f" {statistics.median(extras) * 1000:.0f} ms")
    print(f"the lint alone (its stream from a file, no engine) over the render alone: {sums['stream']:.1f} s,"
          f" {sums['stream'] / sums['render']:.2f}x of the sums (per render {min(floors):.2f}x to"
          f" {max(floors):.2f}x, median {statistics.median(floors):.2f}x)")


if __name__ == "__main__":
    main()
