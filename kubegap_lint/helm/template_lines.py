"""Find the line of a Helm template that produced a node of the rendered YAML.

A template is not YAML until rendered, so it is read line by line: mapping keys and list items
with their columns, and template actions (`{{ ... }}`) on lines of their own. The search follows
the node's key path down the indentation, the way the rendered document nests. It stops where
the template stops writing the keys literally (a `toYaml`, an `include`, a `range`), and then
says so: the result is approximate. It never returns a line that is not in the file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

# Linear in the line's length (a 200 KB template line once took 92 s): no `\s*` follows a lazy
# part, so the white space before the colon stays in the key and around the value in `rest`
# (both stripped in scan_template).
_KEY_RE = re.compile(
    r"^(?P<indent> *)(?P<dashes>(?:- +)*)"
    r"(?P<key>\"[^\"]*\"\s*|'[^']*'\s*|[^\s#'\"{\-][^#]*?|-[^\s#][^#]*?):(?P<rest>\s.*)?$"
)
_DASH_RE = re.compile(r"^(?P<indent> *)- ")
_CONTROL_RE = re.compile(r"^\{\{-?\s*(?:/\*|if\b|else\b|end\b|with\b|range\b|define\b|block\b|\$\w*\s*:?=)")
_KIND_RE = re.compile(r"^kind:\s*['\"]?(?P<kind>[^'\"\s#]+)['\"]?\s*(?:#.*)?$")
_BLOCK_SCALAR_RE = re.compile(r"^[|>][-+0-9]*\s*(?:#.*)?$")


@dataclass(frozen=True)
class Entry:
    """One meaningful template line."""

    line: int  # 1-based, in the whole file
    kind: str  # "key", "item" (a list item without a key), or "action"
    column: int  # 0-based column of the key, of the dash for "item", of `{{` for "action"
    key: str | None = None
    value: str | None = None
    dash_column: int | None = None  # set when the line opens a list item
    generates: bool = False  # an action that writes YAML (toYaml, include, a value...)


@dataclass(frozen=True)
class Match:
    line: int
    column: int  # 1-based
    approximate: bool


def _unquote(text: str) -> str:
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    return text


def action_bodies(text: str) -> list[str] | None:
    """The insides of the `{{ ... }}` actions of a text that holds nothing else but white
    space; None when it holds anything else (or a `{{` left open). One pass with str.find: a
    regex searching from each `{{` for its `}}` is quadratic on a line of unclosed ones."""
    bodies: list[str] = []
    at = 0
    while True:
        start = text.find("{{", at)
        if start == -1:
            return None if text[at:].strip() else bodies
        end = text.find("}}", start + 2)
        if end == -1 or text[at:start].strip():
            return None
        bodies.append(text[start + 2:end])
        at = end + 2


def scan_template(lines: list[str], first_line: int = 1) -> list[Entry]:
    """The keys, list items and stand-alone actions of a template section, in order."""
    entries: list[Entry] = []
    in_action = False
    block_column: int | None = None  # inside a block scalar opened by a key at this column
    for offset, raw in enumerate(lines):
        number = first_line + offset
        text = raw.rstrip("\r\n")
        if in_action:  # a multi-line action: skip to its end
            in_action = "}}" not in text
            continue
        stripped = text.strip()
        if not stripped:
            continue
        indent = len(text) - len(text.lstrip(" "))
        if block_column is not None:
            if indent > block_column:
                continue
            block_column = None
        if stripped.startswith("#"):
            continue
        in_action = stripped.count("{{") > stripped.count("}}")  # continues on the next line
        if stripped.startswith("{{") and (in_action or action_bodies(stripped) is not None):
            entries.append(Entry(number, "action", indent, generates=not _CONTROL_RE.match(stripped)))
            continue
        match = _KEY_RE.match(text)
        if match and "{{" not in match.group("key"):
            dashes = match.group("dashes")
            column = len(match.group("indent")) + len(dashes)
            rest = match.group("rest")
            value = None if rest is None else rest.strip()
            entries.append(Entry(number, "key", column, _unquote(match.group("key").strip()), value,
                                 len(match.group("indent")) if dashes else None))
            if value is not None and _BLOCK_SCALAR_RE.match(value):
                block_column = column
            continue
        dash = _DASH_RE.match(text)
        if dash:
            entries.append(Entry(number, "item", len(dash.group("indent")),
                                 dash_column=len(dash.group("indent"))))
            if _BLOCK_SCALAR_RE.match(text[dash.end():].strip()):
                block_column = len(dash.group("indent"))
    return entries


def _opens(entry: Entry) -> int | None:
    """The column at which this entry starts a sibling: its dash if it opens an item, else its key."""
    if entry.dash_column is not None:
        return entry.dash_column
    if entry.kind == "key":
        return entry.column
    return None


def _children(entries: list[Entry], parent: int) -> list[Entry]:
    """The entries nested under entries[parent] (a key), up to the next line at or left of it."""
    head = entries[parent]
    out: list[Entry] = []
    for entry in entries[parent + 1 :]:
        if entry.kind == "key" and entry.dash_column is None and entry.column <= head.column:
            break
        if entry.dash_column is not None and entry.dash_column < head.column:
            break
        out.append(entry)
    return out


def _item_children(item: Entry, following: list[Entry]) -> list[Entry]:
    """A list item's own entries: its first line and what is indented past its dash."""
    out = [item] if item.kind == "key" else []
    assert item.dash_column is not None
    for entry in following:
        opens = _opens(entry)
        if opens is not None and opens <= item.dash_column:
            break
        out.append(entry)
    return out


