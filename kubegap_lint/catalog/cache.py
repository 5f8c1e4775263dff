"""Keep the built-in catalog, validated and compiled, between runs: pre-commit starts us often.

Loading the built-in policies means parsing every policy and the incident catalog, checking
them against their JSON Schemas and compiling each JMESPath expression: most of a one-file
run. The result depends only on the files in policies/ and schemas/, the tool's version and
the Python that runs it, so it is stored (pickled) in the user's cache folder under a digest of
exactly those. Any change to a policy, an incident or a schema gives a new digest and a fresh
load, which validates as before; a missing, unreadable or foreign cache file means loading
from the files. Only the built-in catalog is cached: policy folders a user adds are loaded
(and validated) on every run.

The cache folder is the one `validcache.py` uses (`KUBEGAP_LINT_CACHE_DIR`,
`KUBEGAP_LINT_NO_CACHE=1` turns both off).
"""

from __future__ import annotations

import os
import pickle
import sys
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar, cast

from kubegap_lint.core.datapaths import package_folders, schemas_dir

T = TypeVar("T")


def content_digest(name: str, folders: list[Path]) -> str:
    """A digest of the tool version, the Python version, and every file (name and bytes) in folders.

    CRC-32 and Adler-32 together (64 bits) with the total length: it guards against edits,
    not against an attacker (who could as well edit the policies), and unlike hashlib it costs
    no import of OpenSSL at start-up.
    """
    from kubegap_lint import __version__

    parts = [name, __version__, sys.version, *(str(f.resolve()) for f in folders)]
    blob = bytearray("\0".join(parts).encode("utf-8", "surrogatepass"))
    for folder in folders:
        for path in sorted(folder.iterdir()) if folder.is_dir() else []:
            if path.is_file():
                blob += b"\0" + path.name.encode("utf-8", "surrogatepass") + b"\0" + path.read_bytes()
    data = bytes(blob)
    return f"{zlib.crc32(data):08x}{zlib.adler32(data):08x}{len(data):x}"


def cached(name: str, data_folder: Path, build: Callable[[], T], expected: type) -> T:
    """The object `build()` makes from data_folder and the schemas, from the cache when current."""
    from kubegap_lint.catalog.validcache import cache_dir

    folder = cache_dir()
    if folder is None:
        return build()
    try:
        # The package's own modules are part of the key: a pickled Policy must match the code
        # that reads it, even between two checkouts of the same version.
        key = content_digest(name, [data_folder, schemas_dir(), *package_folders()])
    except OSError:
        return build()
    path = folder / f"{name}-{key}.pickle"
    try:
        with open(path, "rb") as handle:
            found: Any = pickle.load(handle)
        if isinstance(found, expected):
            return cast(T, found)
    except Exception:  # missing, truncated or written by another version: load from the files
        pass
    result = build()  # raises on a broken policy: nothing is cached then
    _store(folder, path, result)
    return result


def _store(folder: Path, path: Path, value: Any) -> None:
    """Write atomically (a temporary file renamed into place); a cache that cannot be written is skipped."""
    import tempfile

    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, temporary = tempfile.mkstemp(dir=folder, prefix=".tmp-", suffix=".pickle")
        try:
            with os.fdopen(fd, "wb") as handle:
                pickle.dump(value, handle, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(temporary, path)
        except BaseException:
            os.unlink(temporary)
            raise
        # Older versions of this cache (policies edited since) are of no more use.
        prefix = path.name.rsplit("-", 1)[0] + "-"
        for stale in folder.glob(f"{prefix}*.pickle"):
            if stale != path:
                stale.unlink(missing_ok=True)
    except Exception:
        pass
