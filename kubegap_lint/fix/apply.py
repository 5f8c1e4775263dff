"""Applying fixes to a text, writing the result, and showing it as a diff.

Every fix was computed on the same original text; a fix whose edits overlap those of a fix
taken before it is left for the next run. Edits at the same offset are written the deeper
first (a key of an inner mapping before a key of the mapping around it).
"""

from __future__ import annotations

import difflib
import os
import tempfile
from collections.abc import Iterable

from kubegap_lint.fix.model import SAFE, UNSAFE, Edit, Fix


def wanted(fix: Fix, unsafe: bool) -> bool:
    return fix.applies and (fix.applicability == SAFE or (unsafe and fix.applicability == UNSAFE))


def _overlap(a: Edit, b: Edit) -> bool:
    if a.start == a.end and b.start == b.end:
        return False  # two insertions at one place both go in
    return a.start < b.end and b.start < a.end or a.start == b.start


def take(fixes: Iterable[Fix]) -> list[Fix]:
    """The fixes whose edits overlap none of an earlier one's; an edit two fixes share (the
    grace period of a pod whose two containers are fixed) is written once."""
    taken: list[Fix] = []
    edits: list[Edit] = []
    for fix in fixes:
        own = [edit for edit in fix.edits if edit not in edits]
        if any(_overlap(mine, theirs) for mine in own for theirs in edits):
            continue
        taken.append(fix)
        edits.extend(own)
    return taken


def _depth(edit: Edit) -> int:
    line = edit.text.lstrip("\r\n")
    return -(len(line) - len(line.lstrip(" ")))


def apply_edits(text: str, edits: Iterable[Edit]) -> str:
    ordered = sorted(enumerate(edits), key=lambda pair: (pair[1].start, _depth(pair[1]), pair[0]))
    pieces: list[str] = []
    position = 0
    for _, edit in ordered:
        pieces += [text[position:edit.start], edit.text]
        position = max(position, edit.end)
    pieces.append(text[position:])
    return "".join(pieces)


def apply_fixes(text: str, fixes: Iterable[Fix]) -> tuple[str, list[Fix]]:
    """The text with the fixes applied, and the fixes that were."""
    taken = take(fixes)
    return apply_edits(text, list(dict.fromkeys(edit for fix in taken for edit in fix.edits))), taken


def unified_diff(before: str, after: str, path: str) -> str:
    return "".join(difflib.unified_diff(before.splitlines(keepends=True), after.splitlines(keepends=True),
                                        fromfile=_side("a", path), tofile=_side("b", path)))


def write_atomic(path: str, data: bytes) -> None:
    """Replace a file's content in one step: a temporary file beside it (its mode kept), then
    rename; a symbolic link keeps pointing at the file it named."""
    target = os.path.realpath(path)
    folder = os.path.dirname(target) or os.curdir
    mode = os.stat(target).st_mode & 0o7777
    handle, temporary = tempfile.mkstemp(dir=folder, prefix=".kubegap-fix-", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        os.chmod(temporary, mode)
        os.replace(temporary, target)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise


__all__ = ["SAFE", "UNSAFE", "apply_fixes", "unified_diff", "wanted", "write_atomic"]


def _side(prefix: str, path: str) -> str:
    """git's a/ and b/ before a relative path; an absolute path as it is."""
    return path if path.startswith("/") or path.startswith("<") else f"{prefix}/{path}"
