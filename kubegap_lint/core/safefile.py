"""Read a file a configuration names (baseline, policy folders, the configuration itself) with
bounds: only a regular file (a FIFO would block for ever, /dev/zero never ends), at most a
given size (checked before and while reading: a file may grow), decoded as UTF-8. Any fault
is a DataFileError naming the file."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from kubegap_lint.core.errors import DataFileError

MAX_DATA_FILE_BYTES = 16 * 1024 * 1024  # a policy is a few KB; the incident catalog some 100 KB
MAX_BASELINE_BYTES = 256 * 1024 * 1024  # about two million recorded findings


class UnsafeFile(OSError):
    """A file the run will not read: not a regular file, or over its size bound. An OSError, so
    that every reader's existing `except OSError` turns it into its own one-line error."""


# A file of /proc or /sys reports a size it does not hold and may never end (/proc/self/pagemap)
# or hold secrets (/proc/self/environ): a regular file there is refused like a device.
_KERNEL_FOLDERS = ("/proc/", "/sys/")


def open_regular(path: Path | str, follow: bool = True) -> int:
    """A descriptor of a regular file, checked on the open descriptor (no race with a swap):
    UnsafeFile for a FIFO, device, socket or a file of /proc. O_NONBLOCK: opening a FIFO returns
    at once instead of waiting for a writer; with follow=False a symbolic link is refused."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    if not follow:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(path, flags)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise UnsafeFile(0, "not a regular file (FIFO, device or socket)")
        if _on_proc(fd):
            raise UnsafeFile(0, "a file of /proc or /sys, not of the repository")
    except BaseException:
        os.close(fd)
        raise
    return fd


def _on_proc(fd: int) -> bool:
    """The open file is one of /proc or /sys (asked of the descriptor: no symlink can hide it)."""
    try:
        where = os.readlink(f"/proc/self/fd/{fd}")
    except OSError:  # no /proc (not Linux): nothing of it to read either
        return False
    return where.startswith(_KERNEL_FOLDERS)


def read_regular(path: Path | str, limit: int, follow: bool = True) -> bytes:
    """The bytes of a regular file of at most limit bytes (checked before and while reading: a
    file may grow); UnsafeFile otherwise, OSError when it cannot be read."""
    fd = open_regular(path, follow)
    try:
        size = os.fstat(fd).st_size
        if size > limit:
            raise UnsafeFile(0, f"over {limit:,} bytes ({size:,})")
        chunks = []
        total = 0
        while True:
            chunk = os.read(fd, min(1 << 20, limit + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:
                raise UnsafeFile(0, f"over {limit:,} bytes (it grew while read)")
        return b"".join(chunks)
    finally:
        os.close(fd)


def read_bytes_limited(path: Path | str, limit: int, what: str = "file", display: str | None = None) -> bytes:
    """The file's bytes; a DataFileError (naming display, else path) when it is not a regular
    file, is over limit bytes, or cannot be read."""
    name = display or str(path)
    try:
        return read_regular(path, limit)
    except UnsafeFile as exc:
        if "regular" in str(exc.strerror):
            raise DataFileError([f"{name}: {what} is not a regular file (FIFO, device or socket)"]) from None
        raise DataFileError([f"{name}: {what} is {exc.strerror}"]) from None
    except OSError as exc:
        raise DataFileError([f"{name}: {what} cannot be read: {exc.strerror or exc}"]) from None


def read_text_limited(path: Path | str, limit: int | None = None, what: str = "file",
                      display: str | None = None) -> str:
    data = read_bytes_limited(path, MAX_DATA_FILE_BYTES if limit is None else limit, what, display)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DataFileError([f"{display or path}: {what} cannot be read: {exc}"]) from None
