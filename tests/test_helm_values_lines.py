"""Content that `toYaml .Values.x` writes is placed on the values-file line that gave it
(helm/values_lines.py), exact only where the rendered content equals the composed values.

The CLI tests render real charts of ../shared/charts with the real Helm engine; no stand-in.
"""

from __future__ import annotations

import importlib.util
import json

import pytest
from conftest import CHARTS, requires_shared, run_cli

from kubegap_lint.helm.values_lines import ELEMENT, argument

NIM = "aws-samples__awsome-inference/2.projects/nims-inference/nim-deploy/helm/nim-llm"
needs_engine = pytest.mark.skipif(importlib.util.find_spec("helm_python") is None,
                                  reason="needs the Helm engine (pip install -e '.[helm]')")


def engine(test):  # the real charts, rendered by the real engine
    return requires_shared(needs_engine(test))


@pytest.mark.parametrize(("template", "line", "keys"), [
    ("env:\n  {{- toYaml .Values.env | nindent 2 }}\n", 2, ["env"]),
    ("{{- with .Values.head.volumeMounts }}\nvolumeMounts:\n  {{- toYaml . | nindent 2 }}\n{{- end }}\n",
     3, ["head", "volumeMounts"]),
    ("{{- with .Values.head }}\nr:\n  {{- toYaml .resources | nindent 2 }}\n{{- end }}\n", 3, ["head", "resources"]),
    ("{{- range .Values.items }}\nx: {{ toYaml $.Values.a.b }}\n{{- end }}\n", 2, ["a", "b"]),
    ("r: {{ .Values.resources | toYaml | nindent 2 }}\n", 1, ["resources"]),
    # a range element: one of the collection's (values_lines.place finds which)
    ("{{- range .Values.items }}\nx: {{ toYaml . }}\n{{- end }}\n", 2, ["items", ELEMENT]),
    ("{{- range $k, $g := .Values.groups }}\n{{- with $g.mounts }}\n{{ toYaml . }}\n{{- end }}\n{{- end }}\n", 3,
     ["groups", ELEMENT, "mounts"]),
    ('{{- $root := . }}\n{{- range $i := until 3 }}\nx: {{ toYaml $root.Values.a }}\n{{- end }}\n', 3, ["a"]),
    # the element of a range over no values path, a define's dot, a `with` of no plain path,
    # a variable never set: unknown
    ("{{- range $i := until 3 }}\nx: {{ toYaml . }}\n{{- end }}\n", 2, None),
    ("x: {{ toYaml $nowhere.Values.a }}\n", 1, None),
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
    return [{"rule": f["rule"], "approximate": f["approximate"],
             **{key: {k: f[key][k] for k in ("path", "line", "column")} for key in ("location", "rendered_location")}}
            for f in json.loads(proc.stdout)["findings"]]


@engine
def test_a_finding_on_toyaml_content_points_at_the_values_file_that_gave_it() -> None:
    """`resources: {{- toYaml .Values.resources }}`: the GPU request the -f file sets."""
    assert _findings("-f", "renders-values/nim-llm-gpu2.yaml", "--select", "KG503") == [{
        "rule": "KG503",
        "location": {"path": "renders-values/nim-llm-gpu2.yaml", "line": 7, "column": 5},  # "nvidia.com/gpu": 1
        "rendered_location": {"path": f"<helm template {NIM}>", "line": 203, "column": 15},
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
        "rendered_location": {"path": f"<helm template {NIM}>", "line": 203, "column": 15},
        "approximate": True,
    }]


@engine
def test_content_an_include_writes_is_on_the_helpers_line() -> None:
    """The example subchart's whole pod template is `include "inference.podTemplate"`: rendered
    by the tool, the container's finding is on the define's `- name: server` in _helpers.tpl,
    exact (piped, the static matching leaves it on the include line, flagged: tests/test_helm.py)."""
    from conftest import REPO

    proc = run_cli("helm", "examples/helm/gpu-train", "--release", "demo", "-n", "ml", "--no-config",
                   "--select", "KG501", "--format", "json", cwd=REPO)
    assert proc.returncode == 1, proc.stderr
    placed = [({k: f["location"][k] for k in ("path", "line", "column")}, f["approximate"])
              for f in json.loads(proc.stdout)["findings"]]
    assert placed[0] == ({"path": "examples/helm/gpu-train/charts/inference/templates/_helpers.tpl",
                          "line": 8, "column": 7}, False)
    helpers = (REPO / "examples/helm/gpu-train/charts/inference/templates/_helpers.tpl").read_text().splitlines()
    assert helpers[7].strip() == "- name: server"


HELPERS = """{{/* names */}}
{{- define "x.fullname" -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 }}
{{- end }}
{{- define "x.labels" }}
app.kubernetes.io/name: {{ include "x.fullname" . }}
{{ toYaml .Values.extraLabels | nindent 0 }}
{{- end }}
{{- define "x.pod" -}}
containers:
  - name: server
    args: ["--a"]
    env:
      {{- toYaml .Values.env | nindent 6 }}
    command: {{ .Values.command | toJson }}
{{- end }}
text outside a define is never output
"""


def test_a_partial_is_marked_only_where_a_comment_cannot_change_its_output() -> None:
    """Inside a define: literal keys and actions that write an indented block; never the
    lines of a name (they land in names and conditions), never text outside a define."""
    from kubegap_lint.helm.marked import MARKER_RE, mark_template

    marked = mark_template(HELPERS, 7, partial=True).split("\n")
    lines = [number for number, line in enumerate(marked, start=1) if MARKER_RE.search(line)]
    assert lines == [6, 7, 10, 11, 12, 13, 14, 15]
    assert marked[5] == 'app.kubernetes.io/name: {{ include "x.fullname" . }} #@kg7:6@'
    # In a template (not a partial) the text outside defines is output, so it is marked.
    assert MARKER_RE.search(mark_template(HELPERS, 7).split("\n")[16])
