"""The workspace a server may read: one root folder, and nothing outside it.

Every path a client names is resolved (symbolic links and `..` included) before it is used, and
refused unless it lies under the root's own resolved path: a client, or a manifest that asks an
agent for a path, cannot make the server read /etc or a sibling repository.
"""

from __future__ import annotations

import os

from kubegap_lint.core.errors import KubegapError


class OutsideWorkspace(KubegapError):
    """A path that is not inside the workspace root."""


class Workspace:
    def __init__(self, root: str) -> None:
        self.root = os.path.realpath(root)

    def contains(self, real: str) -> bool:
        return real == self.root or real.startswith(self.root.rstrip(os.sep) + os.sep)

    def path(self, name: str) -> str:
        """`name` (relative to the root, or absolute) as a path relative to the root, as the
        linter will show it; an error when it is empty or leads outside the root."""
        if not isinstance(name, str) or not name.strip():
            raise OutsideWorkspace("a path must be a non-empty string")
        if "\x00" in name:
            raise OutsideWorkspace(f"{name!r} is not a path")
        real = os.path.realpath(os.path.join(self.root, name))
        if not self.contains(real):
            raise OutsideWorkspace(f"{name} is outside the workspace root {self.root}: refused")
        relative = os.path.relpath(os.path.normpath(os.path.join(self.root, name)), self.root)
        # The path as named (a link inside the root keeps its own name); its target was checked.
        return "." if relative == "." else relative.replace(os.sep, "/")
