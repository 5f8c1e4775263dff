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
    proc = run_cli(*command, "lib", "--format", "json", cwd=tmp_path)
    why = "a library chart (`type: library`): it renders nothing of its own, so it is linted where an application chart uses it"
    assert proc.returncode == 0
    # `helm` as `lint`: a KG009 note in the report (engine/inputs.py)
    assert proc.stderr == b"" and _unlinted(proc) == [("note", "lib/Chart.yaml", 1, f"chart lib was not linted: {why}")]


def _unlinted(proc: object) -> list[tuple[str, str, int, str]]:
    """The KG009 findings of a JSON report: severity, path, line, message."""
    import json

    findings = json.loads(proc.stdout)["findings"]  # type: ignore[attr-defined]
    return [(f["severity"], f["location"]["path"], f["location"]["line"], f["message"])
            for f in findings if f["rule"] == "KG009"]


@pytest.mark.parametrize("command", [("helm",), ()], ids=["helm", "lint"])
def test_a_chart_that_renders_nothing_is_a_note_not_an_internal_error(tmp_path: Path,
                                                                      command: tuple[str, ...]) -> None:
    _write_chart(tmp_path, "off", "", {"cm.yaml": "{{- if .Values.on }}\n" + CONFIGMAP.format(name="x") + "{{- end }}\n"},
                 "on: false\n")
    proc = run_cli(*command, "off", "--format", "json", cwd=tmp_path)
    why = "rendered no Kubernetes object with these values (every template is empty or disabled): nothing linted"
    assert proc.returncode == 0
    assert proc.stderr == b"" and _unlinted(proc) == [("note", "off/Chart.yaml", 1, f"chart off was not linted: {why}")]
    # with the template switched on, the same chart is linted as usual
    proc = run_cli("helm", "off", "--set", "on=true", cwd=tmp_path)
    assert proc.returncode == 0 and proc.stderr == b"", proc.stderr


def test_positions_of_an_empty_render_are_none() -> None:
    from kubegap_lint.helm.marked import positions

    assert positions("\n", "\n", {}) == {}


# --- values composed as Helm's CLI composes them ------------------------------------------------

# From Helm's documentation ("The Format and Limitations of --set", "Values Files"): each case
# is a run of one flag repeated; the engine, given the same expressions joined by commas in one
# flag, parses them into one map, which is what the repeated flags must give.
SET_CASES = [
    ["name=value"],
    ["a=b", "c=d"],
    ["outer.inner=value"],
    ["name={a, b, c}"],
    ["name={}", "other={a}"],
    ["servers[0].port=80"],
    ["servers[0].port=80", "servers[0].host=example"],
    ["tolerations[0].key=nvidia.com/gpu", "tolerations[0].operator=Exists", "tolerations[0].effect=NoSchedule"],
    ["list[1].k=v", "list[0].j=w"],
    ["list[2]=x", "list[0]=y"],
    ["matrix[0][1]=x", "matrix[0][0]=y"],
    ["name=value1\\,value2"],
    ["nodeSelector.kubernetes\\.io/role=master"],
    ["a\\=b=1", "c\\[0\\]=2"],
    ["gone=null", "kept.inner=null"],
    ["t=true", "f=FALSE", "z=0", "octal=007", "float=1.5", "neg=-3", "plus=+4", "big=9223372036854775808"],
    ["empty=", "after=1"],
    ["a=1", "a=two"],
    ["a.b=1", "a.c=2", "a.d.e=3"],
    ["list[0]=1", "list={x,y}"],
    ["half[0"],
    ["dangling[0]"],
    ["noval"],
    ["comma,next=1"],
    ["bad[x]=1"],
    ["neg[-1]=1"],
    ["huge[70000]=1"],
    ["str=1", "str.inner=2"],
    ["map.k=1", "map[0]=2"],
]


def _engine_parse(flag: str, expressions: list[str]) -> dict | None:
    import helm_python

    parse = {"--set": helm_python.parse_set_string, "--set-string": helm_python.parse_set_string_values,
             "--set-json": helm_python.parse_set_json}[flag]
    try:
        return parse(",".join(expressions))
    except helm_python.HelmError:
        return None


