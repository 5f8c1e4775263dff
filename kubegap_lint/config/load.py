"""Configuration: find the file, validate it, and merge it with the command line into Settings.

The file is `.kubegap-lint.yaml`, or the `[tool.kubegap-lint]` table of `pyproject.toml`, in the
linted path's folder or the nearest folder above it. `--config FILE` names one; `--no-config`
ignores them. Every value remembers where it came from, for `kubegap-lint config show`.
Paths in a file (exclude globs with a `/`, policy_dirs, baseline, exemption paths) are relative
to the file's folder, so a configuration works whatever folder the tool is run from.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from typing import Any

from kubegap_lint.config.settings import ChartRender, Exemption, Settings
from kubegap_lint.core.errors import DataFileError
from kubegap_lint.core.model import Severity
from kubegap_lint.core.record import field, record
from kubegap_lint.core.safefile import read_text_limited
from kubegap_lint.input.parse import PositionIndex

CONFIG_NAME = ".kubegap-lint.yaml"
PYPROJECT_NAME = "pyproject.toml"
TOOL_TABLE = "kubegap-lint"
DEFAULT = "default"
COMMAND_LINE = "command line"

_TYPE_NAMES = {"array": "a list", "object": "a mapping", "string": "a string", "integer": "an integer",
               "number": "a number", "boolean": "true or false", "null": "null"}


@record
class ConfigFile:
    """One configuration file as read: its data and a way to find each key's line."""

    path: Path
    data: dict[str, Any]
    positions: PositionIndex | None = None  # YAML files
    text: str = ""  # TOML files: searched for key lines

    @property
    def display(self) -> str:
        return display_path(self.path)

    def where(self, path: list[Any]) -> tuple[int, int] | None:
        if self.positions is None:
            return _toml_line(self.text, path)
        from kubegap_lint.catalog.datafile import locate

        found = locate(self.data, self.positions, path)
        if found and path and isinstance(path[-1], int):
            # A scalar list item has no position of its own: find its text after the list's.
            item = _config_node(self.data, path)
            if isinstance(item, str):
                lines = self.text.splitlines()
                for number in range(found[0] - 1, len(lines)):
                    column = lines[number].find(item, found[1] if number == found[0] - 1 else 0)
                    if column != -1:
                        return number + 1, column + 1
        return found

    def place(self, path: list[Any]) -> str:
        found = self.where(path)
        return f"{self.display}:{found[0]}:{found[1]}" if found else self.display


@record
class Resolved:
    """The settings of a run and where each came from."""

    settings: Settings
    file: ConfigFile | None = None
    origins: dict[str, str] = field(default_factory=dict)  # key (params.x for params) -> origin


def display_path(path: Path | str) -> str:
    """Relative to the working folder when below it, else absolute; forward slashes."""
    absolute = os.path.abspath(path)
    try:
        relative = os.path.relpath(absolute)
    except ValueError:  # another drive on Windows
        return absolute.replace(os.sep, "/")
    chosen = absolute if relative.startswith("..") else relative
    return chosen.replace(os.sep, "/")


# ---------------------------------------------------------------- discovery and reading

def _has_tool_table(path: Path) -> bool:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    return f"[tool.{TOOL_TABLE}" in text or f'[tool."{TOOL_TABLE}"' in text


def _search_folders(folder: Path) -> list[Path]:
    """The folders discovery may read, nearest first: up to the git top level (the first
    folder that holds `.git`), never above the home folder; outside a repository up to the
    home folder or else the working folder; a folder under none of these is searched alone.
    So a configuration planted in a parent such as /tmp, or above the repository, never
    applies without `--config`."""
    chain = [folder, *folder.parents]
    home = os.environ.get("HOME")
    home_path = Path(home).resolve() if home and os.path.isabs(home) else None
    cwd = Path.cwd().resolve()
    for bound in (lambda p: os.path.lexists(p / ".git"), lambda p: p == cwd):
        for index, candidate in enumerate(chain):
            if candidate == home_path or bound(candidate):
                return chain[: index + 1]
    return [folder]


