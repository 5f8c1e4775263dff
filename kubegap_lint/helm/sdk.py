"""Render a chart in-process with the Helm engine (the optional `kubegap-lint[helm]` extra).

`helm-python-sdk` binds Helm v4's own Go SDK through a bundled C library: no helm binary, no
Go, no cluster. It is imported here only, when a chart is rendered, never by the core. Values
are composed the way `helm template` does (values files in order, then the --set family parsed
into them), the chart renders offline (`lookup` returns nothing, as with `helm template`), and
stream.py prints the result in helm's order.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from kubegap_lint.core.safefile import read_regular
from kubegap_lint.helm.render import HelmError, HelmMissing, NotLinted, RequestError
from kubegap_lint.helm.stream import StreamError, template_stream

if TYPE_CHECKING:
    from kubegap_lint.helm.dependencies import MissingSubchart
    from kubegap_lint.helm.render import RenderOptions

MAX_VALUES_BYTES = 16 * 1024 * 1024  # a values or --set-file file, read before the engine sees it
EXTRA_HINT = "install the Helm engine with `pip install 'kubegap-lint[helm]'`, or name a helm binary with --helm PATH"


def engine() -> Any:
    """The helm_python module, or HelmMissing with what to do."""
    try:
        import helm_python
    except ImportError:
        raise HelmMissing(f"the Helm engine is not installed: {EXTRA_HINT}") from None
    except OSError as exc:  # the bundled library cannot be loaded on this platform
        raise HelmMissing(f"the Helm engine cannot be loaded ({exc}): name a helm binary with --helm PATH") from None
    return helm_python


def available() -> bool:
    try:
        engine()
    except HelmMissing:
        return False
    return True


def _message(exc: BaseException) -> str:
    """The engine's error on one line; its lists (`- at '/a': ...`, schema errors the engine
    gives in a random order) sorted, so that the same chart gives the same bytes."""
    lines = str(exc).splitlines()
    start = 0
    while start < len(lines):
        end = start
        while end < len(lines) and lines[end].lstrip().startswith("- "):
            end += 1
        lines[start:end] = sorted(lines[start:end])
        start = end + 1
    return " ".join(" ".join(lines).split()) or type(exc).__name__


def merge(base: dict[str, Any], update: dict[str, Any]) -> dict[str, Any]:
    """Helm's mergeMaps: maps merge key by key, anything else replaces."""
    out = dict(base)
    for key, value in update.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merge(out[key], value)
        else:
            out[key] = value
    return out


