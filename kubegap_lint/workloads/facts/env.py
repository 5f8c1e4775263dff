"""Env facts of a container: one record per variable it sets."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kubegap_lint.core.coerce import as_text
from kubegap_lint.core.keypaths import Where
from kubegap_lint.workloads.context import ViewContext
from kubegap_lint.workloads.facts.registry import fact

if TYPE_CHECKING:
    from kubegap_lint.workloads.viewtypes import EnvRecord


def env_records(raw: dict[str, Any], env: dict[str, str | None], entries: dict[str, Any],
                container_path: str, role: str, where: Where = (),
                entry_paths: dict[str, Where] | None = None) -> list[EnvRecord]:
    """One record per variable a container sets (env, envFrom, or its command line), so a
    policy can check names one by one and point at the env entry when there is one."""
    paths = entry_paths or {}
    container = as_text(raw.get("name"))  # once for all the container's variables
    prefix = f"{container_path}.env."
    # One comprehension (the record's fields in this order): an env entry is a mapping and a
    # key path a tuple, never None, so None is "not from an entry".
    return [{
        "name": name,
        "value": value,
        "entry": (entry := entries.get(name)),
        "from": "env" if entry is not None else "command or envFrom",
        "role": role,
        "container": container,
        "container_node": raw,
        "path": prefix + name,
        "key_paths": {".": where if (at := paths.get(name)) is None else at, "entry": at, "container_node": where},
    } for name, value in env.items()]


@fact("env_list", "container", "list[EnvRecord]", "one record per variable the container sets", init_containers=True)
def _env_list(container: dict[str, Any], pod: dict[str, Any], view: dict[str, Any],
              context: ViewContext) -> list[EnvRecord]:
    paths = container["key_paths"]
    return env_records(container["raw"], container["env"], container["env_entries"], container["path"],
                       container["role"], paths["."], paths["env_entries"])
