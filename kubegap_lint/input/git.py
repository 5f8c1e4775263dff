"""What git knows about the folder a run starts in: its work tree's top level and its files.

Used for whole-repository facts on partial runs (pre-commit passes only the changed files) and
for baselines keyed by paths from the top level. Git is asked read-only, with a timeout; no git,
or a folder outside a work tree, gives None and the run goes on without.
"""

from __future__ import annotations

import os
from functools import lru_cache


def _git(folder: str, *args: str) -> bytes | None:
    import subprocess

    try:
        proc = subprocess.run(["git", *args], cwd=folder, capture_output=True, timeout=30, check=False,
                              stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return None
    return proc.stdout if proc.returncode == 0 else None


# Variables that let git find a repository other than by looking up the folders for `.git`.
_DISCOVERY_VARIABLES = ("GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR")


def _no_repository_above(folder: str) -> bool:
    """Neither the folder nor a parent holds `.git` (folder or file), and no variable points
    git elsewhere: git would say "not a git repository". Saves starting git on every run outside
    a work tree (start-up: about 10 ms a run)."""
    if any(os.environ.get(name) for name in _DISCOVERY_VARIABLES):
        return False
    current = os.path.realpath(folder)
    while True:
        if os.path.lexists(os.path.join(current, ".git")):
            return False
        parent = os.path.dirname(current)
        if parent == current:
            return True
        current = parent


def top_level(path: str) -> str | None:
    """The real path of the work tree's top level that holds `path` (a folder, or a file's
    folder), or None."""
    return _top_level(path if os.path.isdir(path) else os.path.dirname(path) or ".")


@lru_cache(maxsize=64)
def _top_level(folder: str) -> str | None:
    """Asked once a folder: the 50 files of a commit in a few folders start git a few times,
    not 50 (cached by file, each file started git)."""
    if _no_repository_above(folder):
        return None
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
