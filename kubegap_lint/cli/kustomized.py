"""What a kustomization that cannot be rendered becomes in a run (`unrendered`: the one place),
and the kustomize inputs of `lint` and `kustomize` (kustomize/inputs.py) bound to it.
"""

from __future__ import annotations

from contextlib import ExitStack
from typing import Any

from kubegap_lint.core.model import InputError
from kubegap_lint.input.sources import Source


def unrendered(errors: list[InputError], linter: Any, path: str, line: int, column: int, why: str) -> None:
    """A kustomization the run could not lint: never a pass. Today an input error at its
    kustomization file (or the line that failed), which exits 2. The silent-green work
    (branch `green`, engine/inputs.py) makes that a KG009 finding: at merge this becomes
    `linter.unlinted.append(not_rendered(path, line, column, why))`."""
    errors.append(InputError(path, why, line, column))


def rendered(folders: list[str], kept: ExitStack, linter: Any, errors: list[InputError],
             renderer_path: str | None) -> list[Source]:
    """The kustomizations rendered for this run's linter (kept until `kept` ends)."""
    from kubegap_lint.kustomize.inputs import rendered as render_all

    def report(path: str, line: int, column: int, why: str) -> None:
        unrendered(errors, linter, path, line, column, why)

    return render_all(folders, kept, linter.kustomize_roots, report, renderer_path)
