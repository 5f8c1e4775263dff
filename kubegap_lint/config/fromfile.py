"""The Settings a validated configuration file gives, and where each value is written."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from kubegap_lint.config.charts import chart_renders
from kubegap_lint.config.configfile import ConfigFile, absolute_path, display_path
from kubegap_lint.config.settings import Exemption, Settings
from kubegap_lint.core.errors import DataFileError
from kubegap_lint.core.model import Severity
from kubegap_lint.input.parse import PositionIndex


def rebase_glob(pattern: str, folder: Path) -> str:
    """A glob with a folder part is relative to the configuration's folder: make it absolute.
    A bare file-name glob (`*.tmpl.yaml`) matches a file name anywhere: keep it."""
    if "/" not in pattern or os.path.isabs(pattern):
        return pattern
    return str(folder.resolve() / pattern).replace(os.sep, "/")


def settings_from_file(config: ConfigFile) -> tuple[Settings, dict[str, str]]:
    data = config.data
    folder = config.path.resolve().parent
    settings = Settings(source=config.display)
    origins: dict[str, str] = {}

    def origin(key: str, path: list[Any]) -> None:
        origins[key] = config.place(path)

    if "select" in data:
        settings.select = list(data["select"])
        origin("select", ["select"])
    if "ignore" in data:
        settings.ignore = list(data["ignore"])
        origin("ignore", ["ignore"])
    if "severity" in data:
        settings.severity = {k: Severity(v) for k, v in data["severity"].items()}
        origin("severity", ["severity"])
    for name, value in (data.get("params") or {}).items():
        settings.params[name] = value
        origin(f"params.{name}", ["params", name])
    if "exclude" in data:
        settings.exclude = [rebase_glob(p, folder) for p in data["exclude"]]
        origin("exclude", ["exclude"])
    if "policy_dirs" in data:
        settings.policy_dirs = [absolute_path(folder, p) for p in data["policy_dirs"]]
        missing = [(i, p) for i, p in enumerate(settings.policy_dirs) if not p.is_dir()]
        if missing:
            raise DataFileError([f"{config.place(['policy_dirs', i])}: policy_dirs[{i}]: expected a folder,"
                                 f" {display_path(p)} is not one" for i, p in missing])
        origin("policy_dirs", ["policy_dirs"])
    if data.get("workloads"):
        from kubegap_lint.workloads.kinds import rules_from_entries

        settings.workloads = rules_from_entries(data["workloads"], config.display,
                                                config.positions or PositionIndex())
        origin("workloads", ["workloads"])
    if "fail_on" in data:
        settings.fail_on = Severity(data["fail_on"])
        origin("fail_on", ["fail_on"])
    if data.get("baseline"):
        settings.baseline = absolute_path(folder, data["baseline"])
        origin("baseline", ["baseline"])
    if "render_timeout" in data:
        settings.render_timeout = float(data["render_timeout"])
        origin("render_timeout", ["render_timeout"])
    for number, entry in enumerate(data.get("exemptions") or []):
        where = config.where(["exemptions", number]) or (1, 1)
        settings.exemptions.append(Exemption(
            rules=list(entry["rules"]),
            reason=" ".join(entry["reason"].split()),
            kinds=list(entry.get("kinds", [])),
            namespaces=list(entry.get("namespaces", [])),
            names=list(entry.get("names", [])),
            paths=[rebase_glob(p, folder) for p in entry.get("paths", [])],
            containers=list(entry.get("containers", [])),
            origin=(config.display, where[0], where[1]),
        ))
    if settings.exemptions:
        origin("exemptions", ["exemptions"])
    settings.charts = chart_renders(config, folder)
    if settings.charts:
        origin("charts", ["charts"])
    return settings, origins
