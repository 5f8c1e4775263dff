"""Suppressing: mark the findings a user has accepted, and report suppressions that do
nothing: a stale ignore hides tomorrow's regression, and a misspelt one never worked.

Four forms, tried in this order (the first that matches is recorded on the finding; every one
that matches counts as used; directives.py reads the first two):
- inline: `# kubegap:ignore KG305 reason` on the finding's line or the line above;
- annotation: `kubegap.io/ignore: "KG201,nccl-env-unknown,KG305[trainer]"` with
  `kubegap.io/ignore-reason`, on the resource (whole resource) or on a pod template's metadata
  (that template's pods); `RULE[a,b]` limits it to the containers named a and b;
- config: `exemptions:` by rule, kind, namespace, name, path and container;
- baseline: findings recorded by `kubegap-lint baseline create`.
Suppressed findings are kept (JSON and SARIF show them); only the counts ignore them.
KG005 unused-suppression and KG006 invalid-suppression are this stage's own findings.
The stage works a finding at a time (`Suppressor.apply`, as each is made); the baseline,
which takes the first N findings of a fingerprint in report order, is applied as the sorted
findings are read (`apply_baseline`).
"""

from __future__ import annotations

import dataclasses
import fnmatch
import os
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from kubegap_lint.core.model import Finding, Location, ResourceRef, Suppression
from kubegap_lint.input.parse import KeyPath
from kubegap_lint.input.read import Resource
from kubegap_lint.suppress.directives import (
    IGNORE_KEY,
    LEAF_KEYS,
    Directive,
    Problem,
    annotations_of,
    inline_directives,
    may_carry_annotation,
)

if TYPE_CHECKING:  # types only: the run has loaded them before it suppresses anything
    from kubegap_lint.catalog.policies import Catalog, Policy
    from kubegap_lint.config.settings import Exemption, Settings

UNUSED = "unused-suppression"
INVALID = "invalid-suppression"
# The container a finding is about, computed only when a suppression asks.
ContainerOf = Callable[[], "str | None"]


class LintRun(Protocol):
    """What the suppressions of a run read of the engine (engine/run.py's Linter)."""

    @property
    def catalog(self) -> Catalog: ...
    @property
    def policies(self) -> Sequence[Policy]: ...
    @property
    def input_policies(self) -> Mapping[str, Policy]: ...
    @property
    def settings(self) -> Settings: ...


def container_at(resource: Resource, line: int) -> str | None:
    """The name of the container whose lines hold `line`: a finding about the whole pod that
    points into one container is about that container for a container-scoped suppression."""
    positions = resource.positions
    stack: list[tuple[Any, KeyPath, int]] = [(resource.data, resource.base, 0)]
    while stack:
        node, path, depth = stack.pop()
        if depth > 16:
            continue
        if isinstance(node, dict):
            for key, value in node.items():
                if key in ("containers", "initContainers") and isinstance(value, list):
                    for number, container in enumerate(value):
                        where = (*path, key, number)
                        start = positions.start(where) if isinstance(container, dict) else None
                        last = positions.last_line(where)
                        if start is None or last is None:
                            continue
                        if start.line <= line <= max(start.line, last):
                            name = container.get("name")
                            return name if isinstance(name, str) else None
                elif isinstance(value, (dict, list)) and key not in LEAF_KEYS:
                    stack.append((value, (*path, key), depth + 1))
        elif isinstance(node, list):
            stack.extend(((v, (*path, n), depth + 1) for n, v in enumerate(node) if isinstance(v, (dict, list))))
    return None


# ---------------------------------------------------------------- matching

def _file_of(finding: Finding) -> Location:
    """The place in the linted file (for a Helm-mapped finding, the rendered output)."""
    return finding.rendered_location or finding.location


def _resource_key(path: str, document: int | None, ref: ResourceRef | None) -> tuple[Any, ...]:
    return (path, document, ref.kind if ref else None, ref.namespace if ref else None, ref.name if ref else None)


def _glob_any(value: str | None, patterns: list[str]) -> bool:
    return value is not None and any(fnmatch.fnmatchcase(value, p) for p in patterns)


def _path_matches(finding: Finding, patterns: list[str]) -> bool:
    return _file_matches(_file_of(finding).path, patterns) or bool(
        finding.template and _template_matches(finding.template, patterns))


def _file_matches(path: str, patterns: list[str]) -> bool:
    absolute = os.path.abspath(path).replace(os.sep, "/")
    for pattern in patterns:
        if os.path.isabs(pattern):
            if fnmatch.fnmatchcase(absolute, pattern):
                return True
        elif fnmatch.fnmatchcase(path, pattern) or fnmatch.fnmatchcase(os.path.basename(path), pattern):
            return True
    return False


