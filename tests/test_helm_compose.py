"""Helm, third pass: charts as they are committed and values as Helm's CLI composes them.

Every test runs the real Helm engine (helm-python-sdk, Helm v4's Go SDK in-process); none uses
a stand-in.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from conftest import run_cli

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("helm_python") is None,
    reason="the Helm engine is not installed (pip install -e '.[helm]')")


def _write_chart(root: Path, name: str, chart_yaml: str, templates: dict[str, str],
                 values: str = "") -> Path:
    chart = root / name
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text(f"apiVersion: v2\nname: {name}\nversion: 0.1.0\n{chart_yaml}")
    (chart / "values.yaml").write_text(values)
    for file, text in templates.items():
        (chart / "templates" / file).write_text(text)
    return chart


CONFIGMAP = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n"


@pytest.mark.parametrize("command", [("helm",), ()], ids=["helm", "lint"])
def test_a_library_chart_is_a_note_not_an_error(tmp_path: Path, command: tuple[str, ...]) -> None:
    _write_chart(tmp_path, "lib", "type: library\n", {"_helpers.tpl": '{{- define "lib.x" }}a: b{{ end }}\n'})
    proc = run_cli(*command, "lib", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.decode() == (
        "kubegap-lint: note: lib: a library chart (`type: library`): it renders nothing of its own,"
        " so it is linted where an application chart uses it\n")


@pytest.mark.parametrize("command", [("helm",), ()], ids=["helm", "lint"])
def test_a_chart_that_renders_nothing_is_a_note_not_an_internal_error(tmp_path: Path,
                                                                      command: tuple[str, ...]) -> None:
    _write_chart(tmp_path, "off", "", {"cm.yaml": "{{- if .Values.on }}\n" + CONFIGMAP.format(name="x") + "{{- end }}\n"},
                 "on: false\n")
    proc = run_cli(*command, "off", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.decode() == (
        "kubegap-lint: note: off: rendered no Kubernetes object with these values (every template is"
        " empty or disabled): nothing linted\n")
    # with the template switched on, the same chart is linted as usual
    proc = run_cli("helm", "off", "--set", "on=true", cwd=tmp_path)
    assert proc.returncode == 0 and proc.stderr == b"", proc.stderr


def test_positions_of_an_empty_render_are_none() -> None:
    from kubegap_lint.helm.marked import positions

    assert positions("\n", "\n", {}) == {}
