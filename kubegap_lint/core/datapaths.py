"""Where the built-in data lives: next to the package when installed, at the repository root
in a source checkout. The only module that knows both places."""

from __future__ import annotations

import os
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent.parent  # kubegap_lint/, above core/


def _data_dir(name: str) -> Path:
    installed = _PACKAGE / "_data" / name
    if installed.is_dir():
        return installed
    return _PACKAGE.parent / name


def policies_dir() -> Path:
    override = os.environ.get("KUBEGAP_LINT_POLICIES")
    return Path(override) if override else _data_dir("policies")


def schemas_dir() -> Path:
    return _data_dir("schemas")


def schema_path(name: str) -> Path:
    return schemas_dir() / name


def examples_dir() -> Path | None:
    """The examples folder of a source checkout (not installed with the package)."""
    folder = _PACKAGE.parent / "examples"
    return folder if folder.is_dir() else None


def package_folders() -> list[Path]:
    """The package folder and every subpackage: what the code that reads a cached catalog is."""
    with os.scandir(_PACKAGE) as entries:  # not Path.glob: its pattern machinery costs start-up
        names = sorted(e.name for e in entries
                       if e.is_dir() and os.path.isfile(os.path.join(e.path, "__init__.py")))
    return [_PACKAGE, *(_PACKAGE / name for name in names)]
