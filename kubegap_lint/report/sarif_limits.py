"""GitHub's limits on one SARIF upload, and how a run is cut to fit them: the most severe results
are kept (unsuppressed before suppressed, then error, warning, note, then file order)."""

from __future__ import annotations

import gzip
import heapq
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from kubegap_lint.core.model import Finding


@dataclass(frozen=True)
class Limits:
    max_results: int = 25_000  # results a run; GitHub rejects the file beyond that
    max_gzip_bytes: int = 10_000_000  # the gzip-compressed file: "10 MB", read the stricter way
    max_locations: int = 1_000  # locations a result (kubegap-lint writes exactly one)


GITHUB_LIMITS = Limits()


def _severity_key(pair: tuple[int, Finding]) -> tuple[bool, int, int]:
    """Unsuppressed first, then error, warning, note; ties keep file order."""
    number, finding = pair
    return finding.suppression is not None, -finding.severity.rank, number


def most_severe(findings: Iterable[Finding], count: int) -> list[Finding]:
    """The `count` most severe findings, in file order, holding no more than `count` at a time."""
    chosen = heapq.nsmallest(max(count, 0), enumerate(findings), key=_severity_key)
    return [finding for _, finding in sorted(chosen, key=lambda pair: pair[0])]


def keep_most_severe(findings: Sequence[Finding], count: int) -> list[int]:
    """The indices of the `count` most severe findings, in file order."""
    chosen = heapq.nsmallest(max(count, 0), enumerate(findings), key=_severity_key)
    return sorted(number for number, _ in chosen)


def gzip_size(text: str) -> int:
    # mtime=0: the size must not depend on the clock (it does not, but the bytes then are stable).
    return len(gzip.compress(text.encode("utf-8"), compresslevel=6, mtime=0))


def results_note(kept: int, total: int, limits: Limits) -> str:
    return (f"GitHub code scanning accepts at most {limits.max_results:,} results a run: the SARIF"
            f" keeps the {kept:,} most severe of {total:,} findings")


def size_note(kept: int, total: int, limits: Limits) -> str:
    return (f"GitHub code scanning accepts at most {limits.max_gzip_bytes / 1e6:g} MB of gzipped"
            f" SARIF: the SARIF keeps the {kept:,} most severe of {total:,} findings")
