"""Split a command line into words as `shlex.split(text)` does (POSIX rules), fast.

Views split every container's command and args into words; shlex reads one character at a
time and took a tenth of a large lint. A regular expression finds the same words: runs of
unquoted characters, backslash escapes, single-quoted and double-quoted strings, side by side.
Text shlex would refuse (an unclosed quote, a trailing backslash) goes to shlex itself, so the
results, errors included, are shlex's. tests/test_shellwords.py checks both agree.
"""

from __future__ import annotations

import re

# One word: pieces with no white space (shlex's POSIX white space is exactly these four) between.
_WORD_RE = re.compile(r"""(?:[^ \t\r\n'"\\]+|\\[\s\S]|'[^']*'|"(?:[^"\\]|\\[\s\S])*")+""")
_PIECE_RE = re.compile(r"""([^ \t\r\n'"\\]+)|\\([\s\S])|'([^']*)'|"((?:[^"\\]|\\[\s\S])*)\"""")
_SPACE_RE = re.compile(r"[ \t\r\n]*")
# Inside double quotes a backslash escapes only a double quote or a backslash; else it stays.
_QUOTED_ESCAPE_RE = re.compile(r"\\([\s\S])")


def _unescape_quoted(match: re.Match[str]) -> str:
    char = match.group(1)
    return char if char in '"\\' else match.group(0)


def _piece(match: re.Match[str]) -> str:
    plain, escaped, single, double = match.groups()
    if plain is not None:
        return plain
    if escaped is not None:
        return escaped
    if single is not None:
        return single
    return _QUOTED_ESCAPE_RE.sub(_unescape_quoted, double) if "\\" in double else double


def split(text: str) -> list[str]:
    """`shlex.split(text)`; raises ValueError where it does."""
    words: list[str] = []
    position = _SPACE_RE.match(text).end()  # type: ignore[union-attr]
    end = len(text)
    while position < end:
        match = _WORD_RE.match(text, position)
        if match is None:  # an unclosed quote or a lone trailing backslash: shlex's own error
            import shlex

            return shlex.split(text)
        word = match.group(0)
        if "'" in word or '"' in word or "\\" in word:
            word = "".join(_piece(m) for m in _PIECE_RE.finditer(word))
        words.append(word)
        position = _SPACE_RE.match(text, match.end()).end()  # type: ignore[union-attr]
    return words
