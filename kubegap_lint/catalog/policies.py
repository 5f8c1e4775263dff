"""Load the policy catalog: policy files, the incident catalog they cite, and parameter
defaults. Everything is validated by JSON Schema and every JMESPath expression is compiled
once here, so a broken policy fails at load time with its file, line and field."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from kubegap_lint.catalog.datafile import load_validated, locate
from kubegap_lint.catalog.envnames import NAMES_FILE, load_env_names
from kubegap_lint.catalog.patterns import expressions, policy_pattern_errors
from kubegap_lint.core.datapaths import policies_dir
from kubegap_lint.core.errors import DataFileError
from kubegap_lint.core.model import Severity
from kubegap_lint.core.record import field, record
from kubegap_lint.input.parse import PositionIndex

POLICY_FILE = r"^KG\d{3}-[a-z0-9]+(?:-[a-z0-9]+)*\.yaml$"  # patterns compiled at their first use
_PLACEHOLDER_RE = re.compile(r"\{\{|\}\}|\{([^{}]+)\}")


@record(frozen=True)
class MessageTemplate:
    """A message with `{expression}` placeholders, each a compiled JMESPath expression."""

    text: str
    parts: tuple[Any, ...]  # str pieces and compiled expressions, in order

    def render(self, element: Any, interpreter: Any) -> str:
        out = []
        search = interpreter.search
        for part in self.parts:
            if isinstance(part, str):
                out.append(part)
            else:
                value = search(part, element)
                out.append(value if type(value) is str else _display(value))  # most are texts
        return "".join(out)

    def renderer(self, interpreter: Any) -> Any:
        """`render` with the interpreter's evaluator of each placeholder found once
        (engine/evaluate.Plan keeps one a policy for the run), not looked up a finding."""
        evaluator = getattr(interpreter, "evaluator", None)
        if evaluator is None:
            return lambda element: self.render(element, interpreter)
        parts: tuple[Any, ...] = tuple(str(part) if isinstance(part, str) else evaluator(part) for part in self.parts)
        display = _display

        def render(element: Any) -> str:
            out = []
            for part in parts:
                if type(part) is str:
                    out.append(part)
                else:
                    value = part(element)
                    out.append(value if type(value) is str else display(value))
            return "".join(out)

        return render


_MAX_DISPLAY_DEPTH = 8  # lists in lists: beyond this a message says "..." (no recursion limit)


def _display(value: Any, depth: int = 0) -> str:
    if value is None:
        return "?"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, list):
        if depth >= _MAX_DISPLAY_DEPTH:
            return "..."
        return ", ".join(_display(v, depth + 1) for v in value)
    if isinstance(value, int) and not -10**100 < value < 10**100:
        return "a number of over 100 digits"  # str() raises beyond 4,300 digits
    return str(value)


@record(frozen=True)
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


@record(frozen=True)
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


_ID_PREFIX = r"^[A-Za-z]{2}[0-9]{0,3}$"


@record
class Catalog:
    policies: list[Policy]
    incidents: dict[str, Incident]
    params: dict[str, Any]

    def find(self, key: str) -> Policy | None:
        key = key.strip()
        for policy in self.policies:
            if key in (policy.id, policy.name) or key.upper() == policy.id:
                return policy
        return None

    def select(self, key: str) -> list[Policy]:
        """The policies a selector names, in catalog order: an id or name; an id prefix
        (`KG3`, as ruff selects by prefix); a glob over ids and names (`KG3*`, `nccl-*`); or a
        tag (`nccl`). Empty when it names none."""
        key = key.strip()
        found = self.find(key)
        if found is not None:
            return [found]
        if not key:
            return []
        if any(c in key for c in "*?["):
            import fnmatch

            return [p for p in self.policies if fnmatch.fnmatchcase(p.id, key.upper())
                    or fnmatch.fnmatchcase(p.name, key)]
        if re.match(_ID_PREFIX, key):
            by_prefix = [p for p in self.policies if p.id.startswith(key.upper())]
            if by_prefix:
                return by_prefix
        return [p for p in self.policies if key in p.tags]


class LazyExpression:
    """A JMESPath expression of a policy from the cache (its file was validated and every
    expression compiled when the cache was made), parsed from its text at its first use: a run
    that evaluates no workload parses none. The cache holds the text only, never an AST, so the
    AST used is always the parse of the policy's own text, under the same limits as a load from
    the files. Stands in for jmespath's ParsedResult (`expression`, `parsed`); searched by the run's
    compiler (catalog/compile.py), never by jmespath's interpreter.

    `patterns_checked`: the patterns it passes to match() passed the pattern check
    (patterns.py) with the catalog's own parameters when the cache was made, so a run with
    those parameters need not parse it to check them again."""

    __slots__ = ("expression", "_parsed", "patterns_checked")

    def __init__(self, expression: str, patterns_checked: bool = False) -> None:
        self.expression = expression
        self._parsed: dict[str, Any] | None = None
        self.patterns_checked = patterns_checked

    @property
    def parsed(self) -> dict[str, Any]:
        if self._parsed is None:
            import jmespath

            self._parsed = jmespath.compile(self.expression).parsed
        return self._parsed

    def __repr__(self) -> str:
        return f"LazyExpression({self.expression!r})"


MAX_EXPRESSION_DEPTH = 100  # nesting of (), [], {} and prefix ! and &: real policies stay under 10


def expression_depth(expression: str) -> int:
    """How deep an expression nests, from its text: brackets, and runs of the prefix operators
    `!` and `&` (each a level of the parser's recursion), literals skipped. jmespath's parser and
    every evaluator recurse once or more a level, so 3,000 `(` or 20,000 `!` would end in
    RecursionError; this is checked before anything parses the text."""
    deepest = 0
    unary = 0  # prefix operators waiting for their operand at this level
    stack: list[int] = []
    outer = 0  # sum(stack): prefix operators of the levels around this one
    position, length = 0, len(expression)
    while position < length:
        char = expression[position]
        if char in "'`\"":  # a raw string, JSON literal or quoted identifier: skip to its end
            position += 1
            while position < length and expression[position] != char:
                position += 2 if expression[position] == "\\" else 1
        elif char in "([{":
            stack.append(unary)
            outer += unary
            unary = 0
        elif char in ")]}":
            unary = 0
            if stack:
                outer -= stack.pop()
        elif char in "!&" and expression[position + 1 : position + 2] not in ("=", "&"):
            if not (char == "&" and expression[position - 1 : position] == "&"):
                unary += 1
        elif not char.isspace():
            unary = 0
        deepest = max(deepest, len(stack) + outer + unary)
        position += 1
    return deepest


def _compile(expression: str, display: str, data: Any, positions: PositionIndex, path: list[Any],
             lazy: bool = False) -> Any:
    if lazy:
        return LazyExpression(expression)
    import jmespath
    from jmespath.exceptions import JMESPathError

    def refuse(detail: str) -> DataFileError:
        where = locate(data, positions, path)
        place = f"{display}:{where[0]}:{where[1]}" if where else display
        return DataFileError([f"{place}: {'.'.join(map(str, path))}: JMESPath does not compile: {detail}"])

    if expression_depth(expression) > MAX_EXPRESSION_DEPTH:
        raise refuse(f"nested more than {MAX_EXPRESSION_DEPTH} levels deep (brackets, ! and &)")
    try:
        return jmespath.compile(expression)
    except JMESPathError as exc:
        raise refuse(" ".join(str(exc).split())) from None


def _template(text: str, display: str, data: Any, positions: PositionIndex,
              lazy: bool = False) -> MessageTemplate:
    parts: list[Any] = []
    position = 0
    for match in _PLACEHOLDER_RE.finditer(text):
        parts.append(text[position : match.start()])
        token = match.group(0)
        if token in ("{{", "}}"):
            parts.append(token[0])
        else:
            parts.append(_compile(match.group(1).strip(), display, data, positions, ["message"], lazy))
        position = match.end()
    parts.append(text[position:])
    return MessageTemplate(text, tuple(p for p in parts if p != ""))


def load_policy(path: Path) -> Policy:
    data, positions = load_validated(path, "policy.schema.json")
    return policy_from_data(data, str(path), positions, path.name)


def policy_from_data(data: dict[str, Any], display: str, positions: PositionIndex, file_name: str,
                     lazy: bool = False) -> Policy:
    """A Policy from a file's validated data (from the file, or from the cache: `lazy`, its
    expressions parsed at their first use)."""
    expected = f"{data['id']}-{data['name']}.yaml"
    if file_name != expected:
        raise DataFileError([f"{display}: the file of policy {data['id']} must be named {expected}"])
    scope = data.get("scope", "workload")
    compiled: dict[str, Any] = {}
    if scope == "workload":
        for key in ("applies_to", "for_each", "violation", "severity_expr"):
            if key in data:
                compiled[key] = _compile(data[key], display, data, positions, [key], lazy)
        at_list = data.get("at", [])
        at_list = [at_list] if isinstance(at_list, str) else at_list
        compiled["at"] = tuple(
            (text, _compile(text, display, data, positions, ["at", i], lazy)) for i, text in enumerate(at_list)
        )
        compiled["message"] = _template(data["message"], display, data, positions, lazy)
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
    return incidents_from_data(data["incidents"], path)


def incidents_from_data(entries: list[Any], path: Path) -> dict[str, Incident]:
    incidents: dict[str, Incident] = {}
    for entry in entries:
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
    """The KG*.yaml files of a folder, by name."""
    try:
        with os.scandir(folder) as entries:
            names = [e.name for e in entries if e.name.startswith("KG") and e.name.endswith(".yaml") and e.is_file()]
    except OSError:  # as glob: a folder that is missing or unreadable has none
        return []
    return [folder / name for name in sorted(names)]


def load_catalog(extra_dirs: Iterable[Path] = (), builtin_dir: Path | None = None) -> Catalog:
    """Load built-in (and extra) policies with their incidents; all errors are collected."""
    extra_dirs = list(extra_dirs)
    if not extra_dirs:  # the built-in catalog alone: kept between runs as plain data (cache.py)
        return _cached_catalog(builtin_dir or policies_dir())
    return _load_catalog(extra_dirs, builtin_dir)


def _cached_catalog(folder: Path) -> Catalog:
    from kubegap_lint.catalog import cache

    key = cache.catalog_key("catalog", folder)
    if key is None:
        return _load_catalog([], folder)
    found = cache.load("catalog", key)
    if found is not None:
        try:
            return _rebuild(found, folder)
        except Exception:  # noqa: BLE001 - any fault in cached data: load from the files
            cache.note("the cached catalog does not match the policy files: loaded from the files")
    catalog = _load_catalog([], folder)  # raises on a broken policy: nothing is cached then
    plain = _as_plain(catalog)
    plain["patterns_checked"] = not policy_pattern_errors(catalog.policies, catalog.params)
    cache.store("catalog", key, plain)
    return catalog


def _as_plain(catalog: Catalog) -> dict[str, Any]:
    """What the catalog is built from, as JSON-ready data (the validated files' contents)."""
    return {
        "policies": [{"file": Path(p.path).name, "data": p.raw} for p in catalog.policies],
        "incidents": [incident.raw for incident in catalog.incidents.values()],
        "params": catalog.params,
    }


def _rebuild(found: Any, folder: Path) -> Catalog:
    """The catalog from cached data, checked against the folder: exactly its policy files."""
    if not isinstance(found, dict) or not isinstance(found.get("params"), dict):
        raise ValueError("not a catalog")
    files = {p.name: p for p in policy_files(folder)}
    records = found["policies"]
    if not isinstance(records, list) or sorted(r["file"] for r in records) != sorted(files):
        raise ValueError("not the policy files of the folder")
    incidents = incidents_from_data(found["incidents"], folder / "incidents.yaml")
    policies = [policy_from_data(r["data"], str(files[r["file"]]), PositionIndex(), r["file"], lazy=True)
                for r in records]
    if any(e not in incidents for p in policies for e in p.evidence):
        raise ValueError("unknown evidence")
    if found.get("patterns_checked") is True:
        for policy in policies:
            for _, expression in expressions(policy):
                expression.patterns_checked = True
    policies.sort(key=lambda p: p.id)
    return Catalog(policies, incidents, found["params"])


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
        if not re.match(POLICY_FILE, path.name):
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
