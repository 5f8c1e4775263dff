"""Read manifest values defensively: a manifest may hold any type anywhere."""

from __future__ import annotations

from typing import Any


def as_dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def as_count(value: Any) -> int | None:
    """A count as Kubernetes reads it; None when it is unknown (absent, an unrendered `$N`, text)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return None
