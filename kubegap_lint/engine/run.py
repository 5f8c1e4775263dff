"""The run: sources -> read -> index -> views -> evaluate -> suppress, in one loop.

`Linter.run` is the loop every command goes through (lint, helm, baseline create, policies
check), fed by a reader (input/readers.py: files and stdin, texts such as rendered charts,
documents already split, items already parsed). It returns a `LintResult`, made in one place
(`make_result`); it never prints. Which path a `lint` takes (streaming in one process, one
process over an input read whole, or worker processes that each run this loop on a share) is
decided in one place: parallel.choose_path.
"""

from __future__ import annotations

import gc
import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from kubegap_lint.catalog.policies import Catalog, Policy, load_catalog
from kubegap_lint.config.settings import Settings
from kubegap_lint.core.errors import DataFileError, KubegapError
from kubegap_lint.core.model import Finding, InputError, Location, ResourceRef
from kubegap_lint.engine.result import LintResult, estimate_order, tally_key
from kubegap_lint.input.read import InputFault, ReadStats, Resource
from kubegap_lint.input.readers import Reader
from kubegap_lint.input.sources import Source, discover
from kubegap_lint.store.spill import SortedSpill
from kubegap_lint.suppress.suppressor import Suppressor
from kubegap_lint.workloads.index import InputIndex
from kubegap_lint.workloads.kinds import KindRule, KindTable, load_kind_table

if TYPE_CHECKING:
    from kubegap_lint.engine.estimate import Estimate
    from kubegap_lint.engine.evaluate import Plan
    from kubegap_lint.workloads.views import ViewContext, WorkloadView


# Rules that say what a run could not lint: on whatever `select` names, as an input error
# would be (a run that picks its rules still never passes over an input it did not read); off
# only when ignored. Not listed among the run's rules unless they find something.
VERDICT_RULES = ("yaml-syntax-error", "unrendered-template", "yaml-alias-expansion", "document-too-large",
                 "input-not-rendered")


def active_policies(catalog: Catalog, settings: Settings) -> list[Policy]:
    """Apply select, ignore and severity overrides (ids, names, prefixes, globs or tags:
    Catalog.select); unknown keys are errors."""
    unknown = [k for k in (settings.select or []) + settings.ignore + list(settings.severity)
               if not catalog.select(k)]
    if unknown:
        where = f"{settings.source}: " if settings.source else ""
        raise DataFileError([f"{where}unknown rule(s): {', '.join(sorted(set(unknown)))}"
                             " (see `kubegap-lint rules`)"])
    chosen: list[Policy] = []
    selected = {p.id for k in settings.select for p in catalog.select(k)} if settings.select else None
    ignored = {p.id for k in settings.ignore for p in catalog.select(k)}
    overrides = {p.id: v for k, v in settings.severity.items() for p in catalog.select(k)}
    for policy in catalog.policies:
        if policy.id in ignored:
            continue
        if selected is not None and policy.id not in selected:
            continue
        if selected is None and not policy.enabled:
            continue
        if policy.id in overrides:
            from kubegap_lint.core.record import replace

            policy = replace(policy, severity=overrides[policy.id])
        chosen.append(policy)
    return chosen