def _key_in(scope: list[Entry], key: str) -> int | None:
    keys = [e for e in scope if e.kind == "key"]
    if not keys:
        return None
    level = min(e.column for e in keys)
    for entry in keys:
        if entry.column == level and entry.key == key:
            return scope.index(entry)
    return None


def _literal_name(item: Entry, following: list[Entry]) -> str | None:
    """The item's literal `name:` value (None when it has none, or a templated one)."""
    if item.key == "name" and item.value is not None:
        return _unquote(item.value)
    for entry in _item_children(item, following):
        if entry.kind == "key" and entry.key == "name" and entry.column == item.column and entry.value is not None:
            return _unquote(entry.value)
    return None


def _item_in(scope: list[Entry], index: int, name: str | None) -> tuple[int | None, bool]:
    """The list item for a rendered item (its index, its `name`), and whether the match is
    certain: two items with the rendered name (the branches of an `if`/`else`) leave it
    uncertain, and a match by position never takes an item whose literal name is another."""
    items = [e for e in scope if e.dash_column is not None]
    if not items:
        return None, False
    level = min(e.dash_column for e in items if e.dash_column is not None)
    items = [e for e in items if e.dash_column == level]
    names = [_literal_name(item, scope[scope.index(item) + 1 :]) for item in items]
    if name is not None:
        named = [scope.index(item) for item, literal in zip(items, names, strict=True)
                 if literal is not None and "{{" not in literal and literal == name]
        if named:
            return named[0], len(named) == 1
    if index < len(items):
        position = scope.index(items[index])
        literal = names[index]
        if name is not None and literal is not None and "{{" not in literal and literal != name:
            return None, False  # its literal name contradicts the rendered one
        # Counting items is only honest when no action before this one can add or drop items.
        # (Actions nested inside earlier items are indented past the dash and do not count.)
        if not any(e.kind == "action" and e.column <= level for e in scope[:position]):
            return position, True
    return None, False


def find_key_path(entries: list[Entry], path: tuple[Any, ...]) -> tuple[Entry | None, bool, list[Entry]]:
    """Follow `path` through the entries. Returns the deepest matched entry, whether the whole
    path matched (and every step of it was certain), and the scope where the search stopped."""
    scope = entries
    matched: Entry | None = None
    certain = True
    for segment in path:
        if isinstance(segment, str):
            found = _key_in(scope, segment)
            if found is None:
                return matched, False, scope
            matched = scope[found]
            scope = _children(scope, found)
        else:
            index, name = segment
            found, sure = _item_in(scope, index, name)
            if found is None:
                return matched, False, scope
            certain = certain and sure
            matched = scope[found]
            scope = _item_children(matched, scope[found + 1 :])
    return matched, certain, scope


def split_sections(lines: list[str]) -> list[tuple[int, list[str]]]:
    """The YAML documents of a template file, as (first 1-based line, lines)."""
    sections: list[tuple[int, list[str]]] = []
    start = 0
    for number, line in enumerate(lines):
        if line.startswith("---") and (len(line.rstrip("\r\n")) == 3 or line[3] in " \t\r\n"):
            sections.append((start + 1, lines[start:number]))
            start = number + 1
    sections.append((start + 1, lines[start:]))
    return sections


def kind_line(lines: list[str], first_line: int, kind: str | None) -> int | None:
    """The line that opens the resource (`kind: X` at the left margin) in a section."""
    fallback = None
    for offset, line in enumerate(lines):
        match = _KIND_RE.match(line.rstrip("\r\n"))
        if match:
            if kind is None or match.group("kind") == kind:
                return first_line + offset
        elif line.startswith("kind:") and fallback is None:
            fallback = first_line + offset  # a templated kind
    return fallback


def locate(text: str, kind: str | None, ordinal: int, same_kind_docs: int,
           path: tuple[Any, ...]) -> Match:
    """The template line for the node at `path` of the `ordinal`-th rendered `kind` resource
    from this template (`same_kind_docs` of them were rendered)."""
    lines = text.splitlines(True)
    sections = [s for s in split_sections(lines) if any(line.strip() for line in s[1])]
    candidates = [s for s in sections if _has_kind(s[1], kind)]
    certain = True
    if len(candidates) == 1:
        section = candidates[0]
    elif candidates and len(candidates) == same_kind_docs and ordinal < len(candidates):
        section = candidates[ordinal]
    elif candidates:
        section, certain = candidates[0], False
    elif len(sections) == 1:
        section = sections[0]
    else:
        return Match(1, 1, True)
    first, body = section
    opening = kind_line(body, first, kind) or first
    if not certain:
        return Match(opening, 1, True)
    entries = scan_template(body, first)
    if not path:
        return Match(opening, 1, False)
    entry, complete, scope = find_key_path(entries, path)
    if entry is None:
        return Match(opening, 1, True)
    if complete:
        return Match(entry.line, entry.column + 1, False)
    writers = [e for e in scope if e.kind == "action" and e.generates]
    if len(writers) == 1:  # the one action that writes this part of the resource
        return Match(writers[0].line, writers[0].column + 1, True)
    return Match(entry.line, entry.column + 1, True)


def _has_kind(lines: list[str], kind: str | None) -> bool:
    for line in lines:
        match = _KIND_RE.match(line.rstrip("\r\n"))
        if match and (kind is None or match.group("kind") == kind):
            return True
    return False
