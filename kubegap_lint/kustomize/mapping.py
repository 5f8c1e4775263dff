"""Mapping findings on a rendered kustomization to the file and line that wrote their node,
as each finding is made (beside helm/mapping.py, before suppressions are matched).

The origin annotation names the object's file (or its generator); the object is the document
of that file of its kind whose name the rendered name holds (namePrefix, renames), else the
one whose values agree most. A node goes, in order, to the last patch of the kustomizations
that include the file that wrote it (outermost first: an overlay patches after its bases) or
to a replacement's field path, to an `images`, `namespace` or labels entry that set it, else to
its line in the base file; the
rendered location is kept beside it (`rendered_location`, as for Helm), and a place that cannot
be told for sure (a node added by a transformer kubegap-lint does not read, a base value
changed by one) is marked approximate.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable
from typing import Any

from kubegap_lint.core.model import Finding, Location
from kubegap_lint.core.record import record
from kubegap_lint.input.read import Resource
from kubegap_lint.kustomize.origin import Origin, pop_origin
from kubegap_lint.kustomize.patches import KeyPath, Patch, agrees, claim, patches_of, targets, value_at, walk
from kubegap_lint.kustomize.replacements import replaced
from kubegap_lint.kustomize.tree import Closure, Kustomization, ancestors, closure, folders_below, forget_files, load
from kubegap_lint.kustomize.yamlfile import Doc, documents

_ENTRY_NODES = ((), ("metadata",), ("metadata", "name"))
_GENERATOR_LISTS = {"ConfigMapGenerator": "configMapGenerator", "SecretGenerator": "secretGenerator",
                    "HelmChartInflationGenerator": "helmCharts"}


@record(frozen=True)
class Placed:
    path: str
    line: int
    column: int
    approximate: bool


def _display(path: str) -> str:
    relative = os.path.relpath(path)
    return (path if relative.startswith("..") else relative).replace(os.sep, "/")


class OriginMapper:
    """Moves findings on rendered kustomize output to the files that wrote them. `roots` gives,
    by rendered stream, the folder that was rendered and its documents' origins (absolute
    paths); piped input carries its origins in annotations (`note` takes them out), relative
    to a folder that is looked for below the current one."""

    def __init__(self, roots: dict[str, tuple[str, dict[int, Origin]]] | None = None,
                 on_file: Callable[[str, tuple[tuple[int, int, str], ...]], None] | None = None) -> None:
        self.roots = roots or {}
        self.piped: dict[tuple[str, int], Origin] = {}
        self.on_file = on_file  # told of each source file a finding moves to (its comments)
        self._told: set[str] = set()
        self._closures: dict[str, Closure] = {}
        self._below_cwd: list[str] | None = None
        # Asked for every finding of an object: the kustomizations over a file, and their patches.
        self._over: dict[tuple[str, str], list[Kustomization]] = {}
        self._patches: dict[str, list[Patch]] = {}
        forget_files()  # a run reads the tree as it is now, not as an earlier run in this process did

    def __bool__(self) -> bool:
        return bool(self.roots or self.piped)

    def note(self, resource: Resource) -> None:
        """Take the origin annotation out of a piped object before the rules see it."""
        if resource.path in self.roots:
            return
        found = pop_origin(resource.data)
        if found is not None:
            self.piped[(resource.path, resource.document_index)] = found

    def origin(self, resource: Resource) -> tuple[Origin, list[str]] | None:
        """The object's origin (absolute paths) and the folders rendered to make it."""
        root = self.roots.get(resource.path)
        if root is not None:
            found = root[1].get(resource.document_index)
            return (found, [root[0]]) if found is not None else None
        raw = self.piped.get((resource.path, resource.document_index))
        return self._resolved(raw) if raw is not None else None

    def _resolved(self, raw: Origin) -> tuple[Origin, list[str]] | None:
        """A piped origin's paths are relative to the folder that was built: the kustomizations
        at or below the current folder that read the file named (several overlays of one base
        all are: their patches are all asked, and only the one that agrees with the render
        claims a node)."""
        relative = raw.path or raw.configured_in
        if relative is None:
            return None
        if self._below_cwd is None:
            self._below_cwd = folders_below(os.curdir)
        folders = []
        for folder in self._below_cwd:
            candidate = os.path.normpath(os.path.join(folder, relative))
            if os.path.isfile(candidate) and candidate in self.closure(folder).files:
                folders.append(folder)
        if not folders:
            return None
        base = folders[0]
        absolute = Origin(_joined(base, raw.path), _joined(base, raw.configured_in), raw.configured_by)
        return absolute, folders

    def closure(self, folder: str) -> Closure:
        if folder not in self._closures:
            self._closures[folder] = closure(folder)
        return self._closures[folder]

    def object_location(self, resource: Resource, origin: tuple[Origin, list[str]]) -> Location | None:
        """Where the object itself was written (its document in the base, its generator entry)."""
        try:
            placed = self.place(resource, (), origin)
        except Exception:  # noqa: BLE001 - a source file that changed under the run: keep the rendered place
            return None
        return None if placed is None else Location(_display(placed.path), placed.line, placed.column)

    def map(self, finding: Finding, resource: Resource, origin: tuple[Origin, list[str]]) -> Finding:
        """The finding at the line that wrote its node; the rendered place kept beside it."""
        if finding.rendered_location is not None:
            return finding
        try:
            placed = self.place(resource, tuple(finding.key_path[len(resource.base):]), origin)
        except Exception:  # noqa: BLE001 - a source file that changed under the run: keep the rendered place
            return finding
        if placed is None:
            return finding
        if self.on_file is not None and placed.path not in self._told:
            self._told.add(placed.path)
            for doc in documents(placed.path):
                self.on_file(_display(placed.path), doc.comments)
        return dataclasses.replace(finding, location=Location(_display(placed.path), placed.line, placed.column),
                       rendered_location=finding.location, approximate=finding.approximate or placed.approximate)

    def place(self, resource: Resource, key_path: KeyPath, origin: tuple[Origin, list[str]]) -> Placed | None:
        """Where the node at `key_path` of a rendered object was written."""
        found, roots = origin
        data = resource.data
        chains = [self.closure(root) for root in roots]
        if found.path is None:
            return self._generated(found, data, key_path)
        base = _base_document(found.path, data)
        names = {n for n in (_name(data), _name(base.data) if base else None) if n}
        labels = _labels(data)
        in_base = base is not None and walk(base.data, data, key_path)[2]
        for root, chain in zip(roots, chains, strict=True):
            key = (root, found.path)
            if key not in self._over:
                self._over[key] = ancestors(chain, found.path)
            for kustomization in self._over[key]:
                by_replacement = replaced(kustomization, data, key_path, names, labels)  # after its patches
                if by_replacement is not None:
                    file, line, column, exact = by_replacement
                    return Placed(file, line, column, not exact)
                if kustomization.path not in self._patches:
                    self._patches[kustomization.path] = list(patches_of(kustomization))
                for patch in reversed(self._patches[kustomization.path]):
                    if not targets(patch, str(data.get("kind")), names, labels):
                        continue
                    claimed = claim(patch, data, key_path, in_base)
                    if claimed is not None:
                        where = patch.doc.place(claimed[0])
                        if where is not None:
                            return Placed(patch.doc.path, where[0], where[1], not claimed[1])
                set_here = _transformed(kustomization, data, key_path, base)
                if set_here is not None:
                    return set_here
        if base is None:
            return Placed(found.path, 1, 1, True)
        path, node, whole = walk(base.data, data, key_path)
        where = base.place(path) or base.place(()) or (1, 1)
        # A mapping's line stands whatever transformers did inside it; a value must be the same.
        container = isinstance(node, dict) or isinstance(node, list) and any(isinstance(v, (dict, list)) for v in node)
        # The name's line stands when namePrefix or nameSuffix changed it (the rendered name holds it).
        renamed = key_path == ("metadata", "name") and isinstance(node, str) and node in str(value_at(data, key_path))
        exact = whole and (container or renamed or agrees(node, value_at(data, key_path)))
        return Placed(base.path, where[0], where[1], not exact)

    def _generated(self, found: Origin, data: dict[str, Any], key_path: KeyPath) -> Placed | None:
        """A generated object: at its entry in the generator list of the kustomization that made it."""
        if found.configured_in is None:
            return None
        kustomization = _load(found.configured_in)
        list_name = _GENERATOR_LISTS.get(found.configured_by or "")
        name = _name(data) or ""
        if list_name is not None:
            for number, entry in kustomization.listed(list_name):
                if isinstance(entry, dict):
                    entry_name = entry.get("name") or entry.get("releaseName")
                    if isinstance(entry_name, str) and entry_name in name:
                        line, column = kustomization.place((list_name, number))
                        # The object and its name are the entry's; its data comes from the sources it lists.
                        return Placed(kustomization.path, line, column, key_path not in _ENTRY_NODES)
            line, column = kustomization.place((list_name,))
            return Placed(kustomization.path, line, column, True)
        return Placed(kustomization.path, 1, 1, True)


