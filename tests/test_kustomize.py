"""Kustomize: folders rendered with the real `kubectl kustomize` (kustomize v5.5 here), findings
placed at the base, patch or generator line that wrote their node, on the real trees of
../shared/kustomize and on overlays written here with a patch of every kind.

Every place a test checks is opened: the named file, at the named line, holds the node's key."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import pytest
from conftest import REPO, SHARED, run_cli

KUBECTL = shutil.which("kubectl")
TREES_DIR = SHARED / "kustomize"
TREES = [
    "kubeflow__trainer/manifests/overlays/runtimes",
    "kubernetes-sigs__kueue/config/dev",
    "vllm-project__aibrix/development/app/config/heterogeneous",
    "vllm-project__aibrix/samples/heterogeneous",
    "intel__intel-device-plugins-for-kubernetes/deployments/gpu_plugin/overlays/wsl",
    "Mellanox__network-operator/config/default",
]
needs_kubectl = pytest.mark.skipif(KUBECTL is None, reason="kubectl is not on PATH: the real renderer is needed")
needs_trees = pytest.mark.skipif(not TREES_DIR.is_dir(), reason="../shared/kustomize (the real trees) is absent")


# ------------------------------------------------------------------ helpers

def _render(folder: Path) -> tuple[str, dict[int, Any]]:
    from kubegap_lint.kustomize.render import find_renderer, render

    with tempfile.TemporaryDirectory() as scratch:
        return render(find_renderer(KUBECTL), str(folder), scratch)


def _resources(text: str) -> list[Any]:
    from kubegap_lint.input.read import ReadStats, Resource, read_text

    return [r for r in read_text("R", text, ReadStats()) if isinstance(r, Resource)]


def _mapper(folder: Path, origins: dict[int, Any]) -> Any:
    from kubegap_lint.kustomize.mapping import OriginMapper

    return OriginMapper({"R": (str(folder), origins)})


def _leaves(node: Any, path: tuple[Any, ...] = ()) -> Any:
    if path:
        yield path
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _leaves(value, (*path, key))
    elif isinstance(node, list):
        for number, value in enumerate(node):
            yield from _leaves(value, (*path, number))


def _line(path: str, line: int) -> str:
    return Path(path).read_text(encoding="utf-8").split("\n")[line - 1]


def _holds_key(path: str, line: int, key: Any) -> bool:
    """The named line writes the node: its key (`key:`), a JSON 6902 path or a replacement's
    field path ending in it, or, for an image an `images` entry set, for a list item its first
    key (`- name:`)."""
    text = _line(path, line)
    if isinstance(key, int):
        # a block item (`- ...`), a flow item (`[a, b]`), or a JSON 6902 value
        return text.lstrip().startswith("-") or "[" in text or text.strip().startswith(("{", "\"")) or "value:" in text
    return (f"{key}:" in text or f"\"{key}\"" in text or text.rstrip().endswith((f"/{key}", f".{key}"))
            or f"/{key}\"" in text or key == "image" and any(k in text for k in ("newTag", "newName", "digest")))


def _snapshot(folder: Path) -> dict[str, tuple[bytes, int]]:
    return {str(p): (p.read_bytes(), p.stat().st_mtime_ns) for p in sorted(folder.rglob("*")) if p.is_file()}


def _place(mapper: Any, resource: Any, key_path: tuple[Any, ...]) -> Any:
    return mapper.place(resource, key_path, mapper.origin(resource))


def _find(resources: list[Any], kind: str, name: str) -> Any:
    return next(r for r in resources if r.kind == kind and r.name == name)


# ------------------------------------------------------------------ the real trees

@needs_kubectl
@needs_trees
@pytest.mark.parametrize("tree", TREES)
def test_render_with_origins_is_the_plain_render_and_leaves_the_tree_alone(tree: str) -> None:
    folder = TREES_DIR / tree
    owner = TREES_DIR / tree.split("/")[0]
    before = _snapshot(owner)
    text, origins = _render(folder)
    plain = subprocess.run([KUBECTL, "kustomize", str(folder)], capture_output=True, text=True, check=True).stdout
    assert text == plain  # the annotations gone, lines as the user's own render prints them
    assert sorted(origins) == list(range(len(_resources(text))))  # every object has its origin
    assert all(os.path.isfile(o.path or o.configured_in) for o in origins.values())
    assert _snapshot(owner) == before  # no file of the tree written, touched or added


@needs_kubectl
@needs_trees
@pytest.mark.parametrize("tree", TREES)
def test_every_node_of_a_real_tree_is_placed_on_a_line_that_writes_it(tree: str) -> None:
    folder = TREES_DIR / tree
    text, origins = _render(folder)
    mapper = _mapper(folder, origins)
    wrong, nodes, approximate = [], 0, 0
    for resource in _resources(text):
        if resource.kind == "CustomResourceDefinition":
            continue  # 1.6 MB of schema: nothing a rule reads
        generated = mapper.origin(resource)[0].path is None
        for key_path in _leaves(resource.data):
            placed = _place(mapper, resource, key_path)
            nodes += 1
            if placed.approximate:
                approximate += 1
            elif generated:  # at the generator's entry
                assert placed.path.endswith("kustomization.yaml") and _line(placed.path, placed.line).lstrip()[:2] == "- "
            elif not _holds_key(placed.path, placed.line, key_path[-1]):
                wrong.append((resource.kind, resource.name, key_path, placed))
    assert wrong == []
    assert approximate <= nodes // 10, (approximate, nodes)  # what kubegap-lint cannot tell is marked, and rare


@needs_kubectl
@needs_trees
def test_real_trees_fields_set_by_patches_are_placed_in_the_patch() -> None:
    # SOURCES.md names these fields and the patch lines that write them.
    kueue = TREES_DIR / "kubernetes-sigs__kueue/config/dev"
    text, origins = _render(kueue)
    mapper, resources = _mapper(kueue, origins), _resources(text)
    manager = _find(resources, "Deployment", "kueue-controller-manager")
    args = ("spec", "template", "spec", "containers", 0, "args")
    for number in range(len(manager.data["spec"]["template"]["spec"]["containers"][0]["args"])):
        placed = _place(mapper, manager, (*args, number))
        assert placed.path == str(kueue / "manager_config_patch.yaml")
        assert 11 <= placed.line <= 14 and not placed.approximate
    # `replacements` copy one webhook's namespaceSelector (an inline patch) into 36 others.
    mutating = _find(resources, "MutatingWebhookConfiguration", "kueue-mutating-webhook-configuration")
    webhook_kustomization = TREES_DIR / "kubernetes-sigs__kueue/config/components/webhook/kustomization.yaml"
    selector = _place(mapper, mutating, ("webhooks", 0, "namespaceSelector"))
    assert (selector.path, selector.approximate) == (str(webhook_kustomization), False)
    assert _line(selector.path, selector.line).strip() == "- webhooks.[name=mappwrapper.kb.io].namespaceSelector"
    operator = _place(mapper, mutating, ("webhooks", 0, "namespaceSelector", "matchExpressions", 0, "operator"))
    assert (operator.path, operator.line, operator.approximate) == (str(webhook_kustomization), 19, False)
    assert _line(operator.path, operator.line).strip() == "operator: NotIn"  # in the source's inline patch
    generated = _find(resources, "ConfigMap", "kueue-manager-config")
    placed = _place(mapper, generated, ("metadata", "name"))
    manager_kustomization = TREES_DIR / "kubernetes-sigs__kueue/config/components/manager/kustomization.yaml"
    assert placed.path == str(manager_kustomization)
    assert _line(placed.path, placed.line).lstrip().startswith("- ")  # the configMapGenerator entry
    assert "configMapGenerator" in _line(placed.path, placed.line - 1)

    intel = TREES_DIR / "intel__intel-device-plugins-for-kubernetes/deployments/gpu_plugin/overlays/wsl"
    text, origins = _render(intel)
    mapper, [plugin] = _mapper(intel, origins), _resources(text)
    privileged = _place(mapper, plugin, ("spec", "template", "spec", "containers", 1, "securityContext", "privileged"))
    assert privileged.path == str(intel.parent / "levelzero" / "levelzero.yaml")
    assert 3 <= privileged.line <= 24 and _line(privileged.path, privileged.line).strip() == "privileged: true"
    first_args = _place(mapper, plugin, ("spec", "template", "spec", "containers", 0, "args"))
    assert first_args.path == str(intel / "wsl_args.yaml")
    assert _line(first_args.path, first_args.line).strip() == "path: /spec/template/spec/containers/0/args"
    image = _place(mapper, plugin, ("spec", "template", "spec", "containers", 0, "image"))
    assert image.path == str(intel.parent.parent / "base" / "intel-gpu-plugin.yaml")

    samples = TREES_DIR / "vllm-project__aibrix/samples/heterogeneous"
    text, origins = _render(samples)
    mapper, resources = _mapper(samples, origins), _resources(text)
    for name, line in (("deepseek-coder-7b-v100", 17), ("deepseek-coder-7b-l20", 27)):
        deployment = _find(resources, "Deployment", name)
        placed = _place(mapper, deployment, ("metadata", "labels", "model.aibrix.ai/min_replicas"))
        assert (placed.path, placed.line, placed.approximate) == (str(samples / "kustomization.yaml"), line, False)
        assert _line(placed.path, line).strip().startswith("model.aibrix.ai/min_replicas:")

    network = TREES_DIR / "Mellanox__network-operator/config/default"
    text, origins = _render(network)
    mapper, resources = _mapper(network, origins), _resources(text)
    operator = _find(resources, "Deployment", "nvidia-network-operator-controller-manager")
    memory = _place(mapper, operator, ("spec", "template", "spec", "containers", 0, "resources", "requests", "memory"))
    assert memory.path == str(network / "manager_args_and_resource_limits.yaml")
    assert 12 <= memory.line <= 22 and _line(memory.path, memory.line).strip() == "memory: 64M"

    trainer = TREES_DIR / "kubeflow__trainer/manifests/overlays/runtimes"
    text, origins = _render(trainer)
    mapper, resources = _mapper(trainer, origins), _resources(text)
    expected = {"torchtune-llama3.2-1b": 102, "torchtune-llama3.2-3b": 102, "torchtune-qwen2.5-1.5b": 103}
    for name, line in expected.items():
        runtime = _find(resources, "ClusterTrainingRuntime", name)
        jobs = runtime.data["spec"]["template"]["spec"]["replicatedJobs"]
        node = next(n for n, job in enumerate(jobs) if job["name"] == "node")
        placed = _place(mapper, runtime, ("spec", "template", "spec", "replicatedJobs", node, "template", "spec",
                                          "template", "spec", "containers", 0, "resources", "limits", "nvidia.com/gpu"))
        assert placed.line == line and not placed.approximate
        assert "/manifests/base/runtimes/torchtune/" in placed.path
        assert _line(placed.path, placed.line).strip() == "nvidia.com/gpu: 2"


@needs_kubectl
@needs_trees
def test_one_base_renamed_into_two_copies_only_the_patched_copy_points_at_the_patch() -> None:
    tree = TREES_DIR / "vllm-project__aibrix/development/app/config/heterogeneous"
    text, origins = _render(tree)
    mapper, resources = _mapper(tree, origins), _resources(text)
    command = ("spec", "template", "spec", "containers", 0, "command")
    a100 = _find(resources, "Deployment", "simulator-llama2-7b-a100")
    a40 = _find(resources, "Deployment", "simulator-llama2-7b-a40")
    api_key = a100.data["spec"]["template"]["spec"]["containers"][0]["command"].index("--api_key")
    placed = _place(mapper, a100, (*command, api_key))
    assert placed.path == str(tree.parent / "mock" / "api-key-patch.yaml") and not placed.approximate
    assert _line(placed.path, placed.line).strip() == "- --api_key"
    a40_container = a40.data["spec"]["template"]["spec"]["containers"][0]
    assert "--api_key" not in a40_container.get("command", [])
    for key_path in _leaves(a40_container, command[:-1]):
        assert not _place(mapper, a40, key_path).path.endswith("api-key-patch.yaml")


@needs_kubectl
@needs_trees
def test_lint_a_real_tree_reports_at_the_base_lines_with_the_rendered_place_beside() -> None:
    proc = run_cli("--no-config", "--no-repo-facts", "--select", "KG501", "--format", "json",
                   "kubeflow__trainer/manifests/overlays/runtimes", cwd=TREES_DIR)
    assert proc.returncode == 1, proc.stderr
    found = json.loads(proc.stdout)["findings"]
    places = [(f["location"]["path"], f["location"]["line"], f["rendered_location"]["line"], f["approximate"])
              for f in found]
    base = "kubeflow__trainer/manifests/base/runtimes/torchtune"
    assert places == [(f"{base}/llama3_2/llama3_2_1B.yaml", 85, 245, False),
                      (f"{base}/llama3_2/llama3_2_3B.yaml", 85, 339, False),
                      (f"{base}/qwen2_5/qwen2_5_1.5B.yaml", 85, 433, False)]
    assert {f["rendered_location"]["path"] for f in found} == {
        "<kustomize build kubeflow__trainer/manifests/overlays/runtimes>"}
    for finding in found:  # the container the finding is about starts there
        assert _line(str(TREES_DIR / finding["location"]["path"]), 85).strip() == "- name: node"


@needs_kubectl
@needs_trees
def test_linting_the_folder_of_every_tree_renders_each_top_kustomization_once() -> None:
    # kueue's config/default, intel's levelzero, aibrix's simulator are bases of another tree here.
    proc = run_cli("--no-config", "--no-repo-facts", "--format", "json", ".", cwd=TREES_DIR)
    report = json.loads(proc.stdout)
    assert proc.returncode == 1 and report["errors"] == []
    summary = report["summary"]
    assert (summary["files"], summary["documents"], summary["workloads"]) == (6, 8 + 79 + 17 + 10 + 1 + 12, 22)


# ------------------------------------------------------------------ overlays written here

BASE_JOB = """\
apiVersion: batch/v1
kind: Job
metadata:
  name: train
  labels:
    app: train
