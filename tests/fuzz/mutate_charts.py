"""Mutation fuzzing of Helm charts through the whole CLI (`kubegap-lint lint CHART`), in one process.

    nice -n 10 python tests/fuzz/mutate_charts.py --seconds 600 --seed 1 --artifacts /tmp/kubegap-chart-fuzz

Seeds: every chart of ../shared/charts (a folder holding Chart.yaml, subcharts too) and
examples/helm. Each input is a copy of one seed chart with one to four mutations chosen for
charts: template text (loops, recursion, `fail`, `.Files.Get`, `tpl`, `lookup`, huge `repeat`),
hostile YAML in templates, values and Chart.yaml (manifests' mutations from mutate.py), and the
file system (links to /proc/self/environ, /dev/zero, a file outside the chart, `..`; a FIFO; a
`.helmignore`; a `values.schema.json` with a `$ref` out of the chart). The chart is linted in
this process with `--format json` and a 10 s render timeout; the engine runs in its own child
process (helm/worker.py), reused from input to input.

A failure is any of: an exception out of the CLI, an exit code other than 0, 1 or 2, a report
missing or not JSON, `internal error` or a traceback on stderr, the secret planted in the
environment or in a file outside the chart appearing in the output. The summary (JSON, last
line) gives inputs, failures, exit codes, the most frequent input errors and the peak memory
of this process and of the engine process. Each failing chart is saved as a .tar in
--artifacts with its reason. Seeded: the same seed gives the same inputs.
Not part of the test suite; scripts/fuzz.sh runs it for a bounded time.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import io
import json
import os
import random
import shutil
import sys
import tarfile
import tempfile
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from tests.fuzz.mutate import TOKENS, VALUES  # noqa: E402

CHARTS = REPO.parent / "shared" / "charts"
SECRET = "kg-fuzz-secret-5150"
MAX_CHART_BYTES = 2_000_000  # seed charts larger than this are left out: inputs stay fast

TEMPLATE_TEXT = [
    "{{ range until 100000 }}{{ range until 100000 }}{{ end }}{{ end }}",
    '{{ define "r" }}{{ include "r" . }}{{ end }}{{ include "r" . }}',
    '{{ fail "stop" }}', '{{ .Files.Get "env" }}', '{{ .Files.Get "../outside.txt" }}',
    '{{ .Files.Glob "**" | toYaml }}', '{{ tpl .Values.t . }}', '{{ lookup "v1" "Secret" "" "" }}',
    '{{ repeat 100000 "x" }}', '{{ repeat 3000000000 "x" | len }}', "{{ toYaml .Values | nindent 2 }}",
    "{{ .Values.missing.deeper }}", "{{ required \"r\" .Values.nothing }}", "{{", "}}", "{{- end }}",
    "{{ if }}", "{{ range $i, $e := .Values }}{{ $e }}{{ end }}", "{{ include \"nope\" . }}",
    "{{ .Capabilities.KubeVersion }}", "{{ toJson . }}", "{{ now }}", "{{ randAlphaNum 5 }}",
    "{{ env \"HOME\" }}", "{{ expandenv \"$KG_FUZZ_SECRET\" }}", "{{ getHostByName \"example.invalid\" }}",
]
LINKS = ["/proc/self/environ", "/proc/self/pagemap", "/dev/zero", "/dev/urandom", "../outside.txt",
         "..", ".", "templates", "/etc/hostname"]
SCHEMAS = ['{"$ref": "http://127.0.0.1:9/x.json"}', '{"$ref": "file:///etc/hostname"}',
           '{"$ref": "#/definitions/a", "definitions": {"a": {"type": "object"}}}',
           '{"type": "object", "required": ["zz"]}', '{"properties": {"a": {"pattern": "(a+)+$"}}}', "{"]
CHART_YAML = ["apiVersion: v2\nname: x\nversion: 0.1.0\ndependencies:\n  - name: missing\n    version: 1.0.0\n",
              "apiVersion: v2\nname: x\nversion: 0.1.0\nkubeVersion: '>= 99.0.0'\n",
              "apiVersion: v1\nname: x\nversion: not-semver\n", "apiVersion: v2\nname: ../../x\nversion: 1.0.0\n",
              "apiVersion: v2\nname: x\nversion: 0.1.0\ntype: library\n", ""]


def seed_charts(roots: list[Path]) -> list[Path]:
    """Every folder holding a Chart.yaml under roots, small enough, in a fixed order."""
    found = []
    for root in roots:
        for chart_yaml in sorted(root.rglob("Chart.yaml")):
            folder = chart_yaml.parent
            size = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file() and not p.is_symlink())
            if size <= MAX_CHART_BYTES:
                found.append(folder)
    return found


class ChartMutator:
    def __init__(self, seeds: list[Path], seed: int) -> None:
        self.seeds = seeds
        self.random = random.Random(seed)

    def make(self, target: Path) -> list[str]:
        """Copy a seed chart to target and mutate it; the mutations made, for the report."""
        pick = self.random
        seed = pick.choice(self.seeds)
        shutil.copytree(seed, target, symlinks=True)
        files = sorted(p for p in target.rglob("*") if p.is_file() and not p.is_symlink())
        done = [str(seed.relative_to(seed.parents[2]) if len(seed.parents) > 2 else seed)]
        for _ in range(pick.randint(1, 4)):
            # File-system mutations are one in five: each makes the chart an input error at once.
            kind = pick.choice(["template"] * 6 + ["yaml", "values", "values", "bytes", "chart"]
                               if pick.random() < 0.8 else ["link", "fifo", "helmignore", "schema"])
            templates = [p for p in files if "templates" in p.parts and _plain(p)]
            if kind == "template" and templates:
                path = pick.choice(templates)
                text = path.read_text("utf-8", "replace")
                at = pick.randint(0, len(text))
                _write(path, (text[:at] + pick.choice(TEMPLATE_TEXT) + text[at:]).encode("utf-8", "replace"))
                done.append(f"template {path.name}")
            elif kind in ("yaml", "values", "bytes") and files:
                path = target / "values.yaml" if kind == "values" else pick.choice(files)
                data = path.read_bytes() if _plain(path) else b""
                at = pick.randint(0, len(data))
                if kind == "bytes" and data:
                    data = data[:at] + bytes([pick.randrange(256)]) + data[at + 1:]
                else:
                    data = data[:at] + pick.choice(TOKENS + VALUES) + data[at:]
                if _write(path, data):
                    done.append(f"{kind} {path.name}")
            elif kind == "chart":
                _write(target / "Chart.yaml", pick.choice(CHART_YAML).encode())
                done.append("Chart.yaml")
            elif kind == "link":
                where = target / pick.choice(["env", "templates/link.yaml", "files/x", "values.yaml"])
                if not where.parent.is_dir() or where.parent.is_symlink() or where.is_dir():
                    continue
                if where.exists() or where.is_symlink():
                    where.unlink()
                link = pick.choice(LINKS)
                os.symlink(link, where)
                done.append(f"link {where.name} -> {link}")
            elif kind == "fifo":
                name = pick.choice(["pipe", "templates/pipe.yaml", "values.yaml"])
                path = target / name
                if not path.parent.is_dir() or path.parent.is_symlink() or path.is_dir():
                    continue
                if path.exists() or path.is_symlink():
                    path.unlink()
                os.mkfifo(path)
                done.append(f"fifo {name}")
            elif kind == "helmignore":
                _write(target / ".helmignore", pick.choice([b"templates/\n", b"*\n", b"!x\n", b"[\n", b"../\n"]))
                done.append(".helmignore")
            elif kind == "schema":
                _write(target / "values.schema.json", pick.choice(SCHEMAS).encode())
                done.append("values.schema.json")
        return done


def _plain(path: Path) -> bool:
    """A regular file that is no link: the only kind the mutator reads or writes (a FIFO would
    block it, a link would write through to /dev/zero or the planted secret)."""
    return path.is_file() and not path.is_symlink()


def _write(path: Path, data: bytes) -> bool:
    if (path.exists() or path.is_symlink()) and not _plain(path):
        if path.is_dir() and not path.is_symlink():
            return False
        path.unlink()
    path.write_bytes(data)
    return True


def peak_kib(pid: int | None = None) -> int:
    """The peak resident size (VmHWM) of a process, in KiB; 0 when it cannot be read."""
    try:
        with open(f"/proc/{pid or 'self'}/status") as handle:
            for line in handle:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def run_one(chart: Path) -> tuple[list[str], int, dict | None, str]:
    """Lint the chart through the CLI in this process: (failures, exit code, report, stderr)."""
    from kubegap_lint.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    code = -1
    argv = sys.argv
    sys.argv = ["kubegap-lint", "lint", str(chart.name), "--format", "json", "--render-timeout", "10"]
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            main()
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else -2
    finally:
        sys.argv = argv
    bugs = []
    stderr = err.getvalue()
    if code not in (0, 1, 2):
        bugs.append(f"exit code {code}")
    if "internal error" in stderr or "Traceback" in stderr:
        bugs.append(f"stderr: {stderr[-2000:]}")
    report = None
    try:
        report = json.loads(out.getvalue())
    except ValueError:
        bugs.append(f"no JSON report: {out.getvalue()[:300]!r}")
    if SECRET in out.getvalue() or SECRET in stderr:
        bugs.append("the planted secret reached the output")
    return bugs, code, report, stderr


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--inputs", type=int, default=1_000_000)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--artifacts", type=Path, default=Path(tempfile.gettempdir()) / "kubegap-chart-fuzz")
    args = parser.parse_args()
    seeds = seed_charts([CHARTS, REPO / "examples" / "helm"])
    if not seeds:
        print("no seed charts", file=sys.stderr)
        return 2
    args.artifacts.mkdir(parents=True, exist_ok=True)
    os.environ["KG_FUZZ_SECRET"] = SECRET
    os.environ["KUBEGAP_LINT_NO_CACHE"] = "1"
    work = Path(tempfile.mkdtemp(prefix="kubegap-chart-fuzz-"))
    (work / ".git").mkdir()  # the repository top: nothing above it is read
    (work / "outside.txt").write_text(SECRET)  # outside every chart: must never be read
    os.chdir(work)
    mutator = ChartMutator(seeds, args.seed)
    started = time.monotonic()
    done = failures = 0
    exits: Counter[int] = Counter()
    errors: Counter[str] = Counter()
    engine_peak = 0
    while done < args.inputs and time.monotonic() - started < args.seconds:
        chart = work / f"c{done}"
        made = mutator.make(chart)
        try:
            bugs, code, report, _ = run_one(chart)
        except BaseException as exc:  # noqa: BLE001 - every escape is what is looked for
            if isinstance(exc, KeyboardInterrupt):
                break
            import traceback

            bugs, code, report = [traceback.format_exc()], -3, None
        from kubegap_lint.helm import worker

        if worker._child:
            engine_peak = max(engine_peak, peak_kib(worker._child[0].process.pid))
        done += 1
        exits[code] += 1
        if report is not None:
            errors.update({e["message"].replace(chart.name, "CHART")[:60] for e in report.get("errors", [])})
        if bugs:
            failures += 1
            name = hashlib.sha1(repr(made).encode()).hexdigest()[:16]
            with tarfile.open(args.artifacts / f"chart-{name}.tar", "w") as tar:
                tar.add(chart, arcname="chart", filter=lambda i: None if i.isfifo() else i)
            (args.artifacts / f"chart-{name}.txt").write_text("\n".join(made + bugs))
            if failures <= 20:
                print(f"input {done}: FAILED ({'; '.join(made)}): {bugs[0].splitlines()[-1][:200]}", flush=True)
        shutil.rmtree(chart, ignore_errors=True)
    seconds = time.monotonic() - started
    os.chdir(REPO)
    shutil.rmtree(work, ignore_errors=True)
    summary = {
        "inputs": done, "failures": failures, "seconds": round(seconds), "seed": args.seed, "seed_charts": len(seeds),
        "exit_codes": dict(sorted(exits.items())), "inputs_with_error": dict(errors.most_common(12)),
        "peak_mib_this_process": peak_kib() // 1024, "peak_mib_engine_process": engine_peak // 1024,
    }
    print(json.dumps(summary, sort_keys=True))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
