"""What a chart folder says about itself, read without a YAML parser. Its own module: mapping.py
and values_lines.py both need it, and mapping.py uses values_lines.py (no import cycle)."""

from __future__ import annotations

import os
import re

MAX_CHART_YAML_BYTES = 1024 * 1024
_NAME_RE = re.compile(r"^name:\s*['\"]?(?P<name>[^'\"#\s]+)['\"]?\s*(?:#.*)?$")


def chart_name(chart_dir: str) -> str | None:
    """The top-level `name:` of a folder's Chart.yaml, read by line (it is plain YAML)."""
    from kubegap_lint.core.safefile import read_regular

    try:  # a regular file of bounded size: `Chart.yaml -> /dev/zero` never ends
        text = read_regular(os.path.join(chart_dir, "Chart.yaml"), MAX_CHART_YAML_BYTES).decode("utf-8", "replace")
    except OSError:
        return None
    for line in text.splitlines():
        match = _NAME_RE.match(line)
        if match:
            return match.group("name")
    return None
