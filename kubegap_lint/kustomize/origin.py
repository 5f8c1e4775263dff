"""The `config.kubernetes.io/origin` annotation kustomize writes with
`buildMetadata: [originAnnotations]`: which file (or which generator in which kustomization)
an object came from. It is read, then removed before the rules see the object, in both forms:
from the text of a render (so its lines are those of a plain `kubectl kustomize`), and from
the data of piped input.
"""

from __future__ import annotations

import re
from typing import Any

from kubegap_lint.core.record import record

ORIGIN = "config.kubernetes.io/origin"
# How kustomize prints it: under metadata.annotations, a block scalar.
_KEY_LINE = re.compile(r"^(?P<indent> *)config\.kubernetes\.io/origin: *[|>][-+]?\s*$")
_DOC_START = re.compile(r"^---(?:\s|$)")


@record(frozen=True)
class Origin:
    """Where kustomize says an object came from: a file (`path`), or a generator
    (`configured_in` the kustomization holding it, `configured_by` its kind)."""

    path: str | None = None
    configured_in: str | None = None
    configured_by: str | None = None


def parse_origin(value: Any) -> Origin | None:
    """The annotation's value (a small YAML mapping, read by line: two shapes are written)."""
    if not isinstance(value, str):
        return None
    fields: dict[str, str] = {}
    section = ""
    for line in value.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        indented = line.startswith(" ")
        key, _, rest = line.strip().partition(":")
        rest = rest.strip().strip("'\"")
        if not indented:
            section = key
            if rest:
                fields[key] = rest
        elif section:
            fields[f"{section}.{key}"] = rest
    if "path" in fields:
        return Origin(path=fields["path"])
    if "configuredIn" in fields:
        return Origin(configured_in=fields["configuredIn"], configured_by=fields.get("configuredBy.kind"))
    return None


def pop_origin(data: Any) -> Origin | None:
    """Take the annotation out of an object's data (and the annotations map it alone made)."""
    metadata = data.get("metadata") if isinstance(data, dict) else None
    if not isinstance(metadata, dict):
        return None
    annotations = metadata.get("annotations")
    if not isinstance(annotations, dict) or ORIGIN not in annotations:
        return None
    found = parse_origin(annotations.pop(ORIGIN))
    if not annotations:
        del metadata["annotations"]
    return found


def strip_origins(text: str) -> tuple[str, dict[int, Origin]]:
    """A render's text without the origin annotations (an `annotations:` left empty goes too),
    and each document's origin by its index in the stream."""
    lines = text.split("\n")
    kept: list[str] = []
    origins: dict[int, Origin] = {}
    document = 0
    seen_content = False
    index = 0
    while index < len(lines):
        line = lines[index]
        if _DOC_START.match(line):
            if seen_content:
                document += 1
            seen_content = False
            kept.append(line)
            index += 1
            continue
        match = _KEY_LINE.match(line)
        if match is None:
            if line.strip() and not line.lstrip().startswith("#"):
                seen_content = True
            kept.append(line)
            index += 1
            continue
        indent = len(match.group("indent"))
        body: list[str] = []
        index += 1
        while index < len(lines) and (not lines[index].strip() or len(lines[index]) - len(lines[index].lstrip(" ")) > indent):
            body.append(lines[index][indent + 2:])
            index += 1
        found = parse_origin("\n".join(body))
        if found is not None:
            origins[document] = found
        # `annotations:` holding nothing else: drop it too (kustomize made it for the origin).
        following = lines[index] if index < len(lines) else ""
        following_indent = len(following) - len(following.lstrip(" "))
        if (kept and kept[-1].strip() == "annotations:" and len(kept[-1]) - len(kept[-1].lstrip(" ")) == indent - 2
                and (not following.strip() or following_indent < indent)):
            kept.pop()
    return "\n".join(kept), origins
