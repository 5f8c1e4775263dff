"""Lint one open document from memory, as `kubegap-lint FILE` would lint it from disk: the
configuration found from the file's folder, the rules it selects, the same findings.

For the language server: editors send text that is not saved yet. One difference from a CLI run
in a git work tree: the facts of the *other* files (a PodDisruptionBudget in another manifest)
are not read on every keystroke, so a rule that looks across files judges this file alone.
"""

from __future__ import annotations

import os
import re
from typing import Any

from kubegap_lint.core.model import Finding, InputError
from kubegap_lint.core.record import record

# A Kubernetes manifest names its kind at the top level of some document.
_KIND = re.compile(r"^kind:\s*\S", re.MULTILINE)
YAML_SUFFIXES = (".yaml", ".yml")


@record
class Linted:
    findings: list[Finding]  # counted ones only: what the CLI reports by default
    errors: list[InputError]  # what could not be judged, shown as errors too
    policies: dict[str, Any]  # by id, for the docs link of each finding's rule
    incidents: dict[str, Any]  # the catalog's evidence, by id
    params: dict[str, Any]  # the rules' parameters, for the fixes (serve/fixes.py)


def holds_manifests(path: str, text: str) -> bool:
    """A YAML file outside a chart (templates are not YAML until rendered) with a `kind:`."""
    if not path.lower().endswith(YAML_SUFFIXES) or not _KIND.search(text):
        return False
    from kubegap_lint.helm.render import chart_root

    return chart_root(path) is None


class DocumentLinter:
    """Lints documents; keeps the catalog of each set of policy folders between lints."""

    def __init__(self) -> None:
        self._catalogs: dict[tuple[str, ...], Any] = {}

    def lint(self, path: str, text: str) -> Linted:
        from kubegap_lint.catalog.policies import load_catalog
        from kubegap_lint.config.load import check_rule_names, resolve
        from kubegap_lint.core.errors import KubegapError
        from kubegap_lint.engine.run import Linter

        try:
            resolved = resolve((path,), None, False)
            dirs = tuple(str(d) for d in resolved.settings.policy_dirs)
            if dirs not in self._catalogs:
                self._catalogs[dirs] = load_catalog(resolved.settings.policy_dirs)
            catalog = self._catalogs[dirs]
            check_rule_names(resolved, catalog)
        except KubegapError as exc:  # a broken configuration: said on the document, not hidden
            return Linted([], [InputError(path, f"configuration: {' '.join(str(exc).split())}", 1, 1)], {}, {}, {})
        linter = Linter(resolved.settings, catalog=catalog)
        result = linter.lint_texts([(os.path.relpath(path) if _below_cwd(path) else path, text)])
        findings = [f for f in result.iter_findings() if f.suppression is None]
        result.store.close()
        return Linted(findings, list(result.errors), {p.id: p for p in catalog.policies}, catalog.incidents,
                      linter.params)


def _below_cwd(path: str) -> bool:
    return not os.path.relpath(path).startswith("..")
