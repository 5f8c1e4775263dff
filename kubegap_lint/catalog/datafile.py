"""Read the project's own YAML data files (policies, incidents, the workload table,
configuration) with positions, and validate them against their JSON Schemas so that every
error names the file, the line and the field."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from kubegap_lint.core.datapaths import schema_path
from kubegap_lint.core.errors import DataFileError
from kubegap_lint.core.safefile import read_text_limited
from kubegap_lint.input.parse import PositionIndex, parse_chunk
from kubegap_lint.input.scan import Chunk, split_documents


def load_yaml(path: Path | str, text: str | None = None) -> tuple[Any, PositionIndex]:
    """Parse a one-document YAML file; any fault is a DataFileError naming the place."""
    display = str(path)
    if text is None:
        text = read_text_limited(path)
    chunks = [c for c in split_documents(text.splitlines(True)) if c.has_content]
    if not chunks:
        return None, PositionIndex()
    if len(chunks) > 1:
        raise DataFileError([f"{display}:{chunks[1].first_line + 1}: expected one YAML document"])
    parsed = parse_chunk(chunks[0])
    for problem in parsed.problems:
        where = f"{display}:{problem.position.line}:{problem.position.column}"
        raise DataFileError([f"{where}: {problem.message}"])
    return parsed.data, parsed.positions


@cache
def _validator(schema_name: str) -> Any:
    import json

    import jsonschema  # heavy: imported only when a data file is validated

    with open(schema_path(schema_name), encoding="utf-8") as handle:
        schema = json.load(handle)
    cls = jsonschema.validators.validator_for(schema)
    return cls(schema)


def locate(data: Any, positions: PositionIndex, path: list[Any]) -> tuple[int, int] | None:
    """The line and column of the deepest existing node along a JSON path (its key, or where
    a list item starts)."""
    found = positions.key(positions.nearest(tuple(path)))
    return (found.line, found.column) if found else None


def schema_errors(
    data: Any, positions: PositionIndex, schema_name: str, display: str
) -> list[str]:
    """Validate data; return one line per error, sorted by place."""
    errors = []
    for error in _validator(schema_name).iter_errors(data):
        path = list(error.absolute_path)
        where = locate(data, positions, path)
        place = f"{display}:{where[0]}:{where[1]}" if where else display
        field = ".".join(str(p) for p in path) or "(top level)"
        errors.append(((where or (0, 0)), f"{place}: {field}: {_short(error)}"))
    return [message for _, message in sorted(errors)]


def _short(error: Any) -> str:
    """jsonschema messages can quote whole objects; keep them to one readable line."""
    if error.validator == "additionalProperties":
        return " ".join(error.message.split())
    if error.validator in ("oneOf", "anyOf") and error.context:
        best = min(error.context, key=lambda e: len(e.message))
        return " ".join(best.message.split())[:300]
    message = " ".join(error.message.split())
    return message if len(message) <= 300 else message[:297] + "..."


def load_validated(path: Path | str, schema_name: str, text: str | None = None) -> tuple[Any, PositionIndex]:
    if text is None:
        text = read_text_limited(path)
    data, positions = load_yaml(path, text)
    # A text that passed this schema before passes again: skip jsonschema (see validcache.py).
    from kubegap_lint.catalog import validcache
    key = validcache.digest(schema_path(schema_name), text)
    if validcache.is_valid(key):
        return data, positions
    problems = schema_errors(data, positions, schema_name, str(path))
    if problems:
        raise DataFileError(problems)
    validcache.remember(key)
    return data, positions


__all__ = ["Chunk", "load_yaml", "load_validated", "locate", "schema_errors"]