def verdict_policies(catalog: Catalog, settings: Settings, active: list[Policy]) -> list[Policy]:
    """The verdict rules a selection left out, unless ignored, with their severity overrides."""
    if not settings.select:
        return []
    names = {p.name for p in active}
    ignored = {p.id for k in settings.ignore for p in catalog.select(k)}
    found = []
    for name in VERDICT_RULES:
        policy = catalog.find(name)
        if policy is None or policy.name in names or policy.id in ignored:
            continue
        for key, severity in settings.severity.items():
            if any(p.id == policy.id for p in catalog.select(key)):
                from kubegap_lint.core.record import replace

                policy = replace(policy, severity=severity)
        found.append(policy)
    return found


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
        pattern_errors = policy_pattern_errors(self.policies, self.params, self.params == self.catalog.params)
        if pattern_errors:
            raise DataFileError(pattern_errors)
        self.input_policies = {p.name: p for p in self.policies if p.scope == "input"}
        self.input_policies.update((p.name, p) for p in verdict_policies(self.catalog, self.settings, self.policies))
        self.workload_policies = [p for p in self.policies if p.scope == "workload"]
        # Template places learned from a marked render (helm/marked.py), by rendered stream and
        # line: set by `kubegap-lint helm` for the charts it renders itself.
        self.template_places: dict[str, dict[int, Any]] = {}
        # Inputs that could not be rendered (KG009, engine/inputs.py): faults of every run, so
        # that a run never passes over what it did not lint.
        self.unlinted: list[InputFault] = []
        # Rendered kustomizations by stream: the folder rendered and each document's origin
        # (kustomize/render.py); set by the commands that render them.
        self.kustomize_roots: dict[str, tuple[str, dict[int, Any]]] = {}
        self._warm_plan: tuple[Any, Plan] | None = None  # warm_up's, for the next run to take
        self._fact_needs: tuple[frozenset[str] | None, dict[str, tuple[Policy, ...]]] | None = None

    def new_index(self, facts_in_memory: int | None = None) -> InputIndex:
        """An empty index for a run, holding the facts of the files around a partial run
        (Settings.context: the rest of the git work tree) before any linted file's own."""
        index = InputIndex(facts_in_memory)
        if self.settings.context is not None:
            self.settings.context.seed(index)
        return index

    def unlinted_findings(self) -> list[Finding]:
        """The findings of the inputs that were not rendered, with the configuration's
        exemptions applied (parallel.py's merge; a serial run takes them as faults)."""
        from kubegap_lint.engine.evaluate import fault_finding

        policy = self.input_policies.get("input-not-rendered")
        if policy is None:
            return []
        suppressor = Suppressor(self)
        return [suppressor.apply(fault_finding(fault, policy)) for fault in self.unlinted]

    def warm_up(self) -> None:
        """Do now what a run's first workload would do first: import the modules a run imports
        (parser, views, evaluation, locating, the template and kustomize mappers), compile the
        workload policies' expressions (kept on the policies) and arrange the next run's plan.
        `kubegap-lint helm` asks it while the engine loads and renders; a fault here is left
        for the run."""
        try:
            from kubegap_lint.catalog import tracked  # noqa: F401 - imported by the run's findings
            from kubegap_lint.catalog.patterns import expressions
            from kubegap_lint.engine import estimate, notes  # noqa: F401 - imported by the run
            from kubegap_lint.engine.evaluate import Plan
            from kubegap_lint.helm import mapping  # noqa: F401 - imported by the run
            from kubegap_lint.input import stream  # noqa: F401 - imported by the run
            from kubegap_lint.input.parse import light_nodes_take_effect
            from kubegap_lint.kustomize import mapping as origins  # noqa: F401 - imported by the run
            from kubegap_lint.workloads import views  # noqa: F401 - imported by the run

            light_nodes_take_effect()
            self.fact_needs()
            for policy in self.workload_policies:
                for _, expression in expressions(policy):
                    _ = expression.parsed
            interpreter = self._interpreter()
            self._warm_plan = (interpreter, Plan(self.workload_policies, interpreter))
        except Exception:  # noqa: BLE001 - the run meets it again and reports it as it does
            pass

    def fact_needs(self) -> tuple[frozenset[str] | None, dict[str, tuple[Policy, ...]]]:
        """The keys the workload policies name (evaluate.view_needs: None, every fact) and the
        policies that read each costly fact that can wait (guards.fact_guards). They depend on
        the policies alone, so they are reckoned once for every run of this linter (the
        language and MCP servers lint many; `kubegap-lint helm` in its warm-up)."""
        if self._fact_needs is None:
            from kubegap_lint.engine.evaluate import view_needs
            from kubegap_lint.engine.guards import fact_guards
            from kubegap_lint.workloads.views import COSTLY

            self._fact_needs = (view_needs(self.workload_policies), fact_guards(self.workload_policies, COSTLY))
        return self._fact_needs

    def take_warm_plan(self) -> tuple[Any, Plan | None]:
        """The interpreter and plan warm_up arranged, for one run only (each run has its own:
        they hold its value budget and the answers of the view it evaluates); else (None, None)."""
        made, self._warm_plan = self._warm_plan, None
        return made if made is not None else (None, None)

    def _interpreter(self) -> Any:
        from kubegap_lint.catalog.functions import PolicyInterpreter

        return PolicyInterpreter(self.params)

    def lint_paths(self, paths: Iterable[str], keep_views: bool = False) -> LintResult:
        sources, errors = discover(paths, self.settings.exclude,
                                   follow_outside=self.settings.follow_symlinks_out)
        return self.lint_sources(sources, errors, keep_views=keep_views)

    def lint_texts(self, texts: Iterable[tuple[str, str]], keep_views: bool = False) -> LintResult:
        """Lint in-memory documents given as (display path, text) pairs (rendered charts,
        tests and tools)."""
        from kubegap_lint.input.readers import TextReader

        return self.run(TextReader(texts), keep_views=keep_views)

    def lint_sources(self, sources: list[Source], errors: list[InputError] | None = None,
                     keep_views: bool = False) -> LintResult:
        """Lint files and stdin in one streaming pass (one process; parallel.lint_sources
        decides when workers share the input instead)."""
        from kubegap_lint.input.readers import SourceReader

        return self.run(SourceReader(sources), errors, keep_views=keep_views)

    def run(self, reader: Reader, errors: list[InputError] | None = None, keep_views: bool = False,
            index: InputIndex | None = None) -> LintResult:
        """The run loop: every command and every path (parallel.py's workers too) lints here.

        Each item is taken as it is read: a fault is noted, a resource is indexed and dropped
        unless it is a workload; workloads wait (stream.PendingWorkloads: kept parsed up to a
        budget, past it spilled as plain data to a private temporary file) until the index
        holds the facts of the whole input, then are evaluated in input order. Every source is
        read once. A reader whose input is in memory anyway keeps every workload parsed. With
        `index`, one built from the whole input already (parallel.py evaluates a share of the
        input against the index of all of it)."""
        from kubegap_lint.input.stream import PendingWorkloads
        from kubegap_lint.store.facts import FACTS_IN_MEMORY

        with collector_paused():
            run = _Run(self, list(errors or []), keep_views, index,
                       facts_in_memory=None if reader.in_memory else FACTS_IN_MEMORY)
            stats = ReadStats()
            # An in-memory input costs no more kept parsed; the streaming budget is the default.
            pending = PendingWorkloads(sys.maxsize) if reader.in_memory else PendingWorkloads()
            if index is None:  # not a worker's share: parallel.py adds them to the merge
                for fault in self.unlinted:
                    run.take(fault)
            try:
                for _, item in reader.read(stats, run.errors):
                    rule = run.take(item)
                    if rule is not None:
                        assert isinstance(item, Resource)
                        pending.add(item, rule)
                for order, (resource, rule) in enumerate(pending):
                    run.evaluate(order, resource, rule)
            finally:
                pending.close()
            return run.result(stats)