def discover_config(start: Path) -> Path | None:
    """The nearest configuration file in start's folder or above it, within the repository."""
    folder = start.resolve()
    if not folder.is_dir():
        folder = folder.parent
    for candidate in _search_folders(folder):
        yaml_file = candidate / CONFIG_NAME
        if yaml_file.is_file():
            return yaml_file
        pyproject = candidate / PYPROJECT_NAME
        if pyproject.is_file() and _has_tool_table(pyproject):
            return pyproject
    return None


def _load_toml(text: str) -> dict[str, Any]:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on 3.10 only
        import tomli as tomllib
    return tomllib.loads(text)


def read_config(path: Path) -> ConfigFile:
    """Read and validate one configuration file; errors name the file, line and key."""
    display = display_path(path)
    if not path.is_file():
        raise DataFileError([f"{display}: configuration file not found"])
    if path.name == PYPROJECT_NAME or path.suffix == ".toml":
        text = read_text_limited(path, what="configuration", display=display)
        try:
            document = _load_toml(text)
        except RecursionError:
            raise DataFileError([f"{display}: nested too deeply"]) from None
        except ValueError as exc:  # tomllib.TOMLDecodeError
            raise DataFileError([f"{display}: not valid TOML: {exc}"]) from None
        tool = document.get("tool", {}) if path.name == PYPROJECT_NAME else {}
        if not isinstance(tool, dict):  # `tool = 1`
            raise DataFileError([f"{display}: [tool] must be a table, got {_type_name(tool)}"])
        table = tool.get(TOOL_TABLE, {}) if path.name == PYPROJECT_NAME else document
        if not isinstance(table, dict):
            raise DataFileError([f"{display}: [tool.{TOOL_TABLE}] must be a table"])
        config = ConfigFile(path, table, None, text)
    else:
        from kubegap_lint.catalog.datafile import load_yaml

        text = read_text_limited(path, what="configuration", display=display)
        data, positions = load_yaml(display, text)
        if data is None:
            data = {}
        if not isinstance(data, dict):
            raise DataFileError([f"{display}:1:1: (top level): expected a mapping of keys"
                                 " (select, ignore, params, ...), got " + _type_name(data)])
        config = ConfigFile(path, data, positions, text)
    problems = validate_config(config)
    if problems:
        raise DataFileError(problems)
    return config


def _toml_line(text: str, path: list[Any]) -> tuple[int, int] | None:
    """Best effort: the line of a key inside [tool.kubegap-lint] (tomllib keeps no positions)."""
    lines = text.splitlines()
    start = 0
    header = re.compile(r"^\s*\[\s*tool\s*\.\s*\"?" + re.escape(TOOL_TABLE) + r"\"?\s*\]")
    for number, line in enumerate(lines):
        if header.match(line):
            start = number
            break
    best: tuple[int, int] | None = (start + 1, 1) if lines else None
    position = start
    pattern: re.Pattern[str] | None = None
    for step in path:
        if isinstance(step, str):
            pattern = re.compile(r"(^|[\s{,.\[])\"?" + re.escape(step) + r"\"?\s*="
                                 r"|\[\[?[^\]]*\." + re.escape(step) + r"\]")
            wanted = 0  # the first line that sets the key
        elif pattern is not None:
            wanted = step  # the step-th [[tool.kubegap-lint.key]] table after the first
        else:
            break
        found = _nth_line(lines, pattern, position, wanted)
        if found is None:
            break
        best, position = found, found[0] - 1
    return best


def _nth_line(lines: list[str], pattern: re.Pattern[str], start: int, skip: int) -> tuple[int, int] | None:
    """The (line, column) of the match after skipping `skip` matching lines from `start`."""
    for number in range(start, len(lines)):
        match = pattern.search(lines[number])
        if match:
            if skip == 0:
                return number + 1, match.start() + 1 + (1 if match.group(0)[:1].isspace() else 0)
            skip -= 1
    return None


# ---------------------------------------------------------------- validation

def _type_name(value: Any) -> str:
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
        return path, f"expected {wanted}, got {_type_name(instance)}"
    if validator == "enum":
        return path, f"expected one of: {', '.join(map(str, value))}; got {_type_name(instance)}"
    if validator == "required":
        missing = [k for k in value if isinstance(instance, dict) and k not in instance]
        return path, f"missing key {', '.join(missing) or value}"
    if validator in ("minItems", "minLength"):
        return path, "must not be empty"
    if validator == "pattern":
        return path, f"expected a value matching {value}, got {_type_name(instance)}"
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


