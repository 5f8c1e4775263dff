"""Wire the stages for one run: sources -> read -> index -> views -> evaluate -> suppress.

This is the API the CLI and the tests call. It returns a `LintResult`; it never prints.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from kubegap_lint.catalog.policies import Catalog, Policy, load_catalog
from kubegap_lint.config.settings import Settings
from kubegap_lint.core.errors import DataFileError
from kubegap_lint.core.model import Finding, InputError, Location, Severity
from kubegap_lint.engine.estimate import Estimate, estimate
from kubegap_lint.engine.evaluate import evaluate_workload, fault_finding
from kubegap_lint.input.read import InputFault, ReadStats, Resource, read_lines, read_text
from kubegap_lint.input.sources import Source, discover
from kubegap_lint.store.spill import SortedSpill
from kubegap_lint.suppress.suppressor import Suppressor
from kubegap_lint.workloads.index import InputIndex
from kubegap_lint.workloads.kinds import KindRule, KindTable, load_kind_table


@dataclass(frozen=True)
class Tally:
    """What the summary and the exit code need: counted findings by severity, and the rest."""

    by_severity: dict[Severity, int]
    suppressed: int


@dataclass
class LintResult:
    """The outcome of a run. Findings and estimates live in stores that spill to disk past a
    few thousand (spill.py), so a report is written as it is read, in the same sorted order."""

    store: SortedSpill[Finding]
    errors: list[InputError]
    stats: ReadStats
    workloads: int
    policies: list[Policy]
    catalog: Catalog
    views: list[dict[str, Any]] = field(default_factory=list, repr=False)
    estimate_store: SortedSpill[tuple[int, Estimate]] | None = field(default=None, repr=False)
    baseline: tuple[Counter[str], str] | None = None  # applied as the sorted findings are read
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


def active_policies(catalog: Catalog, settings: Settings) -> list[Policy]:
    """Apply select, ignore and severity overrides; unknown keys are errors."""
    unknown = [k for k in (settings.select or []) + settings.ignore + list(settings.severity)
               if catalog.find(k) is None]
    if unknown:
        where = f"{settings.source}: " if settings.source else ""
        raise DataFileError([f"{where}unknown rule(s): {', '.join(sorted(set(unknown)))}"
                             " (see `kubegap-lint rules`)"])
    chosen: list[Policy] = []
    selected = {catalog.find(k).id for k in settings.select} if settings.select else None  # type: ignore[union-attr]
    ignored = {catalog.find(k).id for k in settings.ignore}  # type: ignore[union-attr]
    overrides = {catalog.find(k).id: v for k, v in settings.severity.items()}  # type: ignore[union-attr]
    for policy in catalog.policies:
        if policy.id in ignored:
            continue
        if selected is not None and policy.id not in selected:
            continue
        if selected is None and not policy.enabled:
            continue
        if policy.id in overrides:
            from dataclasses import replace

            policy = replace(policy, severity=overrides[policy.id])
        chosen.append(policy)
    return chosen


def effective_params(catalog: Catalog, settings: Settings) -> dict[str, Any]:
    params = dict(catalog.params)
    params.update(settings.params)
    return params


class Linter:
    """Holds what is loaded once (catalog, kind table, compiled policies) for many runs."""

    def __init__(self, settings: Settings | None = None, catalog: Catalog | None = None,
                 kind_table: KindTable | None = None) -> None:
        self.settings = settings or Settings()
        self.catalog = catalog or load_catalog(self.settings.policy_dirs)
        self.kind_table = kind_table or load_kind_table()
        if self.settings.workloads:
            self.kind_table.add(self.settings.workloads)
        self.policies = active_policies(self.catalog, self.settings)
        self.params = effective_params(self.catalog, self.settings)
        from kubegap_lint.catalog.patterns import policy_pattern_errors

        # A pattern that could backtrack for ever is refused before any input is read.
        pattern_errors = policy_pattern_errors(self.policies, self.params)
        if pattern_errors:
            raise DataFileError(pattern_errors)
        self.input_policies = {p.name: p for p in self.policies if p.scope == "input"}
        self.workload_policies = [p for p in self.policies if p.scope == "workload"]
        # Template places learned from a marked render (helm/marked.py), by rendered stream and
        # line: set by `kubegap-lint helm` for the charts it renders itself.
        self.template_places: dict[str, dict[int, Any]] = {}

    def _interpreter(self) -> Any:
        from kubegap_lint.catalog.functions import PolicyInterpreter

        return PolicyInterpreter(self.params)

    def lint_paths(self, paths: Iterable[str], keep_views: bool = False) -> LintResult:
        sources, errors = discover(paths, self.settings.exclude)
        return self.lint_sources(sources, errors, keep_views=keep_views)

    def lint_texts(self, texts: Iterable[tuple[str, str]], keep_views: bool = False) -> LintResult:
        """Lint in-memory documents given as (display path, text) pairs; used by tests and tools."""
        stats = ReadStats()
        items: list[Resource | InputFault] = []
        for path, text in texts:
            stats.files += 1
            items.extend(read_text(path, text, stats))
        return self._evaluate(items, [], stats, keep_views)

    def lint_sources(self, sources: list[Source], errors: list[InputError] | None = None,
                     keep_views: bool = False) -> LintResult:
        """Lint in one streaming pass: each document is parsed, indexed and dropped unless it
        is a workload, and workloads wait (stream.PendingWorkloads: kept parsed up to a budget,
        else read again at the end) until the index holds the facts of the whole input."""
        from kubegap_lint.input.stream import PendingWorkloads, StdinSpool
        from kubegap_lint.store.facts import FACTS_IN_MEMORY

        run = _Run(self, list(errors or []), keep_views, facts_in_memory=FACTS_IN_MEMORY)
        stats = ReadStats()
        stdin = StdinSpool()
        pending = PendingWorkloads()
        for number, source in enumerate(sources):
            for item in self._read_source(source, stdin, stats, run.errors):
                rule = run.take(item)
                if rule is not None:
                    assert isinstance(item, Resource)
                    pending.add(number, item.document_index, item.item_index, item.chars, (item, rule))
        for order, (resource, rule) in pending.kept:
            run.evaluate(order, resource, rule)
        order = len(pending.kept)
        pending.kept = []
        for number in sorted(pending.documents):
            for item in self._read_source(sources[number], stdin, ReadStats(), run.errors, pending.wanted(number)):
                if isinstance(item, Resource) and pending.to_read_again(number, item.document_index, item.item_index):
                    rule = self.kind_table.lookup_or_infer(item.data)
                    if rule is not None:
                        run.evaluate(order, item, rule)
                        order += 1
        return run.result(stats)

    @staticmethod
    def _read_source(source: Source, stdin: Any, stats: ReadStats, errors: list[InputError],
                     wanted: Callable[[int], bool] | None = None) -> Iterator[Resource | InputFault]:
        """The items of one source as they are read; an OS error becomes an input error."""
        from kubegap_lint.input.stream import source_lines

        try:
            handle = stdin.open() if source.fs_path is None else open(source.fs_path, "rb")
        except OSError as exc:
            errors.append(InputError(source.display, f"cannot be read: {exc.strerror or exc}"))
            return
        try:
            stats.files += 1
            bad_lines: list[int] = []
            yield from read_lines(source.display, source_lines(handle, bad_lines), stats, bad_lines, wanted)
        except OSError as exc:  # e.g. a read error half-way, or a folder that replaced the file
            errors.append(InputError(source.display, f"cannot be read: {exc.strerror or exc}"))
        finally:
            handle.close()

    def _evaluate(self, items: list[Resource | InputFault], errors: list[InputError],
                  stats: ReadStats, keep_views: bool, index: InputIndex | None = None) -> LintResult:
        """Lint items already read; with `index`, one built from the whole input (parallel.py
        evaluates part of the input against the index of all of it)."""
        run = _Run(self, list(errors), keep_views, index)
        workloads: list[tuple[Resource, KindRule]] = []
        for item in items:
            rule = run.take(item)
            if rule is not None:
                assert isinstance(item, Resource)
                workloads.append((item, rule))
        for order, (resource, rule) in enumerate(workloads):
            run.evaluate(order, resource, rule)
        return run.result(stats)


class _Run:
    """One run's state. Reading gathers the facts that cross documents (the index, the
    suppressions written, the ranks of rendered documents); evaluating turns each workload into
    findings that are mapped to chart templates, matched against suppressions and stored at
    once, so nothing but those facts and the stores grows with the input."""

    def __init__(self, linter: Linter, errors: list[InputError], keep_views: bool,
                 index: InputIndex | None = None, facts_in_memory: int | None = None) -> None:
        from kubegap_lint.helm.mapping import TemplateMapper
        from kubegap_lint.workloads.views import ViewBuilder

        self.linter = linter
        self.errors = errors
        self.keep_views = keep_views
        self.indexed = index is not None  # given, it holds the whole input already (parallel.py)
        self.index = index if index is not None else InputIndex(facts_in_memory)
        self.suppressor = Suppressor(linter)
        self.templates = TemplateMapper(linter.settings.chart_dirs, linter.template_places)
        self.faults: SortedSpill[Finding] = SortedSpill(Finding.sort_key)  # matched at the end
        self.findings: SortedSpill[Finding] = SortedSpill(Finding.sort_key)
        self.estimates: SortedSpill[tuple[int, Estimate]] = SortedSpill(lambda pair: pair[0])
        self.views: list[tuple[int, dict[str, Any]]] = []
        self.workloads = 0
        params = linter.params
        self.builder = ViewBuilder(self.index, params.get("gpu_resources", []), params.get("nccl_gpu_resources", []))
        self.interpreter = linter._interpreter()

    def take(self, item: Resource | InputFault) -> KindRule | None:
        """Report a fault, or note what a resource tells; its workload rule when it is one."""
        if isinstance(item, InputFault):
            policy = self.linter.input_policies.get(item.rule)
            if policy is not None:
                # Matched against suppressions at the end: a directive may follow in the stream.
                self.faults.add(fault_finding(item, policy))
            return None
        if not self.indexed:
            self.index.add(item)
        self.suppressor.collect(item)
        self.templates.note(item)
        return self.linter.kind_table.lookup_or_infer(item.data)

    def evaluate(self, order: int, resource: Resource, rule: KindRule) -> None:
        view = self.builder.workload_view(resource, rule)
        if view is None:
            return
        self.workloads += 1
        if self.keep_views:
            self.views.append((order, view))
        params = self.linter.params
        found = estimate(view, Location(resource.path, resource.start.line, resource.start.column),
                         resource.ref(), params.get("interruption_reference"))
        if found is not None:
            self.estimates.add((order, found))
        for policy in self.linter.workload_policies:
            try:
                findings = list(evaluate_workload([policy], view, resource, self.interpreter))
            except Exception as exc:  # a policy met data it cannot handle: say so, go on
                self.errors.append(InputError(
                    resource.path,
                    f"policy {policy.id} ({policy.path}) could not be evaluated on {resource.ref().display()}: "
                    f"{' '.join(str(exc).split()) or type(exc).__name__}",
                    resource.start.line, resource.start.column,
                ))
                continue
            for finding in findings:
                self.findings.add(self.suppressor.apply(self.templates.map(finding), resource))

    def result(self, stats: ReadStats) -> LintResult:
        if self.index.on_disk:
            self.index.facts.close()  # type: ignore[union-attr]
        for finding in self.faults:
            # Matched on the rendered text; then placed in the repository when that is no file.
            self.findings.add(self.templates.map(self.suppressor.apply(finding)))
        self.faults.close()
        self.findings.extend(self.suppressor.closing_findings())
        baseline = None
        settings = self.linter.settings
        if settings.baseline is not None:
            from kubegap_lint.suppress.baseline import load_baseline

            baseline = (load_baseline(settings.baseline), str(settings.baseline))
        self.views.sort(key=lambda pair: pair[0])
        return LintResult(self.findings, self.errors, stats, self.workloads, self.linter.policies,
                          self.linter.catalog, [v for _, v in self.views], self.estimates, baseline)
