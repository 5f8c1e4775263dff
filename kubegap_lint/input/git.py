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
# ... and those that change how far up it looks.
_SEARCH_VARIABLES = ("GIT_CEILING_DIRECTORIES", "GIT_DISCOVERY_ACROSS_FILESYSTEM")


def _nearest_git(folder: str) -> tuple[str | None, bool]:
    """The nearest `.git` (folder or file) in the folder or a parent, or None: git would say
    "not a git repository" (saves starting git on every run outside a work tree: about 10 ms
    a run). And whether git's own search from `folder` must end there the same way as from any
    other folder below it: no folder on the way is another file system (git stops at a mount
    point) and `folder` is not inside the `.git` itself."""
    current = os.path.realpath(folder)
    try:
        device = os.stat(current).st_dev
    except OSError:
        device = None
    same_device = device is not None
    while True:
        marker = os.path.join(current, ".git")
        if os.path.lexists(marker):
            return marker, same_device
        parent = os.path.dirname(current)
        if parent == current:
            return None, same_device
        current = parent
        if same_device:
            try:
                same_device = os.stat(current).st_dev == device
            except OSError:
                same_device = False


def top_level(path: str) -> str | None:
    """The real path of the work tree's top level that holds `path` (a folder, or a file's
    folder), or None."""
    return _top_level(path if os.path.isdir(path) else os.path.dirname(path) or ".")


_by_marker: dict[str, str | None] = {}


@lru_cache(maxsize=64)
def _top_level(folder: str) -> str | None:
    """Asked once a folder, and once a `.git` for the folders whose search ends at the same
    one in the same way: the 50 files of a commit in 20 folders of one repository start git
    once, not 20 times."""
    if any(os.environ.get(name) for name in _DISCOVERY_VARIABLES):
        return _ask_top_level(folder)
    marker, same_way = _nearest_git(folder)
    if marker is None:
        return None
    real = os.path.realpath(folder)
    shareable = same_way and not any(os.environ.get(name) for name in _SEARCH_VARIABLES) \
        and not (real == marker or real.startswith(marker + os.sep))
    if not shareable:
        return _ask_top_level(folder)
    if marker not in _by_marker:
        _by_marker[marker] = _ask_top_level(folder)
    return _by_marker[marker]


def _ask_top_level(folder: str) -> str | None:
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


def staged_deletions(top: str) -> list[str]:
    """The files the next commit deletes (staged), relative to `top`, sorted; [] when git cannot say."""
    out = _git(top, "diff", "--cached", "--name-only", "--diff-filter=D", "-z", "--no-renames")
    return sorted(n.decode("utf-8", "surrogateescape") for n in out.split(b"\0") if n) if out else []


def committed_bytes(top: str, name: str) -> bytes | None:
    """The file as the last commit holds it (HEAD), or None (new, or no commit yet)."""
    return _git(top, "cat-file", "blob", f"HEAD:{name}")
