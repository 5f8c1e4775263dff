"""How a run reads kustomize trees: which folders are kustomizations to render (an overlay's
bases are not linted again on their own unless named; the files a rendered kustomization reads
are not linted as plain manifests), and rendering them into a scratch folder. What a
kustomization that cannot be rendered becomes is the caller's `unrendered` (a KG009 finding:
engine/inputs.render_kustomizations).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from contextlib import ExitStack
from typing import Any

from kubegap_lint.input.sources import Source

# Where (path, line, column) and why: how the run reports a kustomization it could not lint.
Unrendered = Callable[[str, int, int, str], None]


def _shown(path: str) -> str:
    relative = os.path.relpath(path)
    return (path if relative.startswith("..") else relative).replace(os.sep, "/")


def split_kustomizations(paths: Iterable[str], sources: list[Source]) -> tuple[list[Source], list[str]]:
    """The sources that are plain manifests, and the kustomization folders to render (absolute,
    sorted): every kustomization folder among the named folders and the folders a walk of them
    met, but those another one includes (a base), unless named itself."""
    from kubegap_lint.kustomize.tree import closure, kustomization_file

    named = {os.path.abspath(p) for p in paths if p != "-" and os.path.isdir(p)}
    # A file named on the command line (pre-commit's main hook passes changed files) is linted
    # as it is: only folders, named or met in a walk, are rendered.
    files = {os.path.abspath(p) for p in paths if p != "-" and not os.path.isdir(p)}
    folders: dict[str, bool] = {}
    for folder in named:
        folders[folder] = kustomization_file(folder) is not None
    for source in sources:
        if source.fs_path is not None and os.path.abspath(source.fs_path) not in files:
            folder = os.path.dirname(os.path.abspath(source.fs_path))
            if folder not in folders:
                folders[folder] = kustomization_file(folder) is not None
    found = sorted(f for f, holds in folders.items() if holds)
    if not found:
        return sources, []
    chains = {folder: closure(folder) for folder in found}
    reached = {inner for folder, chain in chains.items() for inner in chain.folders if inner != folder}
    roots = [f for f in found if f not in reached or f in named]
    covered: set[str] = set()
    for folder in roots:
        covered |= chains[folder].files
    for folder in found:  # a base's kustomization file too: it is no manifest
        covered |= {k.path for k in chains[folder].kustomizations}
    plain = [s for s in sources if s.fs_path is None or os.path.abspath(s.fs_path) not in covered - files]
    return plain, roots


def rendered(folders: list[str], kept: ExitStack, roots: dict[str, Any], unrendered: Unrendered,
             renderer_path: str | None) -> list[Source]:
    """The kustomizations rendered into a scratch folder that `kept` removes once the run ends."""
    from kubegap_lint.core.tempdir import scratch_folder

    try:
        scratch = kept.enter_context(scratch_folder("kustomize-"))
    except OSError as exc:
        for folder in folders:
            unrendered(_shown(folder), 1, 1, f"kustomization {_shown(folder)} was not linted: {exc}")
        return []
    return rendered_kustomizations(folders, scratch, roots, unrendered, renderer_path)


def rendered_kustomizations(folders: list[str], scratch: str, roots: dict[str, Any], unrendered: Unrendered,
                            renderer_path: str | None) -> list[Source]:
    """Each kustomization rendered (a file in `scratch`, read as a source named
    `<kustomize build DIR>`), its folder and origins put in `roots` (the run's
    kustomize_roots); one that cannot be rendered is `unrendered`, at its kustomization file or
    at the line that failed."""
    from kubegap_lint.kustomize.render import KustomizeError, find_renderer, refuse_outside, refuse_remote, render
    from kubegap_lint.kustomize.tree import closure, failed_at, kustomization_file

    found: list[Source] = []
    renderer = None
    for folder in folders:
        entry = kustomization_file(folder) or os.path.join(folder, "kustomization.yaml")
        shown = _shown(folder)
        chain = closure(folder)
        try:
            refuse_remote(chain)
            refuse_outside(chain, folder)
            renderer = renderer or find_renderer(renderer_path)
            text, origins = render(renderer, folder, scratch)
        except KustomizeError as exc:
            path, line, column = (exc.path, exc.line, exc.column) if exc.path else failed_at(chain, str(exc), entry)
            unrendered(_shown(path), line, column, f"kustomization {shown} was not linted: {exc}")
            continue
        path = os.path.join(scratch, f"kustomize-{len(found)}.yaml")
        with open(path, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
        name = f"<kustomize build {shown}>"
        roots[name] = (folder, origins)
        found.append(Source(name, path))
    return found
