"""The files of a kustomize tree read as YAML with positions: kustomization files, bases,
patch files and the patches written inline in a kustomization (block scalars).

One place reads them (regular files only, bounded size), so the hardening of file reads has one
place to change. A file that cannot be read or parsed gives no documents, never an exception.
"""

from __future__ import annotations

import os
from functools import lru_cache
from typing import Any

from kubegap_lint.core.record import record
from kubegap_lint.input.parse import PositionIndex, parse_chunk
from kubegap_lint.input.scan import split_texts
from kubegap_lint.input.text import normal_text

MAX_TREE_FILE_BYTES = 8 * 1024 * 1024  # a kustomize file this large is no hand-written base


@record
class Doc:
    """One YAML document of a file, with where its text sits: an inline patch is text inside a
    kustomization file, shifted by `line_shift` lines and `column_shift` columns."""

    path: str
    data: Any
    positions: PositionIndex
    line_shift: int = 0
    column_shift: int = 0
    comments: tuple[tuple[int, int, str], ...] = ()

    def place(self, key_path: tuple[str | int, ...]) -> tuple[int, int] | None:
        """The line and column where the node's key (a list item: the item) is written."""
        where = self.positions.key(key_path) if key_path else self.positions.start(())
        if where is None:
            return None
        return where.line + self.line_shift, where.column + self.column_shift


def read_text(path: str) -> str | None:
    """A regular file's text (UTF-8, bad bytes replaced), or None."""
    try:
        if not os.path.isfile(path) or os.path.getsize(path) > MAX_TREE_FILE_BYTES:
            return None
        with open(path, "rb") as handle:
            return normal_text(handle.read(MAX_TREE_FILE_BYTES).decode("utf-8", "replace"))
    except OSError:
        return None


def parse_text(path: str, text: str, line_shift: int = 0, column_shift: int = 0) -> list[Doc]:
    """The documents of a text (a parse problem drops the document)."""
    found: list[Doc] = []
    for chunk in split_texts([text]):
        if not chunk.has_content or chunk.too_large:
            continue
        parsed = parse_chunk(chunk)
        if parsed.data is None:
            continue
        found.append(Doc(path, parsed.data, parsed.positions, line_shift, column_shift, tuple(chunk.comments)))
    return found


@lru_cache(maxsize=512)
def documents(path: str) -> tuple[Doc, ...]:
    """The documents of a file (cached: a base is read once however many objects it gives)."""
    text = read_text(path)
    return tuple(parse_text(path, text)) if text is not None else ()


def inline_text(kustomization: Doc, key_path: tuple[str | int, ...]) -> list[Doc]:
    """The documents of a patch written as a string inside a kustomization file, placed at their
    lines there: a block scalar (`patch: |-`) starts on the line after its key, indented."""
    value: Any = kustomization.data
    for step in key_path:
        if isinstance(value, dict):
            value = value.get(step)
        elif isinstance(value, list) and isinstance(step, int) and step < len(value):
            value = value[step]
        else:
            value = None
    if not isinstance(value, str):
        return []
    key = kustomization.positions.key(key_path)
    start = kustomization.positions.start(key_path)
    text = read_text(kustomization.path)
    if key is None or start is None or text is None:
        return []
    lines = text.split("\n")
    if start.line - 1 < len(lines) and lines[start.line - 1][start.column - 1:start.column].strip() in ("|", ">"):
        body = [line for line in lines[start.line:] if line.strip()]
        indent = len(body[0]) - len(body[0].lstrip(" ")) if body else 0
        return parse_text(kustomization.path, value, start.line, indent)
    return []  # a quoted one-line patch: its nodes have no lines of their own

