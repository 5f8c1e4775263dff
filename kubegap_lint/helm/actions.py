"""The `{{ ... }}` actions of a Helm template's text: where they are, what they hold, and the
bodies of its defines. Read by the line mapping (template_lines.py, values_lines.py), the marked
render (marked.py) and the include lookup (mapping.py)."""

from __future__ import annotations

import re
from collections.abc import Iterator

_OPEN_BLOCK_RE = re.compile(r"\{\{-?\s*(?:if|range|with|define|block)\b")
_END_BLOCK_RE = re.compile(r"\{\{-?\s*end\b")


def define_bodies(path: str, text: str) -> dict[str, tuple[str, list[str], int]]:
    """The defines of a template file by name: their body lines, between the `define` line and
    its `end`."""
    out: dict[str, tuple[str, list[str], int]] = {}
    lines = text.splitlines(True)
    name: str | None = None
    start = depth = 0
    for number, line in enumerate(lines, start=1):
        opened = len(_OPEN_BLOCK_RE.findall(line))
        closed = len(_END_BLOCK_RE.findall(line))
        if name is None:
            match = re.search(r"\{\{-?\s*define\s+\"([^\"]+)\"", line)
            if match and opened - closed == 1:
                name, start, depth = match.group(1), number, 1
            continue
        depth += opened - closed
        if depth <= 0:
            out.setdefault(name, (path, lines[start:number - 1], start + 1))
            name = None
    return out


def action_spans(text: str) -> Iterator[tuple[int, int]]:
    """Where each closed `{{ ... }}` action of a text starts and ends, in one pass with
    str.find (a regex searching from each `{{` for its `}}` is quadratic on unclosed ones)."""
    at = 0
    while (start := text.find("{{", at)) != -1:
        end = text.find("}}", start + 2)
        if end == -1:
            return
        yield start, end + 2
        at = end + 2


def trimmed_body(body: str) -> str:
    """An action's inside without the `-` that trims white space, and white space itself
    (`- toYaml . | nindent 4 ` gives `toYaml . | nindent 4`)."""
    body = (body[1:] if body.startswith("-") else body).lstrip()
    return (body[:-1] if body.endswith("-") else body).rstrip()


def action_bodies(text: str) -> list[str] | None:
    """The insides of the `{{ ... }}` actions of a text that holds nothing else but white
    space; None when it holds anything else (or a `{{` left open)."""
    bodies: list[str] = []
    at = 0
    for start, end in action_spans(text):
        if text[at:start].strip():
            return None
        bodies.append(text[start + 2:end - 2])
        at = end
    return None if text[at:].strip() else bodies
