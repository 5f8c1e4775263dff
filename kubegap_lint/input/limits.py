"""The bounds that keep one hostile document from taking the run down (docs/robustness.md).

ruamel.yaml's C composer recurses once per nesting level: about 50,000 levels overflow the C
stack (a segmentation fault, not an exception), and its scanner's cost grows with the square
of the depth (10,000 levels take seconds). So a document's depth is bounded *before* it is
composed: a cheap over-estimate from the text, and when that is over the bound, an exact count
from the parser's event stream, which needs no recursion and stops as soon as the bound is
passed.
"""

from __future__ import annotations

import re
from itertools import accumulate
from operator import sub
from typing import Any

# Kubernetes objects nest a few dozen levels; CRD schemas perhaps a hundred or two. 500 also
# leaves Python's own recursion limit (1,000 frames, which str() and == of nested lists count
# against) a wide margin wherever later stages touch the data.
MAX_DEPTH = 500
# The API server refuses request bodies over 3 MiB (etcd's default value limit is 1.5 MiB);
# 16 MiB of text leaves room for any real manifest and keeps a single document's parse short.
MAX_DOCUMENT_CHARS = 16 * 1024 * 1024
# Values (scalars and collections) of one document. Composed and walked, a value costs several
# hundred bytes (nodes, marks, the data, its positions): 16 MiB of `[{},{},...]` is 5.6 million
# values and took 3.6 GB. A real object has a few thousand, a large CRD some ten thousands; a
# million needs about 3 MB of text even written as tersely as `{},`, which is the API server's
# request limit. The same bound as alias expansion; at it, one document peaks near 710 MiB.
MAX_NODES = 1_000_000

_FLOW_STEP = {ord("["): 1, ord("{"): 1, ord("]"): -1, ord("}"): -1}
_FLOW_ONLY = re.compile(r"[^\[\]{}]+")
# Each block level needs at least one more column of indentation (a sequence under a key may
# share its key's, hence the factor 2 below), or a compact `- `/`? ` indicator on the same line.
# Written as "at the start, or after a new line" rather than with `^` and MULTILINE: a search
# for the `\n` prefix runs at C speed, where `^` is tried at every character (4x the time).
_INDENT_CHARS = r"[ \t\-?:]{" + str(MAX_DEPTH // 4) + "}"
_DEEP_FIRST_INDENT = re.compile(_INDENT_CHARS)
_DEEP_INDENT = re.compile("\n" + _INDENT_CHARS)


def _flow_depth_bound(text: str) -> int:
    """An upper bound on flow nesting: the deepest run of open brackets over closed ones
    (brackets inside strings count too, so this can only over-estimate). C-speed steps only."""
    # `in` finds a character at memchr's speed, several times a count's: most documents hold
    # no `[` and many no `{` (measured: a third of the check's instructions on the 10k stream).
    opened = (text.count("[") if "[" in text else 0) + (text.count("{") if "{" in text else 0)
    if opened <= MAX_DEPTH // 2:
        return opened
    steps = map(_FLOW_STEP.__getitem__, _FLOW_ONLY.sub("", text).encode("ascii"))
    levels = list(accumulate(steps, initial=0))
    return max(map(sub, levels, accumulate(levels, min)))


def may_be_too_deep(text: str) -> bool:
    """False when the text certainly nests at most MAX_DEPTH levels (a C-speed check)."""
    return (_DEEP_FIRST_INDENT.match(text) is not None or _DEEP_INDENT.search(text) is not None
            or _flow_depth_bound(text) > MAX_DEPTH // 2)


def depth_exceeds(parser: object) -> Any:
    """Read a fresh parser's events: the start mark of the first collection nested deeper
    than MAX_DEPTH, or None. A syntax error ends the count: composing reports it properly.
    """
    depth = 0
    try:
        while True:
            event = parser.get_event()  # type: ignore[attr-defined]
            name = type(event).__name__
            if name in ("MappingStartEvent", "SequenceStartEvent"):
                depth += 1
                if depth > MAX_DEPTH:
                    return event.start_mark
            elif name in ("MappingEndEvent", "SequenceEndEvent"):
                depth -= 1
            elif name == "StreamEndEvent":
                return None
    except Exception:
        return None


_INDICATORS = (":", "-", ",", "?", "[", "{")


def may_hold_too_many_nodes(text: str, limit: int | None = None) -> bool:
    """False when the text certainly holds at most `limit` (MAX_NODES) values: a C-speed count.

    Every value but the document's first is a key or value next to a `:`, `?` or `,`, an item
    after a `-` or `,`, or a collection opened by `[` or `{`; each such character brings at
    most two (`a:` a key and its empty value). Characters inside strings count too, so this can
    only over-estimate."""
    bound = MAX_NODES if limit is None else limit
    if len(text) <= bound // 2:
        return False
    return 2 * sum(map(text.count, _INDICATORS)) + 1 > bound


def nodes_exceed(parser: object, limit: int | None = None) -> Any:
    """Read a fresh parser's events: the start mark of the first value past `limit`
    (MAX_NODES), or None. Events are made one at a time, so this holds no tree; a syntax error
    ends the count (composing reports it properly)."""
    bound = MAX_NODES if limit is None else limit
    counted = ("ScalarEvent", "MappingStartEvent", "SequenceStartEvent")
    nodes = 0
    try:
        while True:
            event = parser.get_event()  # type: ignore[attr-defined]
            name = type(event).__name__
            if name in counted:
                nodes += 1
                if nodes > bound:
                    return event.start_mark
            elif name == "StreamEndEvent":
                return None
    except Exception:
        return None
