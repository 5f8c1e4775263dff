"""The in-process render prints what `helm template` prints, on every render of ../shared/charts
(issue 31): CRDs first with --include-crds, the release manifest in Helm's install order, then
the hooks; NOTES.txt and partials never.

No helm binary can run here, and no recorded `helm template` stream exists for these renders
(../shared/charts/SOURCES.md: they were made with the engine itself). The reference is
therefore a STAND-IN, assembled from the engine's public API (helm_python 0.2.2) the way
`helm template` assembles its output (cmd/helm/template.go: the release manifest trimmed and
ended with a line break, then each hook as `---\\n# Source: PATH\\n` and its text):
- the release manifest: `Config.install(..., dry_run="client")`, the engine's own install
  action, which renders, sorts and joins the documents itself;
- CRDs (--include-crds): the engine's install takes no include-crds option, so they come from
  `Chart.crds`, printed as Helm's install action prints them before the manifest;
- hooks: the install summary does not carry them, so each hook document printed is checked to
  be a document of the engine's `Chart.render` output for its template, verbatim, and their
  number the number of hook documents the engine rendered (read by a YAML parser, not by the
  tool's splitting).
Lines a chart fills with random text or the time (randAlphaNum, certificates, now) differ
between any two renders: the lines that differ between two in-process renders (a second apart
when the first two agree where the reference does not) are left out of the comparison,
everything else must be equal byte for byte.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import CHARTS, shared_cases

pytestmark = [pytest.mark.skipif(importlib.util.find_spec("helm_python") is None,
                                 reason="the Helm engine is not installed (pip install -e '.[helm]')"),
              pytest.mark.slow]


def _renders() -> list[dict[str, Any]]:
    from ruamel.yaml import YAML

    if not (CHARTS / "renders.yaml").is_file():
        return []
    renders = list(YAML(typ="safe").load((CHARTS / "renders.yaml").read_text(encoding="utf-8")))
    # No shared render asks for CRDs; gpu-operator has crds/ in the chart and in its subchart.
    crds = next(r for r in renders if r["id"] == "gpu-operator")
    return [*renders, {**crds, "id": "gpu-operator-include-crds", "include_crds": True}]


RENDERS = _renders()


def _options(render: dict[str, Any]) -> Any:
    from kubegap_lint.helm.render import RenderOptions

    return RenderOptions(values=list(render["values_files"]), sets=list(render["set"]),
                         set_strings=list(render["set_string"]), set_files=list(render["set_file"]),
                         release=render["release"], namespace=render["namespace"],
                         include_crds=bool(render["include_crds"]))


def _installable(chart: str, scratch: Path) -> str:
    """The chart, or a copy without the declared subcharts that charts/ lacks: the engine's
    install refuses those (as helm template does); the tool renders without them, which is what
    the install renders once they are not declared."""
    from ruamel.yaml import YAML

    yaml = YAML(typ="safe")
    metadata = yaml.load(Path(chart, "Chart.yaml").read_text(encoding="utf-8"))
    present = {entry.name for entry in os.scandir(Path(chart, "charts"))} if Path(chart, "charts").is_dir() else set()
    dependencies = metadata.get("dependencies") or []
    kept = [d for d in dependencies if any(name.startswith(f"{d['name']}") for name in present)]
    if len(kept) == len(dependencies):
        return chart
    copy = scratch / Path(chart).name
    shutil.copytree(chart, copy)
    metadata["dependencies"] = kept
    with open(copy / "Chart.yaml", "w", encoding="utf-8") as handle:
        yaml.dump(metadata, handle)
    (copy / "Chart.lock").unlink(missing_ok=True)
    return str(copy)


def _reference_head(chart: str, render: dict[str, Any], values: dict[str, Any]) -> str:
    """CRDs (when asked) and the release manifest, as the engine's install prints them."""
    import helm_python

    kubeconfig = "apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\nusers: []\n"
    with helm_python.Config(kubeconfig_content=kubeconfig, storage_driver="memory") as config:
        release = config.install(chart, render["release"], values, namespace=render["namespace"], dry_run="client")
    crds = ""
    if render["include_crds"]:
        with helm_python.Chart.load(chart) as loaded:
            crds = "".join(f"---\n# Source: {crd['filename']}\n{crd['data']}\n" for crd in loaded.crds)
    return (crds + release["manifest"]).strip() + "\n"