def _transformed(kustomization: Kustomization, data: dict[str, Any], key_path: KeyPath,
                 base: Doc | None) -> Placed | None:
    """A node one of the kustomization's transformers set: an image by `images`, the namespace
    by `namespace`, a label by `labels` or `commonLabels`."""
    rendered = value_at(data, key_path)
    if key_path == ("metadata", "namespace") and kustomization.data.get("namespace") == rendered:
        line, column = kustomization.place(("namespace",))
        return Placed(kustomization.path, line, column, False)
    if key_path and key_path[-1] == "image" and isinstance(rendered, str):
        written = value_at(base.data, walk(base.data, data, key_path)[0]) if base is not None else None
        if isinstance(written, str) and written != rendered:
            image = written.split("@")[0].rsplit(":", 1)[0] if "/" in written or ":" in written else written
            for number, entry in kustomization.listed("images"):
                if isinstance(entry, dict) and entry.get("name") in (image, written):
                    key = next((k for k in ("newTag", "digest", "newName") if k in entry), None)
                    line, column = kustomization.place(("images", number, key) if key else ("images", number))
                    return Placed(kustomization.path, line, column, False)
    if len(key_path) >= 2 and key_path[-2] in ("labels", "matchLabels") and isinstance(key_path[-1], str):
        label = key_path[-1]
        common = kustomization.data.get("commonLabels")
        if isinstance(common, dict) and common.get(label) == rendered:
            line, column = kustomization.place(("commonLabels", label))
            return Placed(kustomization.path, line, column, False)
        for number, entry in kustomization.listed("labels"):
            pairs = entry.get("pairs") if isinstance(entry, dict) else None
            if isinstance(pairs, dict) and pairs.get(label) == rendered:
                line, column = kustomization.place(("labels", number, "pairs", label))
                return Placed(kustomization.path, line, column, False)
    return None


