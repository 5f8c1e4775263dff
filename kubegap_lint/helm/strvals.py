"""Parse one `--set`-family expression INTO the values composed so far, by Helm's strvals rules.

The Helm engine's own parsers (helm_python.parse_set_string and kin) parse an expression into an
empty map only, and merging their results afterwards is not what Helm does: `--set a[0].x=1
--set a[0].y=2` keeps both fields (the second expression walks into the item the first wrote),
and `--set list[1].k=v` over a values file's list keeps that item's other fields. So the walk
is done here, on the accumulated values, with Helm's rules (docs: "The Format and Limitations of
--set"):

- `a.b=v` walks into map `a` (made when missing); `a[2]=v` sets item 2 of list `a`, padding it
  with nulls; `a[2].b=v` walks into that item (a non-map item is replaced by a map); `a[0][1]=v`
  nests lists; `\\` makes the next character plain (`a\\.b=v` is key `a.b`).
- Values: `{x,y}` is a list; with --set, `true`/`false`/`null` (any case), `0` and integers not
  starting with `0` are typed, everything else is a string; --set-string keeps strings;
  --set-file reads each value's file; --set-json decodes JSON (an empty value is null);
  --set-literal takes the rest of the expression as it is (commas and braces included).
- Walking into a value of another type (a map key through a string, an index into a map) is an
  error, as Helm reports it; an expression that ends inside a key (`a[0`, `a[0]`) sets nothing.

tests/test_helm_compose.py compares this with the engine on a table of cases.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

MAX_INDEX = 65536  # Helm's limits: an index or a nesting deeper than these is refused
MAX_NESTING = 30
_INTEGER = re.compile(r"[+-]?[0-9]+")
_INT64 = (-(2**63), 2**63 - 1)


class SetError(ValueError):
    """The expression cannot be parsed into the values (Helm refuses it too)."""


class _End(Exception):
    """The expression ended: Helm stops there without an error."""


class _Scanner:
    def __init__(self, text: str, escapes: bool) -> None:
        self.text = text
        self.pos = 0
        self.escapes = escapes

    def until(self, stops: str) -> tuple[str, str | None]:
        """The characters up to the first stop character (consumed), and that stop; None at the
        end of the text. A backslash makes the next character plain."""
        out: list[str] = []
        text = self.text
        while self.pos < len(text):
            char = text[self.pos]
            self.pos += 1
            if char in stops:
                return "".join(out), char
            if char == "\\" and self.escapes:
                if self.pos >= len(text):
                    return "".join(out), None
                out.append(text[self.pos])
                self.pos += 1
            else:
                out.append(char)
        return "".join(out), None

    def peek(self) -> str | None:
        return self.text[self.pos] if self.pos < len(self.text) else None

    def rest(self) -> str:
        out = self.text[self.pos:]
        self.pos = len(self.text)
        return out


def typed(value: str) -> Any:
    """A --set value's type, as Helm gives it."""
    lowered = value.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    if lowered == "null":
        return None
    if value == "0":
        return 0
    if value and value[0] != "0" and _INTEGER.fullmatch(value):
        number = int(value)
        if _INT64[0] <= number <= _INT64[1]:
            return number
    return value