# ---------------------------------------------------------------- settings

def _absolute(folder: Path, value: str) -> Path:
    return (folder / value).resolve() if not os.path.isabs(value) else Path(value)


def rebase_glob(pattern: str, folder: Path) -> str:
    """A glob with a folder part is relative to the configuration's folder: make it absolute.
    A bare file-name glob (`*.tmpl.yaml`) matches a file name anywhere: keep it."""
    if "/" not in pattern or os.path.isabs(pattern):
        return pattern
    return str(folder.resolve() / pattern).replace(os.sep, "/")


def settings_from_file(config: ConfigFile) -> tuple[Settings, dict[str, str]]:
    data = config.data
    folder = config.path.resolve().parent
    settings = Settings(source=config.display)
    origins: dict[str, str] = {}

    def origin(key: str, path: list[Any]) -> None:
        origins[key] = config.place(path)

    if "select" in data:
        settings.select = list(data["select"])
        origin("select", ["select"])
    if "ignore" in data:
        settings.ignore = list(data["ignore"])
        origin("ignore", ["ignore"])
    if "severity" in data:
        settings.severity = {k: Severity(v) for k, v in data["severity"].items()}
        origin("severity", ["severity"])
    for name, value in (data.get("params") or {}).items():
        settings.params[name] = value
        origin(f"params.{name}", ["params", name])
    if "exclude" in data:
        settings.exclude = [rebase_glob(p, folder) for p in data["exclude"]]
        origin("exclude", ["exclude"])
    if "policy_dirs" in data:
        settings.policy_dirs = [_absolute(folder, p) for p in data["policy_dirs"]]
        missing = [(i, p) for i, p in enumerate(settings.policy_dirs) if not p.is_dir()]
        if missing:
            raise DataFileError([f"{config.place(['policy_dirs', i])}: policy_dirs[{i}]: expected a folder,"
                                 f" {display_path(p)} is not one" for i, p in missing])
        origin("policy_dirs", ["policy_dirs"])
    if data.get("workloads"):
        from kubegap_lint.workloads.kinds import rules_from_entries

        settings.workloads = rules_from_entries(data["workloads"], config.display,
                                                config.positions or PositionIndex())
        origin("workloads", ["workloads"])
    if "fail_on" in data:
        settings.fail_on = Severity(data["fail_on"])
        origin("fail_on", ["fail_on"])
    if data.get("baseline"):
        settings.baseline = _absolute(folder, data["baseline"])
        origin("baseline", ["baseline"])
    for number, entry in enumerate(data.get("exemptions") or []):
        where = config.where(["exemptions", number]) or (1, 1)
        settings.exemptions.append(Exemption(
            rules=list(entry["rules"]),
            reason=" ".join(entry["reason"].split()),
            kinds=list(entry.get("kinds", [])),
            namespaces=list(entry.get("namespaces", [])),
            names=list(entry.get("names", [])),
            paths=[rebase_glob(p, folder) for p in entry.get("paths", [])],
            containers=list(entry.get("containers", [])),
            origin=(config.display, where[0], where[1]),
        ))
    if settings.exemptions:
        origin("exemptions", ["exemptions"])
    settings.charts = _chart_renders(config, folder)
    if settings.charts:
        origin("charts", ["charts"])
    return settings, origins


