"""The subcharts a chart declares but does not carry in charts/, and which of them the render needs.

`helm template` refuses such a chart ("run `helm dependency build`"), but most chart
repositories do not commit charts/*.tgz and many dependencies are off by default. So the chart
is rendered without them: a dependency its values disable (Helm's rules: its `tags:` all false in
`tags`, unless its first `condition:` path that holds a boolean says true; that condition decides
whatever the tags say) needs nothing; an enabled one is a located note at its entry in
Chart.yaml, and the rest of the chart is still linted.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class MissingSubchart:
    name: str
    path: str  # Chart.yaml, as the chart was named
    line: int | None  # the dependency's entry

    def message(self, chart: str) -> str:
        return (f"subchart {self.name} not linted: not in charts/ (run `helm dependency build {chart}`"
                " to lint it with the chart)")


def _path_value(values: dict[str, Any], path: str) -> tuple[bool, Any]:
    node: Any = values
    for key in path.split("."):
        if not isinstance(node, dict) or key not in node:
            return False, None
        node = node[key]
    return True, node


def enabled(dependency: dict[str, Any], values: dict[str, Any]) -> bool:
    """Whether Helm renders the dependency with these (coalesced) values."""
    on = True
    tags = values.get("tags")
    wanted = [tags.get(tag) for tag in dependency.get("tags") or [] if isinstance(tags, dict)]
    if False in wanted and True not in wanted:
        on = False
    for path in str(dependency.get("condition") or "").strip().split(","):
        if not path:
            continue
        found, value = _path_value(values, path.removeprefix("."))
        if found and isinstance(value, bool):
            return value
    return on


def _entry_lines(chart_dir: str) -> dict[str, int]:
    """The line of each dependency's entry in the folder's Chart.yaml, by name."""
    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError

    try:
        with open(os.path.join(chart_dir, "Chart.yaml"), encoding="utf-8") as handle:
            data = YAML(typ="rt", pure=True).load(handle)
    except (OSError, UnicodeDecodeError, YAMLError):
        return {}
    found: dict[str, int] = {}
    entries = data.get("dependencies") if isinstance(data, dict) else None
    for entry in entries if isinstance(entries, list) else []:
        place = getattr(entry, "lc", None)  # ruamel's line and column of the entry
        if isinstance(entry, dict) and isinstance(entry.get("name"), str) and place is not None:
            found.setdefault(entry["name"], place.line + 1)
    return found


def missing_subcharts(chart_path: str, metadata: dict[str, Any], present: list[str],
                      values: dict[str, Any]) -> list[MissingSubchart]:
    """The declared dependencies that are not among the loaded subcharts (`present`, by name,
    as Helm checks them) and that these coalesced values enable."""
    declared = [d for d in metadata.get("dependencies") or [] if isinstance(d, dict)]
    missing = [d for d in declared if d.get("name") not in present and enabled(d, values)]
    if not missing:
        return []
    folder = os.path.isdir(chart_path)
    lines = _entry_lines(chart_path) if folder else {}
    where = os.path.join(chart_path, "Chart.yaml") if folder else chart_path
    return [MissingSubchart(str(d.get("name")), where, lines.get(str(d.get("name")))) for d in missing]
