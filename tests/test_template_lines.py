"""The template line search on its own: literal keys, template actions, list items, sections."""

from __future__ import annotations

from kubegap_lint.helm.template_lines import locate, scan_template

DEPLOYMENT = """\
{{- if .Values.enabled }}
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}
  labels:
    {{- include "x.labels" . | nindent 4 }}
spec:
  template:
    spec:
      initContainers:
      {{- range .Values.init }}
      - name: {{ .name }}
      {{- end }}
      containers:
      - name: app
        command:
          - sh
          - -c
          - |
            env: not-a-key
            volumes: neither
        env:
          {{- toYaml .Values.env | nindent 10 }}
      - name: {{ .Values.sidecar.name }}
        image: busybox
      {{- with .Values.volumes }}
      volumes:
        {{- toYaml . | nindent 8 }}
      {{- end }}
{{- end }}
"""


def _line(path: tuple, text: str = DEPLOYMENT, kind: str = "Deployment", ordinal: int = 0,
          count: int = 1) -> tuple[str, bool]:
    match = locate(text, kind, ordinal, count, path)
    return text.splitlines()[match.line - 1].strip(), match.approximate


def test_literal_keys_through_actions() -> None:
    assert _line(("spec", "template", "spec", "volumes")) == ("volumes:", False)
    assert _line(("metadata", "labels")) == ("labels:", False)


def test_item_by_name_and_key_inside_it() -> None:
    assert _line(("spec", "template", "spec", "containers", (0, "app"))) == ("- name: app", False)
    assert _line(("spec", "template", "spec", "containers", (0, "app"), "env")) == ("env:", False)


def test_item_by_index_only_when_no_action_comes_first() -> None:
    # The sidecar's name is templated: its index (1) is honest, no action precedes it in the list.
    assert _line(("spec", "template", "spec", "containers", (1, "helper"))) == \
        ("- name: {{ .Values.sidecar.name }}", False)
    # An init container comes from a range: its index says nothing about the template's lines,
    # but the range's item is the only one whose templated name fits (and nothing else writes
    # items there).
    assert _line(("spec", "template", "spec", "initContainers", (0, "setup"))) == ("- name: {{ .name }}", False)
    # When the templated name cannot fit, the index alone is not trusted after the range.
    prefixed = DEPLOYMENT.replace("- name: {{ .name }}", "- name: init-{{ .name }}")
    line, approximate = _line(("spec", "template", "spec", "initContainers", (0, "setup")), prefixed)
    assert approximate and line == "initContainers:"


def test_content_written_by_to_yaml_points_at_the_action() -> None:
    line, approximate = _line(("spec", "template", "spec", "containers", (0, "app"), "env", (0, "A")))
    assert (line, approximate) == ("{{- toYaml .Values.env | nindent 10 }}", True)


def test_block_scalars_are_not_keys() -> None:
    keys = [e.key for e in scan_template(DEPLOYMENT.splitlines(True)) if e.kind == "key"]
    assert "env" in keys and keys.count("volumes") == 1  # not the `volumes: neither` in the script


def test_no_match_points_at_kind_line_approximate() -> None:
    assert _line(("status", "conditions")) == ("kind: Deployment", True)
    whole = 'apiVersion: v1\nkind: Pod\n{{- include "pod.body" . }}\n'
    assert _line(("spec", "containers", (0, "x")), whole, "Pod") == ("kind: Pod", True)
    assert _line((), whole, "Pod") == ("kind: Pod", False)


def test_sections_chosen_by_kind_and_order() -> None:
    text = ("kind: Service\nspec:\n  ports: []\n---\nkind: Job\nspec:\n  a: 1\n---\n"
            "kind: Job\nspec:\n  b: 1\n")
    assert locate(text, "Service", 0, 1, ("spec",)).line == 2
    assert locate(text, "Job", 0, 2, ("spec",)).line == 6
    assert locate(text, "Job", 1, 2, ("spec",)).line == 10
    # Three Jobs rendered from two sections (a range): which one is unknown, so say so.
    match = locate(text, "Job", 2, 3, ("spec",))
    assert match.approximate and match.line == 5