def _chart_renders(config: ConfigFile, folder: Path) -> list[ChartRender]:
    """The `charts:` entries, their paths made absolute and checked (one line each, with where)."""
    renders: list[ChartRender] = []
    problems: list[str] = []
    top = _repository_top(folder)
    for number, entry in enumerate(config.data.get("charts") or []):
        chart = _absolute(folder, entry["path"])
        if not (chart / "Chart.yaml").is_file():
            problems.append(f"{config.place(['charts', number, 'path'])}: charts[{number}].path: expected a chart"
                            f" folder (holding Chart.yaml), {display_path(chart)} is not one")
        values = [_absolute(folder, v) for v in entry.get("values", [])]
        problems += [f"{config.place(['charts', number, 'values', i])}: charts[{number}].values[{i}]: expected a"
                     f" file, {display_path(v)} is not one" for i, v in enumerate(values) if not v.is_file()]
        problems += [f"{config.place(['charts', number, 'values', i])}: charts[{number}].values[{i}]:"
                     f" {display_path(v)} is outside the repository ({display_path(top[0])}): not read"
                     for i, v in enumerate(values) if v.is_file() and not _within(v, top)]
        set_files = []
        for i, assignment in enumerate(entry.get("set_file", [])):
            key, equals, path = assignment.partition("=")
            if not equals or not key or not path:
                problems.append(f"{config.place(['charts', number, 'set_file', i])}: charts[{number}].set_file[{i}]:"
                                " expected KEY=PATH")
                continue
            target = _absolute(folder, path)
            if not target.is_file():
                problems.append(f"{config.place(['charts', number, 'set_file', i])}: charts[{number}].set_file[{i}]:"
                                f" expected a file, {display_path(target)} is not one")
            elif not _within(target, top):
                problems.append(f"{config.place(['charts', number, 'set_file', i])}: charts[{number}].set_file[{i}]:"
                                f" {display_path(target)} is outside the repository ({display_path(top[0])}): not read")
            set_files.append(f"{key}={target}")
        where = config.where(["charts", number]) or (1, 1)
        renders.append(ChartRender(
            chart=str(chart), values=[str(v) for v in values], sets=list(entry.get("set", [])),
            set_strings=list(entry.get("set_string", [])), set_files=set_files, release=entry.get("release"),
            namespace=entry.get("namespace"), kube_version=entry.get("kube_version"),
            api_versions=list(entry.get("api_versions", [])), include_crds=bool(entry.get("include_crds", False)),
            set_jsons=list(entry.get("set_json", [])), set_literals=list(entry.get("set_literal", [])),
            origin=(config.display, where[0], where[1])))
    if problems:
        raise DataFileError(problems)
    return renders


def _repository_top(folder: Path) -> list[Path]:
    """Where the files a configuration's `charts:` entries name must be: the repository holding
    the configuration (the nearest folder with `.git`: a pull request's configuration must not
    publish `/proc/self/environ` or `../../.ssh/x`); outside any repository, the configuration's
    own folder or the working folder."""
    real = folder.resolve()
    found = next((p for p in (real, *real.parents) if os.path.lexists(p / ".git")), None)
    return [found] if found is not None else [real, Path.cwd().resolve()]


def _within(path: Path, tops: list[Path]) -> bool:
    """The path, all links followed, is inside one of tops."""
    real = path.resolve()
    return any(real.is_relative_to(top) for top in tops)


def resolve(paths: tuple[str, ...] | list[str], config_file: str | None = None, no_config: bool = False,
            select: list[str] | None = None, ignore: list[str] | None = None,
            fail_on: str | None = None, baseline: str | None = None,
            no_baseline: bool = False) -> Resolved:
    """The settings of a run: the configuration file (named, discovered or none), then the
    command line over it. Like ruff: --select replaces the file's select, and a rule named by
    --select is no longer ignored by the file; --ignore adds to the file's ignore."""
    config: ConfigFile | None = None
    if config_file and not no_config:
        config = read_config(Path(config_file))
    elif not no_config:
        start = next((p for p in paths if p != "-"), ".")
        found = discover_config(Path(start))
        config = read_config(found) if found else None
    if config is not None:
        settings, origins = settings_from_file(config)
    else:
        settings, origins = Settings(), {}
    if select:
        chosen = {s.strip().upper() for s in select} | {s.strip() for s in select}
        settings.select = list(select)
        settings.ignore = [r for r in settings.ignore if r.strip() not in chosen and r.strip().upper() not in chosen]
        origins["select"] = COMMAND_LINE
    if ignore:
        settings.ignore = settings.ignore + list(ignore)
        origins["ignore"] = f"{origins['ignore']} + {COMMAND_LINE}" if "ignore" in origins else COMMAND_LINE
    if fail_on:
        settings.fail_on = Severity(fail_on)
        origins["fail_on"] = COMMAND_LINE
    if no_baseline:
        settings.baseline = None
        origins["baseline"] = f"{COMMAND_LINE} (--no-baseline)"
    elif baseline:
        settings.baseline = Path(baseline).resolve()
        origins["baseline"] = COMMAND_LINE
    return Resolved(settings, config, origins)


