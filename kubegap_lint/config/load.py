"""The settings of a run: the configuration file (named with `--config`, discovered, or none
with `--no-config`), then the command line over it; every value remembers where it came from,
for `kubegap-lint config show`. Then every rule the settings name must exist.

Finding the file is `discover.py`, reading and validating it `read.py` and `validate.py`, where
its keys are `configfile.py`, the settings it gives `fromfile.py` and `charts.py`, showing them
`show.py`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kubegap_lint.config.configfile import ConfigFile, config_names
from kubegap_lint.config.discover import discover_config
from kubegap_lint.config.settings import Settings
from kubegap_lint.core.errors import DataFileError
from kubegap_lint.core.model import Severity
from kubegap_lint.core.record import field, record

DEFAULT = "default"
COMMAND_LINE = "command line"


@record
class Resolved:
    """The settings of a run and where each came from."""

    settings: Settings
    file: ConfigFile | None = None
    origins: dict[str, str] = field(default_factory=dict)  # key (params.x for params) -> origin


def _read(path: Path) -> ConfigFile:
    """Read and validate a configuration file; imported only when there is one (pre-commit's
    runs in a repository without one pay for no reading or schema module)."""
    from kubegap_lint.config.read import read_config

    return read_config(path)


def resolve(paths: tuple[str, ...] | list[str], config_file: str | None = None, no_config: bool = False,
            select: list[str] | None = None, ignore: list[str] | None = None,
            fail_on: str | None = None, baseline: str | None = None,
            no_baseline: bool = False) -> Resolved:
    """The settings of a run: the configuration file (named, discovered or none), then the
    command line over it. Like ruff: --select replaces the file's select, and a rule named by
    --select is no longer ignored by the file; --ignore adds to the file's ignore."""
    config: ConfigFile | None = None
    if config_file and not no_config:
        config = _read(Path(config_file))
    elif not no_config:
        start = next((p for p in paths if p != "-"), ".")
        found = discover_config(Path(start))
        config = _read(found) if found else None
    if config is not None:
        from kubegap_lint.config.fromfile import settings_from_file

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
                if config is not None and origin != COMMAND_LINE and name in config_names(config, path):
                    where = config.place(path + [config_names(config, path).index(name)])
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
