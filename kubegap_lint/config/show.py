"""`kubegap-lint config show`: the effective configuration as YAML, each value followed by
where it came from.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from kubegap_lint.config.configfile import display_path
from kubegap_lint.config.load import COMMAND_LINE, DEFAULT, Resolved
from kubegap_lint.core.model import Severity


def _yaml_scalar(value: Any) -> str:
    import json

    if isinstance(value, Path):
        value = display_path(value)
    if isinstance(value, Severity):
        value = value.value
    if isinstance(value, str) and re.fullmatch(r"[A-Za-z0-9_./*-]+", value) and value not in ("null", "true", "false"):
        return value
    return json.dumps(value, ensure_ascii=False)


def _flow(value: Any) -> str:
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_flow(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_flow(v) for v in value) + "]"
    if value is None:
        return "null"
    return _yaml_scalar(value)


def render_show(resolved: Resolved, catalog: Any) -> str:
    """The effective configuration as YAML, each value followed by where it came from."""
    settings = resolved.settings
    origins = resolved.origins
    lines = [f"# configuration file: {resolved.file.display if resolved.file else 'none'}"]

    def row(key: str, value: Any, origin_key: str | None = None, default_origin: str = DEFAULT) -> None:
        text = f"{key}: {_flow(value)}"
        lines.append(f"{text}  # {origins.get(origin_key or key, default_origin)}")

    row("select", settings.select if settings.select is not None else
        [p.id for p in catalog.policies if p.enabled], default_origin="default (every rule enabled by default)")
    row("ignore", settings.ignore)
    row("severity", {k: v.value for k, v in settings.severity.items()})
    row("fail_on", settings.fail_on.value)
    row("exclude", settings.exclude)
    row("policy_dirs", [display_path(p) for p in settings.policy_dirs])
    row("workloads", [f"{r.group}/{r.kind}" if r.group else r.kind for r in settings.workloads])
    row("baseline", display_path(settings.baseline) if settings.baseline else None)
    row("charts", [display_path(r.chart) for r in settings.charts])
    row("render_timeout", settings.render_timeout if settings.render_timeout is not None else 60.0)
    lines.append("params:")
    params = dict(catalog.params)
    params.update(settings.params)
    for name in sorted(params):
        origin = origins.get(f"params.{name}", "default (policies/params.yaml)")
        lines.append(f"  {name}: {_flow(params[name])}  # {origin}")
    if settings.exemptions:
        lines.append("exemptions:")
        for exemption in settings.exemptions:
            where = f"{exemption.origin[0]}:{exemption.origin[1]}" if exemption.origin else COMMAND_LINE
            lines.append(f"  - rules: {_flow(exemption.rules)}  # {where}")
            for key in ("kinds", "namespaces", "names", "paths", "containers"):
                values = getattr(exemption, key)
                if values:
                    lines.append(f"    {key}: {_flow(values)}")
            lines.append(f"    reason: {_yaml_scalar(exemption.reason)}")
    else:
        lines.append("exemptions: []  # default")
    return "\n".join(lines) + "\n"
