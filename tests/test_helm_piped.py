"""`helm template CHART | kubegap-lint --chart-dir CHART`, the static matching, on charts written
for these tests.

- A hook and a plain document of one kind in one template file (no chart of ../shared/charts
  has both in one file): helm prints hooks after the release manifest, so counting documents in
  file order would swap them; they are counted apart. The real Helm engine renders it.
- Content toYaml writes, placed on the chart's values.yaml line only when that holds it.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
from conftest import run_cli

engine = pytest.mark.skipif(importlib.util.find_spec("helm_python") is None,
                            reason="the Helm engine is not installed (pip install -e '.[helm]')")

PODS = """\
apiVersion: v1
kind: Pod
metadata:
  name: {{ .Release.Name }}-gpu-check
  annotations:
    helm.sh/hook: test
spec:
  restartPolicy: Never
  containers:
    - name: check
      image: cuda:12
      resources:
        limits:
          nvidia.com/gpu: 1
---
apiVersion: v1
kind: Pod
metadata:
  name: {{ .Release.Name }}-server
spec:
  containers:
    - name: server
      image: cuda:12
      resources:
        limits:
          nvidia.com/gpu: 1
"""


@engine
@pytest.mark.parametrize("names", [("{{ .Release.Name }}-gpu-check", "{{ .Release.Name }}-server"),
                                   ("{{ .Values.check }}", "{{ .Values.server }}")],  # names that say nothing
                         ids=["named", "templated-names"])
def test_a_hook_and_a_plain_document_of_one_kind_keep_their_own_lines(tmp_path: Path, names: tuple[str, str]) -> None:
    chart = tmp_path / "pods"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: pods\nversion: 0.1.0\n", encoding="utf-8")
    (chart / "values.yaml").write_text("check: demo-gpu-check\nserver: demo-server\n", encoding="utf-8")
    template = PODS.replace("{{ .Release.Name }}-gpu-check", names[0]).replace("{{ .Release.Name }}-server", names[1])
    (chart / "templates" / "pods.yaml").write_text(template, encoding="utf-8")
    from kubegap_lint.helm.render import RenderOptions
    from kubegap_lint.helm.sdk import render

    text = render(str(chart), RenderOptions(release="demo"))
    assert text.index("demo-server") < text.index("demo-gpu-check")  # helm's order: the hook last
    (tmp_path / "rendered.yaml").write_text(text, encoding="utf-8")
    proc = run_cli("--format", "json", "--select", "KG403", "--chart-dir", "pods", "rendered.yaml", cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    placed = [(f["resource"]["name"], f["location"]["path"], f["location"]["line"], f["approximate"])
              for f in json.loads(proc.stdout)["findings"]]
    assert sorted(placed) == [("demo-gpu-check", "pods/templates/pods.yaml", 3, False),
                              ("demo-server", "pods/templates/pods.yaml", 18, False)]


ENV_TEMPLATE = """\
apiVersion: v1
kind: Pod
metadata:
  name: gpu
spec:
  containers:
    - name: main
      image: cuda:12
      env:
        {{- toYaml .Values.env | nindent 8 }}
      resources:
        limits:
          nvidia.com/gpu: 1