@contextmanager
def collector_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector while a run builds its data.

    A lint allocates millions of small dicts, lists and tuples that stay alive until the run
    ends; each collection walks all of them again, which took a third of a large lint. The data
    holds no reference cycles (parsed documents are trees; an alias loop is one small cycle that
    lives as long as its document), so reference counting frees everything the collector would.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def make_result(linter: Linter, findings: SortedSpill[Finding], errors: list[InputError], stats: ReadStats,
                workloads: int, views: list[WorkloadView],
                estimates: SortedSpill[tuple[int, Estimate]],
                workload_refs: SortedSpill[tuple[int, tuple[ResourceRef, Location]]] | None = None) -> LintResult:
    """The one place a LintResult is made (a run's end, and parallel.py's merge of its workers)."""
    baseline = None
    settings = linter.settings
    if settings.baseline is not None:
        from kubegap_lint.suppress.baseline import load_baseline

        baseline = (load_baseline(settings.baseline), str(settings.baseline))
    return LintResult(findings, errors, stats, workloads, linter.policies, linter.catalog, views, estimates,
                      baseline, workload_refs)


def _document(resource: Resource) -> Any:
    """The rendered document a Helm finding's key path walks from: the resource's data, unless
    it is an item of a List (its key path then starts at the List)."""
    return resource.data if not resource.base else None


def _ref_text(resource: Resource) -> str:
    try:
        return resource.ref().display()
    except Exception:  # noqa: BLE001 - the name itself may be what broke
        return "a resource"