def user_values(options: RenderOptions) -> dict[str, Any]:
    """The values given on the command line, composed as Helm's CLI composes them: values files
    merged in order, then each --set-json, --set, --set-string, --set-file and --set-literal
    expression parsed into the values so far (strvals.py)."""
    helm = engine()
    values: dict[str, Any] = {}
    for path in options.values:
        if "://" in path:
            raise RequestError(f"values file {path}: only local files are read (fetch it first)")
        try:
            text = read_regular(path, MAX_VALUES_BYTES).decode("utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise RequestError(f"values file {path} cannot be read: {getattr(exc, 'strerror', None) or exc}") from None
        try:
            values = merge(values, helm.values_from_yaml(text) or {})
        except helm.HelmError as exc:
            raise RequestError(f"values file {path}: {_message(exc)}") from None
    return compose_sets(options, values)


def set_values(options: RenderOptions) -> dict[str, Any]:
    """The values the --set family alone gives (values_lines.py: which nodes a flag wrote)."""
    return compose_sets(options, {})


def _read_set_file(path: str) -> str:
    """A --set-file's file, read here: a regular file and bounded (the engine would read
    `/proc/self/pagemap` or `/dev/zero` to the end, or abort inside the Go runtime)."""
    try:
        return read_regular(path, MAX_VALUES_BYTES).decode("utf-8", "replace")
    except OSError as exc:
        raise HelmError(f"{path} cannot be read: {exc.strerror or exc}") from None


def compose_sets(options: RenderOptions, values: dict[str, Any]) -> dict[str, Any]:
    """Parse the --set family into `values` (changed in place, and returned) in Helm's order.
    The engine parses each expression first, so that what it refuses is refused with its words;
    then strvals.py walks it into the values so far, as the engine cannot."""
    from kubegap_lint.helm.strvals import SetError, parse_into

    helm = engine()
    flags: list[tuple[str, list[str], str, Callable[[str], Any]]] = [
        ("--set-json", options.set_jsons, "json", helm.parse_set_json),
        ("--set", options.sets, "typed", helm.parse_set_string),
        ("--set-string", options.set_strings, "string", helm.parse_set_string_values),
        # the engine checks KEY=PATH as a literal and never opens PATH: _read_set_file reads it
        ("--set-file", options.set_files, "file", helm.parse_set_literal),
        ("--set-literal", options.set_literals, "literal", helm.parse_set_literal),
    ]
    for flag, expressions, mode, check in flags:
        for expression in expressions:
            try:
                if mode == "json" and expression.strip().startswith("{"):
                    # a whole JSON object: merged as a values file is
                    given = json.loads(expression)
                    if not isinstance(given, dict):
                        raise ValueError("not an object")
                    values = merge(values, given)
                    continue
                check(expression)
                parse_into(expression, values, mode, _read_set_file)
            except helm.HelmError as exc:
                raise RequestError(f"{flag} {expression}: {_message(exc)}") from None
            except (HelmError, SetError, ValueError) as exc:  # HelmError: a --set-file's file
                raise RequestError(f"{flag} {expression}: {exc}") from None
    return values


_DEFAULT_KUBE_VERSION: list[str] = []


def default_kube_version(helm: Any) -> str:
    """The Kubernetes version `helm template` assumes without --kube-version: the engine's own,
    read once from a render of a one-line chart."""
    if not _DEFAULT_KUBE_VERSION:
        from kubegap_lint.core.tempdir import scratch_folder

        with scratch_folder("kube-version-") as scratch:
            chart = os.path.join(scratch, "probe")
            os.makedirs(os.path.join(chart, "templates"))
            with open(os.path.join(chart, "Chart.yaml"), "w", encoding="utf-8") as handle:
                handle.write("apiVersion: v2\nname: probe\nversion: 0.1.0\n")
            with open(os.path.join(chart, "templates", "v.txt"), "w", encoding="utf-8") as handle:
                handle.write("{{ .Capabilities.KubeVersion.Version }}")
            with helm.Chart.load(chart) as loaded:
                _DEFAULT_KUBE_VERSION.append(loaded.render({})["probe/templates/v.txt"].strip())
    return _DEFAULT_KUBE_VERSION[0]


def _check_kube_version(helm: Any, chart_path: str, metadata: dict[str, Any], given: str | None) -> None:
    """Helm refuses a chart whose Chart.yaml `kubeVersion` the target version does not meet."""
    from kubegap_lint.helm.kubeversion import ConstraintError, parse_version, satisfies

    constraint = metadata.get("kubeVersion")
    if not isinstance(constraint, str) or not constraint:
        return
    target = given or default_kube_version(helm)
    if given and parse_version(given) is None:
        raise RequestError(f"--kube-version {given}: not a Kubernetes version (e.g. v1.30.0)")
    try:
        ok = satisfies(constraint, target)
    except ConstraintError:
        ok = False  # Helm reads a constraint it cannot parse as unmet
    if not ok:
        version = parse_version(target)
        shown = f"v{version.major}.{version.minor}.{version.patch}" if version else target
        if version and version.pre:
            shown += f"-{version.pre}"
        path, line = _kube_version_line(chart_path)
        raise HelmError(f"chart requires kubeVersion: {constraint} which is incompatible with Kubernetes {shown}"
                        f"{'' if given else ' (the default; name the target with --kube-version)'}", path, line)


def _kube_version_line(chart_path: str) -> tuple[str | None, int | None]:
    """Chart.yaml and the line of its `kubeVersion:` (a folder chart), else the chart."""
    if not os.path.isdir(chart_path):
        return None, None
    path = os.path.join(chart_path, "Chart.yaml")
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            for number, text in enumerate(handle, start=1):
                if text.startswith("kubeVersion:"):
                    return path, number
    except OSError:
        pass
    return path, None


def render_files(chart_path: str, options: RenderOptions, chart: Any = None,
                 missing: list[MissingSubchart] | None = None) -> tuple[dict[str, str], list[tuple[str, str]]]:
    """The engine's rendered files (template path -> text) and the CRDs to print, for a chart
    folder or archive (or an already loaded chart). Declared subcharts that charts/ lacks are
    left out (dependencies.py); those the values enable are added to `missing`."""
    helm = engine()
    values = user_values(options)
    render_options: dict[str, Any] = {
        "name": options.release or "release-name",
        "namespace": options.namespace or "default",
        "revision": 1,
        "is_install": True,
    }
    if options.kube_version:
        render_options["kube_version"] = options.kube_version
    if options.api_versions:
        render_options["api_versions"] = list(options.api_versions)
    loaded = chart
    try:
        if loaded is None:
            if not os.path.exists(chart_path):
                raise RequestError(f"chart {chart_path} not found (in-process rendering takes a chart folder or"
                                " .tgz; name a helm binary with --helm PATH for repository or OCI references)")
            loaded = helm.Chart.load(chart_path)
        _check_kube_version(helm, chart_path, loaded.metadata, options.kube_version)
        if loaded.metadata.get("type") == "library":
            raise NotLinted("a library chart (`type: library`): it renders nothing of its own, so it is"
                            " linted where an application chart uses it")
        merged = loaded.merge_values(values)
        loaded.validate_schema(merged)
        if missing is not None:
            from kubegap_lint.helm.dependencies import missing_subcharts

            present = [str(d.get("name")) for d in loaded.dependencies]
            missing += missing_subcharts(chart_path, loaded.metadata, present, merged)
        # Chart.render does not take kube_version or api_versions: the library's own call does.
        from helm_python import _native

        rendered: dict[str, str] = json.loads(_native.call_string(
            "helm_render", loaded._raw(), json.dumps(values), json.dumps(render_options)))
        crds = [(crd["filename"], crd["data"]) for crd in loaded.crds] if options.include_crds else []
    except helm.HelmError as exc:
        raise HelmError(f"helm template {chart_path} failed: {_message(exc)}") from None
    finally:
        if chart is None and loaded is not None:
            loaded.close()
    return rendered, crds


def render(chart_path: str, options: RenderOptions, missing: list[MissingSubchart] | None = None) -> str:
    """What `helm template` prints for the chart, rendered in-process (without the subcharts
    charts/ lacks: those the values enable are added to `missing`)."""
    rendered, crds = render_files(chart_path, options, missing=missing)
    try:
        text = template_stream(rendered, crds)
    except StreamError as exc:
        raise HelmError(f"helm template {chart_path} failed: {exc}") from None
    if not text.strip():
        raise NotLinted("rendered no Kubernetes object with these values (every template is empty or"
                        " disabled): nothing linted")
    return text
