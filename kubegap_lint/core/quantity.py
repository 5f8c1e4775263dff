"""Kubernetes quantities ("8Gi", "500m", 64) as numbers: read by the views and by policies."""

from __future__ import annotations

import re
from typing import Any

_QUANTITY_RE = re.compile(r"^\s*([+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?)\s*([A-Za-z]*)\s*$", re.ASCII)
_MAX_TEXT = 128
_SUFFIXES = {
    "": 1, "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60,
    "n": 1e-9, "u": 1e-6, "m": 1e-3, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "E": 1e18,
}


def parse_quantity(value: Any) -> float | None:
    """A Kubernetes quantity ("8Gi", "500m", 64) as a number; None when it is not one."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        try:
            return float(value)
        except OverflowError:  # an int of over 308 digits: no quantity Kubernetes accepts
            return None
    if not isinstance(value, str) or len(value) > _MAX_TEXT:
        return None  # str() of a huge int raises, and no real quantity is this long
    match = _QUANTITY_RE.match(value)
    if not match or match.group(2) not in _SUFFIXES:
        return None
    return float(match.group(1)) * _SUFFIXES[match.group(2)]
