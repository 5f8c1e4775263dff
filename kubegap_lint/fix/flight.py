"""Fixes of the NCCL flight recorder: KG303 (no buffer) and KG304 (its dumps not kept).

Both write the same env entries in each GPU container of the pod: the buffer, 2000 entries
(PyTorch's default since the flight recorder was enabled for all, and the tutorial's value:
shared/research/env-vars.md), under both names; dumping on timeout on; and the dump path on the
persistent volume the container already mounts. Without such a mount there is no edit (a dump
on the container's writable layer is lost with it, KG304's finding): the fix says to add one.
Unsafe: the dump path is a choice (`<mount>/nccl_trace_rank_`, PyTorch's own file prefix).
"""

from __future__ import annotations

from typing import Any

from ruamel.yaml.nodes import Node, SequenceNode

from kubegap_lint.fix.document import Unfixable, child, scalar_text
from kubegap_lint.fix.model import UNSAFE, Edit, Fix
from kubegap_lint.fix.pod import gpu_container
from kubegap_lint.fix.site import Site, env_values, number
from kubegap_lint.fix.writer import add_entries, append_item, set_scalar

BUFFER = "2000"
BUFFERS = ("TORCH_FR_BUFFER_SIZE", "TORCH_NCCL_TRACE_BUFFER_SIZE")
DUMP_ON_TIMEOUT = ("TORCH_FR_DUMP_ON_TIMEOUT", "TORCH_NCCL_DUMP_ON_TIMEOUT")
DUMP_PATHS = ("TORCH_FR_DUMP_TEMP_FILE", "TORCH_NCCL_DEBUG_INFO_TEMP_FILE")


def _persistent_mount(site: Site, pod: Node, container: Node) -> str | None:
    """The mount path of the first volume of a persistent type the container mounts."""
    kinds = set(site.params.get("persistent_volume_types", [])) - {"volumeClaimTemplate"}
    volumes = child(pod, "volumes")
    persistent = {scalar_text(child(v, "name")) for v in (volumes.value if isinstance(volumes, SequenceNode) else [])
                  if any(child(v, kind) is not None for kind in kinds)}
    mounts = child(container, "volumeMounts")
    for mount in mounts.value if isinstance(mounts, SequenceNode) else []:
        path = scalar_text(child(mount, "mountPath"))
        if scalar_text(child(mount, "name")) in persistent and path and path.startswith("/") \
                and child(mount, "readOnly") is None:
            return path.rstrip("/") or "/"
    return None


def _wanted(env: dict[str, Any], dump_path: str) -> dict[str, str]:
    """The value each name must have (those already right left out)."""
    def value(name: str) -> str | None:
        node = env[name][1] if name in env else None
        return scalar_text(node) if node is not None else None

    out: dict[str, str] = {}
    if not any((number(value(name)) or 0) > 0 for name in BUFFERS):
        out.update({name: BUFFER for name in BUFFERS})
    for name in DUMP_ON_TIMEOUT:
        if name in env and str(value(name)).strip().lower() in ("0", "false"):
            out[name] = "1"
    if not any(name in env for name in DUMP_ON_TIMEOUT):
        out[DUMP_ON_TIMEOUT[1]] = "1"
    folder = dump_path.rsplit("/", 1)[0] + "/"
    kept = [str(value(name)) for name in DUMP_PATHS if str(value(name) or "").startswith(folder)]
    for name in DUMP_PATHS:  # both names, as old and new releases read one each
        if not str(value(name) or "").startswith(folder):
            out[name] = kept[0] if kept else dump_path
    return out


def _container_edits(site: Site, container: Node, wanted: dict[str, str]) -> list[Edit]:
    env = env_values(container)
    edits: list[Edit] = []
    added = []
    for name, value in wanted.items():
        if name in env:
            node = env[name][1]
            if node is None:
                raise Unfixable(f"{name} is set from elsewhere (valueFrom)")
            edits.append(set_scalar(site.yfile, node, value))
        else:
            added.append({"name": name, "value": value})
    listed = child(container, "env")
    if added and listed is None:
        edits.append(add_entries(site.yfile, site.layout, container, {"env": added}))
    elif added and listed is not None:
        edits += [append_item(site.yfile, site.layout, listed, item) for item in added]
    return edits


def fix_flight_recorder(site: Site) -> Fix:
    rule = site.finding.rule_id
    pod = site.node(site.pod_spec_path())
    patterns = list(site.params.get("nccl_gpu_resources", []))
    edits: list[Edit] = []
    mounts: set[str] = set()
    for _, container in site.containers():
        if not gpu_container(container, patterns):
            continue
        mount = _persistent_mount(site, pod, container)
        if mount is None:
            return Fix(rule, UNSAFE, "no edit: mount a persistent volume in the GPU containers for the"
                       " flight-recorder dumps, then set TORCH_FR_BUFFER_SIZE=2000, TORCH_NCCL_DUMP_ON_TIMEOUT=1"
                       " and TORCH_FR_DUMP_TEMP_FILE on it")
        dump_path = f"{mount.rstrip('/')}/nccl_trace_rank_"
        mounts.add(mount)
        edits += _container_edits(site, container, _wanted(env_values(container), dump_path))
    if not edits:
        raise Unfixable("no GPU container to change")
    return Fix(rule, UNSAFE, f"turn the flight recorder on (buffer {BUFFER}, dump on timeout) and dump to the"
               f" persistent volume mounted at {', '.join(sorted(mounts))} (nccl_trace_rank_ there unless a dump"
               " path is on it already): check the path",
               tuple(edits), ("pytorch-fr-asynceh1",))