def _template_matches(template: str, patterns: list[str]) -> bool:
    return any(fnmatch.fnmatchcase(template, pattern.rsplit("/", 1)[-1] if os.path.isabs(pattern) else pattern)
               for pattern in patterns)


def exemption_covers(exemption: Exemption, rule_ids: set[str] | None, finding: Finding,
                     container: ContainerOf | None = None) -> bool:
    """Every criterion the exemption gives must match; rule_ids None means every rule."""
    if rule_ids is not None and finding.rule_id not in rule_ids:
        return False
    ref = finding.resource
    if exemption.kinds and not _glob_any(ref.kind if ref else None, exemption.kinds):
        return False
    if exemption.namespaces and not _glob_any((ref.namespace or "") if ref else None, exemption.namespaces):
        return False
    if exemption.names and not _glob_any(ref.name if ref else None, exemption.names):
        return False
    if exemption.containers and not _glob_any(container() if container else finding.container,
                                              exemption.containers):
        return False
    if exemption.paths and not _path_matches(finding, exemption.paths):
        return False
    return True


def _suppressed(finding: Finding, kind: str, reason: str, source: str) -> Finding:
    if finding.suppression is not None:
        return finding
    return dataclasses.replace(finding, suppression=Suppression(kind, reason, source))


def _own_finding(policy: Policy, message: str, location: Location, resource: ResourceRef | None,
                 key: str) -> Finding:
    return Finding(
        rule_id=policy.id, rule_name=policy.name, severity=policy.severity, message=message,
        location=location, resource=resource, node_path=f"suppression|{key}", evidence=policy.evidence,
    )


