"""Make strings from manifests safe to show: a terminal must not execute what a manifest says."""

from __future__ import annotations

import re
from functools import cache

# C0 and C1 control characters, DEL, lone surrogates (from escapes in broken input and from
# file names that are not UTF-8), and the invisible characters that reorder or hide text:
# bidi embeddings, overrides and isolates (the "Trojan Source" characters), zero-width
# spaces and joiners, the word joiner and the byte-order mark.
_INVISIBLE = "\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff"
_UNSAFE = f"[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff{_INVISIBLE}]"
_UNSAFE_KEEP_TABS = f"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff{_INVISIBLE}]"


@cache
def _pattern(text: str) -> re.Pattern[str]:
    """Compiled at the first use (start-up: a clean run with nothing to escape may use none)."""
    return re.compile(text)


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group(0))
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def safe_text(text: str) -> str:
    """Escape control characters; tabs and new lines become spaces (one finding, one line)."""
    text = text.replace("\t", " ").replace("\n", " ").replace("\r", " ")
    if text.isascii() and text.isprintable():  # nothing the pattern escapes (most texts)
        return text
    return _pattern(_UNSAFE).sub(_escape, text)


def escape_invisible(text: str, keep_line_breaks: bool = False) -> str:
    """Escape what safe_text escapes, but leave tabs, CR and LF (a format escapes those itself)."""
    if text.isascii() and text.isprintable():
        return text
    pattern = _pattern(_UNSAFE_KEEP_TABS if keep_line_breaks else _UNSAFE)
    return pattern.sub(_escape, text)


def no_command(line: str) -> str:
    """A line that starts with `::`, after any blanks (the runner strips them), is a GitHub
    Actions workflow command when a CI log shows it: escape the first colon (a file may be
    named `::error::x.yaml`)."""
    body = line.lstrip()
    if not body.startswith("::"):
        return line
    return line[:len(line) - len(body)] + "\\x3a" + body[1:]


def sarif_text(text: str) -> str:
    """Input text for a SARIF plain-text message: escaped as above, and `[`, `]` escaped, which
    SARIF reads as embedded links (`[text](url)`) otherwise."""
    return safe_text(text).replace("[", "\\[").replace("]", "\\]")
