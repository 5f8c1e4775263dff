"""Make strings from manifests safe to show: a terminal must not execute what a manifest says."""

from __future__ import annotations

import re

# C0 and C1 control characters, DEL, and lone surrogates (from escapes in broken input).
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group(0))
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def safe_text(text: str) -> str:
    """Escape control characters; tabs and new lines become spaces (one finding, one line)."""
    text = text.replace("\t", " ").replace("\n", " ").replace("\r", " ")
    return _UNSAFE.sub(_escape, text)
