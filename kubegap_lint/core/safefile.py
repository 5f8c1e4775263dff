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


def read_bytes_limited(path: Path | str, limit: int, what: str = "file", display: str | None = None) -> bytes:
    """The file's bytes; a DataFileError (naming display, else path) when it is not a regular
    file, is over limit bytes, or cannot be read."""
    name = display or str(path)
    # O_NONBLOCK: opening a FIFO for reading returns at once instead of waiting for a writer.
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise DataFileError([f"{name}: {what} cannot be read: {exc.strerror or exc}"]) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise DataFileError([f"{name}: {what} is not a regular file (FIFO, device or socket)"])
        if info.st_size > limit:
            raise DataFileError([f"{name}: {what} is over {limit:,} bytes ({info.st_size:,})"])
        chunks = []
        total = 0
        while True:
            chunk = os.read(fd, min(1 << 20, limit + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:
                raise DataFileError([f"{name}: {what} is over {limit:,} bytes (it grew while read)"])
        return b"".join(chunks)
    except OSError as exc:
        raise DataFileError([f"{name}: {what} cannot be read: {exc.strerror or exc}"]) from None
    finally:
        os.close(fd)


def read_text_limited(path: Path | str, limit: int | None = None, what: str = "file",
                      display: str | None = None) -> str:
    data = read_bytes_limited(path, MAX_DATA_FILE_BYTES if limit is None else limit, what, display)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DataFileError([f"{display or path}: {what} cannot be read: {exc}"]) from None