def check_rule_names(resolved: Resolved, catalog: Any) -> None:
    """Every rule the configuration names must exist; say where the unknown one is written."""
    settings = resolved.settings
    config = resolved.file
    problems: list[str] = []

    def check(names: list[str], key: str, path: list[Any]) -> None:
        for name in names:
            if name == "*" and key.startswith("exemptions"):
                continue
            if not catalog.select(name):
                origin = resolved.origins.get(key.split("[")[0], "")
                if config is not None and origin != COMMAND_LINE and name in _config_names(config, path):
                    where = config.place(path + [_config_names(config, path).index(name)])
                else:
                    where = "--select/--ignore"
                problems.append(f"{where}: {key}: unknown rule {name!r}; expected a rule id, name,"
                                " id prefix (KG3), glob (KG3*) or tag (see `kubegap-lint rules`)")

    check(settings.select or [], "select", ["select"])
    check(settings.ignore, "ignore", ["ignore"])
    for name in settings.severity:
        if not catalog.select(name):
            where = config.place(["severity", name]) if config is not None else "severity"
            problems.append(f"{where}: severity: unknown rule {name!r}; expected a rule id or name"
                            " (see `kubegap-lint rules`)")
    for number, exemption in enumerate(settings.exemptions):
        check(exemption.rules, f"exemptions[{number}].rules", ["exemptions", number, "rules"])
    if problems:
        raise DataFileError(problems)


def _config_node(data: Any, path: list[Any]) -> Any:
    node: Any = data
    for step in path:
        try:
            node = node[step]
        except (KeyError, IndexError, TypeError):
            return None
    return node


def _config_names(config: ConfigFile, path: list[Any]) -> list[Any]:
    node = _config_node(config.data, path)
    return node if isinstance(node, list) else []


# ---------------------------------------------------------------- config show

def _yaml_scalar(value: Any) -> str:
    import json

    if isinstance(value, Path):
        value = display_path(value)
    if isinstance(value, Severity):
        value = value.value
    if isinstance(value, str) and re.fullmatch(r"[A-Za-z0-9_./*-]+", value) and value not in ("null", "true", "false"):
        return value
    return json.dumps(value, ensure_ascii=False)


def _flow(value: Any) -> str:
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_flow(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_flow(v) for v in value) + "]"
    if value is None:
        return "null"
    return _yaml_scalar(value)


def render_show(resolved: Resolved, catalog: Any) -> str:
    """The effective configuration as YAML, each value followed by where it came from."""
    settings = resolved.settings
    origins = resolved.origins
    lines = [f"# configuration file: {resolved.file.display if resolved.file else 'none'}"]

    def row(key: str, value: Any, origin_key: str | None = None, default_origin: str = DEFAULT) -> None:
        text = f"{key}: {_flow(value)}"
        lines.append(f"{text}  # {origins.get(origin_key or key, default_origin)}")

    row("select", settings.select if settings.select is not None else
        [p.id for p in catalog.policies if p.enabled], default_origin="default (every rule enabled by default)")
    row("ignore", settings.ignore)
    row("severity", {k: v.value for k, v in settings.severity.items()})
    row("fail_on", settings.fail_on.value)
    row("exclude", settings.exclude)
    row("policy_dirs", [display_path(p) for p in settings.policy_dirs])
    row("workloads", [f"{r.group}/{r.kind}" if r.group else r.kind for r in settings.workloads])
    row("baseline", display_path(settings.baseline) if settings.baseline else None)
    row("charts", [display_path(r.chart) for r in settings.charts])
    lines.append("params:")
    params = dict(catalog.params)
    params.update(settings.params)
    for name in sorted(params):
        origin = origins.get(f"params.{name}", "default (policies/params.yaml)")
        lines.append(f"  {name}: {_flow(params[name])}  # {origin}")
    if settings.exemptions:
        lines.append("exemptions:")
        for exemption in settings.exemptions:
            where = f"{exemption.origin[0]}:{exemption.origin[1]}" if exemption.origin else COMMAND_LINE
            lines.append(f"  - rules: {_flow(exemption.rules)}  # {where}")
            for key in ("kinds", "namespaces", "names", "paths", "containers"):
                values = getattr(exemption, key)
                if values:
                    lines.append(f"    {key}: {_flow(values)}")
            lines.append(f"    reason: {_yaml_scalar(exemption.reason)}")
    else:
        lines.append("exemptions: []  # default")
    return "\n".join(lines) + "\n"