def test_multi_line_actions_and_templated_keys_are_skipped() -> None:
    text = ('kind: ConfigMap\n{{- /* a comment\nspanning: lines */}}\ndata:\n'
            '  {{ .Values.key }}: value\n  real: 1\n')
    entries = scan_template(text.splitlines(True))
    assert [e.key for e in entries if e.kind == "key"] == ["kind", "data", "real"]
    assert _line(("data",), text, "ConfigMap") == ("data:", False)


def test_every_answer_is_a_line_of_the_file() -> None:
    for path in [(), ("spec",), ("nothing", "here"), ("spec", "template", "spec", "containers", (9, None))]:
        for text in (DEPLOYMENT, "", "{{ include \"all\" . }}\n", "---\n---\n"):
            match = locate(text, "Deployment", 0, 1, path)
            assert 1 <= match.line <= max(1, len(text.splitlines()))


from hypothesis import given, settings
from hypothesis import strategies as st

_LINES = st.sampled_from([
    "kind: Job", "spec:", "  template:", "    spec:", "      containers:", "      - name: a",
    "        env:", "        {{- toYaml .Values.env | nindent 8 }}", "{{- if .x }}", "{{- end }}",
    "---", "  - |", "    key: value", "{{/* open", "close */}}", "- x", "  - y: {{ .z }}", "", "#c",
    "'quoted': 1", '"k": v', "-", "key:", "  {{ .Values.k }}: v",
])
_PATHS = st.lists(st.one_of(st.sampled_from(["spec", "template", "containers", "env", "kind"]),
                            st.tuples(st.integers(0, 3), st.sampled_from(["a", "b", None]))), max_size=6)


@settings(max_examples=300, deadline=None)
@given(st.lists(_LINES, max_size=30), _PATHS, st.sampled_from(["Job", None, "Pod"]),
       st.integers(0, 3), st.integers(1, 4))
def test_any_template_gives_a_line_of_the_file(lines, path, kind, ordinal, count) -> None:
    text = "\n".join(lines) + "\n"
    match = locate(text, kind, ordinal, count, tuple(path))
    assert 1 <= match.line <= max(1, len(lines))
    assert match.column >= 1


HELPERS = """\
{{- define "x.pod" -}}
metadata:
  labels:
    app: x
spec:
  {{- if .Values.gpu }}
  containers:
    - name: server
      image: cuda
  {{- end }}
{{- end }}
{{- define "x.name" }}{{ .Chart.Name }}{{ end }}
"""
INCLUDING = """\
kind: Deployment
spec:
  template:
    {{- include "x.pod" . | nindent 4 }}
  strategy:
    {{- include "x.pod" . | nindent 4 }}
    extra: 1
"""


def test_an_include_that_writes_a_whole_node_is_followed_into_its_define() -> None:
    from kubegap_lint.helm.actions import define_bodies

    bodies = define_bodies("_helpers.tpl", HELPERS)
    assert sorted(bodies) == ["x.pod"]  # a define opened and closed on one line has no body lines
    assert bodies["x.pod"][2] == 2 and bodies["x.pod"][1][0] == "metadata:\n"
    path = ("spec", "template", "spec", "containers", (0, "server"))
    match = locate(INCLUDING, "Deployment", 0, 1, path, defines=bodies.get)
    assert (match.path, match.line, match.column, match.approximate) == ("_helpers.tpl", 8, 7, False)
    # Without the lookup, or where the include is not all the node holds: the include line, flagged.
    assert (locate(INCLUDING, "Deployment", 0, 1, path).line, locate(INCLUDING, "Deployment", 0, 1, path).path) == (
        4, None)
    match = locate(INCLUDING, "Deployment", 0, 1, ("spec", "strategy", "spec"), defines=bodies.get)
    assert (match.path, match.line, match.approximate) == (None, 6, True)
