"""Storage facts of a container: the locations it names (mount paths, and absolute paths in its
command, args and literal env values), each with the mount that covers it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kubegap_lint.core.coerce import as_list
from kubegap_lint.core.keypaths import Where, sub
from kubegap_lint.workloads.commandline import path_values, strings
from kubegap_lint.workloads.context import ViewContext
from kubegap_lint.workloads.facts.registry import fact

if TYPE_CHECKING:
    from kubegap_lint.workloads.viewtypes import Location


def covering_mount(mounts: list[dict[str, Any]], path: str) -> dict[str, Any] | None:
    """The mount whose mountPath is the longest directory prefix of `path`, or None."""
    return covering_root(mount_roots(mounts), path)


def mount_roots(mounts: list[dict[str, Any]]) -> list[tuple[str, str, dict[str, Any]]]:
    """(directory, directory + "/", mount) of each mount, in order: what covering_root compares,
    made once for all the paths of a container."""
    found = []
    for mount in mounts:
        root = str(mount.get("path") or "").rstrip("/") or "/"
        found.append((root, root + "/", mount))
    return found


def covering_root(roots: list[tuple[str, str, dict[str, Any]]], path: str) -> dict[str, Any] | None:
    """covering_mount over mount_roots: the first mount of the longest directory covering `path`."""
    best: dict[str, Any] | None = None
    best_len = -1
    for root, below, mount in roots:
        if len(root) > best_len and (path == root or path.startswith(below) or root == "/"):
            best, best_len = mount, len(root)
    return best


def _location(path: str, source: str, node: Any, roots: list[tuple[str, str, dict[str, Any]]],
              where: Where | None = None) -> Location:
    mount = covering_root(roots, path)
    return {
        "path": path,
        "from": source,
        "covered": mount is not None,
        "mount_path": mount["path"] if mount else None,
        "volume_type": mount["volume_type"] if mount else None,
        "node": node,
        "key_paths": {".": where},
    }


def _naming_item(value: Any, where: Where, path: str) -> Where:
    """The key path of the command or args item that names `path` (the list when none alone does)."""
    if isinstance(value, list):
        for number, item in enumerate(value):
            if item is not None and path in str(item):
                return sub(where, number)
    return where


def container_locations(raw: dict[str, Any], mounts: list[dict[str, Any]],
                        where: Where = ()) -> list[Location]:
    """Every location a container names: its mount paths, and the absolute paths in its command,
    args (scripts included) and literal env values, each with the mount that covers it (none:
    the container's writable layer). Policies match these against checkpoint patterns. `where`
    is the container's key path: each location carries the path of the item that names it."""
    roots = mount_roots(mounts)  # once for all the container's paths
    found = [_location(m["path"], "volumeMounts", m["mount"], roots,
                       sub(m["key_paths"]["."], "mountPath") if "key_paths" in m else None)
             for m in mounts if m["path"]]
    for key in ("command", "args"):
        for path in path_values(" ".join(strings(raw.get(key)))):
            found.append(_location(path, key, raw.get(key), roots, _naming_item(raw.get(key), sub(where, key), path)))
    for number, entry in enumerate(as_list(raw.get("env"))):
        # Most values name no path: a value without `/` is passed over without a call.
        if isinstance(entry, dict) and isinstance(entry.get("value"), str) and "/" in entry["value"] \
                and "valueFrom" not in entry:
            for path in path_values(entry["value"]):
                found.append(_location(path, f"env {entry.get('name')}", entry, roots,
                                       sub(where, "env", number, "value")))
    return found


@fact("locations", "container", "list[Location]", "every location the container names", init_containers=True)
def _locations(container: dict[str, Any], pod: dict[str, Any], view: dict[str, Any],
               context: ViewContext) -> list[Location]:
    return container_locations(container["raw"], container["mounts"], container["key_paths"]["."])
