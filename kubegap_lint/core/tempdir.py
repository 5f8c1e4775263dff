"""Where temporary files go: a private folder (0700, made for this run) in the system's temp
folder, never the current folder. Python's tempfile falls back to the current folder when no
temp folder is writable, which would put spilled findings inside the linted repository; here
that case means keeping the data in memory instead."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache


def _candidates() -> list[str]:
    found = [os.environ.get(name, "") for name in ("TMPDIR", "TEMP", "TMP")]
    found += ["/tmp", "/var/tmp", "/usr/tmp"] if os.name != "nt" else []
    return [c for c in found if c and os.path.isabs(c)]


@cache
def private_temp_dir() -> str | None:
    """A folder only this user can enter, removed at exit; None when no temp folder is usable."""
    import atexit
    import shutil
    import tempfile

    cwd = os.path.realpath(os.getcwd()) if os.path.isdir(os.curdir) else None
    for candidate in _candidates():
        if not os.path.isdir(candidate) or os.path.realpath(candidate) == cwd:
            continue
        try:
            folder = tempfile.mkdtemp(prefix="kubegap-lint-", dir=candidate)  # mode 0700
        except OSError:
            continue
        atexit.register(shutil.rmtree, folder, True)
        return folder
    return None


def temporary_file() -> object:
    """An anonymous binary file in the private folder, or in memory when there is none."""
    import io
    import tempfile

    folder = private_temp_dir()
    if folder is None:
        return io.BytesIO()
    return tempfile.TemporaryFile(dir=folder)


@contextmanager
def scratch_folder(prefix: str) -> Iterator[str]:
    """A new folder inside the private one, removed when the block ends (rendered charts, a
    chart's marked copy). OSError when there is no private temp folder: never the current one."""
    import shutil
    import tempfile

    base = private_temp_dir()
    if base is None:
        raise OSError("no private temporary folder could be made (TMPDIR, /tmp, /var/tmp)")
    folder = tempfile.mkdtemp(prefix=prefix, dir=base)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)
