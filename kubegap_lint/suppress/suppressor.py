"""Stage 5: suppress. Mark the findings a user has accepted, and report suppressions that do
nothing: a stale ignore hides tomorrow's regression, and a misspelt one never worked.

Four forms, tried in this order (the first that matches is recorded on the finding; every one
that matches counts as used):
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

import fnmatch
import os
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from typing import Any

from kubegap_lint.core.model import Finding, Location, ResourceRef, Suppression
from kubegap_lint.core.record import record, replace
from kubegap_lint.input.parse import KeyPath, dotted
from kubegap_lint.input.read import Resource
from kubegap_lint.input.scan import DIRECTIVE_MARK

IGNORE_KEY = "kubegap.io/ignore"
REASON_KEY = "kubegap.io/ignore-reason"
UNUSED = "unused-suppression"
INVALID = "invalid-suppression"
# Keys below a pod template that cannot hold another pod template: not walked.
_LEAF_KEYS = frozenset({"containers", "initContainers", "ephemeralContainers", "volumes", "env",
                        "tolerations", "affinity", "resources", "openAPIV3Schema"})
# Patterns, compiled at their first use by re's own cache (start-up: most runs have no suppression).
_ENTRY = r"^([A-Za-z0-9_-]+)\s*(?:\[([^\[\]]*)\])?$"
_INLINE_RULES = r"^\s*([A-Za-z0-9_-]+(?:\s*\[[^\[\]]*\])?(?:\s*,\s*[A-Za-z0-9_-]+(?:\s*\[[^\[\]]*\])?)*)(.*)$"


@record
class Directive:
    """One rule named by one suppression (a suppression naming three rules makes three)."""

    kind: str  # inline | annotation
    written: str  # the entry as written, e.g. KG305[trainer]
    rule_id: str
    containers: tuple[str, ...]
    reason: str
    location: Location
    resource: ResourceRef | None
    scope: KeyPath  # annotation: the key path of its pod template in the document (() = all of it)
    scope_text: str = ""  # the same inside the resource, dotted (the KG005 fingerprint's part)
    used: bool = False

    def covers(self, finding: Finding, container: Any = None) -> bool:
        """container: a callable giving the container the finding is about (None: the pod)."""
        if finding.rule_id != self.rule_id:
            return False
        if self.containers:
            name = container() if container is not None else finding.container
            if not (name and any(fnmatch.fnmatchcase(name, c) for c in self.containers)):
                return False
        if self.scope and finding.key_path[: len(self.scope)] != self.scope:
            return False
        return True


@record
class Problem:
    """A suppression that cannot work as written: reported under KG006."""

    message: str
    location: Location
    resource: ResourceRef | None
    key: str  # stable identity for the fingerprint


def split_entries(text: str) -> list[str]:
    """Split `A, B[x, y], C` at the commas outside brackets."""
    parts: list[str] = []
    depth = 0
    current = ""
    for char in text:
        if char == "[":
            depth += 1
        elif char == "]":
            depth = max(0, depth - 1)
        if char == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += char
    parts.append(current)
    return [p.strip() for p in parts if p.strip()]


def _suggest(name: str, catalog: Any) -> str:
    keys = [p.id for p in catalog.policies] + [p.name for p in catalog.policies]
    import difflib  # only for a did-you-mean message

    close = difflib.get_close_matches(name, keys, n=1, cutoff=0.7)
    return f" (did you mean {close[0]}?)" if close else ""


def parse_entries(text: str, catalog: Any) -> tuple[list[tuple[str, str, tuple[str, ...]]], list[str]]:
    """Entries `RULE` or `RULE[container, ...]` as (written, rule id, containers); and problems."""
    entries: list[tuple[str, str, tuple[str, ...]]] = []
    problems: list[str] = []
    for written in split_entries(text):
        match = re.match(_ENTRY, written)
        if not match:
            problems.append(f"cannot read {written!r}: write a rule id or name, optionally followed by"
                            " [container, ...]")
            continue
        policy = catalog.find(match.group(1))
        if policy is None:
            problems.append(f"{match.group(1)!r} is no rule{_suggest(match.group(1), catalog)}: this"
                            " suppression does nothing (see `kubegap-lint rules`)")
            continue
        containers = tuple(c for c in re.split(r"[\s,]+", match.group(2) or "") if c)
        if match.group(2) is not None and not containers:
            problems.append(f"{written!r} names no container between the brackets")
            continue
        entries.append((written, policy.id, containers))
    return entries, problems


# ---------------------------------------------------------------- collecting suppressions

def _annotation_sites(data: dict[str, Any]) -> list[tuple[KeyPath, dict[str, Any]]]:
    """(key path, annotations) of the resource and of every pod template that carries
    kubegap.io/ignore; the path is the one workload views give their pods."""
    sites: list[tuple[KeyPath, dict[str, Any]]] = []
    meta = data.get("metadata")
    if isinstance(meta, dict) and isinstance(meta.get("annotations"), dict) and IGNORE_KEY in meta["annotations"]:
        sites.append(((), meta["annotations"]))
    spec = data.get("spec")
    if isinstance(spec, (dict, list)):
        stack: list[tuple[Any, KeyPath, int]] = [(spec, ("spec",), 0)]
        while stack:
            node, path, depth = stack.pop()
            if depth > 16:
                continue
            if isinstance(node, dict):
                meta = node.get("metadata")
                if isinstance(meta, dict) and "spec" in node:
                    annotations = meta.get("annotations")
                    if isinstance(annotations, dict) and IGNORE_KEY in annotations:
                        sites.append((path, annotations))
                for key, value in node.items():
                    if isinstance(value, (dict, list)) and key not in _LEAF_KEYS:
                        stack.append((value, (*path, key), depth + 1))
            else:
                for number, value in enumerate(node):
                    if isinstance(value, (dict, list)):
                        stack.append((value, (*path, number), depth + 1))
    return sites


def _may_carry_annotation(resource: Resource) -> bool:
    """Can the resource hold a kubegap.io/ignore annotation? Not when its document's position
    index records keys and none is that key: every mapping key of the parsed data is one the
    walker recorded (input/parse.py), so the walk over the spec would find nothing. An index
    that records nothing (a resource made by hand) says nothing: the walk decides."""
    keys = getattr(resource.positions, "keys", None)
    return not keys or IGNORE_KEY in keys


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
                elif isinstance(value, (dict, list)) and key not in _LEAF_KEYS:
                    stack.append((value, (*path, key), depth + 1))
        elif isinstance(node, list):
            stack.extend(((v, (*path, n), depth + 1) for n, v in enumerate(node) if isinstance(v, (dict, list))))
    return None


def _annotations(resource: Resource, catalog: Any) -> tuple[list[Directive], list[Problem]]:
    directives: list[Directive] = []
    problems: list[Problem] = []
    ref = resource.ref()
    for scope, site in _annotation_sites(resource.data):
        place = (*resource.base, *scope, "metadata", "annotations", IGNORE_KEY)
        position = resource.positions.key(place) or resource.start
        location = Location(resource.path, position.line, position.column)
        value = site.get(IGNORE_KEY)
        where = f"{dotted(scope)}.metadata.annotations" if scope else "metadata.annotations"
        if not isinstance(value, str):
            problems.append(Problem(f"{IGNORE_KEY} must be a string such as \"KG201,KG305[trainer]\"",
                                    location, ref, f"{where}|type"))
            continue
        reason = site.get(REASON_KEY)
        reason_text = " ".join(reason.split()) if isinstance(reason, str) else ""
        entries, texts = parse_entries(value, catalog)
        problems += [Problem(f"{IGNORE_KEY}: {text}", location, ref, f"{where}|{text}") for text in texts]
        if not value.strip():
            problems.append(Problem(f"{IGNORE_KEY} is empty: name the rules to ignore", location, ref, f"{where}|empty"))
        if entries and not reason_text:
            problems.append(Problem(f"{IGNORE_KEY} has no {REASON_KEY}: say why the finding does not apply",
                                    location, ref, f"{where}|reason"))
        for written, rule_id, containers in entries:
            directives.append(Directive("annotation", written, rule_id, containers,
                                        reason_text or "no reason given", location, ref,
                                        (*resource.base, *scope) if scope else (), dotted(scope)))
    return directives, problems


def directive_word(text: str) -> str:
    """The word after `kubegap:` in a directive comment."""
    body = text.lstrip("#").strip()[len(DIRECTIVE_MARK):].lstrip()
    return re.match(r"[A-Za-z_-]*", body).group(0)  # type: ignore[union-attr]


def parse_inline(text: str) -> tuple[str, str] | None:
    """`# kubegap:ignore RULES reason` as (rules text, reason); None for other directives."""
    body = text.lstrip("#").strip()
    if not body.startswith(DIRECTIVE_MARK):
        return None
    word = directive_word(body)
    if word != "ignore":
        return None
    rest = body[len(DIRECTIVE_MARK):].lstrip()[len(word):]
    match = re.match(_INLINE_RULES, rest, re.S)
    if not match or (rest and not rest[0].isspace()):
        return "", rest.strip()
    return match.group(1), match.group(2).strip().lstrip("-:—").strip()


def _inline(path: str, comments: Iterable[tuple[int, int, str]],
            catalog: Any) -> tuple[list[Directive], list[Problem]]:
    """The `# kubegap:ignore` directives among one document's comments, and their problems."""
    directives: list[Directive] = []
    problems: list[Problem] = []
    for line, column, text in comments:
        parsed = parse_inline(text)
        location = Location(path, line, column)
        if parsed is None:
            word = directive_word(text)
            import difflib  # only for a comment that looks like a misspelt directive

            if word and difflib.SequenceMatcher(None, word.lower(), "ignore").ratio() >= 0.6:
                problems.append(Problem(f"`kubegap:{word}` is no directive (did you mean kubegap:ignore?):"
                                        " this suppression does nothing", location, None, f"inline|{text}"))
            continue
        rules_text, reason = parsed
        if not rules_text:
            problems.append(Problem("`# kubegap:ignore` names no rule: write `# kubegap:ignore KG305 reason`",
                                    location, None, f"inline|{text}"))
            continue
        entries, texts = parse_entries(rules_text, catalog)
        problems += [Problem(f"# kubegap:ignore: {t}", location, None, f"inline|{text}|{t}") for t in texts]
        if entries and not reason:
            problems.append(Problem(f"`# kubegap:ignore {rules_text.strip()}` gives no reason: write it after the rules",
                                    location, None, f"inline|{text}|reason"))
        for written, rule_id, containers in entries:
            directives.append(Directive("inline", written, rule_id, containers,
                                        reason or "no reason given", location, None, ()))
    return directives, problems


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


def exemption_covers(exemption: Any, rule_ids: set[str] | None, finding: Finding,
                     container: Any = None) -> bool:
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
    return replace(finding, suppression=Suppression(kind, reason, source))


def _own_finding(policy: Any, message: str, location: Location, resource: ResourceRef | None,
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

    def __init__(self, linter: Any) -> None:
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
        self.exemptions: list[tuple[Any, set[str] | None]] = []
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
        if not _may_carry_annotation(resource):
            return
        directives, problems = _annotations(resource, self.catalog)
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
            directives, problems = _inline(path, fresh, self.catalog)
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

    def _exempt(self, finding: Finding, container: Any) -> Finding:
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


    def _judged(self, exemption: Any) -> bool:
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


def _container_finder(finding: Finding, resource: Resource | None, line: int) -> Any:
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
                finding = replace(finding, suppression=Suppression("baseline", "in the baseline", source))
        yield finding


__all__ = ["Suppressor", "apply_baseline", "parse_entries", "parse_inline"]
