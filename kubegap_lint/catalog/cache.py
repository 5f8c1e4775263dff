"""Keep plain data between runs: pre-commit starts us often. Nothing in the cache can execute.

Loading the built-in policies means parsing every policy file and the incident catalog and
checking them against their JSON Schemas: most of a one-file run. What that yields is plain
data (dicts, lists, strings, numbers), so the cache holds exactly that, as JSON, and the
objects (policies with their compiled JMESPath, the kind table) are rebuilt from it on every
run by the same code that builds them from the files. There is no pickle: a planted file can
at worst hold wrong data, and a file is only read when

- the folder is absolute, outside every linted tree, ours, and writable by nobody else
  (see `cache_dir`, which creates it 0700 in the platform's user cache folder);
- the file is a regular file (no symlink, no FIFO), ours, not writable by others, and at most
  MAX_FILE_BYTES;
- its header names the key asked for and the SHA-256 of the bytes that follow it, and those
  bytes are JSON.

The key is a SHA-256 of the tool's version, the Python version, the package's own modules (by
name, size and modification time, as Python's bytecode cache checks them) and every file
(name and bytes) in the data folders, so any edit gives a fresh load, which
validates as before. Callers check what they rebuild (policies.py checks that the cached
policies are exactly the files in the folder); anything off means loading from the files.

The API is two calls, `load(name, key)` and `store(name, key, data)`, for any plain data.
"""

from __future__ import annotations

import os
import sys
from functools import lru_cache
from pathlib import Path
from typing import Any

from kubegap_lint.core.datapaths import package_folders, schemas_dir
from kubegap_lint.core.digest import sha256

MAGIC = b"kubegap-lint-cache-v2\n"
MAX_FILE_BYTES = 16 * 1024 * 1024
_noted: set[str] = set()
_linted_roots: list[Path] = []


def note(message: str) -> None:
    """Say once per run, on stderr, why a cache was skipped (the result is the same)."""
    if message not in _noted:
        _noted.add(message)
        # ASCII with escapes: a path can hold controls, bidi marks or bytes the locale lacks.
        text = message.encode("ascii", "backslashreplace").decode("ascii")
        print(f"kubegap-lint: note: {text}", file=sys.stderr)


def exclude_roots(paths: list[str] | tuple[str, ...]) -> None:
    """The trees being linted: a cache folder inside one of them is never used (a pull
    request could plant it)."""
    _linted_roots.clear()
    for path in paths:
        if path == "-" or not os.path.lexists(path):  # nothing is read from a path that is not there
            continue
        try:
            resolved = Path(path).resolve()
        except (OSError, RuntimeError, ValueError):
            continue
        _linted_roots.append(resolved if resolved.is_dir() else resolved.parent)


def _platform_folder() -> str | None:
    import platformdirs

    try:
        return platformdirs.user_cache_dir("kubegap-lint", appauthor=False)
    except Exception:  # no home folder at all
        return None


def cache_dir() -> Path | None:
    """The cache folder, created 0700 and checked; None (with a note) when it is unsafe."""
    if os.environ.get("KUBEGAP_LINT_NO_CACHE"):
        return None
    override = os.environ.get("KUBEGAP_LINT_CACHE_DIR")
    chosen = override or _platform_folder()
    if not chosen:
        return None
    if not os.path.isabs(chosen):
        note(f"cache folder {chosen!r} is not absolute (is HOME set?): cache not used")
        return None
    folder = Path(os.path.abspath(chosen))
    try:
        real = folder.resolve()
    except (OSError, RuntimeError):
        return None
    for root in _linted_roots:
        if real == root or root in real.parents:
            note(f"cache folder {str(folder)!r} is inside the linted tree {str(root)!r}: cache not used")
            return None
    problem = _make_private(folder)
    if problem:
        note(f"cache folder {str(folder)!r} {problem}: cache not used")
        return None
    return folder


def _make_private(folder: Path) -> str | None:
    """Create the missing parts 0700; check the folder itself. A reason it is unsafe, or None."""
    import stat

    missing = []
    probe = folder
    while not os.path.lexists(probe) and probe != probe.parent:
        missing.append(probe)
        probe = probe.parent
    try:
        for part in reversed(missing):
            os.mkdir(part, 0o700)  # 0700 whatever the umask: the umask only removes bits
        info = os.lstat(folder)
    except OSError as exc:
        return f"cannot be created ({exc.strerror})"
    if stat.S_ISLNK(info.st_mode) or not stat.S_ISDIR(info.st_mode):
        return "is not a folder (or is a symbolic link)"
    if hasattr(os, "geteuid") and info.st_uid != os.geteuid():
        return "belongs to another user"
    if info.st_mode & 0o022:
        return "is writable by other users"
    return None


def content_digest(name: str, folders: list[Path], code_folders: tuple[Path, ...] = ()) -> str:
    """SHA-256 of the name, the tool and Python versions, every file (name and bytes) in folders,
    and the modules of code_folders (code_digest)."""
    h = sha256(name.encode("utf-8", "surrogatepass") + b"\0")
    h.update(_folders_digest(tuple(folders), code_folders).encode("ascii"))
    return h.hexdigest()


_read_digests: dict[tuple[Any, ...], str] = {}


