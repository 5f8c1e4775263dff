"""The one list of characters no output shows raw: controls, lone surrogates, and every
invisible or reordering character (Unicode's format controls Cf, line and paragraph
separators Zl and Zp, and the rest of the default-ignorable code points, which render as
nothing: Hangul fillers, variation selectors, tag characters). Every report format, error
line and `config show` escapes them as `\\xNN` / `\\uNNNN` / `\\UNNNNNNNN`; report/sanitize.py
builds on it. tests/test_hostile_output.py checks the list against the running Python's
Unicode database."""

from __future__ import annotations

import re
from functools import cache

# Cf, Zl, Zp (Unicode 15.1) and the default-ignorable code points (DerivedCoreProperties).
INVISIBLE = (
    "\u00ad\u034f\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u115f\u1160\u17b4\u17b5"
    "\u180b-\u180f\u200b-\u200f\u2028-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0"
    "\ufff0-\ufffb\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3"
    "\U0001d173-\U0001d17a\U000e0000-\U000e0fff"
)
CONTROLS = "\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff"  # all but tab and new line
UNSAFE = f"[\t\n{CONTROLS}{INVISIBLE}]"


@cache
def pattern(text: str) -> re.Pattern[str]:
    """Compiled at the first use (start-up: a clean run with nothing to escape may use none)."""
    return re.compile(text)


def escape_char(match: re.Match[str]) -> str:
    code = ord(match.group(0))
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def escape_text(text: str) -> str:
    """Every unsafe character escaped, tabs and new lines too: one line, shown as it is."""
    if text.isascii() and text.isprintable():
        return text
    return pattern(UNSAFE).sub(escape_char, text)
