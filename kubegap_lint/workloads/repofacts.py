"""Whole-repository facts for partial runs.

pre-commit passes only the changed files. A Deployment edited alone must still find the
PodDisruptionBudget committed beside it, so when the linted paths are part of a git work tree
and not the whole of it, the cross-resource facts (fact_records: PDBs, PVCs, ConfigMaps, DRA
claims, HPAs and KEDA ScaledObjects, LocalModelCaches, TrainingRuntimes) of every other manifest
of the tree are read too, and only they: those files are never
evaluated, so findings are reported for the named files alone.

Reading is cheap: a file that names none of the fact kinds is passed over after a byte search,
and only its documents that name one are parsed. What a file yields is cached by its content
(a BLAKE2 digest of the bytes) in one JSON file in the user's cache folder: plain data only,
never pickle, so a planted cache can at worst give wrong facts, never run code; anything
unexpected in it is ignored and read again from the files.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable
from typing import Any

from kubegap_lint.core.record import field
from kubegap_lint.core.record import record as value_record
from kubegap_lint.input.sources import MANIFEST_SUFFIXES, Source, _excluded
from kubegap_lint.workloads.index import FACT_KINDS, InputIndex, fact_records

CACHE_NAME = "repo-facts-v2"
MAX_FACT_FILE_BYTES = 64 * 1024 * 1024  # a manifest read for its facts only
_KIND_BYTES = tuple(kind.encode() for kind in FACT_KINDS)


@value_record
class RepoContext:
    """The facts of the work tree's files that a run does not lint, in path order."""

    top: str  # the work tree's top level (real path)
    files: list[tuple[str, list[list[Any]]]] = field(default_factory=list)  # (display path, records)

    def seed(self, index: InputIndex) -> None:
        for path, records in self.files:
            for record in records:
                index.add_record(record, path)


def repository_context(paths: Iterable[str], sources: list[Source], excludes: list[str],
                       skip: Callable[[str], bool] | None = None) -> RepoContext | None:
    """The context of a partial run, or None when there is none: a path outside a work tree,
    stdin, or a path that is the whole work tree."""
    from kubegap_lint.input.git import top_level, work_tree_files

    paths = list(paths)
    if not paths or "-" in paths:
        return None
    tops = {top_level(os.path.abspath(p)) for p in paths}
    if len(tops) != 1:
        return None
    top = tops.pop()
    if top is None or any(os.path.realpath(p) == top for p in paths):
        return None
    linted = {os.path.realpath(s.fs_path) for s in sources if s.fs_path is not None}
    linted |= {os.path.realpath(p) for p in paths if os.path.isfile(p)}  # --stdin-filename's file
    # The same real path is the same file: one stat tells the files that cannot be a linted one,
    # without realpath's lstat of every folder above each of the tree's files.
    linted_files = {_identity(path) for path in linted} - {None}
    context = RepoContext(top)
    cache = _FactCache(top)
    below = _Below()
    for name in work_tree_files(top):
        if not name.lower().endswith(MANIFEST_SUFFIXES) or any(part.startswith(".") for part in name.split("/")):
            continue
        full = os.path.join(top, name)
        identity = _identity(full)
        if (identity is None or identity in linted_files) and os.path.realpath(full) in linted:
            continue
        display = below.display(full)
        if _excluded(display, excludes):
            continue
        if skip is not None and skip(full):
            continue
        records = cache.records(full, display)
        if records:
            context.files.append((display, records))
    cache.save()
    return context


def _identity(path: str) -> tuple[int, int] | None:
    try:
        status = os.stat(path)
    except (OSError, ValueError):
        return None
    return (status.st_dev, status.st_ino)


class _Below:
    """_display for the absolute, normalised paths of a work tree's files, without relpath's
    two abspath calls a file: the working folder is read once."""

    def __init__(self) -> None:
        try:
            here = os.getcwd()
        except OSError:
            here = None
        self.prefix = None if here is None else (here if here.endswith(os.sep) else here + os.sep)

    def display(self, path: str) -> str:
        if self.prefix is None or os.path.normpath(path) != path:
            return _display(path)
        chosen = path[len(self.prefix):] if path.startswith(self.prefix) else path
        return chosen.replace(os.sep, "/")


def _display(path: str) -> str:
    """As the user would see it: relative to the working folder when below it."""
    relative = os.path.relpath(path)
    chosen = path if relative.startswith("..") else relative
    return chosen.replace(os.sep, "/")


