"""JSON written in pieces, byte for byte what one `json.dumps(indent=2)` writes: reports and
baselines stream their long lists instead of holding them."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any


def json_with_lists(head: dict[str, Any], lists: dict[str, Iterator[Any]],
                    writers: dict[str, Callable[[Any, str], str]] | None = None) -> Iterator[str]:
    """`json.dumps({**head, **lists}, indent=2, ensure_ascii=True) + "\\n"`, byte for byte, in
    pieces: the lists (last in the object) are written an element at a time as they come.

    writers may name, for a list, what writes each of its elements (given the element and the
    newline to indent it with): a writer that knows the elements' shape, which must write
    exactly what indented(...) writes of the data they stand for."""
    opening = json.dumps(head, indent=2, ensure_ascii=True)
    yield opening[:-2] if head else "{"  # the head without its closing "\n}"
    for number, (key, elements) in enumerate(lists.items()):
        yield ("," if head or number else "") + "\n  " + json.dumps(key, ensure_ascii=True) + ": "
        yield from _list_pieces(elements, 1, (writers or {}).get(key, indented))
    yield "\n}\n"


def _list_pieces(elements: Iterator[Any], depth: int, write: Callable[[Any, str], str]) -> Iterator[str]:
    """A list as json.dumps(indent=2) writes it at this depth, an element at a time."""
    inner = "\n" + "  " * (depth + 1)
    empty = True
    for element in elements:
        yield ("[" if empty else ",") + inner + write(element, inner)
        empty = False
    yield "[]" if empty else "\n" + "  " * depth + "]"


class _Unsupported(Exception):
    """A value the fast writer leaves to json.dumps."""


def indented(value: Any, newline: str = "\n") -> str:
    """`json.dumps(value, indent=2, ensure_ascii=True)` with each newline as `newline`, byte for byte.

    json's C encoder serves only `indent=None`; with an indent the pure-Python encoder makes a
    generator frame per container, and a report's findings are thousands of small objects.
    Plain JSON data (dict, list, tuple, str, int, float, bool, None) is written here with the
    C string escaper; anything else goes to json.dumps itself (tests/test_jsonpieces.py).
    """
    try:
        parts: list[str] = []
        _write(value, newline, parts)
        return "".join(parts)
    except _Unsupported:
        return json.dumps(value, indent=2, ensure_ascii=True).replace("\n", newline)


def scalar(value: Any, newline: str = "\n") -> str:
    """indented(value, newline): at once for a str, None, a bool or an int (the values of a
    report's fixed fields), through indented for anything else."""
    if isinstance(value, str):
        return _escape(value)
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return int.__repr__(value)
    return indented(value, newline)


def _float(value: float) -> str:
    if value != value:
        return "NaN"
    if value == float("inf"):
        return "Infinity"
    if value == -float("inf"):
        return "-Infinity"
    return float.__repr__(value)


def _key(key: Any) -> str:
    if isinstance(key, str):
        return _escape(key)
    if key is True:
        return '"true"'
    if key is False:
        return '"false"'
    if key is None:
        return '"null"'
    if isinstance(key, int):
        return '"' + int.__repr__(key) + '"'
    if isinstance(key, float):
        return '"' + _float(key) + '"'
    raise _Unsupported


def _write(value: Any, newline: str, out: list[str]) -> None:
    # The order of json.encoder's own tests: str, None, True, False, int, float, list, dict.
    if isinstance(value, str):
        out.append(_escape(value))
    elif value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif isinstance(value, int):
        out.append(int.__repr__(value))
    elif isinstance(value, float):
        out.append(_float(value))
    elif isinstance(value, (list, tuple)):
        if not value:
            out.append("[]")
            return
        inner = newline + "  "
        out.append("[")
        first = True
        for item in value:
            out.append(inner if first else "," + inner)
            first = False
            _write(item, inner, out)
        out.append(newline + "]")
    elif isinstance(value, dict):
        if not value:
            out.append("{}")
            return
        inner = newline + "  "
        out.append("{")
        first = True
        for key, item in value.items():
            out.append((inner if first else "," + inner) + _key(key) + ": ")
            first = False
            _write(item, inner, out)
        out.append(newline + "}")
    else:
        raise _Unsupported


_escape = json.encoder.encode_basestring_ascii  # type: ignore[attr-defined]
