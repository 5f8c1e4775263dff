"""Find the line of a Helm template that produced a node of the rendered YAML.

A template is not YAML until rendered, so it is read line by line: mapping keys and list items
with their columns, and template actions (`{{ ... }}`) on lines of their own. The search follows
the node's key path down the indentation, the way the rendered document nests. It stops where
the template stops writing the keys literally (a `toYaml`, an `include`, a `range`), and then
says so: the result is approximate. It never returns a line that is not in the file.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kubegap_lint.helm.actions import action_bodies, action_spans

# Linear in the line's length (a 200 KB template line once took 92 s): no `\s*` follows a lazy
# part, so the white space before the colon stays in the key and around the value in `rest`
# (both stripped in scan_template).
_KEY_RE = re.compile(
    r"^(?P<indent> *)(?P<dashes>(?:- +)*)"
    r"(?P<key>\"[^\"]*\"\s*|'[^']*'\s*|[^\s#'\"{\-][^#]*?|-[^\s#][^#]*?):(?P<rest>\s.*)?$"
)
_DASH_RE = re.compile(r"^(?P<indent> *)- ")
# The bodies of actions that write nothing: comments, control, variables.
CONTROL_WORDS = r"/\*|if\b|else\b|end\b|with\b|range\b|define\b|block\b|break\b|continue\b|\$[\w.]*\s*:?="
_CONTROL_RE = re.compile(rf"^\{{\{{-?\s*(?:{CONTROL_WORDS})")
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
    path: str | None = None  # another file than the template (the define an include wrote)


# A define's body: (its file, its lines, the number of its first line).
DefineLookup = Callable[[str], "tuple[str, list[str], int] | None"]
_INCLUDE_RE = re.compile(r"\{\{-?\s*(?:include|template)\s+\"([^\"]+)\"")
def _unquote(text: str) -> str:
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    return text


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


def _key_in(scope: list[Entry], key: str, value: Any = None) -> tuple[int | None, bool]:
    """The entry that writes `key` at the scope's level, and whether that is certain. Two lines
    writing the key (the branches of an `if`/`else if`) are told apart by what they write
    against the rendered `value` (None: not known); when they cannot be, the first is given,
    uncertain."""
    keys = [(index, e) for index, e in enumerate(scope) if e.kind == "key"]
    if not keys:
        return None, False
    level = min(e.column for _, e in keys)
    found = [index for index, e in keys if e.column == level and e.key == key]
    if len(found) <= 1:
        return (found[0], True) if found else (None, False)
    scores = [_fit(scope, index, value) for index in found]
    # the one branch nothing contradicts, that has something of its own the render shows
    fitting = [index for index, (agree, disagree) in zip(found, scores, strict=True) if disagree == 0 and agree]
    return (fitting[0], True) if len(fitting) == 1 else (found[0], False)


def _fit(scope: list[Entry], at: int, value: Any) -> tuple[int, int]:
    """How much of what the key at scope[at] writes literally the rendered `value` shows
    (agree), and how much it contradicts (disagree): a scalar that cannot have written it, or a
    literal key below it that the render lacks."""
    verdict = agrees(scope[at].value, value)
    if verdict is not None:
        return int(verdict), int(not verdict)
    if not isinstance(value, dict):
        return 0, 0
    below = _children(scope, at)
    keys = [(index, e) for index, e in enumerate(below) if e.kind == "key" and e.dash_column is None]
    if not keys:
        return 0, 0
    level = min(e.column for _, e in keys)
    agree = disagree = 0
    for index, entry in keys:
        if entry.column != level:
            continue
        if entry.key not in value:
            disagree += 1
            continue
        more, less = _fit(below, index, value[entry.key])
        agree, disagree = agree + 1 + more, disagree + less
    return agree, disagree


def _literal_name(item: Entry, following: list[Entry]) -> str | None:
    """The item's literal `name:` value (None when it has none, or a templated one)."""
    if item.key == "name" and item.value is not None:
        return _unquote(item.value)
    for entry in _item_children(item, following):
        if entry.kind == "key" and entry.key == "name" and entry.column == item.column and entry.value is not None:
            return _unquote(entry.value)
    return None


