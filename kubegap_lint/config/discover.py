"""Finding the configuration file of a linted path: the nearest one in its folder or above it,
within the repository (or the home or working folder outside one).
"""

from __future__ import annotations

import os
from pathlib import Path

from kubegap_lint.config.configfile import CONFIG_NAME, PYPROJECT_NAME, TOOL_TABLE


def _has_tool_table(path: Path) -> bool:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    return f"[tool.{TOOL_TABLE}" in text or f'[tool."{TOOL_TABLE}"' in text


def _search_folders(folder: Path) -> list[Path]:
    """The folders discovery may read, nearest first: up to the git top level (the first
    folder that holds `.git`), never above the home folder; outside a repository up to the
    home folder or else the working folder; a folder under none of these is searched alone.
    So a configuration planted in a parent such as /tmp, or above the repository, never
    applies without `--config`."""
    chain = [folder, *folder.parents]
    home = os.environ.get("HOME")
    home_path = Path(home).resolve() if home and os.path.isabs(home) else None
    cwd = Path.cwd().resolve()
    for bound in (lambda p: os.path.lexists(p / ".git"), lambda p: p == cwd):
        for index, candidate in enumerate(chain):
            if candidate == home_path or bound(candidate):
                return chain[: index + 1]
    return [folder]


def discover_config(start: Path) -> Path | None:
    """The nearest configuration file in start's folder or above it, within the repository."""
    folder = start.resolve()
    if not folder.is_dir():
        folder = folder.parent
    for candidate in _search_folders(folder):
        yaml_file = candidate / CONFIG_NAME
        if yaml_file.is_file():
            return yaml_file
        pyproject = candidate / PYPROJECT_NAME
        if pyproject.is_file() and _has_tool_table(pyproject):
            return pyproject
    return None
