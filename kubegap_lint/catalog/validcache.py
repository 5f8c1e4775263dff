"""Remember which data files already passed their JSON Schema, so start-up skips jsonschema.

Importing jsonschema and validating the built-in policies took most of a one-file run's
start-up. Validation is a pure function of the schema and the file's text, so a file whose
exact text passed against the exact schema before needs no second look. The cache holds only
SHA-256 digests of (tool version, schema bytes, file text) that validated cleanly, one per
line, in the user's cache folder. It never holds data or code: a lost, stale or unreadable
cache only means validating again, and any change to a policy or a schema gives a new digest.

`KUBEGAP_LINT_CACHE_DIR` moves the folder; `KUBEGAP_LINT_NO_CACHE=1` turns the cache off.
"""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path

CACHE_FILE = "validated-v1.txt"
_known: set[str] | None = None


def cache_dir() -> Path | None:
    if os.environ.get("KUBEGAP_LINT_NO_CACHE"):
        return None
    override = os.environ.get("KUBEGAP_LINT_CACHE_DIR")
    if override:
        return Path(override)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "kubegap-lint"


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
            try:
                with open(folder / CACHE_FILE, encoding="ascii") as handle:
                    _known = {line.strip() for line in handle if len(line.strip()) == 64}
            except (OSError, UnicodeDecodeError):
                pass
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
        folder.mkdir(parents=True, exist_ok=True)
        # One short line per append: concurrent runs (pre-commit, parallel workers) interleave
        # whole lines, and a torn line is ignored on reading.
        with open(folder / CACHE_FILE, "a", encoding="ascii") as handle:
            handle.write(key + "\n")
    except OSError:
        pass
