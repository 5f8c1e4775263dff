"""Reading one configuration file (YAML, or TOML with its `[tool.kubegap-lint]` table) and
validating it; errors name the file, line and key.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from kubegap_lint.config.configfile import PYPROJECT_NAME, TOOL_TABLE, ConfigFile, display_path
from kubegap_lint.config.validate import type_name, validate_config
from kubegap_lint.core.errors import DataFileError
from kubegap_lint.core.safefile import read_text_limited


def _load_toml(text: str) -> dict[str, Any]:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on 3.10 only
        import tomli as tomllib
    return tomllib.loads(text)


def read_config(path: Path) -> ConfigFile:
    """Read and validate one configuration file; errors name the file, line and key."""
    display = display_path(path)
    if not path.is_file():
        raise DataFileError([f"{display}: configuration file not found"])
    if path.name == PYPROJECT_NAME or path.suffix == ".toml":
        text = read_text_limited(path, what="configuration", display=display)
        try:
            document = _load_toml(text)
        except RecursionError:
            raise DataFileError([f"{display}: nested too deeply"]) from None
        except ValueError as exc:  # tomllib.TOMLDecodeError
            raise DataFileError([f"{display}: not valid TOML: {exc}"]) from None
        tool = document.get("tool", {}) if path.name == PYPROJECT_NAME else {}
        if not isinstance(tool, dict):  # `tool = 1`
            raise DataFileError([f"{display}: [tool] must be a table, got {type_name(tool)}"])
        table = tool.get(TOOL_TABLE, {}) if path.name == PYPROJECT_NAME else document
        if not isinstance(table, dict):
            raise DataFileError([f"{display}: [tool.{TOOL_TABLE}] must be a table"])
        config = ConfigFile(path, table, None, text)
    else:
        from kubegap_lint.catalog.datafile import load_yaml

        text = read_text_limited(path, what="configuration", display=display)
        data, positions = load_yaml(display, text)
        if data is None:
            data = {}
        if not isinstance(data, dict):
            raise DataFileError([f"{display}:1:1: (top level): expected a mapping of keys"
                                 " (select, ignore, params, ...), got " + type_name(data)])
        config = ConfigFile(path, data, positions, text)
    problems = validate_config(config)
    if problems:
        raise DataFileError(problems)
    return config
