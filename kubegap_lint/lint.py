"""Wire the stages for one run: sources -> read -> index -> views -> evaluate -> suppress.

This is the API the CLI and the tests call. It returns a `LintResult`; it never prints.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from kubegap_lint.catalog import Catalog, Policy, load_catalog
from kubegap_lint.errors import DataFileError
from kubegap_lint.estimate import Estimate, estimate
from kubegap_lint.evaluate import evaluate_workload, fault_finding
from kubegap_lint.index import InputIndex
from kubegap_lint.kinds import KindRule, KindTable, load_kind_table
from kubegap_lint.model import Finding, InputError, Location, Severity
from kubegap_lint.read import InputFault, ReadStats, Resource, read_lines, read_text
from kubegap_lint.settings import Settings
from kubegap_lint.sources import Source, discover
from kubegap_lint.suppress import apply_suppressions


@dataclass
class LintResult:
    findings: list[Finding]
    errors: list[InputError]
    stats: ReadStats
    workloads: int
    policies: list[Policy]
    catalog: Catalog
    views: list[dict[str, Any]] = field(default_factory=list, repr=False)
    estimates: list[Estimate] = field(default_factory=list)

    def counted(self) -> list[Finding]:
        """Findings that are not suppressed."""
        return [f for f in self.findings if f.suppression is None]

    def exit_code(self, fail_on: Severity) -> int:
        if self.errors:
            return 2
        if any(f.severity.rank >= fail_on.rank for f in self.counted()):
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
        from kubegap_lint.patterns import policy_pattern_errors

        # A pattern that could backtrack for ever is refused before any input is read.
        pattern_errors = policy_pattern_errors(self.policies, self.params)
        if pattern_errors:
            raise DataFileError(pattern_errors)
        self.input_policies = {p.name: p for p in self.policies if p.scope == "input"}
        self.workload_policies = [p for p in self.policies if p.scope == "workload"]

    def _options(self) -> Any:
        import jmespath

        from kubegap_lint.functions import PolicyFunctions

        return jmespath.Options(custom_functions=PolicyFunctions(self.params))

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
        from kubegap_lint.stream import PendingWorkloads, StdinSpool, slim

        errors = list(errors or [])
        stats = ReadStats()
        stdin = StdinSpool()
        index = InputIndex()
        findings: list[Finding] = []
        pending = PendingWorkloads()
        kept: list[Resource | InputFault] = []  # for suppressions and Helm mapping: slim past the budget
        for number, source in enumerate(sources):
            for item in self._read_source(source, stdin, stats, errors):
                rule = self._take(item, index, findings)
                if not isinstance(item, Resource):
                    continue
                if rule is not None:
                    whole = pending.add(number, item.document_index, item.item_index, item.chars, (item, rule))
                else:
                    whole = pending.retain(item.chars)
                kept.append(item if whole else slim(item))

        def workloads() -> Iterator[tuple[int, tuple[Resource, KindRule]]]:
            yield from pending.kept
            for number, addresses in sorted(pending.addresses.items()):
                documents = {document for document, _ in addresses}
                for item in self._read_source(sources[number], stdin, ReadStats(), errors, documents):
                    if isinstance(item, Resource) and (item.document_index, item.item_index) in addresses:
                        rule = self.kind_table.lookup_or_infer(item.data)
                        if rule is not None:
                            yield addresses[(item.document_index, item.item_index)], (item, rule)

        return self._evaluate_workloads(workloads(), index, findings, errors, stats, keep_views, kept)

    @staticmethod
    def _read_source(source: Source, stdin: Any, stats: ReadStats, errors: list[InputError],
                     only: set[int] | None = None) -> Iterator[Resource | InputFault]:
        """The items of one source as they are read; an OS error becomes an input error."""
        from kubegap_lint.stream import source_lines

        try:
            handle = stdin.open() if source.fs_path is None else open(source.fs_path, "rb")
        except OSError as exc:
            errors.append(InputError(source.display, f"cannot be read: {exc.strerror or exc}"))
            return
        try:
            stats.files += 1
            bad_lines: list[int] = []
            yield from read_lines(source.display, source_lines(handle, bad_lines), stats, bad_lines, only)
        except OSError as exc:  # e.g. a read error half-way, or a folder that replaced the file
            errors.append(InputError(source.display, f"cannot be read: {exc.strerror or exc}"))
        finally:
            handle.close()

    def _take(self, item: Resource | InputFault, index: InputIndex,
              findings: list[Finding]) -> KindRule | None:
        """Report a fault or index a resource; the workload rule when it is a workload."""
        if isinstance(item, InputFault):
            policy = self.input_policies.get(item.rule)
            if policy is not None:
                findings.append(fault_finding(item, policy))
            return None
        index.add(item)
        return self.kind_table.lookup_or_infer(item.data)

    def _evaluate(self, items: list[Resource | InputFault], errors: list[InputError],
                  stats: ReadStats, keep_views: bool, index: InputIndex | None = None) -> LintResult:
        """Index the items and evaluate them; with `index`, one built from the whole input
        (parallel.py evaluates part of the input against the index of all of it)."""
        findings: list[Finding] = []
        indexed = index is not None
        index = index if index is not None else InputIndex()
        workloads: list[tuple[int, tuple[Resource, KindRule]]] = []
        for item in items:
            if indexed:  # the whole input is indexed already: only report faults, find workloads
                if isinstance(item, InputFault):
                    self._take(item, index, findings)
                    continue
                rule = self.kind_table.lookup_or_infer(item.data)
            else:
                rule = self._take(item, index, findings)
            if rule is not None:
                assert isinstance(item, Resource)
                workloads.append((len(workloads), (item, rule)))
        return self._evaluate_workloads(workloads, index, findings, errors, stats, keep_views, items)

    def _evaluate_workloads(self, workloads: Iterable[tuple[int, tuple[Resource, KindRule]]],
                            index: InputIndex, findings: list[Finding], errors: list[InputError],
                            stats: ReadStats, keep_views: bool,
                            items: list[Resource | InputFault]) -> LintResult:
        """Evaluate (order, (workload, rule)) pairs; views and estimates come out in order."""
        from kubegap_lint.views import ViewBuilder

        builder = ViewBuilder(index, self.params.get("gpu_resources", []),
                              self.params.get("nccl_gpu_resources", []))
        options = self._options()
        views: list[tuple[int, dict[str, Any]]] = []
        estimates: list[tuple[int, Estimate]] = []
        count = 0
        for order, (resource, rule) in workloads:
            view = builder.workload_view(resource, rule)
            if view is None:
                continue
            count += 1
            if keep_views:
                views.append((order, view))
            found = estimate(view, Location(resource.path, resource.start.line, resource.start.column),
                             resource.ref(), self.params.get("interruption_reference"))
            if found is not None:
                estimates.append((order, found))
            for policy in self.workload_policies:
                try:
                    findings.extend(evaluate_workload([policy], view, resource, options))
                except Exception as exc:  # a policy met data it cannot handle: say so, go on
                    errors.append(InputError(
                        resource.path,
                        f"policy {policy.id} ({policy.path}) could not be evaluated on {resource.ref().display()}: "
                        f"{' '.join(str(exc).split()) or type(exc).__name__}",
                        resource.start.line, resource.start.column,
                    ))
        if any(f.template for f in findings):  # Helm output: point at the chart's templates
            from kubegap_lint.helm_map import map_to_templates
            findings = map_to_templates(findings, items, self.settings.chart_dirs)
        findings = apply_suppressions(findings, items, self)
        findings.sort(key=Finding.sort_key)
        views.sort(key=lambda pair: pair[0])
        estimates.sort(key=lambda pair: pair[0])
        return LintResult(findings, errors, stats, count, self.policies, self.catalog,
                          [v for _, v in views], [e for _, e in estimates])
