"""What a run gives: `LintResult`, its findings read back sorted from their store (with a
baseline's suppressions), its estimates and workloads, and the `Tally` the summary and the exit
code read. Made in one place, engine/run.make_result.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

from kubegap_lint.catalog.policies import Catalog, Policy
from kubegap_lint.core.model import Finding, InputError, Location, ResourceRef, Severity
from kubegap_lint.core.record import field, record
from kubegap_lint.input.read import ReadStats
from kubegap_lint.store.spill import SortedSpill

if TYPE_CHECKING:
    from kubegap_lint.engine.estimate import Estimate
    from kubegap_lint.workloads.views import WorkloadView


@record(frozen=True)
class Tally:
    """What the summary and the exit code need: counted findings by severity, and the rest."""

    by_severity: dict[Severity, int]
    suppressed: int


@record
class LintResult:
    """The outcome of a run. Findings and estimates live in stores that spill to disk past a
    few thousand (spill.py), so a report is written as it is read, in the same sorted order."""

    store: SortedSpill[Finding]
    errors: list[InputError]
    stats: ReadStats
    workloads: int
    policies: list[Policy]
    catalog: Catalog
    views: list[WorkloadView] = field(default_factory=list, repr=False)
    estimate_store: SortedSpill[tuple[int, Estimate]] | None = field(default=None, repr=False)
    baseline: tuple[Counter[str], str] | None = None  # applied as the sorted findings are read
    # Each workload linted, in input order (its resource and place): reports that list the
    # clean workloads too (JUnit) read it; spilled like the findings.
    workload_store: SortedSpill[tuple[int, tuple[ResourceRef, Location]]] | None = field(default=None, repr=False)
    _tally: Tally | None = field(default=None, init=False, repr=False)

    def iter_findings(self) -> Iterator[Finding]:
        """Every finding, sorted, with the baseline's suppressions; may be called again."""
        found = iter(self.store)
        if self.baseline is not None:
            from kubegap_lint.suppress.suppressor import apply_baseline

            return apply_baseline(found, *self.baseline)
        return found

    @property
    def findings(self) -> list[Finding]:
        return list(self.iter_findings())

    @findings.setter
    def findings(self, findings: Iterable[Finding]) -> None:
        """Replace the findings (tools and tests that edit a result before reporting it)."""
        store: SortedSpill[Finding] = SortedSpill(Finding.sort_key)
        store.extend(findings)
        self.store.close()
        self.store, self._tally = store, None

    def iter_workloads(self) -> Iterator[tuple[ResourceRef, Location]]:
        return (w for _, w in self.workload_store or ())

    def iter_estimates(self) -> Iterator[Estimate]:
        return (e for _, e in self.estimate_store or ())

    @property
    def estimates(self) -> list[Estimate]:
        return list(self.iter_estimates())

    def counted(self) -> list[Finding]:
        """Findings that are not suppressed."""
        return [f for f in self.iter_findings() if f.suppression is None]

    def tally(self) -> Tally:
        if self._tally is None:
            counts = dict.fromkeys(Severity, 0)
            suppressed = 0
            counted = getattr(self.store, "counts", None) if self.baseline is None else None
            if counted is not None:  # counted as the run stored them (_tally_key): no read back
                for (severity, kept), number in counted.items():
                    if kept:
                        counts[severity] += number
                    else:
                        suppressed += number
                self._tally = Tally(counts, suppressed)
                return self._tally
            for finding in self.iter_findings():
                if finding.suppression is None:
                    counts[finding.severity] += 1
                else:
                    suppressed += 1
            self._tally = Tally(counts, suppressed)
        return self._tally

    def exit_code(self, fail_on: Severity) -> int:
        if self.errors:
            return 2
        if any(count and severity.rank >= fail_on.rank for severity, count in self.tally().by_severity.items()):
            return 1
        return 0


def estimate_order(pair: tuple[int, Estimate]) -> tuple[Any, ...]:
    """Estimates come by file and place, as findings do, never in the order the paths were
    named (`lint b.yaml a.yaml` prints what `lint a.yaml b.yaml` prints); input order breaks ties."""
    order, item = pair
    where = item.location
    return (where.path, where.line, where.column, item.resource.display(), order)


def tally_key(finding: Finding) -> tuple[Severity, bool]:
    """What LintResult.tally counts a stored finding as: its severity, and not suppressed."""
    return finding.severity, finding.suppression is None