class _Parser:
    def __init__(self, text: str, mode: str, read: Callable[[str], Any]) -> None:
        self.literal = mode == "literal"
        self.json = mode == "json"
        self.scan = _Scanner(text, escapes=not self.literal)
        self.read = read  # a plain value's text -> the value

    def parse(self, data: dict[str, Any]) -> None:
        try:
            while True:
                self.key(data, 0)
        except _End:
            return

    def _json_value(self) -> tuple[bool, Any]:
        """(present, value) of a JSON value; commas and blanks after it are consumed."""
        if self._empty():
            return False, None
        decoder = json.JSONDecoder()
        try:
            value, end = decoder.raw_decode(self.scan.text, self.scan.pos)
        except json.JSONDecodeError as exc:
            raise SetError(f"invalid JSON value: {exc.msg}") from None
        self.scan.pos = end
        self._empty()
        return True, value

    def _empty(self) -> bool:
        """Skip blanks; True at the end or at a comma (consumed)."""
        while True:
            char = self.scan.peek()
            if char is None:
                return True
            if char == ",":
                self.scan.pos += 1
                return True
            if not char.isspace():
                return False
            self.scan.pos += 1

    def _value(self) -> tuple[Any, bool]:
        """The value after `=`: (value, the expression ended)."""
        if self.literal:
            return self.scan.rest(), True
        char = self.scan.peek()
        if char is None:
            return "", True
        if char == "{":
            self.scan.pos += 1
            items: list[Any] = []
            while True:
                text, stop = self.scan.until(",}")
                if stop is None:
                    raise SetError("list must terminate with '}'")
                items.append(self.read(text))
                if stop == "}":
                    if self.scan.peek() == ",":
                        self.scan.pos += 1
                    return items, False
        text, _ = self.scan.until(",")
        return self.read(text), False

    def _index(self) -> int:
        text, stop = self.scan.until("]")
        if stop is None:
            raise _End
        if not _INTEGER.fullmatch(text):
            raise SetError(f'error parsing index: strconv.Atoi: parsing "{text}": invalid syntax')
        return int(text)

    def key(self, data: dict[str, Any], level: int) -> None:
        name, stop = self.scan.until("=[." if self.literal else "=[,.")
        if stop is None:
            if not name:
                raise _End
            raise SetError(f'key "{name}" has no value')
        if stop == "[":
            index = self._index()
            found = data.get(name, [])
            if not isinstance(found, list):
                raise SetError(f"unable to parse key: {name} is not a list")
            try:
                found = self.item(found, index, level)
            finally:
                if name:
                    data[name] = found
        elif stop == "=":
            if self.json:
                present, value = self._json_value()
                if name:
                    data[name] = value if present else None
                return
            value, ended = self._value()
            if name:
                data[name] = value
            if ended:
                raise _End
        elif stop == ",":
            raise SetError(f'key "{name}" has no value (cannot end with ,)')
        else:  # "."
            level += 1
            if level > MAX_NESTING:
                raise SetError(f"value name nested level is greater than maximum supported nested level of {MAX_NESTING}")
            inner = data.get(name, {})
            if not isinstance(inner, dict):
                raise SetError(f"unable to parse key: {name} is not a map")
            try:
                self.key(inner, level)
            finally:
                if inner and name:
                    data[name] = inner
            if not inner:
                raise SetError(f'key map "{name}" has no value')

    def item(self, items: list[Any], index: int, level: int) -> list[Any]:
        """Parse what follows `[index]` into the list; the list, grown as needed."""
        if index < 0:
            raise SetError(f"negative {index} index not allowed")
        rest, stop = self.scan.until("[.=")
        if rest:
            raise SetError(f'unexpected data at end of array index: "{rest}"')
        if stop is None:
            raise _End
        if stop == "=":
            if self.json:
                present, value = self._json_value()
                return _set_index(items, index, value if present else None)
            value, ended = self._value()
            _set_index(items, index, value)
            if ended:
                raise _End
            return items
        if stop == "[":
            inner_index = self._index()
            nested = items[index] if index < len(items) and items[index] is not None else []
            if not isinstance(nested, list):
                raise SetError(f"unable to parse key: item {index} is not a list")
            return _set_index(items, index, self.item(nested, inner_index, level))
        inner: Any = {}
        if index < len(items):
            if not isinstance(items[index], dict):
                items[index] = {}  # indices out of order: the item becomes a map
            inner = items[index]
        self.key(inner, level)
        return _set_index(items, index, inner)


def _set_index(items: list[Any], index: int, value: Any) -> list[Any]:
    if index < 0:
        raise SetError(f"negative {index} index not allowed")
    if index > MAX_INDEX:
        raise SetError(f"index of {index} is greater than maximum supported index of {MAX_INDEX}")
    if len(items) <= index:
        items.extend([None] * (index + 1 - len(items)))
    items[index] = value
    return items


def parse_into(expression: str, values: dict[str, Any], mode: str,
               read_file: Callable[[str], str] | None = None) -> None:
    """Parse one expression of `--set` (mode "typed"), `--set-string` ("string"), `--set-file`
    ("file", each value a path `read_file` reads), `--set-json` ("json") or `--set-literal`
    ("literal") into `values`, in place."""
    if mode == "file":
        if read_file is None:
            raise ValueError("--set-file needs a file reader")
        reader: Callable[[str], Any] = read_file
    elif mode == "string":
        reader = str
    else:
        reader = typed
    _Parser(expression, mode, reader).parse(values)
