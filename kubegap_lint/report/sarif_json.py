"""Serialise sarif-om objects to SARIF 2.1.0 JSON, keeping every value the producer set.

sarif-om (1.0.4) has classes but no serialiser, and the usual one (jschema-to-python) drops every
value equal to its schema default: a rule's `defaultConfiguration.level: "warning"` vanishes. Here
the rule is simpler and explicit: objects are made with `sarif(cls, **fields)`, which records the
fields given, and exactly those fields are written, in the order given, under the JSON names that
sarif-om keeps in each attribute's metadata. Attributes left at sarif-om's defaults (`-1`
sentinels, `language: en-US`, ...) are never written.
"""

from __future__ import annotations

import re
from typing import Any, TypeVar

import attr

from kubegap_lint.core.jsonpieces import indented

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


def _fields(cls: type) -> tuple[dict[str, str], bool]:
    """A sarif-om class's attribute names mapped to their JSON names (once a class: a report
    holds tens of thousands of objects of a dozen classes), and whether it is one."""
    known = _CLASS_FIELDS.get(cls)
    if known is None:
        if attr.has(cls):
            known = ({f.name: _json_name(cls, f) for f in attr.fields(cls)}, True)
        else:
            known = ({}, False)
        _CLASS_FIELDS[cls] = known
    return known


_CLASS_FIELDS: dict[type, tuple[dict[str, str], bool]] = {}


def to_data(value: Any) -> Any:
    """sarif-om objects, dicts, lists and scalars to plain JSON data."""
    if isinstance(value, str):
        return _unicode(value)
    if value is None or isinstance(value, (bool, int, float)):
        return value
    if isinstance(value, dict):
        return {_unicode(str(key)): to_data(item) for key, item in value.items() if item is not None}
    if isinstance(value, (list, tuple)):
        return [to_data(item) for item in value]
    names, is_sarif = _fields(type(value))
    if is_sarif:
        explicit = getattr(value, _EXPLICIT, None)
        if explicit is None:
            raise TypeError(f"{type(value).__name__} was not built with sarif(): its set fields are unknown")
        out: dict[str, Any] = {}
        for name in explicit:
            item = getattr(value, name)
            if item is None:  # a None given explicitly means "absent"
                continue
            out[names[name]] = to_data(item)
        return out
    raise TypeError(f"cannot serialise {type(value).__name__} to SARIF")


def _unicode(text: str) -> str:
    # A lone surrogate (from an undecodable byte in a manifest) is not valid Unicode in JSON.
    return text if text.isascii() else _LONE_SURROGATE.sub("\ufffd", text)


def dumps(value: Any) -> str:
    """Deterministic JSON text: the same objects always give the same bytes."""
    return indented(to_data(value)) + "\n"
