"""Fixes of findings on a chart (issue 32, docs/autofix.md "Helm charts"): a template is never
edited; a node `toYaml .Values.x` wrote is fixed in the values file, else the fix is text.

Every chart here is rendered by the real Helm engine (helm-python-sdk) in-process; no stand-in.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
from pathlib import Path

import pytest
from conftest import run_cli

from kubegap_lint.fix.helm import may_write

pytestmark = pytest.mark.skipif(importlib.util.find_spec("helm_python") is None,
                                reason="the Helm engine is not installed (pip install -e '.[helm]')")

VALUES = """\
# Training job
image: registry.example/llama:1
worker:
    resources:
        requests:
            nvidia.com/gpu: 8   # a full node
        limits:
            memory: 64Gi
    env:
        - name: TORCH_NCCL_ASYNC_ERROR_HANDLING
          value: "0"
"""

# The job's env and resources are the values' (toYaml); the eval job writes its own.
JOB = """\
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: {{ .Release.Name }}
spec:
  pytorchReplicaSpecs:
    Worker:
      replicas: 2
      template:
        spec:
          containers:
            - name: pytorch
              image: {{ .Values.image }}
              env:
                {{- toYaml .Values.worker.env | nindent 16 }}
              resources:
                {{- toYaml .Values.worker.resources | nindent 16 }}
"""

EVAL = """\
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: {{ .Release.Name }}-eval
spec:
  pytorchReplicaSpecs:
    Worker:
      replicas: 2
      template:
        spec:
          containers:
            - name: pytorch
              image: {{ .Values.image }}
              env:
                - name: TORCH_NCCL_ASYNC_ERROR_HANDLING
                  value: "0"
              resources:
                requests:
                  nvidia.com/gpu: 8
"""

EXPECTED_DIFF = """\
--- a/train/values.yaml
+++ b/train/values.yaml
@@ -6,6 +6,7 @@
             nvidia.com/gpu: 8   # a full node
         limits:
             memory: 64Gi
+            nvidia.com/gpu: 8
     env:
         - name: TORCH_NCCL_ASYNC_ERROR_HANDLING