def file_records(raw: bytes, display: str) -> list[list[Any]]:
    """The fact records of one file's bytes; parse errors are the linted run's concern, not
    this one's (the file is not linted): a document that does not parse gives no fact."""
    if not any(kind in raw for kind in _KIND_BYTES):
        return []
    from kubegap_lint.input.read import ReadStats, Resource, read_chunk
    from kubegap_lint.input.scan import split_documents
    from kubegap_lint.input.text import decode, split_lines

    text, bad_lines = decode(raw)
    records: list[list[Any]] = []
    stats = ReadStats()
    for chunk in split_documents(split_lines(text)):
        if chunk.template_line is not None or not any(kind in chunk.text for kind in FACT_KINDS):
            continue
        for item in read_chunk(display, chunk, stats, sorted(bad_lines)):
            if isinstance(item, Resource):
                records.extend(_plain(fact_records(item)))
    return records


def _plain(value: Any) -> Any:
    """Parsed YAML (ruamel's mappings, tuples) as JSON would give it back."""
    return json.loads(json.dumps(value, default=str))


class _FactCache:
    """digest of a file's bytes -> its records, kept by the policy cache (catalog/cache.py: a
    regular file of ours nobody else can write, bounded, under the digest of this tool's code and
    of its own bytes; a FIFO or an edited file is ignored); a miss reads the file."""

    def __init__(self, top: str) -> None:
        from kubegap_lint.catalog import cache
        from kubegap_lint.core.datapaths import package_folders

        self.top = top
        from kubegap_lint import __version__

        try:
            self.key: str | None = f"{__version__}:{cache.code_digest(tuple(package_folders()))}"
        except OSError:
            self.key = None
        loaded = cache.load(CACHE_NAME, self.key) if self.key is not None else None
        self.old: dict[str, Any] = loaded if isinstance(loaded, dict) else {}
        self.new: dict[str, list[list[Any]]] = {}

    def records(self, full: str, display: str) -> list[list[Any]]:
        import hashlib

        from kubegap_lint.core.safefile import read_regular

        # A regular file inside the work tree, bounded: `x.yaml -> /dev/zero`, a FIFO or a link
        # out of the repository gives no facts (a fact missed can only add a finding).
        real = os.path.realpath(full)
        if not real.startswith(self.top.rstrip(os.sep) + os.sep):
            return []
        try:
            raw = read_regular(real, MAX_FACT_FILE_BYTES, follow=False)
        except OSError:
            return []
        key = hashlib.blake2b(raw, digest_size=16).hexdigest()
        cached: Any = self.old.get(key)
        found: list[list[Any]] = cached if _valid_records(cached) else file_records(raw, display)
        self.new[key] = found
        return found

    def save(self) -> None:
        """Keep the entries of this run's files (the cache does not grow with old versions)."""
        from kubegap_lint.catalog import cache

        if self.key is None or self.new == self.old:
            return
        cache.store(CACHE_NAME, self.key, self.new)  # one that cannot be written: read again next run


_SHAPES = {"budget": 7, "claim": 3, "config": 4, "device": 5, "autoscaler": 9, "modelcache": 3, "runtime": 5}


def _valid_records(value: Any) -> bool:
    """Records as fact_records makes them (a foreign or damaged cache entry is not used)."""
    if not isinstance(value, list):
        return False
    for record in value:
        if not isinstance(record, list) or not record or _SHAPES.get(record[0]) != len(record):
            return False
        if record[0] == "budget" and not (isinstance(record[6], int) and (record[3] is None or isinstance(record[3], dict))):
            return False
        if record[0] == "config" and not isinstance(record[3], dict):
            return False
        if record[0] == "device" and not all(isinstance(r, list) and len(r) == 2 for r in record[4]):
            return False
        if record[0] == "autoscaler" and not (record[3] is None or isinstance(record[3], str)) \
                or record[0] == "autoscaler" and not all(isinstance(x, str) for x in record[4:6]) \
                or record[0] == "autoscaler" and not isinstance(record[8], int):
            return False
        if record[0] == "runtime" and not (isinstance(record[3], str) and isinstance(record[4], dict)):
            return False
        if not all(x is None or isinstance(x, str) for x in record[1:3]):
            return False
    return True
