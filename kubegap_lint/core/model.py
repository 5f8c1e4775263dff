"""The records that flow between the pipeline stages.

Lines and columns are 1-based everywhere outside `parse.py`, which converts the parser's
0-based marks once.
"""

from __future__ import annotations

import dataclasses
import enum
from dataclasses import dataclass
from typing import Any

from kubegap_lint.core.record import record


class Severity(str, enum.Enum):
    """Finding severities; the names are SARIF's result levels, so no mapping table is needed."""

    ERROR = "error"
    WARNING = "warning"
    NOTE = "note"

    @property
    def rank(self) -> int:
        """Higher is more severe; used for thresholds and for sorting the summary."""
        return {"error": 3, "warning": 2, "note": 1}[self.value]

    @classmethod
    def parse(cls, text: str) -> Severity:
        return cls(text.lower())


@record(frozen=True, order=True)
class Position:
    """A place in a file: 1-based line and column."""

    line: int
    column: int

    def __init__(self, line: int, column: int) -> None:  # made for every located node: by hand
        object.__setattr__(self, "line", line)
        object.__setattr__(self, "column", column)


@record(frozen=True)
class Location:
    """Where a finding points: the file as the user named it, and a place in it."""

    path: str
    line: int
    column: int
    end_line: int | None = None
    end_column: int | None = None

    def __init__(self, path: str, line: int, column: int, end_line: int | None = None,
                 end_column: int | None = None) -> None:  # one or two a finding: by hand
        put = object.__setattr__
        put(self, "path", path)
        put(self, "line", line)
        put(self, "column", column)
        put(self, "end_line", end_line)
        put(self, "end_column", end_column)


@record(frozen=True)
class ResourceRef:
    """The identity of a Kubernetes resource, as written in the manifest."""

    kind: str
    name: str | None
    namespace: str | None = None
    api_version: str | None = None

    def __init__(self, kind: str, name: str | None, namespace: str | None = None,
                 api_version: str | None = None) -> None:  # one a finding: by hand
        put = object.__setattr__
        put(self, "kind", kind)
        put(self, "name", name)
        put(self, "namespace", namespace)
        put(self, "api_version", api_version)

    def display(self) -> str:
        name = self.name if self.name is not None else "<unnamed>"
        if self.namespace:
            return f"{self.kind} {self.namespace}/{name}"
        return f"{self.kind} {name}"


@record(frozen=True)
class Suppression:
    """Why a finding is not counted: its kind (annotation, inline, config, baseline) and reason."""

    kind: str
    reason: str
    source: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Finding:
    """One problem found in one place, made by keyword. Frozen: later stages derive new
    findings with `dataclasses.replace()`; slots: a run holds many (sorted store, reports)."""

    rule_id: str
    rule_name: str
    severity: Severity
    message: str
    location: Location
    resource: ResourceRef | None = None
    role: str | None = None
    container: str | None = None
    document_index: int | None = None
    template: str | None = None  # the Helm template named by "# Source:"
    node_path: str = ""  # where in the resource the finding is; stable across line shifts
    evidence: tuple[str, ...] = ()
    approximate: bool = False  # the line is the nearest existing parent of a missing field
    rendered_location: Location | None = None  # set when the primary location is a template
    # The located node's key path in its document (keys and list indexes), for every finding
    # located in a manifest; () for input faults (KG0xx), which sit on text, not on a node.
    key_path: tuple[str | int, ...] = ()
    missing: str | None = None  # the field that is absent when the location is its parent
    suppression: Suppression | None = None
    extra: dict[str, Any] = dataclasses.field(default_factory=dict, compare=False, hash=False)
    found_by: str | None = None  # the workload table entry, or "walk", that found the pod template
    # For a kind the table does not know whose shape decided its class: (class, deciding field).
    class_from: tuple[str, str] | None = None

    def sort_key(self) -> tuple[str, int, int, str, str]:
        loc = self.location
        return (loc.path, loc.line, loc.column, self.rule_id, self.message)


@record(frozen=True)
class InputError:
    """A problem that stops one input (or a configuration) from being read at all."""

    path: str
    message: str
    line: int | None = None
    column: int | None = None

    def display(self) -> str:
        place = self.path
        if self.line is not None:
            place += f":{self.line}"
            if self.column is not None:
                place += f":{self.column}"
        return f"{place}: {self.message}"
