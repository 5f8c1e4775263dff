"""The NCCL rules beyond their examples: severities chosen per finding, the known-name list
and its sources, messages that name the problem, and no double report with KG303."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import CORPUS, REPO, requires_shared

from kubegap_lint.catalog.envnames import load_env_names
from kubegap_lint.catalog.functions import PolicyFunctions
from kubegap_lint.catalog.policies import load_catalog

EXAMPLES = REPO / "examples"


def _findings(linter_factory, rule: str, path: Path) -> list:
    result = linter_factory((rule,)).lint_paths([str(path)])
    return [f for f in result.findings if f.rule_id == rule]


def test_kg301_is_an_error_for_0_and_a_warning_for_1(linter_factory) -> None:
    folder = EXAMPLES / "KG301-nccl-async-error-handling-off"
    (zero,) = _findings(linter_factory, "KG301", folder / "bad-handling-zero.yaml")
    (one,) = _findings(linter_factory, "KG301", folder / "bad-teardown-old-name.yaml")
    assert (zero.severity.value, one.severity.value) == ("error", "warning")
    assert "no handling" in zero.message and "NCCL_ASYNC_ERROR_HANDLING=1" in one.message


def test_kg305_suggests_the_closest_name_and_explains_nccl_timeout(linter_factory) -> None:
    folder = EXAMPLES / "KG305-nccl-env-unknown"
    messages = sorted(f.message for f in _findings(linter_factory, "KG305", folder / "bad-typo.yaml"))
    assert "NCCL_IB_TIMEOUTS" in messages[0] and "did you mean NCCL_IB_TIMEOUT?" in messages[0]
    assert "did you mean TORCH_NCCL_ENABLE_MONITORING?" in messages[1]
    (timeout,) = _findings(linter_factory, "KG305", folder / "bad-nccl-timeout-exported.yaml")
    assert "init_process_group(timeout=...)" in timeout.message
    assert "did you mean" not in timeout.message  # the hint wins over a look-alike


def test_kg304_stays_quiet_where_kg303_speaks(linter_factory) -> None:
    text = """
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: p}
spec:
  pytorchReplicaSpecs:
    Worker:
      replicas: 2
      template:
        spec:
          containers:
            - name: c
              env: [{name: TORCH_FR_BUFFER_SIZE, value: "0"}]
              resources: {limits: {nvidia.com/gpu: 8}}
"""
    result = linter_factory(("KG303", "KG304")).lint_texts([("m.yaml", text)])
    assert sorted(f.rule_id for f in result.findings) == ["KG303"]


def test_known_name_accepts_exact_names_and_plugin_prefixes() -> None:
    functions = PolicyFunctions({})
    known = ["NCCL_IB_TIMEOUT", "NCCL_FASTRAK_*"]
    assert functions._func_known_name("NCCL_IB_TIMEOUT", known)
    assert functions._func_known_name("NCCL_FASTRAK_IFNAME", known)
    assert not functions._func_known_name("NCCL_IB_TIMEOUTS", known)
    assert not functions._func_known_name("NCCL_FASTRA", known)


def test_lookup_reads_a_computed_key() -> None:
    functions = PolicyFunctions({})
    assert functions._func_lookup({"A": "x"}, "A") == "x"
    assert functions._func_lookup({"A": "x"}, "B") is None
    assert functions._func_lookup(None, "A") is None


def test_the_name_list_reaches_the_policies_with_its_hints() -> None:
    params = load_catalog().params
    known = params["known_nccl_env"]
    assert "NCCL_TIMEOUT" not in known  # env-vars.md: no such NCCL parameter
    assert {"NCCL_IB_TIMEOUT", "TORCH_NCCL_ASYNC_ERROR_HANDLING", "TORCH_FR_BUFFER_SIZE",
            "NCCL_ASYNC_ERROR_HANDLING", "NCCL_GPUDIRECTTCPX_*", "NCCL_FASTRAK_*"} <= set(known)
    assert "NCCL_TIMEOUT" in params["nccl_env_hints"]
    assert known == sorted(set(known))


def test_a_broken_name_file_is_a_clear_error(tmp_path: Path) -> None:
    from kubegap_lint.core.errors import DataFileError

    bad = tmp_path / "nccl-env-names.yaml"
    bad.write_text("groups:\n  - id: x\n    source: somewhere\n    names: [nccl_lower]\n")
    with pytest.raises(DataFileError) as caught:
        load_env_names(bad)
    assert "nccl-env-names.yaml" in str(caught.value)


@requires_shared
def test_every_nccl_name_the_corpus_sets_is_known() -> None:
    """A false alarm on a real variable costs more trust than a miss: every NCCL-like name in
    the real manifests must be on the list (they were all checked against their sources)."""
    names: set[str] = set()
    pattern = re.compile(r"\b(?:NCCL|TORCH_NCCL|TORCH_FR)_[A-Z0-9_]*[A-Z0-9]")
    for path in sorted(CORPUS.rglob("*.y*ml")):
        names.update(pattern.findall(path.read_text(encoding="utf-8", errors="replace")))
    functions = PolicyFunctions({})
    known = load_catalog().params["known_nccl_env"]
    assert names, "the corpus names no NCCL variable: the test would prove nothing"
    assert [n for n in sorted(names) if not functions._func_known_name(n, known)] == []


def test_kg305_judges_multinode_serving_as_training(linter_factory) -> None:
    folder = EXAMPLES / "KG305-nccl-env-unknown"
    found = _findings(linter_factory, "KG305", folder / "bad-multinode-vllm-lws.yaml")
    assert [(f.location.line, f.message.split(":")[0]) for f in found] == [
        (26, "container vllm-leader"), (43, "container vllm-worker")]
    assert all("init_process_group(timeout=...)" in f.message for f in found)


RAY_SERVICE = """\
apiVersion: ray.io/v1
kind: RayService
metadata: {name: llm}
spec:
  rayClusterConfig:
    headGroupSpec:
      template: {spec: {containers: [{name: head, image: "rayproject/ray:2.9.0"}]}}
    workerGroupSpecs:
      - groupName: gpu
        replicas: WORKERS
        template:
          spec:
            containers:
              - name: worker
                image: rayproject/ray:2.9.0
                env: [{name: NCCL_TIMEOUT, value: "1800"}]
                resources: {limits: {nvidia.com/gpu: 8}}
"""
SINGLE_POD_SERVER = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: vllm}
spec:
  replicas: 2
  template:
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.8.5
          args: [ARGS]
          env: [{name: NCCL_TIMEOUT, value: "1800"}]
          resources: {limits: {nvidia.com/gpu: 8}}
"""


@pytest.mark.parametrize("text,multinode", [
    (RAY_SERVICE.replace("WORKERS", "2"), True),
    (RAY_SERVICE.replace("WORKERS", "1"), False),  # one GPU pod: NCCL stays inside it
    (SINGLE_POD_SERVER.replace("ARGS", "--model, /m, --tensor-parallel-size, '8'"), False),  # replicas share nothing
    (SINGLE_POD_SERVER.replace("ARGS", "--model, /m, --nnodes, '2', --node-rank, '0'"), True),
])
def test_multinode_serving_is_an_engine_that_spans_pods(text: str, multinode: bool) -> None:
    from kubegap_lint.config.settings import Settings
    from kubegap_lint.engine.run import Linter

    result = Linter(Settings(select=["KG305"])).lint_texts([("m.yaml", text)], keep_views=True)
    (view,) = result.views
    assert view["multinode_serving"] is multinode
    assert len(result.findings) == (1 if multinode else 0)
