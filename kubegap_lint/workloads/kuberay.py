"""A Ray pod as KubeRay builds it (table `completion: kuberay`, policies/workloads.yaml).

KubeRay's BuildPod (ray-project/kuberay ray-operator/controllers/ray/common/pod.go) gives the Ray
container, the first of a head or worker group's template, a /dev/shm for the object store: an
emptyDir named `shared-mem` with medium Memory whose sizeLimit is the container's memory limit,
else its memory request, else none (addEmptyDir, makeEmptyDirVolume, findMemoryReqOrLimit). It
adds none when the container mounts /dev/shm itself, nor (since the plasma-directory change) when
the group's `rayStartParams` names a `plasma-directory`.

The completed spec is a copy: the added mount and volume have no place in the document, so a
finding on one points at the nearest field that is written.
"""

from __future__ import annotations

from typing import Any

from kubegap_lint.core.coerce import as_dict, as_list

KUBERAY = "kuberay"
VOLUME = "shared-mem"  # SharedMemoryVolumeName


def _memory(container: dict[str, Any]) -> Any:
    resources = as_dict(container.get("resources"))
    for part in ("limits", "requests"):
        value = as_dict(resources.get(part)).get("memory")
        if value not in (None, ""):
            return value
    return None


def ray_pod_spec(spec: dict[str, Any], group: dict[str, Any]) -> dict[str, Any]:
    """`spec` with the /dev/shm KubeRay adds to its Ray container (a copy; `spec` itself when it
    adds none). `group`: the head or worker group that holds the template."""
    containers = list(as_list(spec.get("containers")))
    if not containers or not isinstance(containers[0], dict):
        return spec
    if "plasma-directory" in as_dict(group.get("rayStartParams")):
        return spec
    ray = containers[0]
    mounts = as_list(ray.get("volumeMounts"))
    if any(isinstance(m, dict) and m.get("mountPath") == "/dev/shm" for m in mounts):
        return spec
    containers[0] = dict(ray, volumeMounts=[*mounts, {"name": VOLUME, "mountPath": "/dev/shm"}])
    volumes = list(as_list(spec.get("volumes")))
    if not any(isinstance(v, dict) and v.get("name") == VOLUME for v in volumes):
        empty_dir: dict[str, Any] = {"medium": "Memory"}
        size = _memory(ray)
        if size is not None:
            empty_dir["sizeLimit"] = size
        volumes.append({"name": VOLUME, "emptyDir": empty_dir})
    return dict(spec, containers=containers, volumes=volumes)
