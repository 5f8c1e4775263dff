"""Validating a configuration file against its JSON Schemas: one line a problem, naming the
file, line, column and key, in file order.
"""

from __future__ import annotations

from typing import Any

from kubegap_lint.config.configfile import ConfigFile

_TYPE_NAMES = {"array": "a list", "object": "a mapping", "string": "a string", "integer": "an integer",
               "number": "a number", "boolean": "true or false", "null": "null"}


def type_name(value: Any) -> str:
    """A value as a message names it: its type, and the value when short."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, str):
        return f"the string {value!r}"
    return f"{type(value).__name__} {value!r}"


def _key_text(path: list[Any]) -> str:
    out = ""
    for step in path:
        out += f"[{step}]" if isinstance(step, int) else (f".{step}" if out else str(step))
    return out or "(top level)"


def _describe(error: Any) -> tuple[list[Any], str]:
    """A schema error as (the path of the key it is about, what was expected)."""
    path = list(error.absolute_path)
    validator, value, instance = error.validator, error.validator_value, error.instance
    if validator == "additionalProperties":
        allowed = sorted(error.schema.get("properties", {}))
        unknown = sorted(k for k in instance if k not in allowed) if isinstance(instance, dict) else []
        key = unknown[0] if unknown else "?"
        choice = f"; expected one of: {', '.join(allowed)}" if allowed else ""
        return path + [key], f"unknown key{choice}"
    if validator == "type":
        kinds = value if isinstance(value, list) else [value]
        wanted = " or ".join(_TYPE_NAMES.get(str(k), str(k)) for k in kinds)
        return path, f"expected {wanted}, got {type_name(instance)}"
    if validator == "enum":
        return path, f"expected one of: {', '.join(map(str, value))}; got {type_name(instance)}"
    if validator == "required":
        missing = [k for k in value if isinstance(instance, dict) and k not in instance]
        return path, f"missing key {', '.join(missing) or value}"
    if validator in ("minItems", "minLength"):
        return path, "must not be empty"
    if validator == "pattern":
        return path, f"expected a value matching {value}, got {type_name(instance)}"
    if validator == "minimum":
        return path, f"expected a number of at least {value}, got {instance!r}"
    return path, " ".join(error.message.split())[:300]


def _schema_problems(config: ConfigFile, data: Any, schema_name: str, prefix: list[Any]) -> list[tuple[tuple[int, int], str]]:
    from kubegap_lint.catalog.datafile import _validator

    problems = []
    for error in _validator(schema_name).iter_errors(data):
        path, expected = _describe(error)
        full = prefix + path
        where = config.where(full) or (0, 0)
        place = f"{config.display}:{where[0]}:{where[1]}" if where != (0, 0) else config.display
        problems.append((where, f"{place}: {_key_text(full)}: {expected}"))
    return problems


def validate_config(config: ConfigFile) -> list[str]:
    """Schema problems of the file and of its params, one line each, in file order."""
    problems = _schema_problems(config, config.data, "config.schema.json", [])
    params = config.data.get("params")
    if isinstance(params, dict):
        problems += _schema_problems(config, params, "params.schema.json", ["params"])
    return [message for _, message in sorted(set(problems))]
