"""Sources: the paths a user names turned into an ordered list of inputs to read.

Folders are walked recursively in sorted order, hidden entries skipped, for the manifest
extensions. Only regular files are read: a FIFO or device met in a walk is passed over, and
one named on the command line is an input error rather than a hang.

A symlink to a file outside the linted tree (the folder walked; for a file named on the
command line, the current folder or the link's own folder) is skipped with a note on stderr: a pull request could
otherwise publish any file the CI runner can read as if it were in the repository.
`follow_outside=True` (`--follow-symlinks-out`) reads such files all the same.
"""

from __future__ import annotations

import fnmatch
import os
import stat
import sys
from collections.abc import Iterable

from kubegap_lint.core.model import InputError
from kubegap_lint.core.record import record

MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")
STDIN_NAME = "-"
STDIN_DISPLAY = "<stdin>"


@record(frozen=True)
class Source:
    """One input: its display path (as the user would type it) and where to read it from."""

    display: str
    fs_path: str | None  # None for stdin

    def read_bytes(self) -> bytes:
        if self.fs_path is None:
            if sys.stdin is None:  # `kubegap-lint - <&-`
                raise OSError(0, "standard input is closed")
            return sys.stdin.buffer.read()
        from kubegap_lint.core.safefile import open_regular

        with open(open_regular(self.fs_path), "rb") as handle:  # a regular file, checked once open
            return handle.read()


def _display(path: str) -> str:
    """Forward slashes and no leading './', so output is the same however the path was typed."""
    norm = os.path.normpath(path).replace(os.sep, "/")
    return norm


def _excluded(display: str, excludes: Iterable[str]) -> bool:
    absolute: str | None = None
    for pattern in excludes:
        if fnmatch.fnmatchcase(display, pattern) or fnmatch.fnmatchcase(
            os.path.basename(display), pattern
        ):
            return True
        if os.path.isabs(pattern):  # from a configuration file, made absolute there
            if absolute is None:
                absolute = os.path.abspath(display).replace(os.sep, "/")
            if fnmatch.fnmatchcase(absolute, pattern):
                return True
    return False


def note(message: str) -> None:
    """A note on stderr: escaped to ASCII (a path may hold controls or bytes the locale lacks)."""
    text = message.encode("ascii", "backslashreplace").decode("ascii")
    print(f"kubegap-lint: note: {text}", file=sys.stderr)


def _leaves(path: str, tree: str) -> bool:
    """Is path a symlink (or under one) whose target is not inside tree?"""
    real = os.path.realpath(path)
    top = os.path.realpath(tree)
    return real != top and not real.startswith(top.rstrip(os.sep) + os.sep)


def _walk(root: str, errors: list[InputError]) -> list[str]:
    """Manifest files below root, sorted by path components; never follows symlinked folders
    (a symlink loop cannot trap the walk). A folder that cannot be listed is an input error."""
    found: list[tuple[str, ...]] = []
    stack = [root]
    while stack:
        folder = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError as exc:
            errors.append(InputError(_display(folder), f"cannot be read: {exc.strerror or exc}"))
            continue
        for entry in entries:
            if entry.name.startswith("."):
                continue
            try:
                if entry.is_dir(follow_symlinks=False):
                    stack.append(entry.path)
                elif entry.name.lower().endswith(MANIFEST_SUFFIXES) and (
                        entry.is_file() or (entry.is_symlink() and not os.path.exists(entry.path))):
                    found.append(tuple(os.path.relpath(entry.path, root).split(os.sep)))  # a dangling link: noted
            except OSError:
                continue
    return [os.path.join(root, *parts) for parts in sorted(found)]


def discover(
    paths: Iterable[str], excludes: Iterable[str] = (), stdin_name: str | None = None,
    follow_outside: bool = False
) -> tuple[list[Source], list[InputError]]:
    """Resolve command-line paths to sources; problems with a path become input errors.
    `stdin_name` is the name `-` is shown under (--stdin-filename)."""
    excludes = list(excludes)
    sources: list[Source] = []
    errors: list[InputError] = []
    seen: set[str] = set()

    def add(fs_path: str, tree: str) -> None:
        display = _display(fs_path)
        if display in seen or _excluded(display, excludes):
            return
        link = os.path.islink(fs_path)
        if link and not os.path.exists(fs_path):  # found in a folder: a named one is an input error
            seen.add(display)
            note(f"{display}: skipped: a symbolic link to nothing (its target is not there)")
            return
        if not follow_outside and link and _leaves(fs_path, tree) \
                and (tree != os.curdir or _leaves(fs_path, os.path.dirname(fs_path) or os.curdir)):
            seen.add(display)
            note(f"{display}: skipped: a symbolic link to a file outside {_display(tree)}"
                 " (--follow-symlinks-out reads it)")
            return
        seen.add(display)
        sources.append(Source(display, fs_path))

    for path in paths:
        if path == STDIN_NAME:
            shown = _display(stdin_name) if stdin_name else STDIN_DISPLAY
            if shown not in seen:
                seen.add(shown)
                sources.append(Source(shown, None))
            continue
        try:
            info = os.stat(path)
        except FileNotFoundError:
            errors.append(InputError(_display(path), "no such file or folder"))
            continue
        except OSError as exc:
            errors.append(InputError(_display(path), f"cannot be read: {exc.strerror}"))
            continue
        if stat.S_ISDIR(info.st_mode):
            walk_errors: list[InputError] = []
            for found in _walk(path, walk_errors):
                add(found, path)
            errors.extend(sorted(walk_errors, key=lambda e: e.path))
        elif stat.S_ISREG(info.st_mode):
            add(path, os.curdir)
        else:
            errors.append(InputError(_display(path), "not a regular file (FIFO, device or socket)"))
    return sources, errors