def _pattern(template_value: str) -> re.Pattern[str]:
    """A templated scalar as a pattern: its literal text, anything where an action writes
    (`{{-` and `-}}` also eat the spaces beside them)."""
    parts: list[str] = []
    last = 0
    trim = False
    for start, end in action_spans(template_value):
        piece = template_value[last:start]
        piece = piece.lstrip() if trim else piece
        parts.append(piece.rstrip() if template_value.startswith("{{-", start) else piece)
        trim = template_value.endswith("-}}", start, end)
        last = end
    piece = template_value[last:]
    parts.append(piece.lstrip() if trim else piece)
    return re.compile("(?s:.*)".join(re.escape(part) for part in parts))


def _rendered_text(value: Any) -> str | None:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (str, int, float)):
        return str(value)
    return None


def agrees(template_value: str | None, rendered: Any) -> bool | None:
    """Whether a template line's scalar (literal, or with actions in it) can have written the
    rendered value; None when the line cannot say (no value, a block, a flow collection)."""
    if template_value is None:
        return None
    text = template_value.strip()
    if text[:1] not in ("'", '"') and " #" in text:
        text = text.split(" #", 1)[0].rstrip()
    if not text or text[0] in "|>[&*!" or (text[0] == "{" and not text.startswith("{{")):
        return None  # a block, a flow collection, an anchor, alias or tag
    shown = _rendered_text(rendered)
    if shown is None:
        return None
    text = _unquote(text)
    if "{{" in text:
        return _pattern(text).fullmatch(shown) is not None
    return text == shown


def _disagrees(item: Entry, following: list[Entry], data: Any) -> tuple[int, int]:
    """How many of the item's own literal scalars agree with the rendered item, and how many
    do not (a key the render lacks says nothing: it may sit inside an `if`)."""
    agree = disagree = 0
    if not isinstance(data, dict):
        return 0, 0
    for entry in _item_children(item, following):
        if entry.kind != "key" or entry.column != item.column or entry.key not in data:
            continue
        verdict = agrees(entry.value, data[entry.key])
        agree += verdict is True
        disagree += verdict is False
    return agree, disagree


def _choose(candidates: list[int], items: list[Entry], scope: list[Entry], data: Any) -> int | None:
    """The one candidate item that the rendered item's literal values agree with (the branch
    of an `if`/`else` that rendered), or None."""
    scores = [_disagrees(items[c], scope[scope.index(items[c]) + 1 :], data) for c in candidates]
    fitting = [c for c, (agree, disagree) in zip(candidates, scores, strict=True) if disagree == 0]
    if len(candidates) == 1:
        return candidates[0] if fitting else None
    if len(fitting) == 1 and scores[candidates.index(fitting[0])][0] > 0:
        return fitting[0]
    return None


