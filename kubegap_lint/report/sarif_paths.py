"""Turn the paths findings carry into the repository-relative URIs GitHub code scanning needs.

Code scanning reads a relative `artifactLocation.uri` against the repository root, and accepts no
`..`, no absolute path, no backslash and no `file://` there. The SARIF root (`--sarif-root`; by
default the git top level of the current directory, else the current directory) is that
repository root; every reported file must lie under it. Symlinks are resolved first: GitHub does
not show a result on a symlinked path.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from urllib.parse import quote

from kubegap_lint.core.errors import UsageError
from kubegap_lint.input.sources import STDIN_DISPLAY


def default_root(cwd: str | None = None) -> Path:
    """The git top level of `cwd` (a checkout is what code scanning maps), else `cwd` itself."""
    here = Path(cwd or os.getcwd())
    try:
        proc = subprocess.run(["git", "rev-parse", "--show-toplevel"], cwd=here, capture_output=True,
                              text=True, timeout=30, check=False)
    except (OSError, subprocess.SubprocessError):
        return here
    top = proc.stdout.strip()
    return Path(top) if proc.returncode == 0 and top else here


class UriMapper:
    """Maps display paths (as the user named them) to URIs relative to one root; cached."""

    def __init__(self, root: Path, cwd: str | None = None) -> None:
        self.cwd = cwd or os.getcwd()
        self.root = Path(os.path.realpath(os.path.join(self.cwd, root)))
        self._cache: dict[str, str | None] = {}

    def file_path(self, display: str) -> str | None:
        """The real path behind a display path; None for stdin."""
        if display == STDIN_DISPLAY:
            return None
        return os.path.realpath(os.path.join(self.cwd, display))

    def uri(self, display: str) -> str | None:
        """The repository-relative URI of a path, or None when it is stdin or outside the root."""
        relative = self.relative_path(display)
        # The bytes of the name, percent-encoded: a file name need not be UTF-8.
        return None if relative is None else quote(os.fsencode(relative), safe="/")

    def relative_path(self, display: str) -> str | None:
        """The path relative to the root, with forward slashes; None for stdin or outside it."""
        if display not in self._cache:
            self._cache[display] = self._relative(display)
        return self._cache[display]

    def _relative(self, display: str) -> str | None:
        real = self.file_path(display)
        if real is None or display.startswith("<"):  # stdin, `<helm template chart>`
            return None
        if not os.path.isfile(real):
            # A name no file has yet: stdin named by --stdin-filename (pre-commit's staged text,
            # an editor's buffer) is that file in the repository.
            if os.path.lexists(real) or "\0" in display:
                return None
            real = os.path.join(os.path.realpath(os.path.dirname(real)), os.path.basename(real))
        try:
            relative = Path(real).relative_to(self.root)
        except ValueError:
            return None
        return relative.as_posix()

    def require(self, display: str) -> str:
        """The URI of a result's file; an error (exit 2) when it is a file outside the root."""
        uri = self.uri(display)
        if uri is not None:
            return uri
        real = self.file_path(display)
        if real is None or not os.path.isfile(real):
            raise UsageError(
                f"SARIF needs a file in the repository for every finding, and {display} is not one:"
                " write the stream to a file under the SARIF root and lint that file")
        raise UsageError(
            f"{display} is outside the SARIF root {self.root}: SARIF locations must be relative to"
            " the repository; lint files under it or pass --sarif-root DIR")