def _exc_text(exc: BaseException) -> str:
    """One line, bounded: an exception's text can quote a whole value."""
    try:
        text = " ".join(str(exc).split())
    except Exception:  # noqa: BLE001
        text = ""
    text = text or type(exc).__name__
    return text if len(text) <= 300 else text[:297] + "..."


class _Run:
    """One run's state. Reading gathers the facts that cross documents (the index, the
    suppressions written, the ranks of rendered documents); evaluating turns each workload into
    findings that are mapped to chart templates, matched against suppressions and stored at
    once, so nothing but those facts and the stores grows with the input."""

    def __init__(self, linter: Linter, errors: list[InputError], keep_views: bool,
                 index: InputIndex | None = None, facts_in_memory: int | None = None) -> None:
        from kubegap_lint.helm.mapping import TemplateMapper

        self.linter = linter
        self.errors = errors
        self.keep_views = keep_views
        self.indexed = index is not None  # given, it holds the whole input already (parallel.py)
        self.index = index if index is not None else linter.new_index(facts_in_memory)
        self.suppressor = Suppressor(linter)
        self.templates = TemplateMapper(linter.settings.chart_dirs, linter.template_places)
        from kubegap_lint.kustomize.mapping import OriginMapper

        self.origins = OriginMapper(linter.kustomize_roots, self.suppressor.collect_comments)
        self.faults: SortedSpill[Finding] = SortedSpill(Finding.sort_key)  # matched at the end
        self.findings: SortedSpill[Finding] = SortedSpill(Finding.sort_key, tally=tally_key)
        self.estimates: SortedSpill[tuple[int, Estimate]] = SortedSpill(estimate_order)
        self.workload_refs: SortedSpill[tuple[int, tuple[ResourceRef, Location]]] = SortedSpill(
            lambda pair: pair[0])
        self.views: list[tuple[int, WorkloadView]] = []
        self.workloads = 0
        self._context: ViewContext | None = None  # made at the first workload (start-up: an input
        # without workloads never imports the view modules)
        # Made at the first workload (start-up: an input without workloads imports no jmespath),
        # unless the linter warmed up for this run.
        self._interpreter, self._plan = linter.take_warm_plan()

    @property
    def interpreter(self) -> Any:
        if self._interpreter is None:
            self._interpreter = self.linter._interpreter()
        return self._interpreter

    @property
    def plan(self) -> Plan:
        if self._plan is None:
            from kubegap_lint.engine.evaluate import Plan

            self._plan = Plan(self.linter.workload_policies, self.interpreter)
        return self._plan

    @property
    def context(self) -> ViewContext:
        """What building views needs for the whole run (workloads/context.py)."""
        if self._context is None:
            from kubegap_lint.workloads.views import ViewContext

            params = self.linter.params
            # Only the facts the active rules read; every one when the caller keeps the views.
            needs, guards = (None, {}) if self.keep_views else self.linter.fact_needs()
            applies = None
            if needs is not None:  # some facts made only when a rule that reads them applies
                from kubegap_lint.engine.guards import applies_check

                applies = applies_check(guards, self.plan.applies)
            self._context = ViewContext(
                index=self.index, gpu_patterns=tuple(params.get("gpu_resources", [])),
                nccl_patterns=tuple(params.get("nccl_gpu_resources", [])),
                device_class_patterns=tuple(params.get("gpu_device_classes", [])),
                kind_table=self.linter.kind_table, diagnostic_programs=tuple(params.get("diagnostic_commands", [])),
                needs=needs, applies=applies)
        return self._context

    def take(self, item: Resource | InputFault) -> KindRule | None:
        """Report a fault, or note what a resource tells; its workload rule when it is one."""
        if isinstance(item, InputFault):
            policy = self.linter.input_policies.get(item.rule)
            if policy is not None:
                from kubegap_lint.engine.evaluate import fault_finding

                # Matched against suppressions at the end: a directive may follow in the stream.
                self.faults.add(fault_finding(item, policy))
            return None
        try:
            self.origins.note(item)  # kustomize's origin annotation: read, and gone before the rules
            if not self.indexed:
                self.index.add(item)
            self.suppressor.collect(item)
            self.templates.note(item)
            return self.linter.kind_table.lookup_or_infer(item.data, getattr(item.positions, "keys", None))
        except KubegapError:
            raise  # the run's own errors (a temporary database that fails) end the run as before
        except Exception as exc:  # a bug met by one document: say where, lint the rest
            self.errors.append(InputError(
                item.path, f"internal error indexing {_ref_text(item)}: {_exc_text(exc)}"
                " (please report this with the input that caused it)", item.start.line, item.start.column))
            return None

    def _podless(self, resource: Resource, rule: KindRule) -> None:
        """A kind the table does not know, with no pod template, that asks for accelerators."""
        note = self.linter.input_policies.get("workload-not-judged")
        if note is None or rule.found_by != "walk":
            return
        from kubegap_lint.engine.notes import podless_note

        finding = podless_note(note, resource, self.context.is_gpu_resource)
        if finding is not None:
            self.findings.add(self.suppressor.apply(self.templates.map(finding, document=_document(resource)), resource))

    def evaluate(self, order: int, resource: Resource, rule: KindRule) -> None:
        try:
            from kubegap_lint.workloads import views  # by module: tests wrap workload_view

            view = views.workload_view(resource, rule, self.context)
            if view is None:
                self._podless(resource, rule)
                return
            from kubegap_lint.engine.estimate import estimate

            place = Location(resource.path, resource.start.line, resource.start.column)
            origin = self.origins.origin(resource) if self.origins else None
            if origin is not None:  # a rendered kustomization: the object's document in its base
                place = self.origins.object_location(resource, origin) or place
            ref = resource.ref()
            found = estimate(view, place, ref, self.linter.params.get("interruption_reference"))
        except KubegapError:
            raise
        except Exception as exc:  # a bug met by one document: say where, lint the rest
            self.errors.append(InputError(
                resource.path,
                f"internal error reading {_ref_text(resource)} as a workload: {_exc_text(exc)}"
                " (please report this with the input that caused it)",
                resource.start.line, resource.start.column,
            ))
            return
        self.workloads += 1
        self.workload_refs.add((order, (ref, place)))
        if self.keep_views:
            self.views.append((order, view))
        if found is not None:
            self.estimates.add((order, found))
        note = self.linter.input_policies.get("workload-not-judged")
        if note is not None:
            from kubegap_lint.engine.notes import not_judged_notes

            for finding in not_judged_notes(note, self.linter.workload_policies, view, resource):
                if origin is not None:
                    finding = self.origins.map(finding, resource, origin)
                self.findings.add(self.suppressor.apply(self.templates.map(finding, document=_document(resource)), resource))
        from kubegap_lint.engine.evaluate import key_path_of  # not without workloads

        document = _document(resource)
        add, mapper, suppressor = self.findings.add, self.templates, self.suppressor
        # Every suppression is known by now (all the input was taken before any workload is
        # evaluated): when there is none, apply would give each finding back as it is.
        # A finding moved to a kustomize base or patch may meet a `# kubegap:ignore` written there.
        suppressing = suppressor.suppresses() or origin is not None
        for policy, outcome in self.plan.evaluate(view, resource):
            if isinstance(outcome, Exception):  # a policy met data it cannot handle: say so, go on
                self.errors.append(InputError(
                    resource.path,
                    f"policy {policy.id} ({policy.path}) could not be evaluated on {_ref_text(resource)}: "
                    f"{_exc_text(outcome)}",
                    resource.start.line, resource.start.column,
                ))
                continue
            for finding in outcome:
                if finding.template is not None:  # map gives the others back as they are
                    finding = mapper.map(finding, lambda f: key_path_of(resource, f), document)
                elif origin is not None:  # a rendered kustomization: to the base or patch line
                    finding = self.origins.map(finding, resource, origin)
                add(suppressor.apply(finding, resource) if suppressing else finding)

    def result(self, stats: ReadStats) -> LintResult:
        if self.index.on_disk:
            self.index.facts.close()  # type: ignore[union-attr]
        for finding in self.faults:
            # Matched on the rendered text; then placed in the repository when that is no file.
            self.findings.add(self.templates.map(self.suppressor.apply(finding)))
        self.faults.close()
        self.findings.extend(self.suppressor.closing_findings())
        self.views.sort(key=lambda pair: pair[0])
        return make_result(self.linter, self.findings, self.errors, stats, self.workloads,
                           [v for _, v in self.views], self.estimates, self.workload_refs)
