"""The oracle for template lines: render each chart of ../shared/charts/renders.yaml with the Helm
engine, lint it with the built-in rules and the test-only policies of policies/ (a finding on
every container, env entry, mount and resources block), and judge where each finding landed.

- Rendered in-process (the marked render gives the places, helm/marked.py): a finding marked
  exact is right when its template line holds the key the rendered line starts with (`name:`,
  `resources:`), else wrong; one placed in a values file (content `toYaml .Values.x` wrote) is
  `values` when that line says what the rendered line says (`- name: "X"` for `- name: X`),
  else wrong; one flagged approximate is `action` when its line is the action that wrote the
  node (`toYaml`, `include`: no line of the chart holds it literally), else approximate.
- Piped (`helm template | kubegap-lint --chart-dir`, the static matching of template_lines.py):
  right when it lands where the marked render says (exactly), approximate when flagged, wrong
  otherwise; not judged where the marked render has no exact answer (columns: right, -, -,
  approximate, wrong).

`python tests/helm_oracle/oracle.py` prints the table of docs/helm-and-pre-commit.md.
"""

from __future__ import annotations

import os
import re
import sys
from collections import Counter
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
CHARTS = REPO.parent / "shared" / "charts"
POLICIES = HERE / "policies"
EVERY_NODE = ("KG991", "KG992", "KG993", "KG994")
_ACTION_RE = re.compile(r"\{\{.*?\}\}")
_CONTROL_LINE_RE = re.compile(r"^\{\{-?\s*(?:if|else|end|with|range|define)\b[^}]*\}\}$")


def renders() -> list[dict[str, Any]]:
    from ruamel.yaml import YAML

    return list(YAML(typ="safe").load((CHARTS / "renders.yaml").read_text(encoding="utf-8")))


def _archived(source: str | None) -> bool:
    return source is not None and "/charts/" in source


def _token(line: str) -> str:
    words = line.strip().lstrip("-").split()
    return words[0] if words else ""


def _plain(line: str) -> str:
    """A YAML line without its dash, quotes and comment: `- name: "X"  # c` is `name: X`."""
    text = re.sub(r"\s+#.*$", "", line).strip()
    text = re.sub(r"^(?:-\s+)+", "", text)
    text = re.sub(r"([\"'])(.*?)\1", r"\2", text)  # quoted keys and values, as `"nvidia.com/gpu": 1`
    return " ".join(text.split())


def options_of(render: dict[str, Any]) -> Any:
    """The render options of a renders.yaml entry."""
    from kubegap_lint.helm.render import RenderOptions

    return RenderOptions(values=list(render["values_files"]), sets=list(render["set"]),
                         set_strings=list(render["set_string"]), set_files=list(render["set_file"]),
                         release=render["release"], namespace=render["namespace"],
                         include_crds=bool(render["include_crds"]))


def judge(render: dict[str, Any]) -> dict[str, Counter[str]] | None:
    """Counts by (path, rule group, verdict) for one render; None when helm cannot render it.
    Run from CHARTS (the renders' paths are relative to it)."""
    from kubegap_lint.catalog.policies import load_catalog
    from kubegap_lint.config.settings import Settings
    from kubegap_lint.engine.run import Linter
    from kubegap_lint.helm.marked import exact_lines
    from kubegap_lint.helm.render import HelmError
    from kubegap_lint.helm.sdk import render as render_chart

    options = options_of(render)
    chart = render["chart"]
    try:
        text = render_chart(chart, options)
    except HelmError:
        return None
    shown = f"<helm template {chart}>"
    places = exact_lines(chart, options, text)
    catalog = load_catalog([POLICIES])
    builtin = [p.id for p in catalog.policies if p.id not in EVERY_NODE and p.scope == "workload"]

    def lint(with_places: bool) -> list[Any]:
        settings = Settings(policy_dirs=[str(POLICIES)], select=[*builtin, *EVERY_NODE], chart_dirs=[chart])
        linter = Linter(settings, catalog=catalog)
        if with_places:
            linter.template_places = {shown: places}
        return linter.lint_texts([(shown, text)]).findings

    rendered_lines = text.split("\n")
    files: dict[str, list[str]] = {}

    def template_line(path: str, line: int) -> str:
        if path not in files:
            files[path] = Path(path).read_text(encoding="utf-8", errors="replace").split("\n")
        lines = files[path]
        return lines[line - 1] if 1 <= line <= len(lines) else ""

    counts: dict[str, Counter[str]] = {"rendered": Counter(), "piped": Counter()}
    for finding in lint(True):
        if finding.rendered_location is None:
            continue
        group = "every-node" if finding.rule_id in EVERY_NODE else "built-in"
        if finding.approximate and finding.location.path.endswith("Chart.yaml") and _archived(finding.template):
            verdict = "archived"  # its template is inside a charts/*.tgz: no repository file holds it
        elif finding.approximate:
            # on the action that wrote the node (toYaml, include, a value): the line that wrote it
            line = template_line(finding.location.path, finding.location.line)
            verdict = "action" if "{{" in line and not _CONTROL_LINE_RE.match(line.strip()) else "approximate"
        elif "/templates/" not in f"/{finding.location.path}":
            # a values file (content toYaml wrote): its line says what the rendered line says
            same = _plain(rendered_lines[finding.rendered_location.line - 1]) == _plain(
                template_line(finding.location.path, finding.location.line))
            verdict = "values" if same else "wrong"
        else:
            token = _token(rendered_lines[finding.rendered_location.line - 1])
            verdict = "right" if token and token in _ACTION_RE.sub("", template_line(
                finding.location.path, finding.location.line)) else "wrong"
        counts["rendered"][f"{group} {verdict}"] += 1
    for finding in lint(False):
        if finding.rendered_location is None:
            continue
        group = "every-node" if finding.rule_id in EVERY_NODE else "built-in"
        truth = places.get(finding.rendered_location.line)
        if finding.approximate:
            verdict = "approximate"
        elif truth is not None and not truth.approximate and (truth.path, truth.line) == (
                finding.location.path, finding.location.line):
            verdict = "right"
        elif truth is None or truth.approximate:
            verdict = "unjudged"  # the marked render cannot say either
        else:
            verdict = "wrong"
        counts["piped"][f"{group} {verdict}"] += 1
    return counts


def main() -> int:
    sys.path.insert(0, str(REPO))
    os.chdir(CHARTS)
    columns = ["right", "values", "action", "approximate", "wrong", "archived"]
    print("| render | in-process: built-in | every node | piped: built-in | every node |")
    print("|---|---|---|---|---|")
    total: dict[str, Counter[str]] = {"rendered": Counter(), "piped": Counter()}
    for render in renders():
        counts = judge(render)
        if counts is None:
            print(f"| {render['id']} | helm cannot render it | | | |")
            continue
        cells = []
        for way in ("rendered", "piped"):
            total[way].update(counts[way])
            for group in ("built-in", "every-node"):
                cells.append("/".join(str(counts[way][f"{group} {c}"]) for c in columns))
        print(f"| {render['id']} | " + " | ".join(cells) + " |")
    cells = ["/".join(str(total[way][f"{group} {c}"]) for c in columns)
             for way in ("rendered", "piped") for group in ("built-in", "every-node")]
    print("| **all** | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
