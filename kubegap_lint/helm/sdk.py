"""Render a chart in-process with the Helm engine (the optional `kubegap-lint[helm]` extra).

`helm-python-sdk` binds Helm v4's own Go SDK through a bundled C library: no helm binary, no
Go, no cluster. It is imported here only, when a chart is rendered, never by the core. Values
are composed the way `helm template` does (values files in order, then --set, --set-string,
--set-file), the chart renders offline (`lookup` returns nothing, as with `helm template`), and
stream.py prints the result in helm's order.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from kubegap_lint.core.safefile import read_regular
from kubegap_lint.helm.render import HelmError, HelmMissing
from kubegap_lint.helm.stream import StreamError, template_stream

if TYPE_CHECKING:
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
    """The values given on the command line, composed in helm's order."""
    helm = engine()
    values: dict[str, Any] = {}
    for path in options.values:
        if "://" in path:
            raise HelmError(f"values file {path}: only local files are read (fetch it first)")
        try:
            text = read_regular(path, MAX_VALUES_BYTES).decode("utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise HelmError(f"values file {path} cannot be read: {getattr(exc, 'strerror', None) or exc}") from None
        try:
            values = merge(values, helm.values_from_yaml(text) or {})
        except helm.HelmError as exc:
            raise HelmError(f"values file {path}: {_message(exc)}") from None
    return merge(values, set_values(options))


def set_values(options: RenderOptions) -> dict[str, Any]:
    """The values of --set, --set-string and --set-file, composed in helm's order."""
    helm = engine()
    values: dict[str, Any] = {}
    parsers: list[tuple[str, list[str], Callable[[str], dict[str, Any]]]] = [
        ("--set", options.sets, helm.parse_set_string),
        ("--set-string", options.set_strings, helm.parse_set_string_values),
        ("--set-file", options.set_files, _set_file),
    ]
    for flag, expressions, parse in parsers:
        for expression in expressions:
            try:
                values = merge(values, parse(expression))
            except helm.HelmError as exc:
                raise HelmError(f"{flag} {expression}: {_message(exc)}") from None
    return values


def _set_file(expression: str) -> dict[str, Any]:
    """`--set-file KEY=PATH`: the file read here, a regular file and bounded (the engine would
    read `/proc/self/pagemap` or `/dev/zero` to the end, or abort inside the Go runtime), its
    text given to the engine as a literal value, as helm's --set-file does."""
    key, equals, path = expression.partition("=")
    if not equals or not key or not path:
        raise HelmError(f"--set-file {expression}: expected KEY=PATH")
    try:
        text = read_regular(path, MAX_VALUES_BYTES).decode("utf-8", "replace")
    except OSError as exc:
        raise HelmError(f"--set-file {expression}: {path} cannot be read: {exc.strerror or exc}") from None
    parsed: dict[str, Any] = engine().parse_set_literal(f"{key}={text}")
    return parsed


def _check_dependencies(helm: Any, chart_path: str) -> None:
    """helm template refuses a chart whose Chart.yaml names subcharts that charts/ lacks."""
    missing = [d.get("name", "?") for d in helm.dependency_list(chart_path) if d.get("status") == "missing"]
    if missing:
        raise HelmError(f"helm template {chart_path} failed: found in Chart.yaml, but missing in charts/"
                        f" directory: {', '.join(missing)} (run `helm dependency build {chart_path}`)")


def render_files(chart_path: str, options: RenderOptions, chart: Any = None) -> tuple[dict[str, str], list[tuple[str, str]]]:
    """The engine's rendered files (template path -> text) and the CRDs to print, for a chart
    folder or archive (or an already loaded chart)."""
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
                raise HelmError(f"chart {chart_path} not found (in-process rendering takes a chart folder or"
                                " .tgz; name a helm binary with --helm PATH for repository or OCI references)")
            loaded = helm.Chart.load(chart_path)
            if os.path.isdir(chart_path):
                _check_dependencies(helm, chart_path)
        loaded.validate_schema(loaded.merge_values(values))
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


def render(chart_path: str, options: RenderOptions) -> str:
    """What `helm template` prints for the chart, rendered in-process."""
    rendered, crds = render_files(chart_path, options)
    try:
        return template_stream(rendered, crds)
    except StreamError as exc:
        raise HelmError(f"helm template {chart_path} failed: {exc}") from None
