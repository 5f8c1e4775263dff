"""Only Kubernetes is linted (input/judged.py): files beside the manifests that are not
Kubernetes (a tsconfig.json with comments, a docker-compose file with a duplicate key) get no
finding; a YAML syntax error in a manifest-named .yaml file still does."""

from __future__ import annotations

from pathlib import Path

from conftest import run_cli

from kubegap_lint.input.judged import manifest_name


def _tree(top: Path) -> None:
    files = {
        "tsconfig.json": '{\n  // comments are JSON with comments, not broken YAML\n  "compilerOptions": {"strict": true,},\n}\n',
        "docker-compose.yaml": "services:\n  web:\n    image: a\n    image: b\n",
        "compose.yml": "services: {web: [1}\n",
        "k8s/broken.yaml": "metadata:\n  name: [a\n",
        "k8s/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {a: x, a: y}\n",
        "k8s/half.json": '{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "b"},,}\n',
    }
    for name, text in files.items():
        (top / name).parent.mkdir(parents=True, exist_ok=True)
        (top / name).write_text(text, encoding="utf-8")


def test_only_kubernetes_is_judged(tmp_path: Path) -> None:
    _tree(tmp_path)
    proc = run_cli("--no-config", ".", "tsconfig.json", "k8s/half.json", cwd=tmp_path)
    lines = proc.stdout.decode().splitlines()
    assert proc.returncode == 1, proc.stderr
    assert [line.split(": ", 2)[:2] for line in lines[:-1]] == [
        ["k8s/broken.yaml:2:9", "error KG001 yaml-syntax-error"],  # a .yaml file: a manifest's name
        ["k8s/cm.yaml:4:14", "warning KG002 yaml-duplicate-key"],  # a ConfigMap's duplicate key
        ["k8s/half.json:1:69", "error KG001 yaml-syntax-error"],  # reads as Kubernetes
    ]
    assert lines[-1].startswith("6 files, 6 documents (0 empty, 3 not Kubernetes), 1 resource")


def test_well_known_files_that_are_not_kubernetes() -> None:
    assert [manifest_name(p) for p in ("k8s/job.yaml", "deploy/x.yml", "<stdin>", "docker-compose.yaml",
                                       "compose.prod.yml", "a/values-prod.yaml", "mkdocs.yml", "tsconfig.json")] == [
        True, True, True, False, False, False, False, False]
