"""GitHub's `primaryLocationLineHash`, computed the way github/codeql-action's upload step does.

GitHub matches an alert across analyses by rule, file and this hash. upload-sarif computes it
for results that lack it, but the REST upload computes nothing, so kubegap-lint emits it itself,
with the same algorithm so that the two never disagree (upload-sarif warns when they do).

The algorithm (codeql-action `src/fingerprints.ts`, described in docs/sarif.md): read the text as
UTF-16 code units, skip spaces and tabs, turn CR, LF and CRLF into LF, append an end marker
(65535) and then zeros; the hash of a line is a rolling polynomial hash (multiplier 37, modulo
2^64) of the 100 significant code units that start at the line's first one, written as
unsigned hex, plus `:n` where n counts that hash value so far in the file. Content above a line
does not enter its hash, so inserting lines above a finding keeps it.
"""

from __future__ import annotations

import sys
from array import array
from collections.abc import Iterable, Iterator

_BLOCK = 100
_MULTIPLIER = 37
_MASK = (1 << 64) - 1
_END = 65535
_FIRST = pow(_MULTIPLIER, _BLOCK, 1 << 64)  # weight of the code unit that leaves the window
_SPACE, _TAB, _LF, _CR = 0x20, 0x09, 0x0A, 0x0D


def _significant(text: str) -> Iterator[int]:
    """UTF-16 code units without spaces and tabs, line breaks as LF, then the end marker."""
    units = array("H")
    units.frombytes(text.encode("utf-16-le", "surrogatepass"))
    if sys.byteorder == "big":
        units.byteswap()
    previous_cr = False
    for unit in units:
        if unit == _SPACE or unit == _TAB or (previous_cr and unit == _LF):
            previous_cr = False
            continue
        previous_cr = unit == _CR
        yield _LF if previous_cr else unit
    yield _END


def _hashes(units: Iterable[int]) -> Iterator[str]:
    window = [0] * _BLOCK
    starts = [False] * _BLOCK  # does a line start at this window slot
    counts: dict[str, int] = {}
    value = 0
    index = 0
    line_start = True

    def hashed() -> str:
        text = format(value, "x")
        counts[text] = counts.get(text, 0) + 1
        return f"{text}:{counts[text]}"

    # A slot comes round again after 100 more units: the hash then covers that line's window.
    for unit in units:
        if starts[index]:
            yield hashed()
            starts[index] = False
        if line_start:
            starts[index] = True
            line_start = False
        line_start = unit == _LF
        value = (_MULTIPLIER * value + unit - _FIRST * window[index]) & _MASK
        window[index] = unit
        index = (index + 1) % _BLOCK
    for _ in range(_BLOCK):  # pad with zeros to flush the last lines
        if starts[index]:
            yield hashed()
            starts[index] = False
        value = (_MULTIPLIER * value - _FIRST * window[index]) & _MASK
        window[index] = 0
        index = (index + 1) % _BLOCK


def line_hashes(text: str) -> list[str]:
    """The hash of every line of `text`, in order (index 0 is line 1)."""
    return list(_hashes(_significant(text)))
