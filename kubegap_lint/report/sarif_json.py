"""Serialise sarif-om objects to SARIF 2.1.0 JSON, keeping every value the producer set.

sarif-om (1.0.4) has classes but no serialiser, and the usual one (jschema-to-python) drops every
value equal to its schema default: a rule's `defaultConfiguration.level: "warning"` vanishes. Here
the rule is simpler and explicit: objects are made with `sarif(cls, **fields)`, which records the
fields given, and exactly those fields are written, in the order given, under the JSON names that
sarif-om keeps in each attribute's metadata. Attributes left at sarif-om's defaults (`-1`
sentinels, `language: en-US`, ...) are never written.
"""

from __future__ import annotations

import json
import re
from typing import Any, TypeVar

import attr

T = TypeVar("T")

_EXPLICIT = "_kubegap_explicit_fields"

# sarif-om was generated from the 2.1.0-rtm.4 pre-release schema; the final 2.1.0 schema renamed
# this one property (checked against the OASIS schema by tests/test_sarif_json.py).
_RENAMED = {("Suppression", "state"): "status"}

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def sarif(cls: type[T], **fields: Any) -> T:
    """Build a sarif-om object and remember which fields were given (and their order)."""
    obj = cls(**fields)
    object.__setattr__(obj, _EXPLICIT, tuple(fields))
    return obj


def _json_name(cls: type, field: attr.Attribute) -> str:  # type: ignore[type-arg]
    renamed = _RENAMED.get((cls.__name__, field.name))
    return renamed or field.metadata["schema_property_name"]


def to_data(value: Any) -> Any:
    """sarif-om objects, dicts, lists and scalars to plain JSON data."""
    if attr.has(type(value)):
        explicit = getattr(value, _EXPLICIT, None)
        if explicit is None:
            raise TypeError(f"{type(value).__name__} was not built with sarif(): its set fields are unknown")
        fields = attr.fields_dict(type(value))
        out: dict[str, Any] = {}
        for name in explicit:
            item = getattr(value, name)
            if item is None:  # a None given explicitly means "absent"
                continue
            out[_json_name(type(value), fields[name])] = to_data(item)
        return out
    if isinstance(value, dict):
        return {str(key): to_data(item) for key, item in value.items() if item is not None}
    if isinstance(value, (list, tuple)):
        return [to_data(item) for item in value]
    if isinstance(value, str):
        # A lone surrogate (from an undecodable byte in a manifest) is not valid Unicode in JSON.
        return _LONE_SURROGATE.sub("\ufffd", value)
    if value is None or isinstance(value, (bool, int, float)):
        return value
    raise TypeError(f"cannot serialise {type(value).__name__} to SARIF")


def dumps(value: Any) -> str:
    """Deterministic JSON text: the same objects always give the same bytes."""
    return json.dumps(to_data(value), indent=2, ensure_ascii=True) + "\n"
