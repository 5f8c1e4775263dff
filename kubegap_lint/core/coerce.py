"""Read manifest values defensively: a manifest may hold any type anywhere."""

from __future__ import annotations

from typing import Any


def as_dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def as_text(value: Any) -> str | None:
    """A name or an image as text for policies (`join` needs strings): the API server takes only
    strings, so a number is printed and a list or mapping is none (found by the fuzzers)."""
    if value is None or isinstance(value, str):
        return value
    return None if isinstance(value, (dict, list)) else str(value)


# Replicas, parallelism and the like are int32 in the API; a larger count is no count the API
# server accepts, and Python cannot even print an int of over 4,300 digits (its int-str limit).
MAX_COUNT = 2**31 - 1


def as_count(value: Any) -> int | None:
    """A count as Kubernetes reads it; None when it is unknown (absent, an unrendered `$N`, text,
    out of the API's int32 range)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if -MAX_COUNT - 1 <= value <= MAX_COUNT else None
    if isinstance(value, str):
        text = value.strip()
        # ASCII digits only (str.isdigit also takes '²', which int() refuses), few enough to convert.
        if text.isascii() and text.isdigit() and len(text) <= 10:
            number = int(text)
            return number if number <= MAX_COUNT else None
    return None
