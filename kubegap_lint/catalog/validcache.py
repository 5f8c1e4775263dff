"""Remember which data files already passed their JSON Schema, so start-up skips jsonschema.

Importing jsonschema and validating the built-in policies took most of a one-file run's
start-up. Validation is a pure function of the schema and the file's text, so a file whose
exact text passed against the exact schema before needs no second look. The cache holds only
SHA-256 digests of (tool version, schema bytes, file text) that validated cleanly, one per
line, in the user's cache folder, checked as cache.py checks its folder and files (private,
ours, bounded). It never holds data or code: a lost, stale or unreadable
cache only means validating again, and any change to a policy or a schema gives a new digest.

`KUBEGAP_LINT_CACHE_DIR` moves the folder; `KUBEGAP_LINT_NO_CACHE=1` turns the cache off.
"""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path

CACHE_FILE = "validated-v1.txt"
MAX_BYTES = 4 * 1024 * 1024  # 65,536 digests: far more than the built-in data files
_known: set[str] | None = None


def cache_dir() -> Path | None:
    """The checked, private cache folder (see cache.py), or None."""
    from kubegap_lint.catalog.cache import cache_dir as checked

    return checked()


@cache
def _schema_digest(schema_file: str) -> str:
    import hashlib

    with open(schema_file, "rb") as handle:
        return hashlib.sha256(handle.read()).hexdigest()


def digest(schema_file: Path, text: str) -> str:
    import hashlib

    from kubegap_lint import __version__

    h = hashlib.sha256()
    h.update(__version__.encode())
    h.update(b"\0")
    h.update(_schema_digest(str(schema_file)).encode())
    h.update(b"\0")
    h.update(text.encode("utf-8", "surrogatepass"))
    return h.hexdigest()


def _load() -> set[str]:
    global _known
    if _known is None:
        _known = set()
        folder = cache_dir()
        if folder is not None:
            from kubegap_lint.catalog.cache import read_private

            # Only a regular file of ours, writable by nobody else, and at most MAX_BYTES.
            blob = read_private(folder / CACHE_FILE, MAX_BYTES)
            if blob is not None:
                _known = {line for line in blob.decode("ascii", "replace").split("\n")
                          if len(line) == 64 and all(c in "0123456789abcdef" for c in line)}
    return _known


def is_valid(key: str) -> bool:
    """Did a file with this digest pass its schema before?"""
    return key in _load()


def remember(key: str) -> None:
    """Record a clean validation; a cache that cannot be written is silently left alone."""
    known = _load()
    if key in known:
        return
    known.add(key)
    folder = cache_dir()
    if folder is None:
        return
    try:
        path = folder / CACHE_FILE
        if path.is_file() and path.stat().st_size > MAX_BYTES - 65:
            return  # full: kept as it is (a new version of the tool starts a new file)
        # One short line per append: concurrent runs (pre-commit, parallel workers) interleave
        # whole lines, and a torn line is ignored on reading.
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o600)
        with os.fdopen(fd, "a", encoding="ascii") as handle:
            handle.write(key + "\n")
    except OSError:
        pass
