"""Read the linted files back (never write them) for what a finding's position does not say: where
its line ends (a SARIF region's endColumn) and GitHub's line hash of that line."""

from __future__ import annotations

import re
from collections.abc import Iterable

from kubegap_lint.report.linehash import LineHashes
from kubegap_lint.report.sarif_paths import UriMapper

_LINE_BREAK = re.compile(r"\r\n|\r|\n")


class SourceFiles:
    def __init__(self, mapper: UriMapper) -> None:
        self.mapper = mapper
        self._texts: dict[str, str | None] = {}
        self._lines: dict[str, list[str]] = {}
        self._hashes: dict[str, LineHashes] = {}
        self._wanted: dict[str, set[int]] = {}

    def announce(self, places: Iterable[tuple[str, int]]) -> None:
        """The (display path, line) pairs whose hashes will be asked for: only those are counted
        (linehash.LineHashes), not every line of a long stream."""
        for display, line in places:
            self._wanted.setdefault(display, set()).add(line)

    def text(self, display: str) -> str | None:
        """The file as upload-sarif reads it (UTF-8, bad bytes replaced); None when unreadable."""
        if display not in self._texts:
            real = self.mapper.file_path(display)
            try:
                with open(real, "rb") as handle:  # type: ignore[arg-type]
                    data = handle.read()
                self._texts[display] = data.decode("utf-8", errors="replace")
            except (OSError, TypeError):  # stdin (no file), or gone since it was linted
                self._texts[display] = None
        return self._texts[display]

    def line_end(self, display: str, line: int, column: int) -> int:
        """The column just after the last non-blank character of the line (at least `column`)."""
        text = self.text(display)
        if text is None:
            return column + 1
        if display not in self._lines:
            # A split at \n alone, at C speed, is the same when there is no \r.
            self._lines[display] = _LINE_BREAK.split(text) if "\r" in text else text.split("\n")
        lines = self._lines[display]
        if not 1 <= line <= len(lines):
            return column + 1
        return max(len(lines[line - 1].rstrip()) + 1, column)

    def line_hash(self, display: str, line: int) -> str | None:
        text = self.text(display)
        if text is None:
            return None
        if display not in self._hashes:
            self._hashes[display] = LineHashes(text, self._wanted.get(display))
        return self._hashes[display].line(line)
