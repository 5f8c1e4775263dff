"""SHA-256 without OpenSSL's start-up where the data is small.

Importing hashlib starts OpenSSL: about 6 ms of CPU, more than a one-file run's own hashing
(the start-up cache's key and payload, the linted file) costs with CPython's built-in SHA-256.
OpenSSL is several times faster per byte, so data of SMALL_BYTES or more is hashed with it.
Both give the same digests.
"""

from __future__ import annotations

from functools import cache
from typing import Any

SMALL_BYTES = 2 * 1024 * 1024  # about where the built-in code (~4 ms a MB) costs what OpenSSL's start does


@cache
def _builtin() -> Any:
    import importlib

    for module in ("_sha2", "_sha256"):  # CPython 3.12+, 3.10-3.11
        try:
            return importlib.import_module(module).sha256
        except (ImportError, AttributeError):
            continue
    return None


def sha256(data: bytes = b"", size: int | None = None) -> Any:
    """A SHA-256 hash object for data, and for `size` bytes more to come (None: few)."""
    small = _builtin() if len(data) + (size or 0) < SMALL_BYTES else None
    if small is not None:
        return small(data)
    import hashlib

    return hashlib.sha256(data)