"""
# What `helm template` prints for it with the values below (written here by hand: the values
# files of the second case are ones the engine would refuse).
ENV_RENDERED = "---\n# Source: envs/templates/pod.yaml\n" + ENV_TEMPLATE.replace(
    "        {{- toYaml .Values.env | nindent 8 }}\n", "        - name: NCCL_DEBUG\n          value: INFO\n")


@pytest.mark.parametrize(("values", "expected"), [
    ("# defaults\nenv:\n  - name: NCCL_DEBUG\n    value: INFO\n", ("envs/values.yaml", 3, False)),
    ("env:\n  - name: NCCL_DEBUG\n    value: WARN\n", ("envs/templates/pod.yaml", 10, True)),  # not what rendered
    ("env: [unclosed\n", ("envs/templates/pod.yaml", 10, True)),  # no values line to read
    ("a:" + " [" * 3000 + "\n", ("envs/templates/pod.yaml", 10, True)),  # too deep to read
], ids=["holds-it", "other-value", "broken", "deep"])
def test_piped_toyaml_content_goes_to_the_values_line_only_when_it_holds_it(
        tmp_path: Path, values: str, expected: tuple[str, int, bool]) -> None:
    chart = tmp_path / "envs"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: envs\nversion: 0.1.0\n", encoding="utf-8")
    (chart / "templates" / "pod.yaml").write_text(ENV_TEMPLATE, encoding="utf-8")
    (chart / "values.yaml").write_text(values, encoding="utf-8")
    (tmp_path / "rendered.yaml").write_text(ENV_RENDERED, encoding="utf-8")
    from conftest import REPO

    from kubegap_lint.catalog.policies import load_catalog
    from kubegap_lint.config.settings import Settings
    from kubegap_lint.engine.run import Linter

    policies = REPO / "tests" / "helm_oracle" / "policies"
    settings = Settings(policy_dirs=[str(policies)], select=["KG992"], chart_dirs=[str(chart)])
    findings = Linter(settings, catalog=load_catalog([policies])).lint_texts(
        [("rendered.yaml", ENV_RENDERED)]).findings
    placed = [(f.location.path.removeprefix(f"{tmp_path}/"), f.location.line, f.approximate) for f in findings]
    assert placed == [expected]


# A template that is one `include` (between a comment and a condition): the whole Pod is the
# helper's, as in charts built on a shared library of defines.
INCLUDE_HELPERS = """\
{{- define "gpu.pod" -}}
apiVersion: v1
kind: Pod
metadata:
  name: {{ .Release.Name }}-gpu
spec:
  containers:
    - name: main
      image: cuda:12
      resources:
        limits:
          nvidia.com/gpu: 1
{{- end }}
"""
INCLUDE_POD = """\
{{/* The Pod is written by the helper in _helpers.tpl. */}}
{{- if .Values.enabled }}
---
{{ include "gpu.pod" . }}
{{- end }}
"""
# `if`/`else if` writing the same key: the rendered values tell the branches apart.
BRANCH_POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: {{ .Release.Name }}-worker
spec:
  containers:
    - name: worker
      image: cuda:12
      {{- if .Values.gpus }}
      resources:
        limits:
          nvidia.com/gpu: {{ .Values.gpus }}
      {{- else if .Values.cpus }}
      resources:
        limits:
          cpu: {{ .Values.cpus | quote }}
      {{- end }}
"""
# Both branches write the key from values: nothing in the template tells them apart.
TO_YAML_BRANCH_POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: {{ .Release.Name }}-worker
spec:
  containers:
    - name: worker
      image: cuda:12
      {{- if .Values.big }}
      resources:
        {{- toYaml .Values.big | nindent 8 }}
      {{- else if .Values.small }}
      resources:
        {{- toYaml .Values.small | nindent 8 }}
      {{- end }}