class Suppressor:
    """The suppressions of one run. Directives are collected from every resource as it is read
    (they are few: memory grows with the suppressions written, not with the input); findings
    are matched one by one as they are made, with their resource at hand; what matched nothing
    is reported by `closing_findings` at the end."""

    def __init__(self, linter: LintRun) -> None:
        self.catalog = linter.catalog
        self.active = {p.id for p in linter.policies}
        self.unused_policy = linter.input_policies.get(UNUSED)
        self.invalid_policy = linter.input_policies.get(INVALID)
        self.settings = linter.settings
        self.by_line: dict[tuple[str, int], list[Directive]] = {}
        self.by_resource: dict[tuple[Any, ...], list[Directive]] = {}
        self.inline: list[Directive] = []
        self.problems: list[Problem] = []
        self._seen_comments: set[tuple[str, int, int]] = set()
        self.exemptions: list[tuple[Exemption, set[str] | None]] = []
        for exemption in self.settings.exemptions:
            ids = None if "*" in exemption.rules else {
                p.id for r in exemption.rules for p in self.catalog.select(r)}
            self.exemptions.append((exemption, ids))
        self.exemption_used = [False] * len(self.exemptions)
        self.linted_files: set[str] = set()  # what the run read, to judge exemptions' paths
        self.linted_templates: set[str] = set()

    def collect(self, resource: Resource) -> None:
        """Read the inline and annotation suppressions one resource carries."""
        self.linted_files.add(resource.path)
        if resource.helm_source:
            self.linted_templates.add(resource.helm_source)
        self.collect_comments(resource.path, resource.comments)
        if not may_carry_annotation(resource):
            return
        directives, problems = annotations_of(resource, self.catalog)
        self.problems += problems
        if directives:
            key = _resource_key(resource.path, resource.document_index, resource.ref())
            self.by_resource.setdefault(key, []).extend(directives)

    def collect_comments(self, path: str, comments: Iterable[tuple[int, int, str]]) -> None:
        """Read the `# kubegap:ignore` comments of one document of `path`: a linted one, or a
        source file a finding was moved to (a kustomize base or patch)."""
        fresh = [c for c in comments if (path, c[0], c[1]) not in self._seen_comments]
        if fresh:  # every item of a List carries its document's comments: read them once
            self._seen_comments.update((path, line, column) for line, column, _ in fresh)
            directives, problems = inline_directives(path, fresh, self.catalog)
            self.problems += problems
            self.inline += directives
            for directive in directives:
                for line in (directive.location.line, directive.location.line + 1):
                    self.by_line.setdefault((directive.location.path, line), []).append(directive)

    def suppresses(self) -> bool:
        """Can apply suppress anything with what was collected so far? (No: it gives every
        finding back as it is.)"""
        return bool(self.by_line or self.by_resource or self.exemptions)

    def apply(self, finding: Finding, resource: Resource | None = None) -> Finding:
        """The finding with the first suppression that covers it recorded (inline, annotation,
        configuration); `resource` is the one it is about, to tell which container a line is in."""
        if not self.suppresses():
            return finding  # the input and the configuration suppress nothing (most runs)
        place = _file_of(finding)
        container = _container_finder(finding, resource, place.line)
        written = self.by_line.get((place.path, place.line), [])
        if finding.rendered_location is not None:  # and on the source line it was moved to
            written = written + self.by_line.get((finding.location.path, finding.location.line), [])
        for directive in written:
            if directive.covers(finding, container):
                directive.used = True
                finding = _suppressed(finding, "inline", directive.reason,
                                      f"{directive.location.path}:{directive.location.line}")
        if finding.resource is not None:
            key = _resource_key(place.path, finding.document_index, finding.resource)
            for directive in self.by_resource.get(key, ()):
                if directive.covers(finding, container):
                    directive.used = True
                    finding = _suppressed(finding, "annotation", directive.reason,
                                          f"{directive.location.path}:{directive.location.line}")
        return self._exempt(finding, container)

    def _exempt(self, finding: Finding, container: ContainerOf) -> Finding:
        for number, (exemption, ids) in enumerate(self.exemptions):
            if exemption_covers(exemption, ids, finding, container):
                self.exemption_used[number] = True
                source = f"{exemption.origin[0]}:{exemption.origin[1]}" if exemption.origin else "configuration"
                finding = _suppressed(finding, "config", exemption.reason, source)
        return finding

    def closing_findings(self) -> list[Finding]:
        """KG006 for suppressions that cannot work, KG005 for those that matched nothing; call
        once every finding of the run has been through `apply`."""
        out: list[Finding] = []
        if self.invalid_policy is not None:
            out += [_own_finding(self.invalid_policy, p.message, p.location, p.resource, p.key)
                    for p in self.problems]
        if self.unused_policy is not None:
            every = self.inline + [d for ds in self.by_resource.values() for d in ds]
            out += [_own_finding(self.unused_policy, _unused_text(d), d.location, d.resource,
                                 f"{d.kind}|{d.scope_text}|{d.written}")
                    for d in every if not d.used and d.rule_id in self.active]
        out = [self._exempt(finding, lambda: None) for finding in out]
        if self.unused_policy is not None:
            for number, (exemption, ids) in enumerate(self.exemptions):
                if self.exemption_used[number] or (ids is not None and not ids & self.active) \
                        or not self._judged(exemption):
                    continue
                path, line, column = exemption.origin or (self.settings.source or "configuration", 1, 1)
                out.append(_own_finding(
                    self.unused_policy,
                    f"exemption for {', '.join(exemption.rules)} ({exemption.reason}) matches no finding:"
                    " remove it, or it will hide a future regression",
                    Location(path, line, column), None, f"exemption|{','.join(exemption.rules)}|{exemption.reason}",
                ))
        return out


    def _judged(self, exemption: Exemption) -> bool:
        """Whether this run can call the exemption unused: it read a file of its paths. A run
        over part of a whole (pre-commit's changed files, a chart) says nothing of an exemption
        without paths, which may be for a file it did not read; a full run does."""
        if not exemption.paths:
            return self.settings.context is None and not self.settings.partial
        return any(_file_matches(path, exemption.paths) for path in sorted(self.linted_files)) or any(
            _template_matches(template, exemption.paths) for template in sorted(self.linted_templates))


def _unused_text(directive: Directive) -> str:
    scope = f" in container {', '.join(directive.containers)}" if directive.containers else ""
    if directive.kind == "inline":
        return (f"`# kubegap:ignore {directive.written}` matches no {directive.rule_id} finding on this"
                f" line or the next{scope}: remove it, or it will hide a future regression")
    return (f"{IGNORE_KEY} names {directive.written} but {directive.rule_id} finds nothing"
            f" here{scope}: remove it, or it will hide a future regression")


def _container_finder(finding: Finding, resource: Resource | None, line: int) -> ContainerOf:
    """A callable giving the container a finding is about, computed only when asked."""
    if finding.container is not None or finding.resource is None or resource is None:
        return lambda: finding.container
    return lambda: container_at(resource, line)


def apply_baseline(findings: Iterable[Finding], accepted: Counter[str], source: str) -> Iterator[Finding]:
    """Suppress as many findings of each fingerprint as the baseline recorded, the first ones
    in the order given (the report's order: the findings come sorted)."""
    from kubegap_lint.suppress.fingerprint import fingerprint

    remaining = Counter(accepted)
    top = getattr(accepted, "top", None)  # a version 2 baseline's paths are from there
    for finding in findings:
        if finding.suppression is None:
            mark = fingerprint(finding, top)
            if remaining[mark] > 0:
                remaining[mark] -= 1
                finding = dataclasses.replace(finding, suppression=Suppression("baseline", "in the baseline", source))
        yield finding


__all__ = ["Suppressor", "apply_baseline"]
