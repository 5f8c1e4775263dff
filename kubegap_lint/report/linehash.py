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

_BLOCK = 100
_MULTIPLIER = 37
_MASK = (1 << 64) - 1
_END = 65535
_LF = 0x0A


def _units(text: str) -> array:
    """The significant UTF-16 code units: spaces and tabs dropped, CR LF and CR turned into LF.
    The action drops a space between a CR and an LF after it has ended the pair (CR, space, LF is
    two line breaks), so the pairs are replaced first and the spaces after."""
    flat = text.replace("\r\n", "\n").replace("\r", "\n").replace(" ", "").replace("\t", "")
    units = array("H")
    units.frombytes(flat.encode("utf-16-le", "surrogatepass"))
    if sys.byteorder == "big":
        units.byteswap()
    return units


class LineHashes:
    """GitHub's hash of any line of one text. Only the lines asked for are hashed (a polynomial over
    their 100-unit window, the value the rolling hash has there); the `:n` counts compare the
    windows themselves, which is what equal hash values stand for."""

    def __init__(self, text: str) -> None:
        units = _units(text)
        units.append(_END)
        self._stream = units + array("H", bytes(2 * _BLOCK))  # zeros complete the last windows
        # A line starts at the first unit and after every LF; the end marker starts the last line.
        starts = [0]
        position = 0
        try:
            while True:
                position = units.index(_LF, position) + 1
                starts.append(position)
        except ValueError:
            pass
        self._starts = starts
        seen: dict[bytes, int] = {}
        self._counts: list[int] = []
        for start in starts:
            window = self._stream[start : start + _BLOCK].tobytes()
            seen[window] = seen.get(window, 0) + 1
            self._counts.append(seen[window])

    def __len__(self) -> int:
        return len(self._starts)

    def line(self, number: int) -> str | None:
        """The hash of 1-based line `number`, or None past the end of the text."""
        if not 1 <= number <= len(self._starts):
            return None
        start = self._starts[number - 1]
        value = 0
        for unit in self._stream[start : start + _BLOCK]:
            value = (_MULTIPLIER * value + unit) & _MASK
        return f"{value:x}:{self._counts[number - 1]}"


def line_hashes(text: str) -> list[str]:
    """The hash of every line of `text`, in order (index 0 is line 1)."""
    hashes = LineHashes(text)
    return [hashes.line(number) or "" for number in range(1, len(hashes) + 1)]
