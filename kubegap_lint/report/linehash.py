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
from collections.abc import Iterable
from itertools import accumulate, compress, count, islice
from operator import mul

_BLOCK = 100
_MULTIPLIER = 37
_MASK = (1 << 64) - 1
_END = 65535
_LF = 0x0A


def _units(text: str) -> array:
    """The significant UTF-16 code units: spaces and tabs dropped, CR LF and CR turned into LF.
    The action drops a space between a CR and an LF after it has ended the pair (CR, space, LF is
    two line breaks), so the pairs are replaced first and the spaces after."""
    flat = _flat(text)
    units = array("H")
    units.frombytes(flat.encode("utf-16-le", "surrogatepass"))
    if sys.byteorder == "big":
        units.byteswap()
    return units


class LineHashes:
    """GitHub's hash of any line of one text. Only the lines asked for are hashed (a polynomial over
    their 100-unit window, the value the rolling hash has there); the `:n` counts compare the
    windows themselves, which is what equal hash values stand for.

    `wanted`, when given, names the 1-based lines that will be asked for: then only the lines that
    may share one of their windows are counted (_wanted_counts), not every line of a long
    stream. A line asked for outside them is answered all the same, from the full count."""

    def __init__(self, text: str, wanted: Iterable[int] | None = None) -> None:
        self._text = text
        self._counts: dict[int, int] | list[int] | None = None
        self._values: dict[str, int] = {}
        flat = _flat(text)
        # Code points are UTF-16 units when none is past U+FFFF; U+FFFF itself would read as the
        # end marker. Else (rare), the units themselves.
        if wanted is not None and "\uffff" not in flat and (
                flat.isascii() or len(flat.encode("utf-16-le", "surrogatepass")) == 2 * len(flat)):
            lines = flat.split("\n")
            self._starts = list(accumulate(map((1).__add__, map(len, lines)), initial=0))[:-1]
            self._stream = flat + "\uffff" + "\x00" * _BLOCK
            self._counts = self._wanted_counts(lines, set(wanted))
        else:
            self._full(_units(text))

    def _full(self, units: array) -> None:
        """Every line's count, from the UTF-16 units."""
        units.append(_END)
        stream = units + array("H", bytes(2 * _BLOCK))  # zeros complete the last windows
        # A line starts at the first unit and after every LF; the end marker starts the last line.
        starts = [0]
        position = 0
        try:
            while True:
                position = units.index(_LF, position) + 1
                starts.append(position)
        except ValueError:
            pass
        seen: dict[bytes, int] = {}
        counts: list[int] = []
        for start in starts:
            window = stream[start : start + _BLOCK].tobytes()
            seen[window] = seen.get(window, 0) + 1
            counts.append(seen[window])
        self._starts = starts
        self._units: array | None = stream
        self._counts = counts

    def _wanted_counts(self, lines: list[str], wanted: set[int]) -> dict[int, int]:
        """The counts of the wanted lines. Two windows can only be equal if their lines are
        (their first 100 units, for a long line), and so are the lines after them when the
        window holds both whole with their ends: the lines that match a wanted line so are
        found at C speed, and only their windows are compared."""
        numbers = [number for number in wanted if 1 <= number <= len(lines)]
        last = len(lines) - 1
        alone: set[str] = set()  # short lines whose window does not hold the next line whole
        pairs: set[tuple[str, str]] = set()  # short lines whose window holds the next line whole
        long: set[str] = set()  # the first 100 units of long lines
        for number in numbers:
            line = lines[number - 1]
            if len(line) >= _BLOCK:
                long.add(line[:_BLOCK])
            elif number - 1 == last or len(line) + len(lines[number]) + 1 >= _BLOCK:
                alone.add(line)
            else:
                pairs.add((line, lines[number]))
        candidates: set[int] = set()
        if alone:
            candidates.update(compress(count(), map(alone.__contains__, lines)))
        if pairs:
            candidates.update(compress(count(), map(pairs.__contains__, zip(lines, islice(lines, 1, None), strict=False))))
        if long:
            candidates.update(index for index in compress(count(), map((_BLOCK).__le__, map(len, lines)))
                              if lines[index][:_BLOCK] in long)
        stream = self._stream
        starts = self._starts
        seen: dict[str, int] = {}
        counts: dict[int, int] = {}
        for index in sorted(candidates):
            start = starts[index]
            window = stream[start : start + _BLOCK]
            counts[index + 1] = seen[window] = seen.get(window, 0) + 1
        self._units = None
        return {number: counts[number] for number in numbers}

    def __len__(self) -> int:
        return len(self._starts)

    def line(self, number: int) -> str | None:
        """The hash of 1-based line `number`, or None past the end of the text."""
        if not 1 <= number <= len(self._starts):
            return None
        counts = self._counts
        if isinstance(counts, dict) and number not in counts:
            self._full(_units(self._text))  # a line that was not announced: count them all
            counts = self._counts
        assert counts is not None
        start = self._starts[number - 1]
        window: Iterable[int]
        if self._units is not None:
            window = self._units[start : start + _BLOCK]
            value = sum(map(mul, window, _POWERS)) & _MASK
        else:
            text = self._stream[start : start + _BLOCK]
            known = self._values.get(text)  # findings share lines, and lines their windows
            if known is None:
                known = self._values[text] = sum(map(mul, map(ord, text), _POWERS)) & _MASK
            value = known
        # (The polynomial of the window's units, multiplier 37, modulo 2^64, as one sum.)
        return f"{value:x}:{counts[number - 1] if isinstance(counts, list) else counts[number]}"


# 37^(99 - i) for the window's unit i: the Horner evaluation of the polynomial, term by term.
_POWERS = [pow(_MULTIPLIER, _BLOCK - 1 - i, 1 << 64) for i in range(_BLOCK)]


def _flat(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n").replace(" ", "").replace("\t", "")


def line_hashes(text: str) -> list[str]:
    """The hash of every line of `text`, in order (index 0 is line 1)."""
    hashes = LineHashes(text)
    return [hashes.line(number) or "" for number in range(1, len(hashes) + 1)]
