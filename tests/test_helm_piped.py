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
