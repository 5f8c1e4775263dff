"""The settings one run uses, after configuration files and command-line options are merged.

`fromfile.py` builds them from a configuration file and `load.py` puts the command line over
them; the commands set what no file says (chart folders, the repository's facts), and the run
(`engine/run.py`) only reads them.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from kubegap_lint.core.model import Severity
from kubegap_lint.core.record import field, record
from kubegap_lint.workloads.kinds import KindRule

if TYPE_CHECKING:
    from kubegap_lint.workloads.repofacts import RepoContext


@record
class Exemption:
    """A configuration exemption: findings it matches are suppressed with its reason."""

    rules: list[str]
    reason: str
    kinds: list[str] = field(default_factory=list)
    namespaces: list[str] = field(default_factory=list)
    names: list[str] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    containers: list[str] = field(default_factory=list)
    origin: tuple[str, int, int] | None = None  # (config file, line, column), for reports


@record
class ChartRender:
    """One render of a chart that `kubegap-lint PATH` (and `kubegap-lint helm` without render
    flags) finds: the `helm template` flags, paths absolute (given relative to the file)."""

    chart: str  # the chart folder
    values: list[str] = field(default_factory=list)
    sets: list[str] = field(default_factory=list)
    set_strings: list[str] = field(default_factory=list)
    set_files: list[str] = field(default_factory=list)  # KEY=PATH
    set_jsons: list[str] = field(default_factory=list)  # KEY=JSON, or a JSON object
    set_literals: list[str] = field(default_factory=list)  # KEY=VALUE, taken as it is
    release: str | None = None
    namespace: str | None = None
    kube_version: str | None = None
    api_versions: list[str] = field(default_factory=list)
    include_crds: bool = False
    origin: tuple[str, int, int] | None = None  # (config file, line, column), for messages


@record
class Settings:
    select: list[str] | None = None  # ids or names; None means every enabled policy
    ignore: list[str] = field(default_factory=list)
    severity: dict[str, Severity] = field(default_factory=dict)  # id or name -> severity
    params: dict[str, Any] = field(default_factory=dict)  # overrides of policies/params.yaml
    exclude: list[str] = field(default_factory=list)
    policy_dirs: list[Path] = field(default_factory=list)
    workloads: list[KindRule] = field(default_factory=list)
    fail_on: Severity = Severity.WARNING
    baseline: Path | None = None
    exemptions: list[Exemption] = field(default_factory=list)
    source: str | None = None  # the configuration file these came from, if any
    chart_dirs: list[str] = field(default_factory=list)  # where to find charts named by "# Source:"
    charts: list[ChartRender] = field(default_factory=list)  # how to render the charts a run finds
    render_timeout: float | None = None  # seconds one chart's render may take (helm/worker.py)
    follow_symlinks_out: bool = False  # read symlinks to files outside the linted tree (sources.py)
    # The facts of the work tree's files that the run does not lint (workloads/repofacts.py):
    # set on a partial run, which also reports an exemption unused only for the paths it linted.
    context: RepoContext | None = None
    partial: bool = False  # part of a whole without context (a chart): exemptions without paths never unused
