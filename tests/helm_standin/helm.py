"""A stand-in for the `helm` binary in tests (Helm cannot be installed on the test machines).

`helm template [NAME] CHART [flags]` plays back examples/helm/rendered.yaml, the output of the
example chart gpu-train for release `demo` in namespace `ml`, and refuses anything else the way
helm does (a line starting with `Error:` on stderr, exit 1). Each call is appended, one JSON
list a line, to the file named by $HELM_STANDIN_LOG when that is set.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

RECORDING = Path(__file__).resolve().parents[2] / "examples" / "helm" / "rendered.yaml"
FLAGS_WITH_VALUE = {"--namespace", "-n", "--values", "-f", "--set", "--set-string", "--set-file",
                    "--kube-version", "--api-versions"}


def main(argv: list[str]) -> int:
    log = os.environ.get("HELM_STANDIN_LOG")
    if log:
        with open(log, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(argv) + "\n")
    if not argv or argv[0] != "template":
        sys.stderr.write(f"Error: unknown command {argv[0] if argv else ''!r} for \"helm\"\n")
        return 1
    positional: list[str] = []
    flags: dict[str, list[str]] = {}
    rest = iter(argv[1:])
    for arg in rest:
        if arg == "--":  # the end of the flags, as kubegap-lint passes them
            positional.extend(rest)
            break
        if arg in FLAGS_WITH_VALUE:
            flags.setdefault(arg, []).append(next(rest, ""))
        elif arg.startswith("-"):
            sys.stderr.write(f"Error: unknown flag: {arg}\n")
            return 1
        else:
            positional.append(arg)
    chart = positional[-1] if positional else ""
    chart_file = Path(chart) / "Chart.yaml"
    if not chart_file.is_file() or "name: gpu-train" not in chart_file.read_text(encoding="utf-8"):
        sys.stderr.write(f"Error: path \"{chart}\" not found\n")
        return 1
    release = positional[0] if len(positional) == 2 else "release-name"
    namespace = (flags.get("--namespace") or flags.get("-n") or ["default"])[-1]
    if release != "demo" or namespace != "ml":
        sys.stderr.write("Error: this stand-in only holds the recording for release demo in namespace ml\n")
        return 1
    sys.stderr.write("WARNING: Kubernetes configuration file is group-readable. This is insecure.\n")
    sys.stdout.write(RECORDING.read_text(encoding="utf-8"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
