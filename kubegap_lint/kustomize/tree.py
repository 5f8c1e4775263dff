"""What a kustomization includes, read from its files (never by running anything): resources,
bases and components (files and folders), patches of every kind, generators, and the remote
references that are refused (a render must never reach the network).

`Kustomization` is one kustomization file; `closure` follows its folders down to every file a
render reads, which tells which files a linted overlay covers (not linted again as plain
manifests) and which overlays include a changed file (pre-commit).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from functools import lru_cache
from typing import Any

from kubegap_lint.core.record import field, record
from kubegap_lint.kustomize.yamlfile import Doc, documents

FILE_NAMES = ("kustomization.yaml", "kustomization.yml", "Kustomization")
MAX_TREE_FOLDERS = 2_000  # the kustomizations one closure follows: no crawl of a huge tree
MAX_SEARCH_DIRS = 20_000  # the folders looked through for kustomizations below a top folder
MAX_SEARCH_DEPTH = 10
# A remote base: a URL, an scp-like git address, or a host path such as github.com/org/repo.
_REMOTE = re.compile(r"^(?:[a-z][a-z0-9+.-]*://|git@|[\w.-]+\.(?:com|org|io|net|dev)/)|\?ref=|//", re.I)


def kustomization_file(folder: str) -> str | None:
    """The kustomization file of a folder (the first of kustomize's three names), or None."""
    for name in FILE_NAMES:
        path = os.path.join(folder, name)
        if os.path.isfile(path):
            return path
    return None


def is_remote(reference: str) -> bool:
    return bool(_REMOTE.search(reference))


@record
class Entry:
    """One reference in a kustomization file: which list it is in and where it is written."""

    field_name: str
    value: str
    line: int
    column: int


@record
class Kustomization:
    """One kustomization file, parsed with positions."""

    path: str
    doc: Doc | None
    entries: list[Entry] = field(default_factory=list)  # resources, bases, components

    @property
    def folder(self) -> str:
        return os.path.dirname(self.path)

    @property
    def data(self) -> dict[str, Any]:
        data = self.doc.data if self.doc is not None else None
        return data if isinstance(data, dict) else {}

    def place(self, key_path: tuple[str | int, ...]) -> tuple[int, int]:
        where = self.doc.place(key_path) if self.doc is not None else None
        return where or (1, 1)

    def listed(self, name: str) -> Iterator[tuple[int, Any]]:
        value = self.data.get(name)
        if isinstance(value, list):
            yield from enumerate(value)

    def remote(self) -> Entry | None:
        """The first remote base it names: refused, kustomize would fetch it."""
        return next((e for e in self.entries if is_remote(e.value)), None)

    def files_read(self) -> Iterator[str]:
        """The local files it reads besides its resources (patches, generator sources, configurations)."""
        for name in ("patchesStrategicMerge", "patches", "patchesJson6902", "configurations", "transformers",
                     "generators", "crds", "replacements"):
            for _, item in self.listed(name):
                path = item.get("path") if isinstance(item, dict) else item
                if isinstance(path, str) and "\n" not in path:
                    yield os.path.normpath(os.path.join(self.folder, path))
        for name in ("configMapGenerator", "secretGenerator"):
            for _, item in self.listed(name):
                if not isinstance(item, dict):
                    continue
                for key in ("files", "envs"):
                    for source in item.get(key) or ():
                        if isinstance(source, str):
                            source = source.split("=", 1)[-1]
                            yield os.path.normpath(os.path.join(self.folder, source))
                if isinstance(item.get("env"), str):
                    yield os.path.normpath(os.path.join(self.folder, item["env"]))


@lru_cache(maxsize=1024)
def load(path: str) -> Kustomization:
    """A kustomization file (path absolute and normalised); empty when it cannot be read."""
    docs = documents(path)
    doc = docs[0] if docs else None
    found = Kustomization(path, doc)
    for name in ("resources", "bases", "components"):
        for number, value in found.listed(name):
            if isinstance(value, str):
                line, column = found.place((name, number))
                found.entries.append(Entry(name, value, line, column))
    return found


@record
class Closure:
    """What rendering a kustomization reads: its kustomizations (outermost first) and files."""

    kustomizations: list[Kustomization] = field(default_factory=list)
    files: set[str] = field(default_factory=set)
    folders: set[str] = field(default_factory=set)  # the kustomization folders reached
    remote: tuple[Kustomization, Entry] | None = None


def closure(folder: str) -> Closure:
    """Every kustomization and file a render of `folder` reads (absolute paths), following
    folders as kustomize does; each kustomization once."""
    found = Closure()
    pending = [os.path.abspath(folder)]
    while pending and len(found.folders) < MAX_TREE_FOLDERS:
        here = pending.pop(0)
        if here in found.folders:
            continue
        file = kustomization_file(here)
        if file is None:
            continue
        found.folders.add(here)
        kustomization = load(file)
        found.kustomizations.append(kustomization)
        found.files.add(file)
        found.files.update(kustomization.files_read())
        if found.remote is None:
            remote = kustomization.remote()
            if remote is not None:
                found.remote = (kustomization, remote)
        for entry in kustomization.entries:
            if is_remote(entry.value):
                continue
            target = os.path.normpath(os.path.join(here, entry.value))
            if os.path.isdir(target):
                pending.append(target)
            else:
                found.files.add(target)
    return found


def ancestors(chain: Closure, path: str) -> list[Kustomization]:
    """The kustomizations of a closure that include `path` (a file), directly or through their
    folders, outermost first: the ones whose patches and transformers apply to its objects."""
    including: dict[str, set[str]] = {}
    for kustomization in chain.kustomizations:
        for entry in kustomization.entries:
            target = os.path.normpath(os.path.join(kustomization.folder, entry.value))
            including.setdefault(target, set()).add(kustomization.folder)
    reached: set[str] = set()
    pending = [path]
    while pending:
        here = pending.pop()
        for folder in including.get(here, ()):
            if folder not in reached:
                reached.add(folder)
                pending.append(folder)
    by_folder = {k.folder: k for k in chain.kustomizations}
    ordered: list[Kustomization] = []
    for kustomization in chain.kustomizations:
        if kustomization.folder in reached:
            ordered.append(kustomization)
            # Its components transform what it accumulated, before its own patches: asked after it.
            ordered += _components(kustomization, by_folder, set())
    return ordered


def _components(kustomization: Kustomization, by_folder: dict[str, Kustomization],
                seen: set[str]) -> list[Kustomization]:
    found: list[Kustomization] = []
    for entry in kustomization.entries:
        if entry.field_name != "components":
            continue
        folder = os.path.normpath(os.path.join(kustomization.folder, entry.value))
        component = by_folder.get(folder)
        if component is not None and folder not in seen:
            seen.add(folder)
            found += [component, *_components(component, by_folder, seen)]
    return found


def folders_below(top: str) -> list[str]:
    """The folders at or below `top` holding a kustomization, absolute, in sorted order: from
    git's list of the work tree's files when `top` is one, else a bounded walk (hidden folders
    and node_modules skipped)."""
    from kubegap_lint.input.git import top_level, work_tree_files

    top = os.path.abspath(top)
    if top_level(top) == os.path.realpath(top):
        listed = work_tree_files(top)
        if listed:
            names = {os.path.dirname(os.path.join(top, *name.split("/"))) for name in listed
                     if name.rsplit("/", 1)[-1] in FILE_NAMES}
            return sorted(names)
    found: list[str] = []
    visited = 0
    for folder, dirs, files in os.walk(top):
        visited += 1
        if visited > MAX_SEARCH_DIRS:
            break
        depth = os.path.relpath(folder, top).count(os.sep)
        dirs[:] = [] if depth >= MAX_SEARCH_DEPTH else sorted(
            d for d in dirs if not d.startswith(".") and d != "node_modules")
        if any(name in files for name in FILE_NAMES):
            found.append(folder)
    return sorted(found)


def including(changed: list[str], top: str) -> list[str]:
    """The kustomization folders below `top` whose render reads one of the changed files (a
    resource, a base's file, a patch, a generator source, a kustomization file)."""
    wanted = {os.path.abspath(path) for path in changed}
    chosen: list[str] = []
    for folder in folders_below(top):
        chain = closure(folder)
        if wanted & (chain.files | {k.path for k in chain.kustomizations}):
            chosen.append(folder)
    return chosen


def forget_files() -> None:
    """Drop what was read: each run reads the tree as it is (tests, tools that lint twice)."""
    documents.cache_clear()
    load.cache_clear()


def references(kustomization: Kustomization) -> list[tuple[str, int, int]]:
    """Every local path a kustomization names, with where it names it: resources, bases,
    components, patch files, generator sources, configurations and transformers files."""
    found = [(e.value, e.line, e.column) for e in kustomization.entries if not is_remote(e.value)]
    for name in ("patches", "patchesJson6902", "patchesStrategicMerge", "configurations", "transformers",
                 "generators", "crds", "replacements"):
        for number, item in kustomization.listed(name):
            value = item.get("path") if isinstance(item, dict) else item
            if isinstance(value, str) and "\n" not in value and (isinstance(item, dict) or ":" not in value):
                key: tuple[str | int, ...] = (name, number, "path") if isinstance(item, dict) else (name, number)
                found.append((value, *kustomization.place(key)))
    for name in ("configMapGenerator", "secretGenerator"):
        for number, item in kustomization.listed(name):
            if not isinstance(item, dict):
                continue
            for key_name in ("files", "envs"):
                sources = item.get(key_name)
                for index, source in enumerate(sources if isinstance(sources, list) else []):
                    if isinstance(source, str):
                        found.append((source.split("=", 1)[-1], *kustomization.place((name, number, key_name, index))))
            if isinstance(item.get("env"), str):
                found.append((item["env"], *kustomization.place((name, number, "env"))))
    return found


def failed_at(chain: Closure, message: str, entry: str) -> tuple[str, int, int]:
    """Where a failed render points: the entry of the innermost kustomization that names, in
    quotes, what the renderer could not read (`accumulating resources from 'x.yaml'`, a patch
    path), else the kustomization file `entry`, line 1."""
    for kustomization in reversed(chain.kustomizations):
        for value, line, column in references(kustomization):
            if f"'{value}'" in message or f"{os.sep}{value.lstrip('./')}:" in message:
                return kustomization.path, line, column
    return entry, 1, 1


def outside(chain: Closure, top: str) -> tuple[str, str, int, int] | None:
    """The first path a kustomization of the closure names that leads out of `top` (symbolic
    links followed, as kustomize follows them): what, and the file, line and column naming it."""
    real_top = os.path.realpath(top)
    for kustomization in chain.kustomizations:
        for value, line, column in references(kustomization):
            target = os.path.realpath(os.path.join(kustomization.folder, value))
            if target != real_top and not target.startswith(real_top.rstrip(os.sep) + os.sep):
                return value, kustomization.path, line, column
    return None