def _item_in(scope: list[Entry], index: int, name: str | None, data: Any = None) -> tuple[int | None, bool]:
    """The list item for a rendered item (its index, its `name`, its data when known), and
    whether the match is certain. An item whose literal name is the rendered one is it; two
    such (the branches of an `if`/`else`) are told apart by their other literal values, else
    the match is uncertain. An item with a templated name (`name: {{ $x.name }}`, in a `range`)
    that fits is it when it is the only one that fits and no action at the list's level writes
    items. A match by position never takes an item whose name says otherwise."""
    items = [e for e in scope if e.dash_column is not None]
    if not items:
        return None, False
    level = min(e.dash_column for e in items if e.dash_column is not None)
    items = [e for e in items if e.dash_column == level]
    names = [_literal_name(item, scope[scope.index(item) + 1 :]) for item in items]
    writers = any(e.kind == "action" and e.generates and e.column <= level for e in scope)
    if name is not None:
        literal = [i for i, value in enumerate(names) if value is not None and "{{" not in value and value == name]
        if literal:
            chosen = _choose(literal, items, scope, data) if data is not None else (
                literal[0] if len(literal) == 1 else None)
            if chosen is not None:
                return scope.index(items[chosen]), True
            return scope.index(items[literal[0]]), False
        templated = [i for i, value in enumerate(names) if value is not None and "{{" in value and agrees(value, name)]
        if templated and not writers:
            others = [i for i, value in enumerate(names) if value is None]  # items whose name nothing says
            chosen = _choose(templated, items, scope, data) if data is not None else (
                templated[0] if len(templated) == 1 else None)
            if chosen is not None and not others:
                return scope.index(items[chosen]), True
    if index < len(items):
        position = scope.index(items[index])
        literal_name = names[index]
        if name is not None and literal_name is not None and agrees(literal_name, name) is False:
            return None, False  # its name contradicts the rendered one
        # Counting items is only honest when no action before this one can add or drop items.
        # (Actions nested inside earlier items are indented past the dash and do not count.)
        if not any(e.kind == "action" and e.column <= level for e in scope[:position]):
            return position, True
    return None, False


def find_key_path(entries: list[Entry], path: tuple[Any, ...],
                  document: Any = None) -> tuple[Entry | None, bool, list[Entry]]:
    """Follow `path` through the entries (and through the rendered `document`, when given, to
    tell `if`/`else` branches apart). Returns the deepest matched entry, whether the whole path
    matched (and every step of it was certain), and the scope where the search stopped."""
    matched, certain, scope, _, _ = _follow(entries, path, document)
    return matched, certain, scope


def _follow(entries: list[Entry], path: tuple[Any, ...],
            document: Any) -> tuple[Entry | None, bool, list[Entry], int, Any]:
    """find_key_path, also with how many segments matched and the rendered node there."""
    scope = entries
    matched: Entry | None = None
    certain = True
    node = document
    for done, segment in enumerate(path):
        if isinstance(segment, str):
            value = node.get(segment) if isinstance(node, dict) else None
            found, sure = _key_in(scope, segment, value)
            if found is None:
                return matched, False, scope, done, node
            certain = certain and sure
            matched = scope[found]
            scope = _children(scope, found)
            node = value
        else:
            index, name = segment
            item = node[index] if isinstance(node, list) and 0 <= index < len(node) else None
            found, sure = _item_in(scope, index, name, item)
            if found is None:
                return matched, False, scope, done, node
            certain = certain and sure
            matched = scope[found]
            scope = _item_children(matched, scope[found + 1 :])
            node = item
    return matched, certain, scope, len(path), node


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


def _section_name(section: tuple[int, list[str]]) -> str | None:
    """The `metadata.name` a template section writes (literal or templated)."""
    entry, complete, _ = find_key_path(scan_template(section[1], section[0]), ("metadata", "name"))
    return entry.value if entry is not None and complete else None


def _is_hook(section: tuple[int, list[str]]) -> bool:
    return any("helm.sh/hook:" in line or '"helm.sh/hook":' in line for line in section[1])


