"""The `charts:` entries of a configuration file: how to render each chart a run finds, its
paths made absolute and checked to be inside the repository that holds the configuration.
"""

from __future__ import annotations

import os
from pathlib import Path

from kubegap_lint.config.configfile import ConfigFile, absolute_path, display_path
from kubegap_lint.config.settings import ChartRender
from kubegap_lint.core.errors import DataFileError


def chart_renders(config: ConfigFile, folder: Path) -> list[ChartRender]:
    """The `charts:` entries, their paths made absolute and checked (one line each, with where)."""
    renders: list[ChartRender] = []
    problems: list[str] = []
    top = _repository_top(folder)
    for number, entry in enumerate(config.data.get("charts") or []):
        chart = absolute_path(folder, entry["path"])
        if not (chart / "Chart.yaml").is_file():
            problems.append(f"{config.place(['charts', number, 'path'])}: charts[{number}].path: expected a chart"
                            f" folder (holding Chart.yaml), {display_path(chart)} is not one")
        values = [absolute_path(folder, v) for v in entry.get("values", [])]
        problems += [f"{config.place(['charts', number, 'values', i])}: charts[{number}].values[{i}]: expected a"
                     f" file, {display_path(v)} is not one" for i, v in enumerate(values) if not v.is_file()]
        problems += [f"{config.place(['charts', number, 'values', i])}: charts[{number}].values[{i}]:"
                     f" {display_path(v)} is outside the repository ({display_path(top[0])}): not read"
                     for i, v in enumerate(values) if v.is_file() and not _within(v, top)]
        set_files = []
        for i, assignment in enumerate(entry.get("set_file", [])):
            key, equals, path = assignment.partition("=")
            if not equals or not key or not path:
                problems.append(f"{config.place(['charts', number, 'set_file', i])}: charts[{number}].set_file[{i}]:"
                                " expected KEY=PATH")
                continue
            target = absolute_path(folder, path)
            if not target.is_file():
                problems.append(f"{config.place(['charts', number, 'set_file', i])}: charts[{number}].set_file[{i}]:"
                                f" expected a file, {display_path(target)} is not one")
            elif not _within(target, top):
                problems.append(f"{config.place(['charts', number, 'set_file', i])}: charts[{number}].set_file[{i}]:"
                                f" {display_path(target)} is outside the repository ({display_path(top[0])}): not read")
            set_files.append(f"{key}={target}")
        where = config.where(["charts", number]) or (1, 1)
        renders.append(ChartRender(
            chart=str(chart), values=[str(v) for v in values], sets=list(entry.get("set", [])),
            set_strings=list(entry.get("set_string", [])), set_files=set_files, release=entry.get("release"),
            namespace=entry.get("namespace"), kube_version=entry.get("kube_version"),
            api_versions=list(entry.get("api_versions", [])), include_crds=bool(entry.get("include_crds", False)),
            set_jsons=list(entry.get("set_json", [])), set_literals=list(entry.get("set_literal", [])),
            origin=(config.display, where[0], where[1])))
    if problems:
        raise DataFileError(problems)
    return renders


def _repository_top(folder: Path) -> list[Path]:
    """Where the files a configuration's `charts:` entries name must be: the repository holding
    the configuration (the nearest folder with `.git`: a pull request's configuration must not
    publish `/proc/self/environ` or `../../.ssh/x`); outside any repository, the configuration's
    own folder or the working folder."""
    real = folder.resolve()
    found = next((p for p in (real, *real.parents) if os.path.lexists(p / ".git")), None)
    return [found] if found is not None else [real, Path.cwd().resolve()]


def _within(path: Path, tops: list[Path]) -> bool:
    """The path, all links followed, is inside one of tops."""
    real = path.resolve()
    return any(real.is_relative_to(top) for top in tops)
