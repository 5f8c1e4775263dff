"""The suppressions a manifest writes, read into directives (one per rule named) and the
problems of those that cannot work (KG006):
- inline: `# kubegap:ignore KG305 reason` on the finding's line or the line above;
- annotation: `kubegap.io/ignore: "KG201,nccl-env-unknown,KG305[trainer]"` with
  `kubegap.io/ignore-reason`, on the resource (whole resource) or on a pod template's metadata
  (that template's pods); `RULE[a,b]` limits it to the containers named a and b.
`suppressor.py` matches findings against them.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from kubegap_lint.core.model import Finding, Location, ResourceRef
from kubegap_lint.core.record import record
from kubegap_lint.input.parse import KeyPath, dotted
from kubegap_lint.input.read import Resource
from kubegap_lint.input.scan import DIRECTIVE_MARK

if TYPE_CHECKING:
    from kubegap_lint.catalog.policies import Catalog

IGNORE_KEY = "kubegap.io/ignore"
REASON_KEY = "kubegap.io/ignore-reason"
# Keys below a pod template that cannot hold another pod template: not walked.
LEAF_KEYS = frozenset({"containers", "initContainers", "ephemeralContainers", "volumes", "env",
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

    def covers(self, finding: Finding, container: Callable[[], str | None] | None = None) -> bool:
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


def _suggest(name: str, catalog: Catalog) -> str:
    keys = [p.id for p in catalog.policies] + [p.name for p in catalog.policies]
    import difflib  # only for a did-you-mean message

    close = difflib.get_close_matches(name, keys, n=1, cutoff=0.7)
    return f" (did you mean {close[0]}?)" if close else ""


def parse_entries(text: str, catalog: Catalog) -> tuple[list[tuple[str, str, tuple[str, ...]]], list[str]]:
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
                    if isinstance(value, (dict, list)) and key not in LEAF_KEYS:
                        stack.append((value, (*path, key), depth + 1))
            else:
                for number, value in enumerate(node):
                    if isinstance(value, (dict, list)):
                        stack.append((value, (*path, number), depth + 1))
    return sites


def may_carry_annotation(resource: Resource) -> bool:
    """Can the resource hold a kubegap.io/ignore annotation? Not when its document's position
    index records keys and none is that key: every mapping key of the parsed data is one the
    walker recorded (input/parse.py), so the walk over the spec would find nothing. An index
    that records nothing (a resource made by hand) says nothing: the walk decides."""
    keys = getattr(resource.positions, "keys", None)
    return not keys or IGNORE_KEY in keys

def annotations_of(resource: Resource, catalog: Catalog) -> tuple[list[Directive], list[Problem]]:
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


def inline_directives(path: str, comments: Iterable[tuple[int, int, str]],
            catalog: Catalog) -> tuple[list[Directive], list[Problem]]:
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