spec:
  parallelism: 2
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: trainer
          image: registry.example/ddp:1
          command: ["torchrun", "--nnodes=2", "--nproc-per-node=8", "train.py"]
          env:
            - name: NCCL_BASE_TYPO
              value: "1"
          resources:
            limits:
              nvidia.com/gpu: 8
"""
OVERLAY = """\
resources:
  - ../base
namePrefix: prod-
patches:
  - path: smp.yaml
  - path: json.yaml
    target:
      kind: Job
      name: train
  - patch: |-
      apiVersion: batch/v1
      kind: Job
      metadata:
        name: train
      spec:
        template:
          spec:
            containers:
              - name: trainer
                env:
                  - name: NCCL_INLINE_SMP_TYPO
                    value: "3"
  - target:
      kind: Job
    patch: |-
      - op: add
        path: /spec/template/spec/containers/0/env/-
        value:
          name: NCCL_INLINE_JSON_TYPO
          value: "4"
patchesStrategicMerge:
  - legacy.yaml
patchesJson6902:
  - target:
      group: batch
      version: v1
      kind: Job
      name: train
    path: legacy-json.yaml
configMapGenerator:
  - name: settings
    literals:
      - a=b
"""


def _smp(variable: str, value: str) -> str:
    return ("apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: train\nspec:\n  template:\n    spec:\n"
            f"      containers:\n        - name: trainer\n          env:\n            - name: {variable}\n"
            f"              value: \"{value}\"\n")


def _json(variable: str, value: str) -> str:
    return (f"- op: add\n  path: /spec/template/spec/containers/0/env/-\n  value:\n    name: {variable}\n"
            f"    value: \"{value}\"\n")


def write_tree(root: Path) -> Path:
    (root / "base").mkdir(parents=True)
    (root / "overlay").mkdir()
    (root / "base" / "job.yaml").write_text(BASE_JOB)
    (root / "base" / "kustomization.yaml").write_text("resources:\n  - job.yaml\n")
    (root / "overlay" / "kustomization.yaml").write_text(OVERLAY)
    (root / "overlay" / "smp.yaml").write_text(_smp("NCCL_SMP_FILE_TYPO", "2"))
    (root / "overlay" / "json.yaml").write_text(_json("NCCL_JSON_FILE_TYPO", "5"))
    (root / "overlay" / "legacy.yaml").write_text(_smp("NCCL_LEGACY_SMP_TYPO", "6"))
    (root / "overlay" / "legacy-json.yaml").write_text(_json("NCCL_LEGACY_JSON_TYPO", "7"))
    return root


# Each variable, the file and line that wrote it: one a patch kind, and the base.
EXPECTED_KG305 = [
    ("base/job.yaml", 17, "NCCL_BASE_TYPO"),
    ("overlay/json.yaml", 4, "NCCL_JSON_FILE_TYPO"),  # patches: path, JSON 6902
    ("overlay/kustomization.yaml", 21, "NCCL_INLINE_SMP_TYPO"),  # patches: inline strategic merge
    ("overlay/kustomization.yaml", 29, "NCCL_INLINE_JSON_TYPO"),  # patches: inline JSON 6902
    ("overlay/legacy-json.yaml", 4, "NCCL_LEGACY_JSON_TYPO"),  # patchesJson6902
    ("overlay/legacy.yaml", 11, "NCCL_LEGACY_SMP_TYPO"),  # patchesStrategicMerge
    ("overlay/smp.yaml", 11, "NCCL_SMP_FILE_TYPO"),  # patches: path, strategic merge
]


def _findings(proc: subprocess.CompletedProcess[bytes]) -> list[dict[str, Any]]:
    return json.loads(proc.stdout)["findings"]


@needs_kubectl
def test_written_overlay_every_patch_kind_at_its_patch_line(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "repo")
    before = _snapshot(root)
    proc = run_cli("--no-config", "--no-repo-facts", "--select", "KG305", "--format", "json", "overlay", cwd=root)
    assert proc.returncode == 1, proc.stderr
    found = _findings(proc)
    got = [(f["location"]["path"], f["location"]["line"]) for f in found]
    assert got == [(p, line) for p, line, _ in EXPECTED_KG305]
    for finding, (path, line, variable) in zip(found, EXPECTED_KG305, strict=True):
        assert variable in finding["message"]
        assert _line(str(root / path), line).strip() == f"- name: {variable}" or \
            _line(str(root / path), line).strip() == f"name: {variable}"
        assert finding["rendered_location"]["path"] == "<kustomize build overlay>"
        assert not finding["approximate"]
    assert _snapshot(root) == before  # the user's files are never written


@needs_kubectl
def test_a_components_patch_is_placed_in_the_component(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "repo")
    (root / "components" / "nccl").mkdir(parents=True)
    (root / "components" / "nccl" / "kustomization.yaml").write_text(
        "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\npatches:\n  - path: env.yaml\n")
    (root / "components" / "nccl" / "env.yaml").write_text(_smp("NCCL_COMPONENT_TYPO", "8"))
    (root / "overlay" / "kustomization.yaml").write_text(
        "resources:\n  - ../base\ncomponents:\n  - ../components/nccl\n")
    proc = run_cli("--no-config", "--no-repo-facts", "--select", "KG305", "--format", "json", "overlay", cwd=root)
    assert [(f["location"]["path"], f["location"]["line"], f["approximate"]) for f in _findings(proc)] == [
        ("base/job.yaml", 17, False), ("components/nccl/env.yaml", 11, False)]
    assert _line(str(root / "components/nccl/env.yaml"), 11).strip() == "- name: NCCL_COMPONENT_TYPO"


@needs_kubectl
def test_written_overlay_generator_and_base_document(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "repo")
    folder = root / "overlay"
    text, origins = _render(folder)
    mapper, resources = _mapper(folder, origins), _resources(text)
    config = next(r for r in resources if r.kind == "ConfigMap")
    placed = _place(mapper, config, ("metadata", "name"))
    entry = OVERLAY.split("\n").index("  - name: settings") + 1
    assert (placed.path, placed.line, placed.approximate) == (str(folder / "kustomization.yaml"), entry, False)
    assert _line(placed.path, placed.line).strip() == "- name: settings"
    job = _find(resources, "Job", "prod-train")
    placed = _place(mapper, job, ("spec", "parallelism"))
    assert (placed.path, placed.line, placed.approximate) == (str(root / "base" / "job.yaml"), 8, False)


@needs_kubectl
def test_a_base_is_not_linted_on_its_own_unless_named(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "repo")
    proc = run_cli("--no-config", "--no-repo-facts", "--select", "KG305", "--format", "json", ".", cwd=root)
    streams = {f["rendered_location"]["path"] for f in _findings(proc)}
    assert streams == {"<kustomize build overlay>"}
    assert json.loads(proc.stdout)["summary"]["files"] == 1  # no patch or base file read as a manifest
    proc = run_cli("--no-config", "--no-repo-facts", "--select", "KG305", "--format", "json", "overlay", "base",
                   cwd=root)
    streams = {f["rendered_location"]["path"] for f in _findings(proc)}
    assert streams == {"<kustomize build overlay>", "<kustomize build base>"}


def test_a_file_named_on_the_command_line_is_linted_as_it_is(tmp_path: Path) -> None:
    # pre-commit's main hook names changed files: no render (no renderer is even looked for).
    root = write_tree(tmp_path / "repo")
    proc = run_cli("--no-config", "--no-repo-facts", "--select", "KG305", "--format", "json", "base/job.yaml",
                   "overlay/smp.yaml", cwd=root, env={"PATH": str(tmp_path / "empty")})
    assert proc.returncode == 1, proc.stderr
    assert [(f["location"]["path"], f["location"]["line"], f["rendered_location"]) for f in _findings(proc)] == [
        ("base/job.yaml", 17, None)]  # the patch alone holds no GPU workload
    assert json.loads(proc.stdout)["summary"]["files"] == 2


@needs_kubectl
def test_piped_render_with_origin_annotations_points_at_the_files(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "repo")
    (root / "kustomization.yaml").write_text("resources:\n  - overlay\nbuildMetadata: [originAnnotations]\n")
    rendered = subprocess.run([KUBECTL, "kustomize", str(root)], capture_output=True, check=True).stdout
    assert b"config.kubernetes.io/origin" in rendered
    proc = run_cli("--no-config", "--no-repo-facts", "--select", "KG305", "--format", "json", "-",
                   stdin=rendered, cwd=root)
    assert proc.returncode == 1, proc.stderr
    found = _findings(proc)
    assert [(f["location"]["path"], f["location"]["line"]) for f in found] == [
        (p, line) for p, line, _ in EXPECTED_KG305]
    assert {f["rendered_location"]["path"] for f in found} == {"<stdin>"}


def test_piped_origin_annotation_is_removed_before_the_rules() -> None:
    from kubegap_lint.input.read import ReadStats, read_text
    from kubegap_lint.kustomize.mapping import OriginMapper

    text = ("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  annotations:\n    config.kubernetes.io/origin: |\n"
            "      path: base/cm.yaml\n  name: a\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n"
            "  annotations:\n    config.kubernetes.io/origin: |\n      configuredIn: kustomization.yaml\n"
            "      configuredBy:\n        apiVersion: builtin\n        kind: ConfigMapGenerator\n    keep: me\n"
            "  name: b\n")
    mapper = OriginMapper()
    first, second = read_text("<stdin>", text, ReadStats())
    mapper.note(first)
    mapper.note(second)
    assert first.data["metadata"] == {"name": "a"}
    assert second.data["metadata"] == {"annotations": {"keep": "me"}, "name": "b"}
    assert [(o.path, o.configured_in, o.configured_by) for o in mapper.piped.values()] == [
        ("base/cm.yaml", None, None), (None, "kustomization.yaml", "ConfigMapGenerator")]


def test_strip_origins_gives_the_plain_text_and_each_documents_origin() -> None:
    from kubegap_lint.kustomize.origin import strip_origins

    text = ("apiVersion: v1\nkind: A\nmetadata:\n  annotations:\n    config.kubernetes.io/origin: |\n"
            "      path: ../a.yaml\n  name: a\n---\napiVersion: v1\nkind: B\nmetadata:\n  annotations:\n"
            "    config.kubernetes.io/origin: |\n      path: b.yaml\n    x: y\n  name: b\n")
    plain, origins = strip_origins(text)
    assert plain == ("apiVersion: v1\nkind: A\nmetadata:\n  name: a\n---\napiVersion: v1\nkind: B\nmetadata:\n"
                     "  annotations:\n    x: y\n  name: b\n")
    assert {n: o.path for n, o in origins.items()} == {0: "../a.yaml", 1: "b.yaml"}


# ------------------------------------------------------------------ what cannot be rendered

NOT_LINTED = "error KG009 input-not-rendered: kustomization overlay was not linted: "


def test_no_renderer_is_a_located_finding_never_a_pass(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "repo")
    empty = {"PATH": str(tmp_path / "empty")}
    proc = run_cli("--no-config", "--no-repo-facts", "overlay", cwd=root, env=empty)
    assert proc.returncode == 1
    assert proc.stdout.decode().startswith(
        f"overlay/kustomization.yaml:1:1: {NOT_LINTED}no `kustomize` or `kubectl` on PATH to render it")
    proc = run_cli("--no-config", "--no-repo-facts", "--kustomize", str(tmp_path / "nothing"), "overlay", cwd=root)
    assert proc.returncode == 1
    assert f"overlay/kustomization.yaml:1:1: {NOT_LINTED}no renderer at" in proc.stdout.decode()
    # --allow-unrendered: said as a note, the exit code 0; in every format (JSON here)
    proc = run_cli("--no-config", "--no-repo-facts", "--allow-unrendered", "--format", "json", "overlay", cwd=root,
                   env=empty)
    assert proc.returncode == 0
    [finding] = _findings(proc)
    assert (finding["rule"], finding["severity"], finding["location"]["path"], finding["location"]["line"]) == (
        "KG009", "note", "overlay/kustomization.yaml", 1)
    proc = run_cli("kustomize", "--no-config", "overlay", cwd=root, env=empty)
    assert proc.returncode == 1 and f"overlay/kustomization.yaml:1:1: {NOT_LINTED}" in proc.stdout.decode()


def test_a_remote_base_is_refused_at_its_line_and_nothing_runs(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    (root / "overlay").mkdir(parents=True)
    (root / "overlay" / "kustomization.yaml").write_text(
        "resources:\n  - job.yaml\n  - https://github.com/kubernetes-sigs/kueue/config/default?ref=v0.9.0\n")
    (root / "overlay" / "job.yaml").write_text(BASE_JOB)
    # A stand-in renderer that only records it was started: a refused render never starts it.
    marker = tmp_path / "ran"
    standin = tmp_path / "kubectl"
    standin.write_text(f"#!/bin/sh\ntouch {marker}\n")
    standin.chmod(0o755)
    proc = run_cli("--no-config", "--no-repo-facts", "--kustomize", str(standin), "overlay", cwd=root)
    assert proc.returncode == 1
    assert (f"overlay/kustomization.yaml:3:5: {NOT_LINTED}names a remote base"
            " (https://github.com/kubernetes-sigs/kueue/config/default?ref=v0.9.0)") in proc.stdout.decode()
    assert not marker.exists()


def test_a_path_out_of_the_repository_is_refused_at_its_line_and_nothing_runs(tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "secret.env").write_text("TOKEN=x\n")
    root = write_tree(tmp_path / "repo")
    (root / "overlay" / "kustomization.yaml").write_text(
        "resources:\n  - ../base\nconfigMapGenerator:\n  - name: leak\n    envs:\n      - ../../elsewhere/secret.env\n")
    (root / "overlay" / "linked").symlink_to(outside, target_is_directory=True)
    marker = tmp_path / "ran"
    standin = tmp_path / "kubectl"  # a stand-in renderer that only records it was started
    standin.write_text(f"#!/bin/sh\ntouch {marker}\n")
    standin.chmod(0o755)
    proc = run_cli("--no-config", "--no-repo-facts", "--kustomize", str(standin), "overlay", cwd=root)
    assert proc.returncode == 1
    assert (f"overlay/kustomization.yaml:6:9: {NOT_LINTED}names ../../elsewhere/secret.env,"
            " outside the repository") in proc.stdout.decode()
    (root / "overlay" / "kustomization.yaml").write_text("resources:\n  - ../base\n  - linked\n")
    proc = run_cli("--no-config", "--no-repo-facts", "--kustomize", str(standin), "overlay", cwd=root)
    assert proc.returncode == 1
    assert f"overlay/kustomization.yaml:3:5: {NOT_LINTED}names linked, outside" in proc.stdout.decode()
    assert not marker.exists()


@needs_kubectl
def test_a_render_that_fails_is_a_located_error(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    (root / "overlay").mkdir(parents=True)
    (root / "overlay" / "kustomization.yaml").write_text("resources:\n  - missing.yaml\n")
    proc = run_cli("--no-config", "--no-repo-facts", "overlay", cwd=root)
    assert proc.returncode == 1
    out = proc.stdout.decode()
    # at the entry that names the file kustomize could not read
    assert f"overlay/kustomization.yaml:2:5: {NOT_LINTED}kubectl kustomize failed (exit 1)" in out
    assert "missing.yaml: no such file or directory" in out


@needs_kubectl
def test_helm_charts_in_a_kustomization_are_not_inflated(tmp_path: Path) -> None:
    # --enable-helm is never passed: kustomize would run helm and fetch the chart.
    root = tmp_path / "repo"
    (root / "k").mkdir(parents=True)
    (root / "k" / "kustomization.yaml").write_text(
        "helmCharts:\n  - name: x\n    repo: https://example.invalid/charts\n    version: 1.0.0\n")
    proc = run_cli("--no-config", "--no-repo-facts", "-q", "k", cwd=root)
    assert proc.returncode == 1
    out = proc.stdout.decode()
    assert out.startswith("k/kustomization.yaml:1:1: error KG009 input-not-rendered: kustomization k was not"
                          " linted: kubectl kustomize failed (exit 1):")
    assert out.rstrip().endswith("must specify --enable-helm")


# ------------------------------------------------------------------ suppressions

@needs_kubectl
def test_suppressions_written_in_a_base_or_a_patch_apply(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "repo")
    # An inline directive on the patch's line, and an annotation written in the base.
    smp = root / "overlay" / "smp.yaml"
    smp.write_text(smp.read_text().replace(
        "- name: NCCL_SMP_FILE_TYPO", "- name: NCCL_SMP_FILE_TYPO  # kubegap:ignore KG305 kept for the old image"))
    base = root / "base" / "job.yaml"
    base.write_text(base.read_text().replace("  labels:\n    app: train\n",
                                             "  labels:\n    app: train\n  annotations:\n"
                                             "    kubegap.io/ignore: \"KG402\"\n"
                                             "    kubegap.io/ignore-reason: \"queued by hand\"\n"))
    proc = run_cli("--no-config", "--no-repo-facts", "--select", "KG305,KG402", "--format", "json", "overlay",
                   cwd=root)
    found = _findings(proc)
    suppressed = {(f["rule"], f["location"]["path"], f["location"]["line"]): f["suppressed"]
                  for f in found if f["suppressed"]}
    assert set(suppressed) == {("KG305", "overlay/smp.yaml", 11), ("KG402", "base/job.yaml", 5)}
    assert suppressed[("KG305", "overlay/smp.yaml", 11)]["kind"] == "inline"
    assert suppressed[("KG402", "base/job.yaml", 5)]["kind"] == "annotation"
    assert _line(str(base), 5) == "  labels:" and _line(str(smp), 11).strip().startswith("- name: NCCL_SMP_FILE_TYPO")
    assert sum(1 for f in found if not f["suppressed"]) == 6  # the other six KG305


# ------------------------------------------------------------------ pre-commit's entry

def _git(cwd: Path, *args: str) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid",
           "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, env=env)


@needs_kubectl
@pytest.mark.skipif(shutil.which("git") is None, reason="git is needed for a repository top")
def test_from_files_relints_every_kustomization_that_reads_a_changed_file(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "repo")
    (root / "other").mkdir()
    (root / "other" / "kustomization.yaml").write_text("resources:\n  - cm.yaml\n")
    (root / "other" / "cm.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n")
    _git(root, "init", "-q")
    _git(root, "add", "-A")

    def streams(*changed: str) -> set[str]:
        proc = run_cli("kustomize", "--from-files", "--no-config", "--select", "KG305", "--format", "json",
                       *changed, cwd=root)
        return {f["rendered_location"]["path"] for f in _findings(proc)} if proc.stdout else set()

    assert streams("base/job.yaml") == {"<kustomize build base>", "<kustomize build overlay>"}
    assert streams("overlay/smp.yaml") == {"<kustomize build overlay>"}
    proc = run_cli("kustomize", "--from-files", "--no-config", "other/cm.yaml", "README.md", cwd=root)
    assert proc.returncode == 0 and b"<kustomize build other>" not in proc.stdout
    proc = run_cli("kustomize", "--from-files", "--no-config", "README.md", cwd=root)
    assert (proc.returncode, proc.stdout) == (0, b"")


def test_hook_is_declared() -> None:
    hooks = (REPO / ".pre-commit-hooks.yaml").read_text()
    assert "- id: kubegap-lint-kustomize\n" in hooks
    assert "entry: kubegap-lint kustomize --from-files" in hooks