def _composed(**flags: list[str]) -> dict | None:
    from kubegap_lint.helm.render import HelmError, RenderOptions
    from kubegap_lint.helm.sdk import user_values

    try:
        return user_values(RenderOptions(**flags))
    except HelmError:
        return None


@pytest.mark.parametrize("expressions", SET_CASES, ids=lambda e: ",".join(e))
@pytest.mark.parametrize("flag", ["--set", "--set-string"])
def test_repeated_set_flags_compose_as_one_flag_in_the_engine(flag: str, expressions: list[str]) -> None:
    field = {"--set": "sets", "--set-string": "set_strings"}[flag]
    assert _composed(**{field: expressions}) == _engine_parse(flag, expressions)


def test_the_table_holds_what_helm_documents() -> None:
    """A few of the documented results, written out, so the comparison above cannot pass on two
    equal wrong answers."""
    assert _composed(sets=SET_CASES[7]) == {"tolerations": [
        {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]}
    assert _composed(sets=SET_CASES[8]) == {"list": [{"j": "w"}, {"k": "v"}]}
    assert _composed(sets=SET_CASES[12]) == {"nodeSelector": {"kubernetes.io/role": "master"}}
    assert _composed(sets=SET_CASES[15]) == {"t": True, "f": False, "z": 0, "octal": "007", "float": "1.5",
                                             "neg": -3, "plus": 4, "big": "9223372036854775808"}
    assert _composed(sets=SET_CASES[14]) == {"gone": None, "kept": {"inner": None}}
    assert _composed(sets=["str=1", "str.inner=2"]) is None  # Helm refuses to walk into a number


JSON_CASES = [
    ['a=[1,2]', 'a[1]={"x":1}'],
    ['a=', 'b=null', 'c="text"'],
    ['obj={"k":{"n":1}}', 'obj.k.m=true'],
    ['l[1].k="v"', 'l[0]=3'],
]


@pytest.mark.parametrize("expressions", JSON_CASES, ids=lambda e: ",".join(e))
def test_set_json_composes_as_the_engine_parses(expressions: list[str]) -> None:
    assert _composed(set_jsons=expressions) == _engine_parse("--set-json", expressions)


FILE_CASES = [  # (a values file, --set-json expressions walking into it)
    ("list:\n  - a: 1\n    b: 2\n  - k: old\n    other: keep\n", ['list[1].k="v"']),
    ("tolerations:\n  - key: x\n    value: y\n", ['tolerations[0].effect="NoSchedule"', 'tolerations[1].key="z"']),
    ("nested:\n  deep:\n    list: [[1, 2], [3]]\n", ['nested.deep.list[0][2]=9', 'nested.other=1']),
    ("items: [1, 2, 3]\n", ['items[1].k="map now"']),
]


@pytest.mark.parametrize(("values_file", "expressions"), FILE_CASES, ids=lambda c: str(c)[:30])
def test_set_flags_walk_into_a_values_files_lists(tmp_path: Path, values_file: str, expressions: list[str]) -> None:
    """The engine decides: its JSON parse of the file's values as one expression, then the
    flags' expressions, in one map, against the file merged then each flag parsed into it."""
    import json

    import helm_python

    path = tmp_path / "values.yaml"
    path.write_text(values_file)
    base = helm_python.values_from_yaml(values_file)
    whole = [f"{key}={json.dumps(value)}" for key, value in base.items()] + expressions
    assert _composed(values=[str(path)], set_jsons=expressions) == _engine_parse("--set-json", whole)
    # the same walk with --set: strings stay strings, numbers are typed as --set types them
    typed = [e.replace('"', "") for e in expressions]
    assert _composed(values=[str(path)], sets=typed) == _engine_parse("--set-json", whole)


def test_set_literal_takes_the_rest_and_walks_into_the_values(tmp_path: Path) -> None:
    import helm_python

    assert _composed(set_literals=["a.b[1]=x,y={z}"]) == helm_python.parse_set_literal("a.b[1]=x,y={z}") == {
        "a": {"b": [None, "x,y={z}"]}}
    assert _composed(sets=["a.b[0].k=1"], set_literals=["a.b[0].j=x,y"]) == {"a": {"b": [{"k": 1, "j": "x,y"}]}}
    (tmp_path / "f.txt").write_text("from a file\n")
    assert _composed(sets=["x[0].a=1"], set_files=[f"x[0].b={tmp_path / 'f.txt'}"]) == {
        "x": [{"a": 1, "b": "from a file\n"}]}


def test_the_order_of_the_flags_is_helms(tmp_path: Path) -> None:
    """files, then --set-json, --set, --set-string, --set-file, --set-literal: the later wins."""
    (tmp_path / "v.yaml").write_text("k: file\n")
    assert _composed(values=[str(tmp_path / "v.yaml")], set_jsons=['k="json"']) == {"k": "json"}
    assert _composed(set_jsons=['k="json"'], sets=["k=set"]) == {"k": "set"}
    assert _composed(sets=["k=5"], set_strings=["k=6"]) == {"k": "6"}
    assert _composed(set_strings=["k=6"], set_literals=["k=7,8"]) == {"k": "7,8"}
    assert _composed(set_jsons=['{"m": {"a": 1}}', 'm.b=2']) == {"m": {"a": 1, "b": 2}}


TOLERATIONS_CHART = (
    "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: gpu\nspec:\n  selector:\n    matchLabels: {app: gpu}\n"
    "  template:\n    metadata:\n      labels: {app: gpu}\n    spec:\n"
    "      tolerations:\n        {{- toYaml .Values.tolerations | nindent 8 }}\n"
    "      containers:\n        - name: main\n          image: img:1\n")


def test_a_chart_renders_with_every_set_field(tmp_path: Path) -> None:
    from kubegap_lint.helm.render import RenderOptions
    from kubegap_lint.helm.sdk import render

    chart = _write_chart(tmp_path, "tol", "", {"deploy.yaml": TOLERATIONS_CHART}, "tolerations: []\n")
    text = render(str(chart), RenderOptions(sets=[
        "tolerations[0].key=nvidia.com/gpu", "tolerations[0].operator=Exists", "tolerations[0].effect=NoSchedule"]))
    assert "      tolerations:\n        - effect: NoSchedule\n          key: nvidia.com/gpu\n          operator: Exists\n" in text


# --- subcharts declared in Chart.yaml but not in charts/ ----------------------------------------

DEPENDENCIES = """dependencies:
  - name: redis
    version: 1.0.0
    repository: https://charts.example.invalid
    condition: redis.enabled
  - name: pg
    version: 1.0.0
    repository: https://charts.example.invalid
  - name: metrics
    version: 1.0.0
    repository: https://charts.example.invalid
    tags: [monitoring]
  - name: cache
    version: 1.0.0
    repository: https://charts.example.invalid
    tags: [monitoring]
    condition: cache.enabled,cache.other
"""
GPU_DEPLOYMENT = (
    "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: gpu\nspec:\n  replicas: 1\n  selector:\n"
    "    matchLabels: {app: gpu}\n  template:\n    metadata:\n      labels: {app: gpu}\n    spec:\n"
    "      containers:\n        - name: main\n          image: img:1\n"
    "          resources:\n            limits:\n              nvidia.com/gpu: 2\n")


def _message(name: str) -> str:
    return f"subchart {name} not linted: not in charts/ (run `helm dependency build deps` to lint it with the chart)"


def _kg009(name: str, line: int) -> tuple[str, str, int, str]:  # `helm` and `lint`: a KG009 note
    return ("note", "deps/Chart.yaml", line, _message(name))


def test_missing_subcharts_disabled_need_nothing_enabled_ones_are_located_notes(tmp_path: Path) -> None:
    import json

    _write_chart(tmp_path, "deps", DEPENDENCIES, {"deploy.yaml": GPU_DEPLOYMENT},
                 "redis:\n  enabled: false\ntags:\n  monitoring: false\ncache:\n  enabled: true\n")
    proc = run_cli("helm", "deps", "--format", "json", cwd=tmp_path)
    # pg has no condition; cache's condition says true, whatever its tag says; redis and metrics are off
    assert proc.stderr == b"" and _unlinted(proc) == [_kg009("pg", 9), _kg009("cache", 16)]
    assert proc.returncode == 1  # the deployment's findings; the notes are notes
    report = json.loads(proc.stdout)
    assert report["summary"]["workloads"] == 1  # the parent chart is linted
    assert {f["location"]["path"] for f in report["findings"] if f["rule"] != "KG009"} == {"deps/templates/deploy.yaml"}
    proc = run_cli("helm", "deps", "--set", "redis.enabled=true", "--set", "tags.monitoring=true",
                   "--set", "cache.enabled=false", "--format", "json", cwd=tmp_path)
    assert _unlinted(proc) == [_kg009("redis", 5), _kg009("pg", 9), _kg009("metrics", 12)]
    proc = run_cli("deps", "--format", "json", cwd=tmp_path)  # `kubegap-lint .` says the same, as KG009 notes
    assert _unlinted(proc) == [_kg009("pg", 9), _kg009("cache", 16)]
    assert proc.stderr == b"" and len(json.loads(proc.stdout)["findings"]) > 2


def test_the_condition_decides_by_its_first_boolean_path() -> None:
    from kubegap_lint.helm.dependencies import enabled

    dependency = {"name": "x", "condition": "a.on,b.on", "tags": ["t"]}
    assert enabled(dependency, {"a": {"on": "yes"}, "b": {"on": False}}) is False  # a.on is no boolean
    assert enabled(dependency, {"a": {"on": True}, "b": {"on": False}}) is True
    assert enabled(dependency, {"tags": {"t": False}}) is False
    assert enabled(dependency, {"tags": {"t": False}, "b": {"on": True}}) is True
    assert enabled({"name": "y", "tags": ["t", "u"]}, {"tags": {"t": False, "u": True}}) is True
    assert enabled({"name": "y"}, {}) is True


def test_a_shared_chart_renders_without_its_subcharts(tmp_path: Path) -> None:
    """gpu-operator, with its vendored node-feature-discovery removed (enabled by default)."""
    import json
    import shutil

    from conftest import SHARED

    shutil.copytree(SHARED / "charts" / "NVIDIA__gpu-operator" / "deployments" / "gpu-operator", tmp_path / "gpuop")
    shutil.rmtree(tmp_path / "gpuop" / "charts")
    proc = run_cli("helm", "gpuop", "--format", "json", cwd=tmp_path)
    assert proc.stderr == b"" and _unlinted(proc) == [(
        "note", "gpuop/Chart.yaml", 21, "subchart node-feature-discovery not linted: not in charts/"
        " (run `helm dependency build gpuop` to lint it with the chart)")]
    assert proc.returncode in (0, 1) and json.loads(proc.stdout)["summary"]["workloads"] == 3
    proc = run_cli("helm", "gpuop", "--set", "nfd.enabled=false", cwd=tmp_path)
    assert proc.returncode in (0, 1) and proc.stderr == b""


# --- documents after a section that rendered empty ----------------------------------------------

SECTIONS = (
    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: one\n"
    "---\n{{- if .Values.extra }}\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: two\n{{- end }}\n"
    "---\n" + GPU_DEPLOYMENT)


def test_a_document_after_an_empty_section_keeps_its_source(tmp_path: Path) -> None:
    """Helm prints the section after the empty one as `---`, `# Source:`, `---`, the document:
    the source comment is an empty document of its own, and belongs to the next."""
    import json

    from kubegap_lint.helm.render import RenderOptions
    from kubegap_lint.helm.sdk import render

    _write_chart(tmp_path, "sec", "", {"all.yaml": SECTIONS}, "extra: false\n")
    text = render(str(tmp_path / "sec"), RenderOptions())
    assert "---\n# Source: sec/templates/all.yaml\n---\napiVersion: apps/v1\nkind: Deployment\n" in text
    expected = ("KG501", "sec/templates/all.yaml", 26)  # the container's `- name: main` line
    proc = run_cli("helm", "sec", "--format", "json", "--select", "KG501", cwd=tmp_path)
    found = [(f["rule"], f["location"]["path"], f["location"]["line"]) for f in json.loads(proc.stdout)["findings"]]
    assert found == [expected], proc.stderr
    (tmp_path / "rendered.yaml").write_text(text)  # piped: `helm template sec > rendered.yaml`
    proc = run_cli("--format", "json", "--select", "KG501", "--chart-dir", "sec", "rendered.yaml", cwd=tmp_path)
    found = [(f["rule"], f["location"]["path"], f["location"]["line"]) for f in json.loads(proc.stdout)["findings"]]
    assert found == [expected], proc.stderr


def test_the_two_scans_give_the_inherited_source_alike() -> None:
    from kubegap_lint.input.scan import split_documents, split_texts

    text = ("---\n# Source: c/templates/a.yaml\n---\nkind: A\n---\n# Source: c/templates/b.yaml\nkind: B\n"
            "---\n# Source: c/templates/c.yaml\n---\n# only a comment\n---\nkind: C\n---\nkind: D\n")
    for chunks in (list(split_documents(text.splitlines(True))), list(split_texts([text]))):
        assert [(c.helm_source, c.has_content) for c in chunks] == [
            ("c/templates/a.yaml", False), ("c/templates/a.yaml", True), ("c/templates/b.yaml", True),
            ("c/templates/c.yaml", False), (None, False), ("c/templates/c.yaml", True), (None, True)]


# --- Chart.yaml kubeVersion ---------------------------------------------------------------------

KUBE_CONSTRAINTS = [
    "<1.20.0", ">=1.28.0-0", ">=1.28.0", "~1.36", "~1.35", "^1.30", "^2", "1.36.x", "1.x", "*", ">1.36",
    ">1.35", ">=1.36.0", "<=1.36", "<=1.35", "!=1.36.x", "!=1.35.x", "=1.36.0", "1.30 - 1.36.0",
    "1.30 - 1.35", ">=1.40 || <1.37", ">= 1.19, < 1.37", ">=1.19 <1.36", "~>1.36.0", "v1.36",
]


@pytest.mark.parametrize("constraint", KUBE_CONSTRAINTS)
def test_kube_version_constraints_decide_as_the_engines_install(tmp_path: Path, constraint: str) -> None:
    """The engine's install (a client dry run) checks kubeVersion against its default version:
    the same verdict, for the same version, from kubeversion.py."""
    import helm_python

    from kubegap_lint.helm.kubeversion import satisfies
    from kubegap_lint.helm.sdk import default_kube_version

    chart = _write_chart(tmp_path, "kv", f'kubeVersion: "{constraint}"\n', {"cm.yaml": CONFIGMAP.format(name="x")})
    kubeconfig = "apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\nusers: []\n"
    with helm_python.Config(kubeconfig_content=kubeconfig, storage_driver="memory") as config:
        try:
            config.install(str(chart), "r", {}, dry_run="client")
            engine = True
        except helm_python.HelmError as exc:
            assert "chart requires kubeVersion" in str(exc)
            engine = False
    assert satisfies(constraint, default_kube_version(helm_python)) is engine


def test_kube_version_pre_releases_and_other_targets() -> None:
    from kubegap_lint.helm.kubeversion import satisfies

    assert satisfies(">=1.28.0-0", "v1.29.4-gke.100") is True  # `-0` lets providers' versions in
    assert satisfies(">=1.28.0", "v1.29.4-gke.100") is False
    assert satisfies(">=1.28.0-0", "v1.20.0") is False
    assert satisfies("1.2 - 1.4.5", "1.5.0") is False and satisfies("1.2 - 1.4.5", "1.4.5") is True
    assert satisfies("~1.2", "1.3.0") is False and satisfies("^1.2", "1.9.9") is True


@pytest.mark.parametrize("command", [("helm",), ()], ids=["helm", "lint"])
def test_kube_version_is_honoured_with_a_located_error(tmp_path: Path, command: tuple[str, ...]) -> None:
    _write_chart(tmp_path, "new", 'kubeVersion: ">=1.28.0-0"\n', {"cm.yaml": CONFIGMAP.format(name="x")})
    _write_chart(tmp_path, "old", 'kubeVersion: "<1.20.0"\n', {"cm.yaml": CONFIGMAP.format(name="x")})
    proc = run_cli(*command, "new", cwd=tmp_path)  # Helm's default version meets it
    assert proc.returncode == 0 and proc.stderr == b"", proc.stderr
    proc = run_cli(*command, "old", "--format", "json", cwd=tmp_path)
    ((severity, path, line, message),) = _unlinted(proc)  # `helm` as `lint`: a KG009 error at the line
    assert (proc.returncode, severity, path, line) == (1, "error", "old/Chart.yaml", 4)
    message = message.removeprefix("chart old was not linted: ")
    assert message.startswith("chart requires kubeVersion: <1.20.0 which is incompatible with Kubernetes v1.")
    assert "(the default; name the target with --kube-version)" in message
    if command:
        proc = run_cli("helm", "new", "--kube-version", "v1.20.0", "--format", "json", cwd=tmp_path)
        assert proc.returncode == 1 and _unlinted(proc) == [(
            "error", "new/Chart.yaml", 4, "chart new was not linted: chart requires kubeVersion: >=1.28.0-0 which is"
            " incompatible with Kubernetes v1.20.0")]
        proc = run_cli("helm", "new", "--kube-version", "v1.29.4-gke.100", cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr


def _shared_renders() -> list[dict]:
    from conftest import SHARED
    from ruamel.yaml import YAML

    listing = SHARED / "charts" / "renders.yaml"
    return list(YAML(typ="safe").load(listing.read_text(encoding="utf-8"))) if listing.is_file() else []


@pytest.mark.parametrize("render", _shared_renders(), ids=lambda r: r["id"])
def test_every_shared_render_works_without_vendored_subcharts(tmp_path: Path, render: dict, monkeypatch) -> None:
    """Each render of ../shared/charts, its chart copied without charts/: it renders, and the
    subcharts it reports are exactly the declared ones its values enable."""
    import shutil

    import helm_python
    from conftest import SHARED

    from kubegap_lint.helm.dependencies import enabled
    from kubegap_lint.helm.render import RenderOptions
    from kubegap_lint.helm.sdk import render as render_chart
    from kubegap_lint.helm.sdk import user_values

    charts = SHARED / "charts"
    monkeypatch.chdir(charts)  # the values files are named from there
    copy = tmp_path / Path(render["chart"]).name
    shutil.copytree(charts / render["chart"], copy, ignore=shutil.ignore_patterns("charts"))
    options = RenderOptions(values=list(render["values_files"]), sets=list(render["set"]),
                            set_strings=list(render["set_string"]), set_files=list(render["set_file"]),
                            release=render["release"], namespace=render["namespace"],
                            include_crds=bool(render["include_crds"]))
    missing: list = []
    text = render_chart(str(copy), options, missing)
    with helm_python.Chart.load(str(copy)) as chart:
        declared = chart.metadata.get("dependencies") or []
        merged = chart.merge_values(user_values(options))
    assert [m.name for m in missing] == [d["name"] for d in declared if enabled(d, merged)]
    assert all(m.line is not None and m.path == str(copy / "Chart.yaml") for m in missing)
    assert "\nkind: " in text
    if render["id"] == "gpu-operator":  # node-feature-discovery is on by default: said, not silent
        assert missing


def test_the_configuration_takes_set_json_and_set_literal(tmp_path: Path) -> None:
    import json

    _write_chart(tmp_path, "tol", "", {"deploy.yaml": TOLERATIONS_CHART.replace(
        "image: img:1\n", "image: img:1\n          args: [{{ .Values.arg | quote }}]\n")}, "tolerations: []\narg: x\n")
    (tmp_path / ".kubegap-lint.yaml").write_text(
        "charts:\n  - path: tol\n    set_json: ['tolerations=[{\"key\":\"a\"}]']\n"
        "    set: ['tolerations[0].effect=NoSchedule']\n    set_literal: ['arg=--a=1,--b={x}']\n")
    proc = run_cli("helm", "tol", "--keep-rendered", "kept", "--format", "json", cwd=tmp_path)
    assert proc.returncode in (0, 1), proc.stderr
    text = (tmp_path / "kept" / "tol.yaml").read_text()
    assert "      tolerations:\n        - effect: NoSchedule\n          key: a\n" in text
    assert 'args: ["--a=1,--b={x}"]' in text
    assert json.loads(proc.stdout)["errors"] == []