def _engine_hooks(chart: str, values: dict[str, Any], render: dict[str, Any]) -> tuple[dict[str, str], int]:
    """The engine's rendered files, and how many of their documents are hooks."""
    import helm_python
    from ruamel.yaml import YAML

    with helm_python.Chart.load(chart) as loaded:
        files = loaded.render(values, name=render["release"], namespace=render["namespace"], revision=1,
                              is_install=True)
    reader = YAML(typ="safe")
    reader.allow_duplicate_keys = True  # gpu-recipes' sglang Service repeats `selector` (as Helm allows)
    count = 0
    for path, text in files.items():
        if path.endswith((".txt", ".tpl")) or "/_" in path:
            continue
        for document in reader.load_all(text):
            metadata = document.get("metadata") if isinstance(document, dict) else None
            annotations = metadata.get("annotations") if isinstance(metadata, dict) else None
            count += isinstance(annotations, dict) and "helm.sh/hook" in annotations
    return files, count


def _volatile(one: str, other: str) -> set[int]:
    """The lines two renders of the same chart print differently (random text, the time)."""
    first, second = one.split("\n"), other.split("\n")
    assert len(first) == len(second), "two renders differ in length: not only in random text"
    return {number for number, (a, b) in enumerate(zip(first, second, strict=True)) if a != b}


@pytest.mark.parametrize("render", shared_cases([pytest.param(r, id=r["id"]) for r in RENDERS]))
def test_the_in_process_stream_is_helm_templates(render: dict[str, Any], monkeypatch, tmp_path: Path) -> None:
    from kubegap_lint.helm import sdk

    monkeypatch.chdir(CHARTS)
    options = _options(render)
    mine = sdk.render(render["chart"], options)
    volatile = _volatile(mine, sdk.render(render["chart"], options))
    chart = _installable(render["chart"], tmp_path)
    values = sdk.user_values(options)
    head = _reference_head(chart, render, values)
    files, hook_count = _engine_hooks(chart, values, render)

    # CRDs and the release manifest: byte for byte but for the random lines
    lines, reference = mine.split("\n"), head.split("\n")
    assert len(lines) >= len(reference) - 1
    if any(lines[n] != line for n, line in enumerate(reference[:-1]) if n not in volatile):
        # `now | unixEpoch` counts seconds: two quick renders may agree on it, the install not
        time.sleep(1.1)
        volatile |= _volatile(mine, sdk.render(render["chart"], options))
    compared = [(number, lines[number], line) for number, line in enumerate(reference[:-1]) if number not in volatile]
    assert [(n, a) for n, a, b in compared if a != b] == [(n, b) for n, a, b in compared if a != b]
    assert len(compared) > 0.9 * len(reference)  # random lines are few
    # then the hooks, each a document the engine rendered for its template, verbatim
    rest = "\n".join(lines[len(reference) - 1:])
    hooks = rest.split("---\n# Source: ")[1:] if rest else []
    assert rest == "".join(f"---\n# Source: {hook}" for hook in hooks)
    assert len(hooks) == hook_count
    first_hook_line = len(reference) - 1
    for hook in hooks:
        source, _, text = hook.partition("\n")
        body_lines = range(first_hook_line + 1, first_hook_line + 1 + text.count("\n"))
        if not volatile.intersection(body_lines):
            assert text.rstrip("\n") in files[source], source
        first_hook_line += 1 + text.count("\n")
    # never NOTES.txt, never a partial
    assert not [line for line in lines if line.startswith("# Source: ")
                and (line.endswith("/NOTES.txt") or line.rsplit("/", 1)[-1].startswith("_"))]
