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
