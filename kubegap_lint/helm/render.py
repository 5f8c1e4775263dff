"""Render charts with a `helm` binary (when the user names one), and find the charts that
changed files belong to.

kubegap-lint never renders templates itself: Helm does, in-process through the optional Helm
engine (sdk.py), or as `helm template` when asked with --helm. Every failure becomes a one-line
`HelmError`.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from kubegap_lint.core.errors import KubegapError
from kubegap_lint.core.record import field, record

if TYPE_CHECKING:
    from kubegap_lint.config.settings import ChartRender
    from kubegap_lint.input.sources import Source


class HelmError(KubegapError):
    """helm is missing or failed: one line that says what to do; `path` and `line` name the
    chart's own line at fault when there is one (Chart.yaml's `kubeVersion:`)."""

    def __init__(self, message: str, path: str | None = None, line: int | None = None) -> None:
        super().__init__(message)
        self.path = path
        self.line = line


class HelmMissing(HelmError):
    pass


class RequestError(HelmError):
    """What the render was asked is wrong, not the chart: a values file, a --set flag, a
    --kube-version, a chart path that is not there. `kubegap-lint helm` says it as an input
    error of its command line (exit 2); a chart that fails to render is a KG009 finding."""


class NotLinted(KubegapError):
    """A chart that rendered, or needs no render, and holds nothing to lint (a library chart, a
    render with no Kubernetes object): a note, never an error. Its own class so that the
    "not linted" reporting of charts can take it over in one place."""


@record
class RenderOptions:
    values: list[str] = field(default_factory=list)  # -f files
    sets: list[str] = field(default_factory=list)  # --set k=v
    release: str | None = None
    namespace: str | None = None
    set_strings: list[str] = field(default_factory=list)  # --set-string k=v
    set_files: list[str] = field(default_factory=list)  # --set-file k=path
    kube_version: str | None = None
    api_versions: list[str] = field(default_factory=list)
    include_crds: bool = False
    set_jsons: list[str] = field(default_factory=list)  # --set-json k=JSON (or a JSON object)
    set_literals: list[str] = field(default_factory=list)  # --set-literal k=text, taken as it is


def configured(chart: str, renders: list[ChartRender]) -> list[tuple[RenderOptions, ChartRender | None]]:
    """How to render a chart: each `charts:` entry of the configuration that names its folder,
    else once with its defaults."""
    real = os.path.realpath(chart)
    chosen: list[tuple[RenderOptions, ChartRender | None]] = [(RenderOptions(list(r.values), list(r.sets), r.release, r.namespace, list(r.set_strings),
                             list(r.set_files), r.kube_version, list(r.api_versions), r.include_crds,
                             list(r.set_jsons), list(r.set_literals)), r)
              for r in renders if os.path.realpath(r.chart) == real]
    return chosen or [(RenderOptions(), None)]


def shown_name(chart: str, render: ChartRender | None, count: int) -> str:
    """The rendered stream's name in findings: the chart, and which `charts:` entry when the
    configuration renders it more than once."""
    if render is not None and count > 1 and render.origin is not None:
        return f"<helm template {chart} ({render.origin[0]}:{render.origin[1]})>"
    return f"<helm template {chart}>"


NEEDS_VALUES_HINT = ("; give it values under `charts:` in the configuration (docs/helm-and-pre-commit.md)")


def find_helm(explicit: str | None = None) -> str:
    """The helm executable to run: `--helm PATH`, else `helm` on PATH."""
    import shutil  # here, not at the top: a run without charts never needs it (start-up)

    if explicit:
        if os.path.isfile(explicit) and os.access(explicit, os.X_OK):
            return explicit
        found = shutil.which(explicit)
        if found:
            return found
        raise HelmMissing(f"helm not found at {explicit}: name an executable helm binary with --helm PATH,"
                          " or drop --helm to render in-process")
    found = shutil.which("helm")
    if found is None:
        raise HelmMissing("no `helm` on PATH: name the helm binary with --helm PATH, or drop --helm to"
                          " render in-process (`pip install 'kubegap-lint[helm]'`)")
    return found


def template_command(helm: str, chart: str, options: RenderOptions) -> list[str]:
    """The helm command line; `--` ends the flags so that a chart path starting with `-` is
    never read as one."""
    command = [helm, "template"]
    if options.namespace:
        command += ["--namespace", options.namespace]
    for path in options.values:
        command += ["--values", path]
    for flag, assignments in (("--set-json", options.set_jsons), ("--set", options.sets),
                              ("--set-string", options.set_strings), ("--set-file", options.set_files),
                              ("--set-literal", options.set_literals)):
        for assignment in assignments:
            command += [flag, assignment]
    if options.kube_version:
        command += ["--kube-version", options.kube_version]
    for version in options.api_versions:
        command += ["--api-versions", version]
    if options.include_crds:
        command.append("--include-crds")
    command.append("--")
    if options.release:
        command.append(options.release)
    command.append(chart)
    return command


def render(helm: str, chart: str, options: RenderOptions, timeout: float = 300) -> str:
    """The output of `helm template` for one chart."""
    import subprocess

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


def split_chart_sources(sources: list[Source]) -> tuple[list[Source], list[str]]:
    """Sources outside any chart, and the charts (folders holding a Chart.yaml) the others belong
    to: a chart's templates, values, files/ and tests are not manifests until Helm renders them."""
    plain: list[Source] = []
    roots: dict[str, None] = {}
    by_folder: dict[str, str | None] = {}  # a tree of many files asks once per folder
    for source in sources:
        root = None
        if source.fs_path is not None:
            folder = os.path.dirname(os.path.abspath(source.fs_path))
            if folder not in by_folder:
                by_folder[folder] = chart_root(source.fs_path)
            root = by_folder[folder]
        if root is None:
            plain.append(source)
        else:
            roots.setdefault(_relative(root))
    return plain, sorted(roots)
