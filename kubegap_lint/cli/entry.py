"""The `kubegap-lint` entry point: start what the command will wait for, then run it (main.py).

`kubegap-lint helm` waits for the Helm engine's process (helm/worker.py: Python, then the Go
engine, 0.2-0.4 s); importing the command line (click, the commands) and reading the settings
and catalog take about as long. Started here, before those imports, the engine loads while they
run instead of after part of them. Only a start: a command line that turns out to need no engine
(`helm` an existing folder linted as a path, a `--helm` binary after all) leaves the process
unused, stopped at exit; anything wrong with it is said when a render asks for it.
"""

from __future__ import annotations

import gc
import sys


def _wants_engine(args: list[str]) -> bool:
    """`kubegap-lint helm ...` rendering in-process (no --helm binary, no help)."""
    return bool(args) and args[0] == "helm" and not any(
        arg in ("--help", "-h", "--version") or arg == "--helm" or arg.startswith("--helm=") for arg in args[1:])


def main() -> None:
    try:
        if _wants_engine(sys.argv[1:]):
            try:
                from kubegap_lint.helm.worker import start

                start()
            except Exception:  # noqa: BLE001 - the command starts it again and says what is wrong
                pass
        from kubegap_lint.cli.main import main as run
    except KeyboardInterrupt:  # Ctrl-C while the command line loads: said as run() says it
        print("kubegap-lint: interrupted", file=sys.stderr)
        sys.exit(130)

    try:
        run()
    finally:
        # The process ends here, and its objects with it. cli/main.py gave start-up's frozen
        # objects back to the collector, and the interpreter's exit would walk them all: about
        # 35-40 ms of linting the examples or of a small chart's `kubegap-lint helm`; frozen, 7.
        gc.freeze()
