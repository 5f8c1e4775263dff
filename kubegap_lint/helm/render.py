"""Render charts with the `helm` binary, and find the charts that changed files belong to.

kubegap-lint never renders templates itself: `helm template` is the only renderer whose output
is what a cluster would receive. Every failure becomes a one-line `HelmError`.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from kubegap_lint.core.errors import KubegapError

if TYPE_CHECKING:
    from kubegap_lint.core.model import InputError
    from kubegap_lint.input.sources import Source


class HelmError(KubegapError):
    """helm is missing or failed: one line that says what to do."""


class HelmMissing(HelmError):
    pass


@dataclass
class RenderOptions:
    values: list[str] = field(default_factory=list)  # -f files
    sets: list[str] = field(default_factory=list)  # --set k=v
    release: str | None = None
    namespace: str | None = None


def find_helm(explicit: str | None = None) -> str:
    """The helm executable to run: `--helm PATH`, else `helm` on PATH."""
    if explicit:
        if os.path.isfile(explicit) and os.access(explicit, os.X_OK):
            return explicit
        found = shutil.which(explicit)
        if found:
            return found
        raise HelmMissing(f"helm not found at {explicit}: name an executable helm binary with --helm PATH")
    found = shutil.which("helm")
    if found is None:
        raise HelmMissing("helm is not installed (no `helm` on PATH): install Helm 3 or name the"
                          " binary with --helm PATH; or run `helm template` yourself and lint its output")
    return found


def template_command(helm: str, chart: str, options: RenderOptions) -> list[str]:
    """Options first, then `--` and the names: a chart folder called `--post-renderer=sh`
    (or a release name starting with `-`) reaches helm as a name, never as an option."""
    command = [helm, "template"]
    if options.namespace:
        command += ["--namespace", options.namespace]
    for path in options.values:
        command += ["--values", path]
    for assignment in options.sets:
        command += ["--set", assignment]
    command.append("--")
    if options.release:
        command.append(options.release)
    command.append(chart)
    return command


def render(helm: str, chart: str, options: RenderOptions, timeout: float = 300) -> str:
    """The output of `helm template` for one chart."""
    command = template_command(helm, chart, options)
    try:
        done = subprocess.run(command, capture_output=True, timeout=timeout, stdin=subprocess.DEVNULL)
    except FileNotFoundError:
        raise HelmMissing(f"helm not found at {helm}") from None
    except PermissionError:
        raise HelmMissing(f"helm at {helm} cannot be run (permission denied)") from None
    except subprocess.TimeoutExpired:
        raise HelmError(f"helm template {chart} did not finish in {timeout:.0f} s") from None
    except OSError as exc:
        raise HelmError(f"helm template {chart} could not be run: {exc.strerror or exc}") from None
    if done.returncode != 0:
        lines = [line.strip() for line in done.stderr.decode("utf-8", "replace").splitlines() if line.strip()]
        said = next((line for line in lines if line.startswith("Error:")), lines[-1] if lines else "")
        raise HelmError(f"helm template {chart} failed (exit {done.returncode})" + (f": {said}" if said else ""))
    return done.stdout.decode("utf-8", "replace")


def chart_root(path: str) -> str | None:
    """The chart a file belongs to: the outermost folder holding a Chart.yaml among the file's
    folders (a subchart's files render with its parent chart), or None."""
    folder = os.path.dirname(os.path.abspath(path)) if not os.path.isdir(path) else os.path.abspath(path)
    top = os.path.abspath(os.curdir)
    found: str | None = None
    while True:
        if os.path.isfile(os.path.join(folder, "Chart.yaml")):
            found = folder
        parent = os.path.dirname(folder)
        if parent == folder or folder == top:  # below the current folder, never look above it
            break
        folder = parent
    return found


def charts_of(paths: list[str]) -> list[str]:
    """The distinct charts that the given files belong to, each once, in sorted order."""
    roots = {root for root in (chart_root(p) for p in paths) if root is not None}
    return sorted(_relative(root) for root in roots)


def _relative(path: str) -> str:
    relative = os.path.relpath(path)
    return path if relative.startswith("..") else relative


def without_chart_templates(paths: list[str], excludes: list[str]) -> tuple[list[Source], list[InputError]]:
    """Sources and errors as `sources.discover` finds them, less the files of chart templates."""
    from kubegap_lint.input.sources import discover

    sources, errors = discover(paths, excludes)
    return [s for s in sources if s.fs_path is None or not in_chart_templates(s.fs_path)], errors


def in_chart_templates(path: str) -> bool:
    """A file below a chart's templates/ folder: Go-template text, not YAML until rendered."""
    parts = os.path.abspath(path).split(os.sep)
    for index in range(len(parts) - 2, 0, -1):
        if parts[index] == "templates":
            chart = os.sep.join(parts[:index]) or os.sep
            if os.path.isfile(os.path.join(chart, "Chart.yaml")):
                return True
    return False
