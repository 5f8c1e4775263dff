"""`helm template CHART | kubegap-lint --chart-dir CHART`: a hook and a plain document of one
kind in one template file. helm prints hooks after the release manifest, so counting documents
in file order would swap them; they are counted apart.

The chart is written for this test (no chart of ../shared/charts has both in one file); the real
Helm engine renders it, no stand-in.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
from conftest import run_cli

pytestmark = pytest.mark.skipif(importlib.util.find_spec("helm_python") is None,
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
