"""Bytes to text and text to lines, the way editors count them: the first step of reading
a file or a stream."""

from __future__ import annotations

import codecs
import re

BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)


def decode(data: bytes) -> tuple[str, list[int]]:
    """Decode bytes to text; return the 1-based lines that held undecodable bytes."""
    for bom, encoding in BOMS:
        if data.startswith(bom):
            try:
                return data[len(bom) :].decode(encoding), []
            except UnicodeDecodeError:
                data = data[len(bom) :]
                break
    try:
        return data.decode("utf-8"), []
    except UnicodeDecodeError:
        pass
    bad_lines: list[int] = []
    line = 1
    position = 0
    while position < len(data):
        try:
            data[position:].decode("utf-8")
            break
        except UnicodeDecodeError as exc:
            bad = position + exc.start
            line += data.count(b"\n", position, bad)
            if not bad_lines or bad_lines[-1] != line:
                bad_lines.append(line)
            position = bad + max(1, exc.end - exc.start)
    return data.decode("utf-8", errors="replace"), bad_lines


# str.splitlines also breaks at these, and the YAML 1.1 parser at the last three; editors, grep
# and git do not. Lines end only at \n, \r\n or a lone \r, so reported lines match the editor's.
_ODD_BREAKS = ("\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029")
_TRANSLATED = ("\x85", "\u2028", "\u2029")
_NOT_BREAKS = str.maketrans(dict.fromkeys(_TRANSLATED, " "))
LINE_RE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


def normal_text(text: str) -> str:
    """Text whose lines, split at \\n, \\r\\n and \\r only, are split_lines(text), joined: the
    three characters YAML 1.1 breaks at and editors do not are made spaces."""
    if not text.isascii() and any(ch in text for ch in _TRANSLATED):  # none of them is ASCII
        return text.translate(_NOT_BREAKS)
    return text


def split_lines(text: str) -> list[str]:
    """The lines of text with their ends, broken only at \\n, \\r\\n and \\r."""
    if any(ch in text for ch in _ODD_BREAKS):
        return LINE_RE.findall(text.translate(_NOT_BREAKS))
    return text.splitlines(True)


def line_count(text: str) -> int:
    """len(split_lines(text)) for normal_text's text, without splitting it."""
    ends = text.count("\n")
    if "\r" in text:  # rare: one more pass for each
        ends += text.count("\r") - text.count("\r\n")
    return ends + (1 if text and text[-1] not in "\r\n" else 0)