def locate(text: str, kind: str | None, ordinal: int, same_kind_docs: int,
           path: tuple[Any, ...], document: Any = None, hook: bool | None = None,
           defines: DefineLookup | None = None) -> Match:
    """The template line for the node at `path` of the `ordinal`-th rendered `kind` resource
    from this template (`same_kind_docs` of them were rendered). With the rendered `document`,
    a section whose name cannot have written the document's is never taken, a name picks the
    section when counting cannot (a `range` that emits several documents), and item values pick
    the `if`/`else` branch. With `hook` (the document is a Helm hook), the ordinal counts the
    documents of its own sort only (helm prints hooks after the manifest). With `defines`, an
    `include` that writes a whole node is followed into its define (the Match names its file)."""
    lines = text.splitlines(True)
    sections = [s for s in split_sections(lines) if any(line.strip() for line in s[1])]
    candidates = [s for s in sections if _has_kind(s[1], kind)]
    countable = True
    if hook is not None and candidates:
        own = [s for s in candidates if _is_hook(s) == hook]
        countable = bool(own)  # a hook annotation no line holds literally: counting cannot say
        candidates = own or candidates
    name = None
    if isinstance(document, dict) and isinstance(document.get("metadata"), dict):
        name = document["metadata"].get("name")

    def fits(section: tuple[int, list[str]]) -> bool | None:
        return agrees(_section_name(section), name) if name is not None else None

    certain = True
    if len(candidates) == 1:
        section = candidates[0]
    elif (countable and candidates and len(candidates) == same_kind_docs and ordinal < len(candidates)
          and fits(candidates[ordinal]) is not False):
        section = candidates[ordinal]
    elif candidates and name is not None and len([s for s in candidates if fits(s)]) == 1:
        section = next(s for s in candidates if fits(s))
    elif candidates:
        section, certain = candidates[0], False
    else:  # no literal kind: the one section that writes anything (an `include` may write it all)
        writing = [s for s in sections if any(e.kind != "action" or e.generates for e in scan_template(s[1], s[0]))]
        if len(writing) != 1 and len(sections) != 1:
            return Match(1, 1, True)
        section = writing[0] if len(writing) == 1 else sections[0]
    first, body = section
    entries = scan_template(body, first)
    kind_at = kind_line(body, first, kind)
    writer = _whole_writer(entries) if kind_at is None else None
    if writer is not None:  # one action (an `include`) wrote the whole document
        inside = (_into_include(lines[writer.line - 1], path, document, defines)
                  if path and certain and defines is not None else None)
        # the node's line in the define, as the marked render finds it; else the include's line
        return inside or Match(writer.line, writer.column + 1, bool(path) or not certain)
    opening = kind_at or first
    if not certain:
        return Match(opening, 1, True)
    if not path:
        return Match(opening, 1, False)
    entry, complete, scope, done, node = _follow(entries, path, document)
    if entry is None:
        return Match(opening, 1, True)
    if complete:
        return Match(entry.line, entry.column + 1, False)
    if done == len(path):  # every step found, one of them a guess (a branch not told apart)
        return Match(entry.line, entry.column + 1, True)
    writers = [e for e in scope if e.kind == "action" and e.generates]
    if len(writers) == 1 and defines is not None and len(scope) == 1 and done < len(path):
        inside = _into_include(lines[writers[0].line - 1], path[done:], node, defines)
        if inside is not None:
            return inside
    if len(writers) == 1:  # the one action that writes this part of the resource
        return Match(writers[0].line, writers[0].column + 1, True)
    return Match(entry.line, entry.column + 1, True)


def _whole_writer(entries: list[Entry]) -> Entry | None:
    """The one action that writes a section holding no literal YAML of its own (a template
    that is `{{ include "x.deployment" . }}` between comments and conditions), or None."""
    writers = [e for e in entries if e.kind == "action" and e.generates]
    if len(writers) != 1 or any(e.kind != "action" for e in entries):
        return None
    return writers[0]


def _into_include(action: str, rest: tuple[Any, ...], node: Any, defines: DefineLookup) -> Match | None:
    """The rest of the path inside the define that an `include` writing the whole node names
    (only then: items the define writes are counted from its own first one)."""
    names = _INCLUDE_RE.findall(action)
    if len(names) != 1:
        return None
    found = defines(names[0])
    if found is None:
        return None
    path, body, first = found
    entry, complete, scope, done, _ = _follow(scan_template(body, first), rest, node)
    if entry is None:
        return None
    if complete:
        return Match(entry.line, entry.column + 1, False, path)
    return Match(entry.line, entry.column + 1, True, path)


def _has_kind(lines: list[str], kind: str | None) -> bool:
    for line in lines:
        match = _KIND_RE.match(line.rstrip("\r\n"))
        if match and (kind is None or match.group("kind") == kind):
            return True
    return False