-          value: "0"
+          value: "3"
"""


def _chart(root: Path, templates: dict[str, str], values: str = VALUES) -> Path:
    chart = root / "train"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: train\nversion: 0.1.0\n")
    (chart / "values.yaml").write_text(values)
    for name, text in templates.items():
        (chart / "templates" / name).write_text(text)
    return chart


def _digests(chart: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted((chart / "templates").iterdir())}


def _lint(root: Path, *args: str) -> tuple[int, bytes, bytes]:
    run = run_cli("lint", "--no-config", "--select", "KG301,KG503", *args, "train", cwd=root)
    return run.returncode, run.stdout, run.stderr


def _fixes(root: Path) -> dict[tuple[str, str], dict[str, object]]:
    code, out, err = _lint(root, "--show-fixes", "--format", "json")
    assert code == 1, err.decode()
    return {(f["rule"], f["location"]["path"]): f["fix"] for f in json.loads(out)["findings"]}


def test_diff_of_values_written_nodes_is_a_diff_of_the_values_file(tmp_path: Path) -> None:
    chart = _chart(tmp_path, {"job.yaml": JOB})
    before = _digests(chart), (chart / "values.yaml").read_bytes()
    code, out, err = _lint(tmp_path, "--diff")
    assert (code, out.decode()) == (1, EXPECTED_DIFF), err.decode()
    assert b"would fix 2 finding(s) in 1 file(s) (KG301 1, KG503 1)" in err
    assert (_digests(chart), (chart / "values.yaml").read_bytes()) == before  # --diff writes nothing


def test_fix_writes_the_values_file_and_the_chart_lints_clean(tmp_path: Path) -> None:
    chart = _chart(tmp_path, {"job.yaml": JOB})
    templates = _digests(chart)
    code, _, err = _lint(tmp_path, "--fix")
    assert code == 0, err.decode()
    assert b"fixed 2 finding(s) in 1 file(s)" in err
    assert _digests(chart) == templates  # never a template
    expected = VALUES.replace("            memory: 64Gi\n", "            memory: 64Gi\n            nvidia.com/gpu: 8\n")
    assert (chart / "values.yaml").read_text() == expected.replace('value: "0"', 'value: "3"')
    assert _lint(tmp_path)[0] == 0  # linted again: the findings are gone
    assert _lint(tmp_path, "--diff")[1] == b""  # and a second run has nothing to do


def test_values_without_the_limits_key_get_it_in_their_own_indentation(tmp_path: Path) -> None:
    values = "worker:\n  resources:\n    requests: {nvidia.com/gpu: 2}\n  env: []\nimage: x\n"
    chart = _chart(tmp_path, {"job.yaml": JOB}, values)
    code, _, err = _lint(tmp_path, "--fix")
    assert code == 0, err.decode()
    assert (chart / "values.yaml").read_text() == (
        "worker:\n  resources:\n    requests: {nvidia.com/gpu: 2}\n    limits:\n      nvidia.com/gpu: 2\n"
        "  env: []\nimage: x\n")


def test_a_template_written_node_gets_no_edit_and_the_fix_as_text(tmp_path: Path) -> None:
    chart = _chart(tmp_path, {"job.yaml": JOB, "eval.yaml": EVAL})
    templates = _digests(chart)
    fixes = _fixes(tmp_path)
    assert fixes[("KG301", "train/templates/eval.yaml")] == {
        "applicability": "none", "evidence": ["pytorch-fr-asynceh1"], "edits": [],
        "description": "no edit: the Helm template train/templates/eval.yaml is never edited; set"
                       " TORCH_NCCL_ASYNC_ERROR_HANDLING=3 (3 is SkipCleanUp, PyTorch's default since PR #110723)"
                       " by hand (safe; as rendered, indent it as the template does): at"
                       ' train/templates/eval.yaml:16 replace "\\"0\\"" with "\\"3\\""'}
    assert fixes[("KG503", "train/templates/eval.yaml")]["description"].endswith(  # type: ignore[union-attr]
        ': after train/templates/eval.yaml:19 add "                limits:\\n                  nvidia.com/gpu: 8\\n"')
    values_fix = fixes[("KG503", "train/values.yaml")]
    assert values_fix["applicability"] == "safe"
    assert values_fix["edits"] == [{"start": {"line": 9, "column": 1}, "end": {"line": 9, "column": 1},
                                    "text": "            nvidia.com/gpu: 8\n"}]
    code, _, err = _lint(tmp_path, "--fix")
    assert code == 1 and b"fixed 2 finding(s) in 1 file(s)" in err  # the eval job's two are left
    assert _digests(chart) == templates
    assert set(_fixes(tmp_path)) == {("KG301", "train/templates/eval.yaml"), ("KG503", "train/templates/eval.yaml")}


def test_a_toyaml_list_the_template_adds_to_still_has_its_own_items_fixed_in_the_values(tmp_path: Path) -> None:
    # The env list holds the values' items and one the template writes: the values' own item is
    # still set in the values file (values_lines places a run of items).
    job = JOB.replace("{{- toYaml .Values.worker.env | nindent 16 }}",
                      "{{- toYaml .Values.worker.env | nindent 16 }}\n                - name: NCCL_DEBUG\n"
                      "                  value: WARN")
    _chart(tmp_path, {"job.yaml": job})
    code, out, err = _lint(tmp_path, "--diff")
    assert code == 1 and b'+          value: "3"' in out, err.decode()
    assert b"templates" not in out


def test_values_files_fix_may_write(tmp_path: Path) -> None:
    chart = _chart(tmp_path, {"job.yaml": JOB})
    (tmp_path / "prod.yaml").write_text("image: y\n")
    values = str(chart / "values.yaml")
    assert may_write(values, [str(chart)]) and may_write(values, [str(tmp_path)])
    assert not may_write(values, [str(tmp_path / "elsewhere")])
    assert may_write(str(tmp_path / "prod.yaml"), [str(tmp_path / "prod.yaml")])
    assert not may_write(str(tmp_path / "prod.yaml"), [str(tmp_path)])  # a folder's walk does not name it


def test_helm_command_fixes_the_values_file_that_gives_the_value(tmp_path: Path) -> None:
    # `helm -f prod.yaml`: the env comes from prod.yaml (the last -f file wins), the resources
    # from the chart's values.yaml; both are the command line's, so --fix writes both.
    chart = _chart(tmp_path, {"job.yaml": JOB})
    templates = _digests(chart)
    prod = tmp_path / "prod.yaml"
    prod.write_text('worker:\n  env:\n    - name: TORCH_NCCL_ASYNC_ERROR_HANDLING\n      value: "1"  # tried\n')
    args = ("helm", "train", "-f", "prod.yaml", "--no-config", "--select", "KG301,KG503")
    run = run_cli(*args, "--diff", cwd=tmp_path)
    assert run.returncode == 1, run.stderr.decode()
    assert run.stdout.decode().startswith(
        '--- a/prod.yaml\n+++ b/prod.yaml\n@@ -1,4 +1,4 @@\n worker:\n   env:\n'
        '     - name: TORCH_NCCL_ASYNC_ERROR_HANDLING\n-      value: "1"  # tried\n+      value: "3"  # tried\n'
        '--- a/train/values.yaml\n')
    run = run_cli(*args, "--fix", cwd=tmp_path)
    assert run.returncode == 0, run.stdout.decode()
    assert b"fixed 2 finding(s) in 2 file(s)" in run.stderr
    assert prod.read_text().endswith('value: "3"  # tried\n')
    assert _digests(chart) == templates
    assert run_cli(*args, cwd=tmp_path).returncode == 0
