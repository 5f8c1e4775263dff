"""Findings a change decides on files it does not touch (pre-commit's partial runs).

pre-commit passes only the changed files, so a commit that deletes the PodDisruptionBudget of a
GPU Deployment, or changes its selector, touches no workload and used to pass. Here the facts a
commit changes (a staged deletion, or a named file that holds, or held at HEAD, a PDB, ConfigMap,
autoscaler, claim or runtime) are compared: the work tree's other workload files are linted
with the facts as committed (HEAD) and as they now are, and the findings only the new facts give
are reported, each labelled with the change that caused it.
"""

from __future__ import annotations

import dataclasses
import os
from collections import Counter
from typing import TYPE_CHECKING

from kubegap_lint.core.model import Finding
from kubegap_lint.core.record import replace
from kubegap_lint.engine.run import Linter
from kubegap_lint.input.sources import MANIFEST_SUFFIXES, Source
from kubegap_lint.workloads.index import FACT_KINDS

if TYPE_CHECKING:
    from kubegap_lint.catalog.policies import Catalog
    from kubegap_lint.config.settings import Settings

_FACT_BYTES = tuple(kind.encode() for kind in FACT_KINDS)
_POD_TEMPLATE = b"containers"  # a file without it holds no workload


def _holds_facts(raw: bytes | None) -> bool:
    return raw is not None and any(kind in raw for kind in _FACT_BYTES)


def _shown(top: str, name: str) -> str:
    relative = os.path.relpath(os.path.join(top, name))
    return (os.path.join(top, name) if relative.startswith("..") else relative).replace(os.sep, "/")


def _text(raw: bytes) -> str:
    return raw.decode("utf-8", "replace")


def decided_findings(named: tuple[str, ...], settings: Settings, catalog: Catalog) -> list[Finding]:
    """The findings on the work tree's other files that the staged changes to facts cause."""
    from kubegap_lint.helm.render import chart_root
    from kubegap_lint.input.git import committed_bytes, relative_to_top, staged_deletions, top_level, work_tree_files
    from kubegap_lint.workloads.repofacts import repository_context

    top = top_level(os.path.abspath(named[0] if named else os.curdir))
    if top is None:
        return []
    names = {r for r in (relative_to_top(p, top) for p in named if os.path.isfile(p)) if r is not None}
    changed: dict[str, tuple[bytes | None, bytes | None]] = {}  # name -> (now, at HEAD)
    for name in sorted(names) + staged_deletions(top):
        path = os.path.join(top, name)
        try:
            with open(path, "rb") as handle:
                now: bytes | None = handle.read()
        except OSError:
            now = None
        committed = committed_bytes(top, name)
        if now != committed and (_holds_facts(now) or _holds_facts(committed)):
            changed[name] = (now, committed)
    if not changed:
        return []
    workloads: list[tuple[str, bytes]] = []
    for name in work_tree_files(top):
        if name in names or name in changed or not name.lower().endswith(MANIFEST_SUFFIXES):
            continue
        if any(part.startswith(".") for part in name.split("/")):
            continue
        path = os.path.join(top, name)
        if chart_root(path) is not None:
            continue
        try:
            with open(path, "rb") as handle:
                raw = handle.read()
        except OSError:
            continue
        if _POD_TEMPLATE in raw:
            workloads.append((name, raw))
    if not workloads:
        return []
    shown = {name: _shown(top, name) for name, _ in workloads}
    # The rest of the tree's facts, less the changed files and the workloads linted here.
    linted = [Source(_shown(top, n), os.path.join(top, n)) for n in [*shown, *changed] if os.path.exists(os.path.join(top, n))]
    context = repository_context([s.display for s in linted], linted, settings.exclude)
    quiet = replace(settings, context=context, partial=True, baseline=None)
    texts = [(shown[name], _text(raw)) for name, raw in workloads]

    def run(version: int) -> list[Finding]:
        facts = [(_shown(top, name), _text(raw)) for name, raw in ((n, pair[version]) for n, pair in changed.items())
                 if raw is not None]
        result = Linter(quiet, catalog=catalog).lint_texts(texts + facts)
        return [f for f in result.iter_findings() if f.location.path in shown.values() and f.suppression is None]

    from kubegap_lint.suppress.fingerprint import fingerprint

    before = Counter(fingerprint(f) for f in run(1))
    cause = ", ".join(_shown(top, name) + ("" if now is not None else " (deleted)") for name, (now, _) in changed.items())
    found = []
    for finding in run(0):
        key = fingerprint(finding)
        if before[key]:
            before[key] -= 1
            continue
        found.append(dataclasses.replace(finding, message=f"{finding.message} (caused by the change to {cause})",
                             extra={**finding.extra, "caused_by": sorted(shown.get(n, _shown(top, n)) for n in changed)}))
    return found
