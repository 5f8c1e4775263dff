"""What a chart folder says about itself, read without a YAML parser. Its own module: mapping.py
and values_lines.py both need it, and mapping.py uses values_lines.py (no import cycle)."""

from __future__ import annotations

import os
import re

_NAME_RE = re.compile(r"^name:\s*['\"]?(?P<name>[^'\"#\s]+)['\"]?\s*(?:#.*)?$")


def chart_name(chart_dir: str) -> str | None:
    """The top-level `name:` of a folder's Chart.yaml, read by line (it is plain YAML)."""
    try:
        with open(os.path.join(chart_dir, "Chart.yaml"), encoding="utf-8", errors="replace") as handle:
            for line in handle:
                match = _NAME_RE.match(line.rstrip("\r\n"))
                if match:
                    return match.group("name")
    except OSError:
        return None
    return None
