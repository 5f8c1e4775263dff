"""Lints for the servers, run as the command line runs them: `python -m kubegap_lint --format
json` in a child process at the workspace root.

The findings are the CLI's JSON findings by construction (the same discovery, configuration,
repository facts and chart rendering), and a run that breaks or hangs ends its process, not the
server. Results are paged: a lint of a large tree can hold thousands of findings.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

from kubegap_lint.core.errors import KubegapError
from kubegap_lint.core.record import record

RUN_SECONDS = 300  # a lint of a whole repository with charts; a hung render must end
DEFAULT_LIMIT = 100
MAX_LIMIT = 1000


class RunFailed(KubegapError):
    """The lint gave no report (a usage error, an empty input): its message, one line."""


@record(frozen=True)
class Page:
    findings: list[dict[str, Any]]
    total: int  # findings in the whole report (suppressed ones included, as in the JSON)
    offset: int
    next_offset: int | None  # where the next page starts; None on the last page
    summary: dict[str, Any]
    errors: list[dict[str, Any]]  # inputs that could not be read: never a silent green
    exit_code: int  # the CLI's: 0 clean, 1 findings, 2 an input not linted


def selection_args(select: list[str], ignore: list[str]) -> list[str]:
    args: list[str] = []
    for flag, names in (("--select", select), ("--ignore", ignore)):
        for name in names:
            if not isinstance(name, str) or not name.strip() or name.startswith("-"):
                raise RunFailed(f"{flag} takes rule ids or names, not {name!r}")
            args += [flag, name]
    return args


def _run(root: str, args: list[str], stdin: str | None) -> subprocess.CompletedProcess[bytes]:
    command = [sys.executable, "-m", "kubegap_lint", *args]
    try:
        return subprocess.run(command, cwd=root, input=(stdin or "").encode("utf-8", "surrogateescape"),
                              capture_output=True, timeout=RUN_SECONDS, check=False)
    except subprocess.TimeoutExpired:
        raise RunFailed(f"the lint took longer than {RUN_SECONDS} s and was stopped") from None
    except OSError as exc:
        raise RunFailed(f"cannot start the linter: {exc.strerror or exc}") from None


def _failure(proc: subprocess.CompletedProcess[bytes]) -> RunFailed:
    lines = proc.stderr.decode("utf-8", "replace").strip().splitlines()
    message = lines[-1] if lines else f"the linter exited with {proc.returncode} and no report"
    return RunFailed(message.removeprefix("kubegap-lint: "))


def run_diff(root: str, args: list[str], stdin: str | None = None) -> str:
    """What `kubegap-lint --diff ARGS` prints at `root` (exit 0 or 1); an error otherwise."""
    proc = _run(root, ["lint", "--diff", *args], stdin)
    if proc.returncode not in (0, 1):
        raise _failure(proc)
    return proc.stdout.decode("utf-8", "surrogateescape")


def run_json(root: str, args: list[str], stdin: str | None = None) -> dict[str, Any]:
    """The JSON report of `kubegap-lint ARGS` run at `root`; an error when there is none."""
    proc = _run(root, args, stdin)
    try:
        report = json.loads(proc.stdout) if proc.stdout.strip() else None
    except ValueError:
        report = None
    if not isinstance(report, dict):
        raise _failure(proc)
    report["exit_code"] = proc.returncode
    return report


def page(report: dict[str, Any], offset: int, limit: int) -> Page:
    findings = report.get("findings", [])
    end = offset + limit
    return Page(findings[offset:end], len(findings), offset, end if end < len(findings) else None,
                report.get("summary", {}), report.get("errors", []), report["exit_code"])