def _folders_digest(folders: tuple[Path, ...], code_folders: tuple[Path, ...]) -> str:
    """The part of content_digest that reads the disk. The catalog and the workload table are
    keyed by the same folders: their files' bytes are read once a process, again only when a
    file's name, size or modification time has changed since."""
    from kubegap_lint import __version__

    listed: list[tuple[str, list[tuple[str, str, int, int]]]] = []
    for folder in folders:
        real = os.path.realpath(folder)
        try:
            with os.scandir(folder) as entries:
                found = sorted((e.name, e.path, e.stat().st_size, e.stat().st_mtime_ns)
                               for e in entries if e.is_file())
        except (FileNotFoundError, NotADirectoryError):
            found = []
        listed.append((real, found))
    signature = (tuple((real, tuple(found)) for real, found in listed), code_folders)
    known = _read_digests.get(signature)
    if known is not None:
        return known
    h = sha256()
    for part in [__version__, sys.version, *(real for real, _ in listed)]:
        h.update(part.encode("utf-8", "surrogatepass") + b"\0")
    for _, found in listed:
        for file_name, path, _, _ in found:
            h.update(b"\0" + file_name.encode("utf-8", "surrogatepass") + b"\0")
            with open(path, "rb") as handle:
                h.update(handle.read())
    if code_folders:
        h.update(b"\0code\0" + code_digest(code_folders).encode("ascii"))
    _read_digests[signature] = digest = h.hexdigest()
    return digest


@lru_cache(maxsize=4)
def code_digest(code_folders: tuple[Path, ...]) -> str:
    """SHA-256 of every module's path, size and modification time, as Python's own bytecode
    cache tells a changed module (reading every module's bytes took a tenth of a one-file run).
    Once a process: the code does not change under a running tool."""
    h = sha256()
    for folder in code_folders:
        h.update(str(folder.resolve()).encode("utf-8", "surrogatepass") + b"\0")
        with os.scandir(folder) as entries:
            found = sorted((e.name, e.stat()) for e in entries if e.name.endswith(".py") and e.is_file())
        for file_name, info in found:
            h.update(f"{file_name}\0{info.st_size}\0{info.st_mtime_ns}\0".encode("utf-8", "surrogatepass"))
    return h.hexdigest()


def catalog_key(name: str, data_folder: Path) -> str | None:
    """The key of a cache built from data_folder, the schemas and this code; None if unreadable."""
    try:
        # The package's own modules are part of the key: what is rebuilt must match the code.
        return content_digest(name, [data_folder, schemas_dir()], tuple(package_folders()))
    except OSError:
        return None


def _file(folder: Path, name: str) -> Path:
    return folder / f"{name}.json"


def read_private(path: Path, limit: int) -> bytes | None:
    """The bytes of a regular file of ours that nobody else can write, at most limit; else None."""
    import stat

    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            note(f"cache file {str(path)!r} is not a regular file: ignored")
            return None
        if hasattr(os, "geteuid") and info.st_uid != os.geteuid():
            note(f"cache file {str(path)!r} belongs to another user: ignored")
            return None
        if info.st_mode & 0o022:
            note(f"cache file {str(path)!r} is writable by other users: ignored")
            return None
        if info.st_size > limit:
            note(f"cache file {str(path)!r} is over {limit} bytes: ignored")
            return None
        with os.fdopen(os.dup(fd), "rb") as handle:
            blob = handle.read(limit + 1)
        return blob if len(blob) <= limit else None
    except OSError:
        return None
    finally:
        os.close(fd)


def load(name: str, key: str) -> Any | None:
    """The plain data stored under name and key, or None (missing, stale, damaged, unsafe)."""
    import json

    folder = cache_dir()
    if folder is None:
        return None
    path = _file(folder, name)
    blob = read_private(path, MAX_FILE_BYTES)
    if blob is None:
        return None
    header, _, payload = blob.partition(b"\n\n")
    lines = header.split(b"\n")
    if not blob.startswith(MAGIC) or len(lines) != 3:
        note(f"cache file {str(path)!r} is not a kubegap-lint cache: ignored")
        return None
    if lines[1].decode("ascii", "replace") != key:
        return None  # another version or edited policies: rebuilt and replaced
    if lines[2].decode("ascii", "replace") != sha256(payload).hexdigest():
        note(f"cache file {str(path)!r} does not match its digest: ignored")
        return None
    try:
        return json.loads(payload.decode("utf-8"))
    except (ValueError, RecursionError):
        note(f"cache file {str(path)!r} is not valid JSON: ignored")
        return None


def store(name: str, key: str, data: Any) -> None:
    """Keep plain data under name and key (atomically); data JSON cannot hold exactly is not kept."""
    import json
    import tempfile

    try:
        payload = json.dumps(data, ensure_ascii=True, allow_nan=False, sort_keys=True,
                             separators=(",", ":")).encode("ascii")
        if json.loads(payload) != data or len(payload) > MAX_FILE_BYTES - 200:
            return  # e.g. a non-string key JSON would turn into a string
    except (TypeError, ValueError, RecursionError):
        return
    folder = cache_dir()
    if folder is None:
        return
    blob = MAGIC + key.encode("ascii") + b"\n" + sha256(payload).hexdigest().encode() + b"\n\n" + payload
    try:
        fd, temporary = tempfile.mkstemp(dir=folder, prefix=".tmp-", suffix=".json")
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(blob)
            os.replace(temporary, _file(folder, name))
        except BaseException:
            os.unlink(temporary)
            raise
        for old in folder.glob(f"{name}-*.pickle"):  # left by versions that pickled: never read
            old.unlink(missing_ok=True)
    except OSError:
        pass  # a cache that cannot be written is skipped
