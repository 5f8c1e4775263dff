"""Which patch wrote a node of a rendered object, and where: strategic-merge patches (files,
`patchesStrategicMerge`, inline `patches:` text) and JSON 6902 patches (files in YAML or
JSON, inline), each found by the node's key path.

A patch claims a node only when its text holds the node (lists followed by the items' merge
key, `name` and the like, or by index for lists of scalars) and what it writes there is what
the render holds: a patch that names the object but lost to a later one, or that applied to
another copy of the same base, does not claim it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from typing import Any

from kubegap_lint.core.record import record
from kubegap_lint.kustomize.tree import Kustomization
from kubegap_lint.kustomize.yamlfile import Doc, documents, inline_text

KeyPath = tuple[str | int, ...]
# The keys a strategic merge matches list items by (the Kubernetes API's patchMergeKey values).
MERGE_KEYS = ("name", "mountPath", "containerPort", "devicePath", "ip", "topologyKey", "key", "type")


@record
class Patch:
    """One patch document: a strategic-merge object, or a JSON 6902 list of operations."""

    doc: Doc
    target: dict[str, Any] | None
    json6902: bool


def walk(node: Any, rendered: Any, key_path: KeyPath) -> tuple[KeyPath, Any, bool]:
    """Follow `key_path` (a path in the rendered object, whose node is `rendered`) through
    `node` (a patch's or a base's data): the path in `node`, the node reached, and whether the
    whole path was followed. List items are matched by merge key, scalars by index."""
    path: list[str | int] = []
    for step in key_path:
        if isinstance(step, int):
            item = rendered[step] if isinstance(rendered, list) and step < len(rendered) else None
            if not isinstance(node, list):
                return tuple(path), node, False
            index = _matching_item(node, item, step)
            if index is None:
                return tuple(path), node, False
            node, rendered = node[index], item
            path.append(index)
        else:
            if not isinstance(node, dict) or step not in node:
                return tuple(path), node, False
            node = node[step]
            rendered = rendered.get(step) if isinstance(rendered, dict) else None
            path.append(step)
    return tuple(path), node, True


def _matching_item(items: list[Any], item: Any, index: int) -> int | None:
    if isinstance(item, dict):
        for key in MERGE_KEYS:
            value = item.get(key)
            if value is not None and not isinstance(value, (dict, list)):
                for number, candidate in enumerate(items):
                    if isinstance(candidate, dict) and candidate.get(key) == value:
                        return number
                return None
        return index if index < len(items) else None
    return index if index < len(items) else None


def agrees(written: Any, rendered: Any) -> bool:
    """What a patch (or a base) wrote at a node is what the render holds there: scalars equal,
    lists of scalars equal, and every scalar of a mapping found in the rendered mapping."""
    if isinstance(written, dict):
        if not isinstance(rendered, dict):
            return False
        return all(k.startswith("$") or k in rendered and agrees(v, rendered[k]) for k, v in written.items()
                   if not isinstance(v, list))
    if isinstance(written, list):
        if not isinstance(rendered, list):
            return False
        if all(not isinstance(v, (dict, list)) for v in written):
            return [_scalar(v) for v in written] == [_scalar(v) for v in rendered]
        return True
    return _scalar(written) == _scalar(rendered)


def _scalar(value: Any) -> str:
    return "null" if value is None else str(value).lower() if isinstance(value, bool) else str(value)


def _pointer(path: str) -> list[str]:
    return [p.replace("~1", "/").replace("~0", "~") for p in path.split("/")[1:]]


def claim(patch: Patch, rendered_doc: Any, key_path: KeyPath, in_base: bool) -> tuple[KeyPath, bool] | None:
    """The key path in the patch's document of the node the patch wrote, and whether that place
    is exact; None when it did not write it."""
    if patch.json6902:
        return _claim_json(patch, rendered_doc, key_path)
    path, node, whole = walk(patch.doc.data, rendered_doc, key_path)
    if not whole:
        return None
    rendered = value_at(rendered_doc, key_path)
    scalar_like = not isinstance(node, (dict, list)) or isinstance(node, list) and not any(
        isinstance(v, (dict, list)) for v in node)
    if (scalar_like or not in_base) and agrees(node, rendered):
        return path, True
    return None


def _claim_json(patch: Patch, rendered_doc: Any, key_path: KeyPath) -> tuple[KeyPath, bool] | None:
    operations = patch.doc.data if isinstance(patch.doc.data, list) else []
    for number in range(len(operations) - 1, -1, -1):  # the last operation wins
        operation = operations[number]
        if not isinstance(operation, dict) or operation.get("op") not in ("add", "replace"):
            continue
        pointer = operation.get("path")
        if not isinstance(pointer, str) or "value" not in operation:
            continue
        segments = _pointer(pointer)
        if len(segments) > len(key_path):
            continue
        node: Any = rendered_doc
        matched = True
        for segment, step in zip(segments, key_path, strict=False):
            item = node[step] if isinstance(node, list) and isinstance(step, int) and step < len(node) else None
            if segment == "-" and isinstance(step, int):
                value = operation["value"]
                if isinstance(value, dict) and isinstance(item, dict) and "name" in value:
                    matched = value.get("name") == item.get("name")
                else:
                    matched = agrees(value, item)
            elif segment.isdigit() and isinstance(step, int):
                matched = int(segment) == step
            else:
                matched = segment == step
            if not matched:
                break
            node = item if isinstance(step, int) else node.get(step) if isinstance(node, dict) else None
        if not matched:
            continue
        rest = key_path[len(segments):]
        path, written, whole = walk(operation["value"], node, rest)
        if whole and agrees(written, value_at(node, rest)):
            # A node inside the value: its line there; the operation's own field: its `path:` line.
            if rest or segments[-1] == "-" or segments[-1].isdigit():
                return (number, "value", *path), True  # inside the value, or the list item it adds
            return (number, "path"), True
    return None


def value_at(data: Any, key_path: KeyPath) -> Any:
    """The node at key_path in plain data, or None where the path leaves it."""
    for step in key_path:
        if isinstance(step, int):
            data = data[step] if isinstance(data, list) and step < len(data) else None
        else:
            data = data.get(step) if isinstance(data, dict) else None
    return data


def targets(patch: Patch, kind: str, names: set[str], labels: dict[str, Any]) -> bool:
    """The patch is aimed at an object of this kind known by one of these names (kustomize
    matches `target.name` as an anchored regular expression)."""
    target = patch.target
    if target is None:
        data = patch.doc.data if isinstance(patch.doc.data, dict) else {}
        metadata = data.get("metadata")
        metadata = metadata if isinstance(metadata, dict) else {}
        target = {"kind": data.get("kind"), "name": metadata.get("name")}
    return selects(target, kind, names, labels)


def selects(target: dict[str, Any], kind: str, names: set[str], labels: dict[str, Any]) -> bool:
    """A `target`/`select` mapping picks an object of this kind known by one of these names."""
    if target.get("kind") not in (None, kind):
        return False
    name = target.get("name")
    if isinstance(name, str) and not any(_named(name, n) for n in names):
        return False
    selector = target.get("labelSelector")
    if isinstance(selector, str):
        for term in selector.split(","):
            key, equals, value = term.partition("=")
            if equals and str(labels.get(key.strip())) != value.strip().lstrip("="):
                return False
    return True


def _named(pattern: str, name: str) -> bool:
    try:
        return re.fullmatch(pattern, name) is not None
    except re.error:
        return pattern == name


def patches_of(kustomization: Kustomization) -> Iterator[Patch]:
    """A kustomization's patches, in the order kustomize applies them: patchesStrategicMerge,
    then patches, then patchesJson6902."""
    folder = kustomization.folder
    for number, item in kustomization.listed("patchesStrategicMerge"):
        if isinstance(item, str):
            if "\n" in item or ":" in item and not os.path.isfile(os.path.join(folder, item)):
                docs = inline_text(kustomization.doc, ("patchesStrategicMerge", number)) if kustomization.doc else []
            else:
                docs = list(documents(os.path.normpath(os.path.join(folder, item))))
            yield from (Patch(d, None, isinstance(d.data, list)) for d in docs)
    for field_name in ("patches", "patchesJson6902"):
        for number, item in kustomization.listed(field_name):
            if not isinstance(item, dict):
                continue
            target = item.get("target") if isinstance(item.get("target"), dict) else None
            if isinstance(item.get("path"), str):
                docs = list(documents(os.path.normpath(os.path.join(folder, item["path"]))))
            elif isinstance(item.get("patch"), str) and kustomization.doc is not None:
                docs = inline_text(kustomization.doc, (field_name, number, "patch"))
            else:
                continue
            yield from (Patch(d, target, isinstance(d.data, list)) for d in docs)
