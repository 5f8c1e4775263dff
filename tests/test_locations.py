"""Where findings point: the same bytes give the same locations from a file and from stdin, List
items included; every location is the node's key path in its document, with a region."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import CORPUS, EXAMPLES, requires_shared, run_cli

# A `kubectl get -o yaml` List: Services between GPU Jobs. Positions kept by object identity
# sent KG501 of every Job to a Service's line on stdin (line 39) and not from the file (26, 57,
# 88): ids of view objects freed after one item were met again in the next.
KUBECTL_LIST = "apiVersion: v1\nitems:\n" + "".join(f"""\
- apiVersion: v1
  kind: Service
  metadata:
    name: svc{n}
    namespace: ml
  spec:
    ports:
    - port: 29500
    selector:
      app: t{n}
- apiVersion: batch/v1
  kind: Job
  metadata:
    name: train{n}
    namespace: ml
  spec:
    template:
      metadata:
        labels:
          app: t{n}
      spec:
        restartPolicy: OnFailure
        containers:
        - image: registry.example/train:1
          name: trainer
          env:
          - name: NCCL_DEBUG
            value: WARN
          resources:
            limits:
              nvidia.com/gpu: "8"
""" for n in range(3)) + 'kind: List\nmetadata:\n  resourceVersion: ""\n'


def _places(stdout: bytes) -> list[tuple[Any, ...]]:
    return sorted((f["rule"], f["location"]["line"], f["location"]["column"], f["location"]["end_line"],
                   f["location"]["end_column"], tuple(f["location"]["path_in_document"]), f["location"]["missing"])
                  for f in json.loads(stdout)["findings"])


def test_a_kubectl_list_locates_alike_from_a_file_and_from_stdin(tmp_path: Path) -> None:
    path = tmp_path / "list.yaml"
    path.write_text(KUBECTL_LIST)
    from_file = run_cli("--format", "json", "--select", "KG201,KG501", str(path))
    from_stdin = run_cli("--format", "json", "--select", "KG201,KG501", "-", stdin=KUBECTL_LIST.encode())
    assert from_file.returncode == from_stdin.returncode == 1, from_file.stderr
    places = _places(from_file.stdout)
    assert places == _places(from_stdin.stdout)
    # Each Job's KG501 on its GPU container (the `- image:` item, to its last value), KG201 on its
    # pod spec's first line, where `volumes` is missing; Jobs are items 1, 3 and 5.
    expected = []
    for item, first in ((1, 11), (3, 42), (5, 73)):
        pod_spec = ("items", item, "spec", "template", "spec")
        expected.append(("KG201", first + 12, 7, first + 12, None, pod_spec, "volumes"))
        expected.append(("KG501", first + 15, 11, first + 22, 34, (*pod_spec, "containers", 0), None))
    assert places == sorted(expected)


def _every_input(*roots: Path) -> list[Path]:
    return [p for root in roots
            for p in sorted(p for p in root.rglob("*") if p.suffix in (".yaml", ".yml", ".json") and p.is_file())]


def _in_process_places(linter: Any, name: str, display: str) -> list[tuple[Any, ...]]:
    result = linter.lint_paths([name])
    # A message may name the input (KG103 names the budget's file:line): as "-" on both sides.
    return sorted((f.rule_id, f.location.line, f.location.column, f.location.end_line, f.location.end_column,
                   f.key_path, f.missing, f.message.replace(display, "-")) for f in result.findings)


@pytest.mark.slow
@requires_shared
def test_every_example_and_corpus_file_locates_alike_from_a_file_and_from_stdin(
        linter_factory, monkeypatch: pytest.MonkeyPatch) -> None:
    linter = linter_factory()
    files = _every_input(EXAMPLES, CORPUS)
    assert len(files) > 700
    differ = []
    for path in files:
        data = path.read_bytes()
        from_file = _in_process_places(linter, str(path), str(path))
        stdin = io.TextIOWrapper(io.BytesIO(data))
        monkeypatch.setattr(sys, "stdin", stdin)
        from_stdin = _in_process_places(linter, "-", "<stdin>")
        if from_file != from_stdin:
            differ.append(str(path))
    assert not differ, f"{len(differ)} files locate differently on stdin: {differ[:5]}"


def _parse(text: str) -> Any:
    from kubegap_lint.input.parse import parse_chunk
    from kubegap_lint.input.scan import split_documents

    return parse_chunk(next(iter(split_documents(text.splitlines(True)))))


def test_the_parser_locates_every_key_and_value_by_key_path() -> None:
    from kubegap_lint.core.model import Position

    parsed = _parse("""\
spec:
  backoffLimit: 0
  args:
    - --save=/ckpt
    - "--steps=10"
  limits: {nvidia.com/gpu: 8}
  env:
    - name: NCCL_DEBUG
      value: INFO
""")
    positions = parsed.positions
    assert positions.key(("spec", "backoffLimit")) == Position(2, 3)
    assert positions.start(("spec", "backoffLimit")) == Position(2, 17)
    assert positions.end(("spec", "backoffLimit")) == Position(2, 18)
    assert positions.start(("spec", "args", 1)) == Position(5, 7)
    assert positions.end(("spec", "args", 1)) == Position(5, 19)
    assert positions.key(("spec", "limits", "nvidia.com/gpu")) == Position(6, 12)
    assert positions.start(("spec", "limits", "nvidia.com/gpu")) == Position(6, 28)
    assert positions.key(("spec", "env", 0)) == Position(8, 7)
    # A block ends with its last value, not where the next token starts.
    assert positions.end(("spec", "env", 0)) == Position(9, 18)
    assert positions.end(("spec",)) == Position(9, 18)
    assert ("spec", "env", 0, "valueFrom") not in positions
    assert positions.nearest(("spec", "env", 0, "valueFrom", "x")) == ("spec", "env", 0)


def test_merged_and_aliased_nodes_locate_at_their_nearest_written_parent() -> None:
    parsed = _parse("""\
base: &base
  image: a
one:
  <<: *base
  name: x
two: *base
""")
    positions = parsed.positions
    assert parsed.data["one"]["image"] == "a"
    assert positions.nearest(("one", "image")) == ("one",)
    assert positions.nearest(("two", "image")) == ("two",)
    assert positions.key(("one", "name")).line == 5


@pytest.mark.parametrize(("root", "least_checked"), [
    pytest.param(EXAMPLES, 700, id="examples"),
    pytest.param(CORPUS, 450, id="corpus", marks=[requires_shared, pytest.mark.slow]),
])
def test_every_finding_is_where_its_key_path_names(linter_factory, root: Path, least_checked: int) -> None:
    """On every example and corpus file, a finding on a manifest node (every rule but the input
    faults, KG0xx, and the suppression checks) starts at the key (or list item) of the path it
    carries in JSON and SARIF: the line is the node's, not a parent's that happens to be near."""
    from kubegap_lint.input.read import ReadStats, Resource, read_text

    linter = linter_factory()
    checked = 0
    wrong = []
    for path in _every_input(root):
        findings = [f for f in linter.lint_paths([str(path)]).findings if f.key_path]
        if not findings:
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        positions = {r.document_index: r.positions for r in read_text(str(path), text, ReadStats())
                     if isinstance(r, Resource)}
        for finding in findings:
            checked += 1
            place = finding.rendered_location or finding.location  # Helm output: the rendered line
            key = positions[finding.document_index or 0].key(finding.key_path)
            if key is None or (key.line, key.column) != (place.line, place.column):
                wrong.append(f"{path.name}:{place.line}:{place.column} {finding.rule_id} {finding.key_path} at {key}")
    assert checked > least_checked
    assert wrong == []