def _load(path: str) -> Kustomization:
    return load(os.path.normpath(os.path.abspath(path)))


def _base_document(path: str, data: dict[str, Any]) -> Doc | None:
    """The document of the origin file the object was read from: of its kind, the one whose name
    the rendered name holds (longest first), else the one whose values agree most."""
    kind = data.get("kind")
    candidates = [d for d in documents(path) if isinstance(d.data, dict) and d.data.get("kind") == kind]
    if len(candidates) <= 1:
        return candidates[0] if candidates else None
    rendered = _name(data) or ""
    named = sorted((d for d in candidates if (_name(d.data) or "\0") in rendered),
                   key=lambda d: -len(_name(d.data) or ""))
    if named:
        return named[0]
    return max(candidates, key=lambda d: _agreement(d.data, data))


def _agreement(written: Any, rendered: Any) -> int:
    if isinstance(written, dict) and isinstance(rendered, dict):
        return sum(_agreement(v, rendered.get(k)) for k, v in written.items())
    if isinstance(written, list) and isinstance(rendered, list):
        return sum(_agreement(a, b) for a, b in zip(written, rendered, strict=False))
    return int(written == rendered)


def _name(data: Any) -> str | None:
    metadata = data.get("metadata") if isinstance(data, dict) else None
    name = metadata.get("name") if isinstance(metadata, dict) else None
    return name if isinstance(name, str) else None


def _labels(data: dict[str, Any]) -> dict[str, Any]:
    metadata = data.get("metadata")
    labels = metadata.get("labels") if isinstance(metadata, dict) else None
    return labels if isinstance(labels, dict) else {}


def _joined(base: str, path: str | None) -> str | None:
    return None if path is None else os.path.normpath(os.path.join(base, path))
