"""Static matching of list items (template_lines.py): never a wrong line presented as exact."""

from __future__ import annotations

from kubegap_lint.helm.template_lines import locate

ENV = """apiVersion: v1
kind: Pod
spec:
  containers:
    - name: main
      env:
        - name: A
          value: "1"
        {{- if .Values.plugin }}
        - name: LIB
          value: /plugin
        {{- else }}
        - name: LIB
          value: /host
        {{- end }}
"""


def test_same_literal_name_in_both_branches_is_approximate() -> None:
    path = ("spec", "containers", (0, "main"), "env", (1, "LIB"))
    match = locate(ENV, "Pod", 0, 1, path)
    assert (match.line, match.approximate) == (10, True)
    match = locate(ENV, "Pod", 0, 1, ("spec", "containers", (0, "main"), "env", (0, "A")))
    assert (match.line, match.column, match.approximate) == (7, 11, False)


def test_a_positional_match_never_takes_an_item_named_otherwise() -> None:
    text = "kind: Pod\nspec:\n  containers:\n    - name: main\n      image: x\n"
    match = locate(text, "Pod", 0, 1, ("spec", "containers", (0, "sidecar")))
    assert match.approximate and match.line == 3  # the list's key, not the item named main
    match = locate(text, "Pod", 0, 1, ("spec", "containers", (0, None)))
    assert (match.line, match.approximate) == (4, False)


def _pod(env: list[dict[str, str]]) -> dict:
    return {"kind": "Pod", "spec": {"containers": [{"name": "main", "env": env}]}}


def test_the_rendered_value_picks_the_if_else_branch() -> None:
    path = ("spec", "containers", (0, "main"), "env", (1, "LIB"))
    host = _pod([{"name": "A", "value": "1"}, {"name": "LIB", "value": "/host"}])
    match = locate(ENV, "Pod", 0, 1, path, host)
    assert (match.line, match.column, match.approximate) == (13, 11, False)
    plugin = _pod([{"name": "A", "value": "1"}, {"name": "LIB", "value": "/plugin"}])
    assert (locate(ENV, "Pod", 0, 1, path, plugin).line, locate(ENV, "Pod", 0, 1, path, plugin).approximate) == (
        10, False)
    # A value neither branch writes: no branch is taken for sure.
    other = _pod([{"name": "A", "value": "1"}, {"name": "LIB", "value": "/elsewhere"}])
    assert locate(ENV, "Pod", 0, 1, path, other).approximate


RANGE_ENV = """kind: Pod
spec:
  containers:
    - name: main
      env:
        - name: FIXED
          value: "1"
        {{- range $e := .Values.extra }}
        - name: {{ $e.name }}
          value: "{{ $e.value }}"
        {{- end }}
        - name: LAST
"""


def test_an_item_with_a_templated_name_is_the_one_that_fits() -> None:
    document = _pod([{"name": "FIXED", "value": "1"}, {"name": "NCCL_DEBUG", "value": "INFO"}, {"name": "LAST"}])
    path = ("spec", "containers", (0, "main"), "env", (1, "NCCL_DEBUG"))
    match = locate(RANGE_ENV, "Pod", 0, 1, path, document)
    assert (match.line, match.column, match.approximate) == (9, 11, False)
    # An action at the list's level that writes items could have written it too.
    written = RANGE_ENV.replace("        - name: LAST\n", "        {{- toYaml .Values.more | nindent 8 }}\n")
    assert locate(written, "Pod", 0, 1, path, document).approximate


LEADER_WORKERS = """{{- range $i := until 3 }}
{{- if eq $i 0 }}
kind: Deployment
metadata:
  name: {{ $.Release.Name }}-leader
spec:
  replicas: 1
{{- else }}
---
kind: Deployment
metadata:
  name: {{ $.Release.Name }}-worker{{ $i }}
spec:
  replicas: 1
{{- end }}
{{- end }}
"""


def test_a_range_that_emits_several_documents_is_followed_by_their_names() -> None:
    """Three Deployments from two sections: counting cannot place them, their names can."""
    for ordinal, name, line in ((0, "demo-leader", 7), (1, "demo-worker1", 14), (2, "demo-worker2", 14)):
        document = {"kind": "Deployment", "metadata": {"name": name}, "spec": {"replicas": 1}}
        match = locate(LEADER_WORKERS, "Deployment", ordinal, 3, ("spec", "replicas"), document)
        assert (match.line, match.approximate) == (line, False), name
    assert locate(LEADER_WORKERS, "Deployment", 1, 3, ("spec", "replicas")).approximate  # without the document


HOOK_AND_PLAIN = """apiVersion: v1
kind: Pod
metadata:
  name: check
  annotations:
    helm.sh/hook: test
spec:
  restartPolicy: Never
---
apiVersion: v1
kind: Pod
metadata:
  name: {{ .Release.Name }}-server
spec:
  restartPolicy: Always
"""


def test_hooks_and_plain_documents_are_counted_apart() -> None:
    """helm prints hooks after the manifest: the plain Pod is the first Pod of the stream."""
    plain = {"kind": "Pod", "metadata": {"name": "demo-server"}, "spec": {"restartPolicy": "Always"}}
    match = locate(HOOK_AND_PLAIN, "Pod", 0, 1, ("spec", "restartPolicy"), plain, False)
    assert (match.line, match.approximate) == (15, False)
    hook = {"kind": "Pod", "metadata": {"name": "check", "annotations": {"helm.sh/hook": "test"}},
            "spec": {"restartPolicy": "Never"}}
    match = locate(HOOK_AND_PLAIN, "Pod", 0, 1, ("spec", "restartPolicy"), hook, True)
    assert (match.line, match.approximate) == (8, False)


def test_a_section_whose_name_says_otherwise_is_never_taken_by_counting() -> None:
    document = {"kind": "Pod", "metadata": {"name": "check"}, "spec": {"restartPolicy": "Always"}}
    # Counted as the second of two Pods, but the second section writes `*-server`, not `check`.
    match = locate(HOOK_AND_PLAIN, "Pod", 1, 2, ("spec", "restartPolicy"), document)
    assert (match.line, match.approximate) == (8, False)  # the one section whose name fits
