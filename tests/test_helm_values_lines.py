"""Content that `toYaml .Values.x` writes is placed on the values-file line that gave it
(helm/values_lines.py), exact only where the rendered content equals the composed values.

The CLI tests render real charts of ../shared/charts with the real Helm engine; no stand-in.
"""

from __future__ import annotations

import importlib.util
import json

import pytest
from conftest import SHARED, run_cli

from kubegap_lint.helm.values_lines import argument

CHARTS = SHARED / "charts"
NIM = "aws-samples__awsome-inference/2.projects/nims-inference/nim-deploy/helm/nim-llm"
engine = pytest.mark.skipif(importlib.util.find_spec("helm_python") is None or not CHARTS.is_dir(),
                            reason="needs the Helm engine (pip install -e '.[helm]') and ../shared/charts")


@pytest.mark.parametrize(("template", "line", "keys"), [
    ("env:\n  {{- toYaml .Values.env | nindent 2 }}\n", 2, ["env"]),
    ("{{- with .Values.head.volumeMounts }}\nvolumeMounts:\n  {{- toYaml . | nindent 2 }}\n{{- end }}\n",
     3, ["head", "volumeMounts"]),
    ("{{- with .Values.head }}\nr:\n  {{- toYaml .resources | nindent 2 }}\n{{- end }}\n", 3, ["head", "resources"]),
    ("{{- range .Values.items }}\nx: {{ toYaml $.Values.a.b }}\n{{- end }}\n", 2, ["a", "b"]),
    ("r: {{ .Values.resources | toYaml | nindent 2 }}\n", 1, ["resources"]),
    # the dot of a range element, of a define, of a `with` that is no plain path: unknown
    ("{{- range .Values.items }}\nx: {{ toYaml . }}\n{{- end }}\n", 2, None),
    ('{{- define "x" }}\n{{ toYaml .Values.a }}\n{{- end }}\n', 2, None),
    ("{{- with concat .Values.a .Values.b }}\n{{ toYaml . }}\n{{- end }}\n", 2, None),
    # an `else` of a `with` has the outer dot again
    ("{{- with .Values.a }}\n{{- else }}\n{{ toYaml .Values.b }}\n{{- end }}\n", 3, ["b"]),
    # two toYaml on one line, or one of something else than .Values: no values line
    ("x: {{ toYaml .Values.a }} {{ toYaml .Values.b }}\n", 1, None),
    ("x: {{ toYaml .Release }}\n", 1, None),
    ('x: {{ toYaml (index .Values "a-b") }}\n', 1, None),
])
def test_the_values_path_a_toyaml_action_writes(template: str, line: int, keys: list[str] | None) -> None:
    assert argument(template.split("\n"), line) == keys


def _findings(*args: str) -> list[dict[str, object]]:
    proc = run_cli("helm", NIM, "--release", "demo", "-n", "ml", "--no-config", "--format", "json", *args, cwd=CHARTS)
    assert proc.returncode == 1, proc.stderr
    return [{key: f[key] for key in ("rule", "location", "rendered_location", "approximate")}
            for f in json.loads(proc.stdout)["findings"]]


@engine
def test_a_finding_on_toyaml_content_points_at_the_values_file_that_gave_it() -> None:
    """`resources: {{- toYaml .Values.resources }}`: the GPU request the -f file sets."""
    assert _findings("-f", "renders-values/nim-llm-gpu2.yaml", "--select", "KG503") == [{
        "rule": "KG503",
        "location": {"path": "renders-values/nim-llm-gpu2.yaml", "line": 6, "column": 3},
        "rendered_location": {"path": f"<helm template {NIM}>", "line": 202, "column": 13},
        "approximate": False,
    }]


@engine
def test_content_a_set_changed_stays_on_the_action_line_flagged() -> None:
    """--set gives the request: no file line holds it, so the action line, approximate."""
    found = _findings("-f", "renders-values/nim-llm-gpu2.yaml", "--set", "resources.requests.nvidia\\.com/gpu=3",
                      "--select", "KG503")
    assert found == [{
        "rule": "KG503",
        "location": {"path": f"{NIM}/templates/deployment.yaml", "line": 247, "column": 13},  # the toYaml
        "rendered_location": {"path": f"<helm template {NIM}>", "line": 202, "column": 13},
        "approximate": True,
    }]
