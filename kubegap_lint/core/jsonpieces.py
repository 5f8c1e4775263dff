"""JSON written in pieces, byte for byte what one `json.dumps(indent=2)` writes: reports and
baselines stream their long lists instead of holding them."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any


def json_with_lists(head: dict[str, Any], lists: dict[str, Iterator[Any]]) -> Iterator[str]:
    """`json.dumps({**head, **lists}, indent=2, ensure_ascii=True) + "\\n"`, byte for byte, in
    pieces: the lists (last in the object) are written an element at a time as they come."""
    opening = json.dumps(head, indent=2, ensure_ascii=True)
    yield opening[:-2] if head else "{"  # the head without its closing "\n}"
    for number, (key, elements) in enumerate(lists.items()):
        yield ("," if head or number else "") + "\n  " + json.dumps(key, ensure_ascii=True) + ": "
        yield from _list_pieces(elements, depth=1)
    yield "\n}\n"


def _list_pieces(elements: Iterator[Any], depth: int) -> Iterator[str]:
    """A list as json.dumps(indent=2) writes it at this depth, an element at a time."""
    inner = "\n" + "  " * (depth + 1)
    empty = True
    for element in elements:
        yield ("[" if empty else ",") + inner + json.dumps(element, indent=2, ensure_ascii=True).replace("\n", inner)
        empty = False
    yield "[]" if empty else "\n" + "  " * depth + "]"
