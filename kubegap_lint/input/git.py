"""What git knows about the folder a run starts in: its work tree's top level and its files.

Used for whole-repository facts on partial runs (pre-commit passes only the changed files) and
for baselines keyed by paths from the top level. Git is asked read-only, with a timeout; no git,
or a folder outside a work tree, gives None and the run goes on without.
"""

from __future__ import annotations

import os
import subprocess
from functools import lru_cache


def _git(folder: str, *args: str) -> bytes | None:
    try:
        proc = subprocess.run(["git", *args], cwd=folder, capture_output=True, timeout=30, check=False,
                              stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return None
    return proc.stdout if proc.returncode == 0 else None


@lru_cache(maxsize=32)
def top_level(folder: str) -> str | None:
    """The real path of the work tree's top level that holds `folder`, or None."""
    if not os.path.isdir(folder):
        folder = os.path.dirname(folder) or "."
    out = _git(folder, "rev-parse", "--show-toplevel")
    top = out.decode("utf-8", "surrogateescape").strip() if out else ""
    return os.path.realpath(top) if top else None


def work_tree_files(top: str) -> list[str]:
    """Every file of the work tree that git tracks or would track (not ignored), as paths
    relative to `top`, sorted; [] when git cannot say."""
    out = _git(top, "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--full-name")
    if not out:
        return []
    names = {name.decode("utf-8", "surrogateescape") for name in out.split(b"\0") if name}
    return sorted(names)


def relative_to_top(path: str, top: str) -> str | None:
    """`path` relative to `top` with forward slashes, or None when it is not below it."""
    real = os.path.realpath(path)
    if real != top and not real.startswith(top.rstrip(os.sep) + os.sep):
        return None
    return os.path.relpath(real, top).replace(os.sep, "/")
