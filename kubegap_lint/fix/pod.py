"""Fixes of a pod's resources and volumes: KG503 (the accelerator limit) and KG501 (/dev/shm)."""

from __future__ import annotations

from typing import Any

from ruamel.yaml.nodes import MappingNode, SequenceNode

from kubegap_lint.fix.document import Unfixable, child, is_empty_scalar, scalar_text
from kubegap_lint.fix.model import SAFE, UNSAFE, Edit, Fix
from kubegap_lint.fix.site import Site, accelerators
from kubegap_lint.fix.writer import Verbatim, add_entries, append_item

SHM_VOLUME = "dshm"
SHM_PATH = "/dev/shm"


def fix_kg503(site: Site) -> Fix:
    """Set each accelerator's limit to its request (copied as written)."""
    path = site.finding.key_path
    if "resources" not in path:
        raise Unfixable("the finding is not at a container's resources")
    at = len(path) - 1 - path[::-1].index("resources")
    resources = site.node(path[:at + 1])
    requests, limits = child(resources, "requests"), child(resources, "limits")
    patterns = list(site.params.get("gpu_resources", []))
    edits: list[Edit] = []
    missing: dict[str, Any] = {}
    limits_now = accelerators(limits, patterns) if isinstance(limits, MappingNode) else {}
    for name, request in accelerators(requests, patterns).items():
        written = scalar_text(request)
        if written is None or "{{" in written:
            continue
        text = Verbatim(site.yfile.text[request.start_mark.index:request.end_mark.index])
        limit = limits_now.get(name)
        if limit is None:
            missing[name] = text
        elif scalar_text(limit) != written:
            edits.append(Edit(limit.start_mark.index, limit.end_mark.index, text))
    if missing:
        if limits is None:
            edits.append(add_entries(site.yfile, site.layout, resources, {"limits": missing}))
        elif isinstance(limits, MappingNode):
            edits.append(add_entries(site.yfile, site.layout, limits, missing))
        else:
            raise Unfixable("limits is not a mapping")
    if not edits:
        raise Unfixable("no accelerator request to copy")
    names = ", ".join(sorted({*missing, *(n for n in limits_now if n not in missing)} & set(accelerators(requests, patterns))))
    return Fix(site.finding.rule_id, SAFE, f"set limits {names} equal to the requests", tuple(edits),
               ("k8s-gpu-limits-rule",))


def gpu_container(container: Any, patterns: list[str]) -> bool:
    resources = child(container, "resources")
    if resources is None:
        return False
    return any(accelerators(child(resources, side), patterns) for side in ("limits", "requests")
               if child(resources, side) is not None)


def _add_to_list(site: Site, owner: Any, key: str, item: dict[str, Any]) -> Edit:
    listed = child(owner, key)
    if listed is None:
        return add_entries(site.yfile, site.layout, owner, {key: [item]})
    if isinstance(listed, SequenceNode):
        return append_item(site.yfile, site.layout, listed, item)
    if is_empty_scalar(listed):
        raise Unfixable(f"{key} is empty")
    raise Unfixable(f"{key} is not a list")


def fix_kg501(site: Site) -> Fix:
    """A memory-backed emptyDir at /dev/shm in each GPU container, sized at the rule's minimum."""
    pod_path = site.pod_spec_path()
    pod = site.node(pod_path)
    patterns = list(site.params.get("nccl_gpu_resources", []))
    size = str(site.params.get("min_shm_size", ""))
    if not size:
        raise Unfixable("no min_shm_size parameter")
    volumes = child(pod, "volumes")
    if isinstance(volumes, SequenceNode) and any(scalar_text(child(v, "name")) == SHM_VOLUME for v in volumes.value):
        raise Unfixable(f"the pod has a volume named {SHM_VOLUME} already")
    edits: list[Edit] = []
    for _, container in site.containers():
        mounts = child(container, "volumeMounts")
        if isinstance(mounts, SequenceNode) and any(scalar_text(child(m, "mountPath")) == SHM_PATH
                                                    for m in mounts.value):
            raise Unfixable(f"a container mounts {SHM_PATH} already")
        if gpu_container(container, patterns):
            edits.append(_add_to_list(site, container, "volumeMounts", {"name": SHM_VOLUME, "mountPath": SHM_PATH}))
    if not edits:
        raise Unfixable("no GPU container in the pod")
    edits.append(_add_to_list(site, pod, "volumes", {"name": SHM_VOLUME, "emptyDir": {"medium": "Memory",
                                                                                     "sizeLimit": size}}))
    return Fix(site.finding.rule_id, UNSAFE,
               f"mount an emptyDir with medium Memory at {SHM_PATH} in each GPU container, sizeLimit {size}"
               " (the rule's min_shm_size: no source gives a size; choose one for your data loaders and"
               " leave room for it in the memory limit)", tuple(edits), ("pytorch-dataloader-shm-k8s",))

