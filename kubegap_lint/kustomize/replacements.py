"""Which `replacements:` entry wrote a node: a target's `fieldPaths` entry (`a.b.[name=x].c`,
`*` for any) that leads to the node or to a parent of it. kustomize runs replacements after a
kustomization's patches, so they are asked first. The entry is the node's place; a node inside
the one it copied is placed there too, approximate (its own line is in the source object).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from typing import Any

from kubegap_lint.kustomize.patches import KeyPath, selects
from kubegap_lint.kustomize.tree import Kustomization
from kubegap_lint.kustomize.yamlfile import Doc, documents

_SEGMENT = re.compile(r"\[[^\]]*\]|[^.\[]+")


def _matches(field_path: str, data: Any, key_path: KeyPath) -> bool:
    """The field path leads to the node at key_path or to one of its parents."""
    segments = _SEGMENT.findall(field_path)
    if len(segments) > len(key_path):
        return False
    node = data
    for segment, step in zip(segments, key_path, strict=False):
        if segment.startswith("["):
            key, _, value = segment[1:-1].partition("=")
            item = node[step] if isinstance(node, list) and isinstance(step, int) and step < len(node) else None
            if not isinstance(item, dict) or str(item.get(key)) != value:
                return False
            node = item
        elif segment == "*" or segment == str(step):
            node = node[step] if isinstance(node, list) and isinstance(step, int) and step < len(node) else (
                node.get(step) if isinstance(node, dict) else None)
        else:
            return False
    return True


def _entries(kustomization: Kustomization) -> Iterator[tuple[Doc | None, Any, tuple[str | int, ...]]]:
    """Each replacement: the document holding it (None: the kustomization itself), its data, its
    key path there."""
    for number, item in kustomization.listed("replacements"):
        if isinstance(item, dict) and isinstance(item.get("path"), str):
            for doc in documents(os.path.normpath(os.path.join(kustomization.folder, item["path"]))):
                yield doc, doc.data, ()
        elif isinstance(item, dict):
            yield None, item, ("replacements", number)


def replaced(kustomization: Kustomization, data: dict[str, Any], key_path: KeyPath, names: set[str],
             labels: dict[str, Any]) -> tuple[str, int, int, bool] | None:
    """The file, line and column of the `fieldPaths` entry that wrote the node, and whether that
    is exact (the node itself, not one inside what it copied); None when no replacement did."""
    for doc, replacement, at in reversed(list(_entries(kustomization))):
        chosen = replacement.get("targets") if isinstance(replacement, dict) else None
        for number, target in enumerate(chosen if isinstance(chosen, list) else []):
            select = target.get("select") if isinstance(target, dict) else None
            if not isinstance(select, dict) or not selects(select, str(data.get("kind")), names, labels):
                continue
            paths = target.get("fieldPaths")
            for index, field_path in enumerate(paths if isinstance(paths, list) else []):
                if isinstance(field_path, str) and _matches(field_path, data, key_path):
                    key = (*at, "targets", number, "fieldPaths", index)
                    where = doc.place(key) if doc is not None else kustomization.place(key)
                    if where is None:
                        continue
                    depth = len(_SEGMENT.findall(field_path))
                    if depth < len(key_path):  # a node inside what was copied: its line in the source
                        inside = _in_source(kustomization, replacement.get("source"), data, key_path, depth)
                        if inside is not None:
                            return inside
                    return (doc.path if doc is not None else kustomization.path), where[0], where[1], \
                        depth == len(key_path)
    return None


def _follow(node: Any, field_path: str) -> tuple[KeyPath, Any] | None:
    """The key path and node a field path names in a document's data (items by `[key=value]`)."""
    path: list[str | int] = []
    for segment in _SEGMENT.findall(field_path):
        if segment.startswith("["):
            key, _, value = segment[1:-1].partition("=")
            found = next((n for n, item in enumerate(node) if isinstance(item, dict) and str(item.get(key)) == value),
                         None) if isinstance(node, list) else None
            if found is None:
                return None
            path.append(found)
            node = node[found]
        elif isinstance(node, dict) and segment in node:
            path.append(segment)
            node = node[segment]
        else:
            return None
    return tuple(path), node


def _in_source(kustomization: Kustomization, source: Any, data: dict[str, Any], key_path: KeyPath,
               depth: int) -> tuple[str, int, int, bool] | None:
    """The line of a copied node in the source object the replacement read: in the
    kustomization's patches (last first), else in the files it lists as resources."""
    from kubegap_lint.kustomize.patches import patches_of, walk

    if not isinstance(source, dict) or not isinstance(source.get("fieldPath"), str):
        return None
    docs = [p.doc for p in reversed(list(patches_of(kustomization))) if not p.json6902]
    for entry in kustomization.entries:
        docs += documents(os.path.normpath(os.path.join(kustomization.folder, entry.value)))
    rendered: Any = data
    for step in key_path[:depth]:
        if isinstance(rendered, list) and isinstance(step, int) and step < len(rendered):
            rendered = rendered[step]
        else:
            rendered = rendered.get(step) if isinstance(rendered, dict) else None
    for doc in docs:
        meta = doc.data.get("metadata") if isinstance(doc.data, dict) else None
        if not isinstance(meta, dict) or doc.data.get("kind") != source.get("kind") or \
                source.get("name") not in (None, meta.get("name")):
            continue
        followed = _follow(doc.data, source["fieldPath"])
        if followed is None:
            continue
        inside, node, whole = walk(followed[1], rendered, key_path[depth:])
        where = doc.place((*followed[0], *inside)) if whole else None
        if where is not None:
            return doc.path, where[0], where[1], True
    return None
