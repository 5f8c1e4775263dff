"""Load the policy catalog: policy files, the incident catalog they cite, and parameter
defaults. Everything is validated by JSON Schema and every JMESPath expression is compiled
once here, so a broken policy fails at load time with its file, line and field."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kubegap_lint.catalog.datafile import load_validated, locate
from kubegap_lint.catalog.envnames import NAMES_FILE, load_env_names
from kubegap_lint.core.datapaths import policies_dir
from kubegap_lint.core.errors import DataFileError
from kubegap_lint.core.model import Severity
from kubegap_lint.input.parse import PositionIndex

POLICY_FILE_RE = re.compile(r"^KG\d{3}-[a-z0-9]+(?:-[a-z0-9]+)*\.yaml$")
_PLACEHOLDER_RE = re.compile(r"\{\{|\}\}|\{([^{}]+)\}")


@dataclass(frozen=True)
class MessageTemplate:
    """A message with `{expression}` placeholders, each a compiled JMESPath expression."""

    text: str
    parts: tuple[Any, ...]  # str pieces and compiled expressions, in order

    def render(self, element: Any, interpreter: Any) -> str:
        out = []
        for part in self.parts:
            if isinstance(part, str):
                out.append(part)
            else:
                out.append(_display(interpreter.search(part, element)))
        return "".join(out)


def _display(value: Any) -> str:
    if value is None:
        return "?"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, list):
        return ", ".join(_display(v) for v in value)
    return str(value)


@dataclass(frozen=True)
class Incident:
    id: str
    title: str
    organisation: str
    date: str
    summary: str
    urls: tuple[str, ...]
    library_id: str | None
    secondary: bool
    raw: dict[str, Any] = field(compare=False, hash=False)


@dataclass(frozen=True)
class Policy:
    id: str
    name: str
    title: str
    severity: Severity
    scope: str  # "workload" or "input"
    help: str
    evidence: tuple[str, ...]
    tags: tuple[str, ...]
    precision: str
    enabled: bool
    path: str
    applies_to: Any = None
    for_each: Any = None
    violation: Any = None
    at: tuple[tuple[str, Any], ...] = ()
    message: MessageTemplate | None = None
    severity_expr: Any = None
    needs: tuple[str, ...] = ()  # facts it cannot judge without (KG008 names it when one is missing)
    raw: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)


@dataclass
class Catalog:
    policies: list[Policy]
    incidents: dict[str, Incident]
    params: dict[str, Any]

    def by_key(self) -> dict[str, Policy]:
        """Policies by id and by name, for selection and suppression."""
        table: dict[str, Policy] = {}
        for policy in self.policies:
            table[policy.id] = policy
            table[policy.name] = policy
        return table

    def find(self, key: str) -> Policy | None:
        key = key.strip()
        for policy in self.policies:
            if key in (policy.id, policy.name) or key.upper() == policy.id:
                return policy
        return None


def _compile(expression: str, display: str, data: Any, positions: PositionIndex, path: list[Any]) -> Any:
    import jmespath
    from jmespath.exceptions import JMESPathError

    try:
        return jmespath.compile(expression)
    except JMESPathError as exc:
        where = locate(data, positions, path)
        place = f"{display}:{where[0]}:{where[1]}" if where else display
        detail = " ".join(str(exc).split())
        raise DataFileError([f"{place}: {'.'.join(map(str, path))}: JMESPath does not compile: {detail}"]) from None


def _template(text: str, display: str, data: Any, positions: PositionIndex) -> MessageTemplate:
    parts: list[Any] = []
    position = 0
    for match in _PLACEHOLDER_RE.finditer(text):
        parts.append(text[position : match.start()])
        token = match.group(0)
        if token in ("{{", "}}"):
            parts.append(token[0])
        else:
            parts.append(_compile(match.group(1).strip(), display, data, positions, ["message"]))
        position = match.end()
    parts.append(text[position:])
    return MessageTemplate(text, tuple(p for p in parts if p != ""))


def load_policy(path: Path) -> Policy:
    display = str(path)
    data, positions = load_validated(path, "policy.schema.json")
    expected = f"{data['id']}-{data['name']}.yaml"
    if path.name != expected:
        raise DataFileError([f"{display}: the file of policy {data['id']} must be named {expected}"])
    scope = data.get("scope", "workload")
    compiled: dict[str, Any] = {}
    if scope == "workload":
        for key in ("applies_to", "for_each", "violation", "severity_expr"):
            if key in data:
                compiled[key] = _compile(data[key], display, data, positions, [key])
        at_list = data.get("at", [])
        at_list = [at_list] if isinstance(at_list, str) else at_list
        compiled["at"] = tuple(
            (text, _compile(text, display, data, positions, ["at", i])) for i, text in enumerate(at_list)
        )
        compiled["message"] = _template(data["message"], display, data, positions)
    return Policy(
        id=data["id"],
        name=data["name"],
        title=data["title"],
        severity=Severity.parse(data["severity"]),
        scope=scope,
        help=data["help"].strip(),
        evidence=tuple(data.get("evidence", [])),
        tags=tuple(data.get("tags", [])),
        precision=data.get("precision", "high"),
        enabled=bool(data.get("enabled", True)),
        path=display,
        needs=tuple(data.get("needs", [])),
        raw=data,
        **compiled,
    )


def load_incidents(path: Path) -> dict[str, Incident]:
    data, _ = load_validated(path, "incidents.schema.json")
    incidents: dict[str, Incident] = {}
    for entry in data["incidents"]:
        if entry["id"] in incidents:
            raise DataFileError([f"{path}: incident id '{entry['id']}' is defined twice"])
        incidents[entry["id"]] = Incident(
            id=entry["id"],
            title=entry["title"],
            organisation=entry["organisation"],
            date=str(entry["date"]),
            summary=" ".join(str(entry["summary"]).split()),
            urls=tuple(s["url"] for s in entry.get("sources", []) if "url" in s),
            library_id=entry.get("library_id"),
            secondary=any(f.get("secondary", False) for f in entry.get("facts", [])),
            raw=entry,
        )
    return incidents


def load_params(path: Path) -> dict[str, Any]:
    data, _ = load_validated(path, "params.schema.json")
    return dict(data)


def policy_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.glob("KG*.yaml") if p.is_file())


def load_catalog(extra_dirs: Iterable[Path] = (), builtin_dir: Path | None = None) -> Catalog:
    """Load built-in (and extra) policies with their incidents; all errors are collected."""
    extra_dirs = list(extra_dirs)
    if not extra_dirs:  # the built-in catalog alone: kept between runs (catalogcache.py)
        from kubegap_lint.catalog.cache import cached

        folder = builtin_dir or policies_dir()
        return cached("catalog", folder, lambda: _load_catalog([], folder), Catalog)
    return _load_catalog(extra_dirs, builtin_dir)


def _load_catalog(extra_dirs: list[Path], builtin_dir: Path | None) -> Catalog:
    folder = builtin_dir or policies_dir()
    errors: list[str] = []
    incidents: dict[str, Incident] = {}
    params: dict[str, Any] = {}
    try:
        incidents.update(load_incidents(folder / "incidents.yaml"))
    except DataFileError as exc:
        errors.extend(exc.messages)
    try:
        params = load_params(folder / "params.yaml")
    except DataFileError as exc:
        errors.extend(exc.messages)
    if (folder / NAMES_FILE).is_file():  # KG305's known names: data with their sources
        try:
            for key, value in load_env_names(folder / NAMES_FILE).items():
                params.setdefault(key, value)
        except DataFileError as exc:
            errors.extend(exc.messages)
    files = policy_files(folder)
    for extra in extra_dirs:
        if (extra / "incidents.yaml").is_file():
            try:
                for key, incident in load_incidents(extra / "incidents.yaml").items():
                    incidents.setdefault(key, incident)
            except DataFileError as exc:
                errors.extend(exc.messages)
        files.extend(policy_files(extra))
    policies: list[Policy] = []
    seen: dict[str, str] = {}
    for path in files:
        if not POLICY_FILE_RE.match(path.name):
            errors.append(f"{path}: a policy file is named KGnnn-kebab-name.yaml")
            continue
        try:
            policy = load_policy(path)
        except DataFileError as exc:
            errors.extend(exc.messages)
            continue
        for key in (policy.id, policy.name):
            if key in seen:
                errors.append(f"{path}: '{key}' is already used by {seen[key]}")
        seen[policy.id] = seen[policy.name] = str(path)
        unknown = [e for e in policy.evidence if e not in incidents]
        if unknown:
            errors.append(f"{path}: evidence: unknown incident id(s) {', '.join(unknown)}")
        policies.append(policy)
    if errors:
        raise DataFileError(errors)
    policies.sort(key=lambda p: p.id)
    return Catalog(policies, incidents, params)
