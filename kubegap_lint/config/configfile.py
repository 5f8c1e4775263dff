"""One configuration file as read, and where each of its keys is written (for messages and
`kubegap-lint config show`).

The file is `.kubegap-lint.yaml`, or the `[tool.kubegap-lint]` table of `pyproject.toml`. Paths
in a file are relative to the file's folder, so a configuration works whatever folder the tool
is run from.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from kubegap_lint.core.record import record
from kubegap_lint.input.parse import PositionIndex

CONFIG_NAME = ".kubegap-lint.yaml"
PYPROJECT_NAME = "pyproject.toml"
TOOL_TABLE = "kubegap-lint"


@record
class ConfigFile:
    """One configuration file as read: its data and a way to find each key's line."""

    path: Path
    data: dict[str, Any]
    positions: PositionIndex | None = None  # YAML files
    text: str = ""  # TOML files: searched for key lines

    @property
    def display(self) -> str:
        return display_path(self.path)

    def where(self, path: list[Any]) -> tuple[int, int] | None:
        if self.positions is None:
            return _toml_line(self.text, path)
        from kubegap_lint.catalog.datafile import locate

        found = locate(self.data, self.positions, path)
        if found and path and isinstance(path[-1], int):
            # A scalar list item has no position of its own: find its text after the list's.
            item = config_node(self.data, path)
            if isinstance(item, str):
                lines = self.text.splitlines()
                for number in range(found[0] - 1, len(lines)):
                    column = lines[number].find(item, found[1] if number == found[0] - 1 else 0)
                    if column != -1:
                        return number + 1, column + 1
        return found

    def place(self, path: list[Any]) -> str:
        found = self.where(path)
        return f"{self.display}:{found[0]}:{found[1]}" if found else self.display


def display_path(path: Path | str) -> str:
    """Relative to the working folder when below it, else absolute; forward slashes."""
    absolute = os.path.abspath(path)
    try:
        relative = os.path.relpath(absolute)
    except ValueError:  # another drive on Windows
        return absolute.replace(os.sep, "/")
    chosen = absolute if relative.startswith("..") else relative
    return chosen.replace(os.sep, "/")


def absolute_path(folder: Path, value: str) -> Path:
    """A path written in a configuration file, relative to its folder unless absolute."""
    return (folder / value).resolve() if not os.path.isabs(value) else Path(value)


def _toml_line(text: str, path: list[Any]) -> tuple[int, int] | None:
    """Best effort: the line of a key inside [tool.kubegap-lint] (tomllib keeps no positions)."""
    lines = text.splitlines()
    start = 0
    header = re.compile(r"^\s*\[\s*tool\s*\.\s*\"?" + re.escape(TOOL_TABLE) + r"\"?\s*\]")
    for number, line in enumerate(lines):
        if header.match(line):
            start = number
            break
    best: tuple[int, int] | None = (start + 1, 1) if lines else None
    position = start
    pattern: re.Pattern[str] | None = None
    for step in path:
        if isinstance(step, str):
            pattern = re.compile(r"(^|[\s{,.\[])\"?" + re.escape(step) + r"\"?\s*="
                                 r"|\[\[?[^\]]*\." + re.escape(step) + r"\]")
            wanted = 0  # the first line that sets the key
        elif pattern is not None:
            wanted = step  # the step-th [[tool.kubegap-lint.key]] table after the first
        else:
            break
        found = _nth_line(lines, pattern, position, wanted)
        if found is None:
            break
        best, position = found, found[0] - 1
    return best


def _nth_line(lines: list[str], pattern: re.Pattern[str], start: int, skip: int) -> tuple[int, int] | None:
    """The (line, column) of the match after skipping `skip` matching lines from `start`."""
    for number in range(start, len(lines)):
        match = pattern.search(lines[number])
        if match:
            if skip == 0:
                return number + 1, match.start() + 1 + (1 if match.group(0)[:1].isspace() else 0)
            skip -= 1
    return None


def config_node(data: Any, path: list[Any]) -> Any:
    node: Any = data
    for step in path:
        try:
            node = node[step]
        except (KeyError, IndexError, TypeError):
            return None
    return node


def config_names(config: ConfigFile, path: list[Any]) -> list[Any]:
    node = config_node(config.data, path)
    return node if isinstance(node, list) else []
