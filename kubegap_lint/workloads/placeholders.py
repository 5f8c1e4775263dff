"""Counts a template tool was meant to fill in: `$N`, `${N}`, `__N__`, `replaced-by-...`."""

from __future__ import annotations

import re
from typing import Any

_PLACEHOLDER_RE = re.compile(r"\$\{?[A-Za-z_][A-Za-z0-9_.]*\}?|__[A-Za-z0-9_]+__|^replaced-by-")


def is_placeholder(value: Any) -> bool:
    return isinstance(value, str) and _PLACEHOLDER_RE.search(value.strip()) is not None
