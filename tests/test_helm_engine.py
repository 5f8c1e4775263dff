"""The in-process Helm engine (the `helm` extra: helm-python-sdk, Helm v4's own Go SDK in a
bundled library): `kubegap-lint helm CHART` prints and lints what `helm template` prints.

Every test here runs the real engine; none uses a stand-in. The order of the release manifest
is checked against the engine's own install dry run on every render of ../shared/charts.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import tarfile
from pathlib import Path
from typing import Any

import pytest
from conftest import CHARTS, EXAMPLES, REPO, requires_shared, run_cli, run_cli_subprocess, shared_cases

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("helm_python") is None,
    reason="the Helm engine is not installed (pip install -e '.[helm]')")

RECORDING = EXAMPLES / "helm" / "rendered.yaml"


def _renders() -> list[dict[str, Any]]:
    from ruamel.yaml import YAML

    if not (CHARTS / "renders.yaml").is_file():
        return []
    return list(YAML(typ="safe").load((CHARTS / "renders.yaml").read_text(encoding="utf-8")))


RENDERS = _renders()


def _options(render: dict[str, Any]) -> Any:
    from kubegap_lint.helm.render import RenderOptions

    return RenderOptions(values=list(render["values_files"]), sets=list(render["set"]),
                         set_strings=list(render["set_string"]), set_files=list(render["set_file"]),
                         release=render["release"], namespace=render["namespace"],
                         include_crds=bool(render["include_crds"]))


def test_the_examples_recording_is_the_engines_output() -> None:
    from kubegap_lint.helm.render import RenderOptions
    from kubegap_lint.helm.sdk import render

    text = render(str(EXAMPLES / "helm" / "gpu-train"), RenderOptions(release="demo", namespace="ml"))
    assert text == RECORDING.read_text(encoding="utf-8"), "run scripts/update-helm-recording.sh"


def _heads(text: str) -> list[tuple[str, str]]:
    """(source, kind) of each document: the charts' random names and UUIDs differ between
    renders, the documents and their order do not."""
    heads = []
    for document in text.split("---\n# Source: ")[1:]:
        source, _, body = document.partition("\n")
        kind = re.search(r"^kind: *(\S+)", body, re.M)
        heads.append((source, kind.group(1) if kind else ""))
    return heads


@pytest.mark.parametrize("render", shared_cases([pytest.param(r, id=r["id"]) for r in RENDERS if not r["include_crds"]]))
def test_release_order_is_the_engines_install_order(render: dict[str, Any], monkeypatch) -> None:
    import helm_python
    from helm_python import _native

    from kubegap_lint.helm import sdk, stream

    monkeypatch.chdir(CHARTS)
    options = _options(render)
    rendered, crds = sdk.render_files(render["chart"], options)
    mine = stream.template_stream(rendered, crds)
    kubeconfig = "apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\nusers: []\n"
    with helm_python.Config(kubeconfig_content=kubeconfig, storage_driver="memory") as config:
        try:
            release = json.loads(_native.call_string(
                "helm_install", config._raw(), config._context_arg(None), 0, render["chart"], render["release"],
                json.dumps(sdk.user_values(options)),
                json.dumps({"namespace": render["namespace"], "dry_run": "client"})))
        except helm_python.HelmChartInvalidError as exc:
            # The engine's install refuses a chart whose declared subcharts charts/ lacks (as helm
            # template does); kubegap-lint renders it without them (tests/test_helm_compose.py).
            assert "missing in charts/ directory" in str(exc)
            return
    manifest = release["manifest"].strip() + "\n"
    heads, theirs = _heads(mine), _heads(manifest)
    assert heads[:len(theirs)] == theirs  # the release manifest, in the engine's order
    hooks = [d for d in stream.documents(rendered) if d.hook]
    assert heads[len(theirs):] == [(d.source, d.kind) for d in stream.by_kind(hooks)]  # then the hooks
    assert not any(source.endswith("NOTES.txt") or "/_" in source for source, _ in heads)


CHART_YAML = "apiVersion: v2\nname: {name}\nversion: 0.1.0\n"


def _chart(root: Path) -> Path:
    """A chart that shows each flag in its output, with a NOTES.txt, a partial, a hook, CRDs and
    two subcharts (a folder and an archive)."""
    chart = root / "flags"
    (chart / "templates").mkdir(parents=True)
    (chart / "crds").mkdir()
    (chart / "Chart.yaml").write_text(CHART_YAML.format(name="flags"))
    (chart / "values.yaml").write_text("plain: default\n")
    (chart / "crds" / "foo.yaml").write_text(
        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: foos.x.io\n")
    (chart / "templates" / "NOTES.txt").write_text("installed {{ .Release.Name }}\n")
    (chart / "templates" / "_helpers.tpl").write_text('{{- define "flags.name" }}{{ .Release.Name }}-x{{ end }}\n')
    (chart / "templates" / "hook.yaml").write_text(
        "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: hook\n  annotations:\n"
        "    \"helm.sh/hook\": pre-install\n")
    (chart / "templates" / "cm.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ include \"flags.name\" . }}\n"
        "  namespace: {{ .Release.Namespace }}\ndata:\n"
        "  plain: {{ .Values.plain | quote }}\n"
        "  number: {{ .Values.number | quote }}\n"
        "  text: {{ kindOf .Values.text | quote }}\n"
        "  file: {{ .Values.file | quote }}\n"
        "  kube: {{ .Capabilities.KubeVersion.Version | quote }}\n"
        "  api: {{ .Capabilities.APIVersions.Has \"example.com/v1\" | quote }}\n")
    sub = chart / "charts" / "sub"
    (sub / "templates").mkdir(parents=True)
    (sub / "Chart.yaml").write_text(CHART_YAML.format(name="sub"))
    (sub / "templates" / "svc.yaml").write_text("apiVersion: v1\nkind: Service\nmetadata:\n  name: sub\n")
    packed = root / "packed"
    (packed / "templates").mkdir(parents=True)
    (packed / "Chart.yaml").write_text(CHART_YAML.format(name="packed"))
    (packed / "templates" / "sa.yaml").write_text("apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: packed\n")
    with tarfile.open(chart / "charts" / "packed-0.1.0.tgz", "w:gz") as archive:
        archive.add(packed, arcname="packed")
    (root / "note.txt").write_text("from a file\n")
    (root / "more.yaml").write_text("plain: from-values-file\n")
    return chart


def test_every_flag_and_helm_templates_layout(tmp_path: Path) -> None:
    chart = _chart(tmp_path)
    kept = tmp_path / "kept"
    proc = run_cli("helm", str(chart), "--release", "demo", "--namespace", "ml", "-f", str(tmp_path / "more.yaml"),
                   "--set", "number=5", "--set-string", "text=5", "--set-file", f"file={tmp_path / 'note.txt'}",
                   "--kube-version", "v1.29.4", "--api-versions", "example.com/v1", "--include-crds",
                   "--keep-rendered", str(kept), "--select", "KG201", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    assert (kept / "flags.yaml").read_text() == (
        "---\n# Source: flags/crds/foo.yaml\n"
        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: foos.x.io\n\n"
        "---\n# Source: flags/charts/packed/templates/sa.yaml\n"
        "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: packed\n\n"
        "---\n# Source: flags/templates/cm.yaml\n"
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: demo-x\n  namespace: ml\ndata:\n"
        '  plain: "from-values-file"\n  number: "5"\n  text: "string"\n  file: "from a file\\n"\n'
        '  kube: "v1.29.4"\n  api: "true"\n\n'
        "---\n# Source: flags/charts/sub/templates/svc.yaml\n"
        "apiVersion: v1\nkind: Service\nmetadata:\n  name: sub\n"
        "---\n# Source: flags/templates/hook.yaml\n"
        'apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: hook\n  annotations:\n    "helm.sh/hook": pre-install\n\n')


def test_crds_only_when_asked(tmp_path: Path) -> None:
    from kubegap_lint.helm.render import RenderOptions
    from kubegap_lint.helm.sdk import render

    chart = _chart(tmp_path)
    assert "CustomResourceDefinition" not in render(str(chart), RenderOptions())
    assert "CustomResourceDefinition" in render(str(chart), RenderOptions(include_crds=True))


def test_render_failures_are_one_line(tmp_path: Path) -> None:
    chart = _chart(tmp_path)
    (chart / "templates" / "bad.yaml").write_text("{{ .Values.nope.deeper }}\n")
    proc = run_cli("helm", str(chart), "--format", "json")
    # a chart that fails to render is a KG009 error, as `lint` says it, at the line Helm names
    (failed,) = json.loads(proc.stdout)["findings"]
    assert proc.returncode == 1 and proc.stderr == b"", proc.stderr
    assert (failed["rule"], failed["location"]["path"], failed["location"]["line"]) == (
        "KG009", f"{chart}/templates/bad.yaml", 1)
    assert "\n" not in failed["message"]
    # what the command line asks that is wrong (a chart not there, a --set flag): an input error
    proc = run_cli("helm", str(tmp_path / "nothing-here"))
    assert proc.returncode == 2 and "not found" in proc.stderr.decode()
    (chart / "templates" / "bad.yaml").unlink()
    proc = run_cli("helm", str(chart), "--set-json", "a={")
    assert proc.returncode == 2 and proc.stderr.decode() == f"kubegap-lint: {chart}: --set-json a={{: unexpected EOF\n"


def test_without_the_engine_the_message_says_how_to_install_it(tmp_path: Path) -> None:
    # A stand-in module that hides the installed engine, as a machine without the extra would.
    (tmp_path / "helm_python.py").write_text("raise ImportError('stand-in: no engine')\n")
    env = {"PYTHONPATH": f"{REPO}{os.pathsep}{tmp_path}"}
    proc = run_cli_subprocess("helm", "examples/helm/gpu-train", env=env)
    assert proc.returncode == 2
    assert proc.stderr.decode() == (
        "kubegap-lint: the Helm engine is not installed: install the Helm engine with"
        " `pip install 'kubegap-lint[helm]'`, or name a helm binary with --helm PATH\n")
    proc = run_cli_subprocess("helm", "--from-files", "--allow-missing-helm", "examples/helm/gpu-train/values.yaml", env=env)
    assert proc.returncode == 0 and b"not linted (--allow-missing-helm)" in proc.stderr


REPOSITORIES = sorted(p.name for p in CHARTS.iterdir() if p.is_dir() and "__" in p.name) if CHARTS.is_dir() else []


@pytest.mark.parametrize("repository", shared_cases(REPOSITORIES))
def test_a_chart_repository_lints_as_charts_not_as_yaml(repository: str) -> None:
    """`kubegap-lint REPO`: each chart renders with its defaults; no template, values file,
    files/ or test suite is read as a manifest (no KG003, no finding outside a chart's templates
    but on plain manifests)."""
    proc = run_cli("--format", "json", repository, cwd=CHARTS)
    assert proc.returncode in (0, 1, 2), proc.stderr
    assert b"Traceback" not in proc.stderr
    findings = json.loads(proc.stdout)["findings"]
    assert [f for f in findings if f["rule"] == "KG003"] == []
    for f in findings:
        rendered = f["rendered_location"]
        if rendered is not None:
            assert rendered["path"].startswith(f"<helm template {repository}/")
    for line in proc.stderr.decode().splitlines():  # charts that need values helm is not given, subcharts not vendored
        assert line.startswith(f"kubegap-lint: {repository}/")
        assert "helm template" in line or re.search(r"/Chart\.yaml:\d+: subchart \S+ not linted: not in charts/", line)


@requires_shared
def test_without_the_engine_each_chart_is_a_kg009_error(tmp_path: Path) -> None:
    # A stand-in module whose import fails: the engine's absence, simulated.
    (tmp_path / "helm_python.py").write_text("raise ImportError('stand-in: no engine')\n")
    proc = run_cli_subprocess("--format", "json", "ray-project__kuberay", cwd=CHARTS,
                              env={"PYTHONPATH": f"{REPO}{os.pathsep}{tmp_path}"})
    assert (proc.returncode, proc.stderr) == (1, b"")
    assert [(f["rule"], f["location"]["path"], f["location"]["line"]) for f in json.loads(proc.stdout)["findings"]
            if f["rule"] == "KG009"] == [
        ("KG009", "ray-project__kuberay/helm-chart/kuberay-operator/Chart.yaml", 1),
        ("KG009", "ray-project__kuberay/helm-chart/ray-cluster/Chart.yaml", 1)]


def test_the_callers_work_runs_while_the_engine_loads_and_renders() -> None:
    """The request is sent before the engine's first line is read (it waits in the pipe), so
    what the caller does meanwhile (`kubegap-lint helm` warms the linter up) overlaps the
    engine's load as well as its render; the stream is the one a loaded engine prints."""
    from kubegap_lint.helm import worker
    from kubegap_lint.helm.render import RenderOptions

    chart = str(EXAMPLES / "helm" / "gpu-train")
    worker._stop_child()  # a fresh engine process, as at the start of a run
    worker.start()
    greeted_meanwhile: list[bool] = []
    text = worker.render(chart, RenderOptions(), meanwhile=lambda: greeted_meanwhile.append(worker._child[0].ready))
    assert greeted_meanwhile == [False]
    assert worker._child[0].ready
    assert text == worker.render(chart, RenderOptions()) and "kind: Job" in text