"""


def _chart(root: Path, name: str, files: dict[str, str]) -> Path:
    chart = root / name
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text(f"apiVersion: v2\nname: {name}\nversion: 0.1.0\n", encoding="utf-8")
    for relative, text in files.items():
        (chart / relative).write_text(text, encoding="utf-8")
    return chart


def _placed(chart: Path, sets: list[str], *, in_process: bool) -> list[tuple[str, str, int, int, bool]]:
    """(rule, template path below the chart's parent, line, column, approximate) of each
    finding of the every-container and every-resources-block policies on the engine's render:
    piped (the static matching, as `helm template | kubegap-lint --chart-dir`), or in-process
    (the marked render of `kubegap-lint helm`)."""
    from conftest import REPO

    from kubegap_lint.catalog.policies import load_catalog
    from kubegap_lint.config.settings import Settings
    from kubegap_lint.engine.run import Linter
    from kubegap_lint.helm.marked import exact_lines
    from kubegap_lint.helm.render import RenderOptions
    from kubegap_lint.helm.sdk import render

    options = RenderOptions(sets=sets, release="demo")
    text = render(str(chart), options)
    policies = REPO / "tests" / "helm_oracle" / "policies"
    settings = Settings(policy_dirs=[str(policies)], select=["KG991", "KG994"], chart_dirs=[str(chart)])
    linter = Linter(settings, catalog=load_catalog([policies]))
    name = "<helm template>" if in_process else "rendered.yaml"
    if in_process:
        linter.template_places = {name: exact_lines(str(chart), options, text)}
    findings = linter.lint_texts([(name, text)]).findings
    root = f"{chart.parent}/"
    return sorted((f.rule_id, f.location.path.removeprefix(root), f.location.line, f.location.column, f.approximate)
                  for f in findings)


@engine
@pytest.mark.parametrize("in_process", [False, True], ids=["piped", "in-process"])
def test_a_document_one_include_writes_points_at_the_include(tmp_path: Path, in_process: bool) -> None:
    chart = _chart(tmp_path, "inc", {"templates/_helpers.tpl": INCLUDE_HELPERS, "templates/pod.yaml": INCLUDE_POD,
                                     "values.yaml": "enabled: true\n"})
    # followed into the define the include names: the node's own line there, exact
    assert _placed(chart, [], in_process=in_process) == [
        ("KG991", "inc/templates/_helpers.tpl", 8, 7, False), ("KG994", "inc/templates/_helpers.tpl", 10, 7, False)]


@engine
@pytest.mark.parametrize("in_process", [False, True], ids=["piped", "in-process"])
def test_a_document_from_a_define_without_lines_of_its_own_points_at_the_include(
        tmp_path: Path, in_process: bool) -> None:
    # The define only passes on a file's text: no line of it holds a node, the include does.
    helpers = '{{- define "gpu.pod" -}}{{ .Files.Get "files/pod.yaml" }}{{- end }}\n'
    pod = INCLUDE_HELPERS.split("\n", 1)[1].replace("{{- end }}\n", "").replace("{{ .Release.Name }}", "demo")
    chart = _chart(tmp_path, "inc", {"templates/_helpers.tpl": helpers, "templates/pod.yaml": INCLUDE_POD,
                                     "values.yaml": "enabled: true\n"})
    (chart / "files").mkdir()
    (chart / "files" / "pod.yaml").write_text(pod, encoding="utf-8")
    # line 4, `{{ include "gpu.pod" . }}` (line 1 is the comment): approximate, the nodes' own
    # lines are in files/pod.yaml, which no template names
    assert _placed(chart, [], in_process=in_process) == [
        ("KG991", "inc/templates/pod.yaml", 4, 1, True), ("KG994", "inc/templates/pod.yaml", 4, 1, True)]


@engine
@pytest.mark.parametrize("in_process", [False, True], ids=["piped", "in-process"])
@pytest.mark.parametrize(("sets", "line"), [(["gpus=2"], 10), (["cpus=4"], 14)], ids=["if", "else-if"])
def test_if_else_if_writing_one_key_points_at_the_branch_that_rendered(
        tmp_path: Path, in_process: bool, sets: list[str], line: int) -> None:
    chart = _chart(tmp_path, "branch", {"templates/pod.yaml": BRANCH_POD})
    assert _placed(chart, sets, in_process=in_process) == [
        ("KG991", "branch/templates/pod.yaml", 7, 7, False), ("KG994", "branch/templates/pod.yaml", line, 7, False)]


@engine
@pytest.mark.parametrize(("sets", "line"), [(["big.limits.cpu=8"], 10), (["small.limits.cpu=1"], 13)],
                         ids=["if", "else-if"])
def test_branches_the_stream_cannot_tell_apart_are_approximate_piped_and_exact_in_process(
        tmp_path: Path, sets: list[str], line: int) -> None:
    chart = _chart(tmp_path, "toyaml", {"templates/pod.yaml": TO_YAML_BRANCH_POD})
    # piped: both branches write `resources:` from values; the first is given, flagged
    assert ("KG994", "toyaml/templates/pod.yaml", 10, 7, True) in _placed(chart, sets, in_process=False)
    # in-process, the marked render knows which branch wrote the key
    assert ("KG994", "toyaml/templates/pod.yaml", line, 7, False) in _placed(chart, sets, in_process=True)
