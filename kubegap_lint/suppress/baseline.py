"""Baselines: today's findings, recorded by fingerprint so that later runs report only new ones.

`kubegap-lint baseline create PATHS > .kubegap-baseline.json` writes one; `baseline:` in the
configuration (or `--baseline FILE`) reads it. A fingerprint holds the rule, the file, the
resource and the place inside it, never a line number, so edits elsewhere in a file keep it.
Paths are from the git top level (version 2: `"paths": "git-top-level"`), so a baseline matches
whatever folder of the repository the tool runs from; outside a work tree, from the working folder.
Version 1 baselines (paths as displayed, from the folder they were created in) are still read.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Iterable, Iterator
from functools import lru_cache
from pathlib import Path
from typing import Any

from kubegap_lint.core.errors import DataFileError

BASELINE_VERSION = 2
GIT_TOP = "git-top-level"
CWD = "working-folder"


class Accepted(Counter[str]):
    """The fingerprints a baseline accepts, with how many findings of each, and the folder its
    paths are from (None: as displayed, version 1)."""

    top: str | None = None


def _top_of(folder: str) -> tuple[str, str]:
    """(what the paths are from, that folder's real path): the git top level, else `folder`."""
    from kubegap_lint.input.git import top_level

    top = top_level(os.path.abspath(folder))
    return (GIT_TOP, top) if top else (CWD, os.path.realpath(folder))


def baseline_pieces(findings: Iterable[Any]) -> Iterator[str]:
    """The counted (unsuppressed) findings as a baseline document, a piece at a time; the
    findings must come sorted (LintResult.iter_findings). Same input, same bytes."""
    from kubegap_lint import __version__
    from kubegap_lint.core.jsonpieces import json_with_lists
    from kubegap_lint.suppress.fingerprint import fingerprint, from_top

    kind, top = _top_of(".")

    def entries() -> Iterator[dict[str, Any]]:
        for finding in findings:
            if finding.suppression is not None:
                continue
            ref = finding.resource
            yield {
                "fingerprint": fingerprint(finding, top),
                "rule": finding.rule_id,
                "name": finding.rule_name,
                "path": from_top((finding.rendered_location or finding.location).path, top),
                "resource": ref.display() if ref else None,
                "message": finding.message,
            }

    document = {"version": BASELINE_VERSION, "paths": kind,
                "tool": {"name": "kubegap-lint", "version": __version__}}
    return json_with_lists(document, {"findings": entries()})


def load_baseline(path: Path | str) -> Accepted:
    """The fingerprints a baseline accepts, with how many findings of each."""
    path = Path(path)
    try:
        stamp = os.stat(path).st_mtime_ns
    except OSError:
        raise DataFileError([f"{path}: baseline file not found; create it with"
                             " `kubegap-lint baseline create PATHS > FILE`"]) from None
    kind, counts = _load(str(path), stamp)
    accepted = Accepted(counts)
    if kind == GIT_TOP:
        # From the top level of the work tree that holds the baseline; the tool may run anywhere in it.
        found, top = _top_of(str(path.parent))
        accepted.top = top if found == GIT_TOP else _top_of(".")[1]
    elif kind == CWD:
        accepted.top = _top_of(".")[1]
    return accepted


@lru_cache(maxsize=8)
def _load(path: str, stamp: int) -> tuple[str | None, dict[str, int]]:
    from kubegap_lint.core.safefile import MAX_BASELINE_BYTES, read_text_limited

    text = read_text_limited(path, MAX_BASELINE_BYTES, "baseline")
    # Memory grows with the values parsed, not the bytes: `{},` is 3 bytes and a 64-byte dict.
    # Each value but the first follows a comma, so the commas bound the values; only each
    # finding's fingerprint is kept (_kept), numbers of any length are never converted.
    if text.count(",") > MAX_BASELINE_VALUES:
        raise DataFileError([f"{path}: baseline holds more than {MAX_BASELINE_VALUES:,} values: not read"
                             " (a baseline records six a finding)"])
    seen: dict[str, _Fingerprint] = {}

    def kept(pairs: list[tuple[str, Any]]) -> Any:
        found = _kept(pairs)
        return seen.setdefault(found, found) if isinstance(found, _Fingerprint) else found  # one object a fingerprint

    try:
        document = json.loads(text, object_pairs_hook=kept, parse_int=_number, parse_float=_number)
    except RecursionError:  # e.g. 100,000 nested arrays
        raise DataFileError([f"{path}: baseline is nested too deeply to be a baseline"]) from None
    except json.JSONDecodeError as exc:
        raise DataFileError([f"{path}:{exc.lineno}:{exc.colno}: baseline is not valid JSON: {exc.msg}"]) from None
    if not isinstance(document, dict) or document.get("version") not in (1, BASELINE_VERSION) \
            or not isinstance(document.get("findings"), list) \
            or (document["version"] == 2 and document.get("paths") not in (GIT_TOP, CWD)):
        raise DataFileError([f"{path}: not a kubegap-lint baseline (expected an object with version"
                             f" {BASELINE_VERSION}, paths {GIT_TOP} or {CWD}, and a findings list)"])
    kind = document.get("paths") if document["version"] == 2 else None
    counts: Counter[str] = Counter()
    for number, entry in enumerate(document["findings"]):
        if not isinstance(entry, _Fingerprint):
            raise DataFileError([f"{path}: findings[{number}]: expected an object with a fingerprint string"])
        counts[str(entry)] += 1
    return kind, dict(counts)


MAX_BASELINE_VALUES = 8 * 1024 * 1024  # over a million findings (six values each)


class _Fingerprint(str):
    """A findings entry, as parsed: only its fingerprint is kept."""


_OTHER = object()  # any other object inside the document: its content is never needed


def _kept(pairs: list[tuple[str, Any]]) -> Any:
    keys = {key for key, _ in pairs}
    if "findings" in keys or "version" in keys:  # the document itself
        return dict(pairs)
    fingerprint = dict(pairs).get("fingerprint") if "fingerprint" in keys else None
    return _Fingerprint(fingerprint) if isinstance(fingerprint, str) else _OTHER


def _number(text: str) -> Any:
    """A JSON number: the version is a small one; a longer one is never converted (int() of
    5,000 digits raises)."""
    if len(text) > 20:
        return _OTHER
    return float(text) if any(c in text for c in ".eE") else int(text)
