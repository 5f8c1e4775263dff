"""An NVIDIA Dynamo component's pod as the operator completes it (table `completion:
dynamo-component`, policies/workloads.yaml).

A DynamoGraphDeployment component does not write its whole pod: the operator fills the main
container from the component's own fields. What the rules need of that is read here, each from
ai-dynamo/dynamo's API types (deploy/operator/api/v1alpha1 and v1beta1) and the operator's docs:

- `resources` (v1alpha1): `limits` / `requests` with `cpu`, `memory`, `gpu` (a count of
  `gpuType`, nvidia.com/gpu when unset) and `custom` resources, unless the main container sets
  its own;
- `envs` (v1alpha1), and the graph's `spec.envs` (v1alpha1) or `spec.env` (v1beta1): variables
  of the component's containers (the main container's own win, then the component's);
- `volumeMounts` (v1alpha1): PVCs by name, mounted at `mountPoint`;
- shared memory: a memory-backed emptyDir at /dev/shm, of `sharedMemory.size` (v1alpha1) or
  `sharedMemorySize` (v1beta1), 8Gi when unset; none when `sharedMemory.disabled` or a
  `sharedMemorySize` of 0.

The completed spec is a copy: added entries have no place in the document, so a finding on one
points at the nearest field that is written.
"""

from __future__ import annotations

from typing import Any

from kubegap_lint.core.coerce import as_dict, as_list
from kubegap_lint.core.quantity import parse_quantity

DYNAMO_COMPONENT = "dynamo-component"
MAIN_CONTAINER = "main"  # v1beta1's MainContainerName; v1alpha1's mainContainer gets it too
DEFAULT_SHARED_MEMORY = "8Gi"  # the operator's default size ("Shared Memory Configuration")
SHARED_MEMORY_VOLUME = "shared-memory"
DEFAULT_GPU_TYPE = "nvidia.com/gpu"


def shared_memory_size(component: dict[str, Any]) -> str | None:
    """The size of the /dev/shm the operator mounts, or None when the component turns it off."""
    if "sharedMemorySize" in component:  # v1beta1: nil is the default, "0" turns it off
        size = component["sharedMemorySize"]
        if size is None:
            return DEFAULT_SHARED_MEMORY
        return None if parse_quantity(size) == 0 else str(size)
    shared = as_dict(component.get("sharedMemory"))
    if shared.get("disabled") is True:
        return None
    size = shared.get("size")
    return str(size) if size not in (None, "") else DEFAULT_SHARED_MEMORY


def container_resources(resources: dict[str, Any]) -> dict[str, Any]:
    """Dynamo's `resources` as a container's: `gpu` becomes a count of its `gpuType`."""
    found: dict[str, Any] = {}
    for part in ("limits", "requests"):
        item = as_dict(resources.get(part))
        converted: dict[str, Any] = {key: item[key] for key in ("cpu", "memory") if item.get(key) not in (None, "")}
        if item.get("gpu") not in (None, ""):
            gpu_type = item.get("gpuType")
            converted[str(gpu_type) if isinstance(gpu_type, str) and gpu_type else DEFAULT_GPU_TYPE] = item["gpu"]
        converted.update({str(k): v for k, v in as_dict(item.get("custom")).items()})
        if converted:
            found[part] = converted
    return found


def _main_index(containers: list[Any], main_first: bool) -> int | None:
    """v1alpha1's mainContainer stands first (records.py puts it there); v1beta1's is `main`."""
    if main_first:
        return 0 if containers and isinstance(containers[0], dict) else None
    named = [i for i, c in enumerate(containers) if isinstance(c, dict) and c.get("name") == MAIN_CONTAINER]
    return named[0] if named else None


def _graph_env(graph: dict[str, Any] | None) -> list[Any]:
    """The graph's variables for every component: v1alpha1 `spec.envs`, v1beta1 `spec.env`."""
    spec = as_dict(as_dict(graph).get("spec"))
    return as_list(spec.get("envs")) + as_list(spec.get("env"))


def _name(entry: Any) -> str | None:
    """An env entry's or a volume's name; None for one that is not text (a list there cannot be
    looked up in a set: found by the fuzzer)."""
    name = as_dict(entry).get("name")
    return name if isinstance(name, str) else None


def _complete_main(main: dict[str, Any], component: dict[str, Any], shm: str | None,
                   claims: list[tuple[str, str]], graph_env: list[Any]) -> dict[str, Any]:
    main = dict(main)
    if "resources" not in main and isinstance(component.get("resources"), dict):
        converted = container_resources(component["resources"])
        if converted:
            main["resources"] = converted
    own = as_list(main.get("env"))
    named = {_name(e) for e in own} - {None}
    added: list[dict[str, Any]] = []
    for entry in as_list(component.get("envs")) + graph_env:
        if isinstance(entry, dict) and _name(entry) not in named:
            added.append(entry)
            named.add(_name(entry))
    if added:
        main["env"] = list(own) + added  # after its own: their key paths stay the written ones
    mounts = list(as_list(main.get("volumeMounts")))
    mounted = {str(as_dict(m).get("mountPath", "")).rstrip("/") for m in mounts}
    extra = [{"name": name, "mountPath": path} for name, path in claims if path.rstrip("/") not in mounted]
    if shm is not None and "/dev/shm" not in mounted:
        extra.append({"name": SHARED_MEMORY_VOLUME, "mountPath": "/dev/shm"})
    if extra:
        main["volumeMounts"] = mounts + extra
    return main


def component_spec(spec: dict[str, Any], component: dict[str, Any], main_first: bool,
                   graph: dict[str, Any] | None = None) -> dict[str, Any]:
    """`spec` completed as the operator completes a component's pod (a copy; `spec` itself, when
    there is no main container to complete). `main_first`: the main container is the first;
    `graph`: the DynamoGraphDeployment, for its variables."""
    containers = list(as_list(spec.get("containers")))
    index = _main_index(containers, main_first)
    if index is None:
        return spec
    own_mounts = as_list(as_dict(containers[index]).get("volumeMounts"))
    shm = None if any(str(as_dict(m).get("mountPath", "")).rstrip("/") == "/dev/shm" for m in own_mounts) \
        else shared_memory_size(component)
    claims = [(str(m["name"]), str(m["mountPoint"])) for m in as_list(component.get("volumeMounts"))
              if isinstance(m, dict) and isinstance(m.get("name"), str) and isinstance(m.get("mountPoint"), str)]
    containers[index] = _complete_main(containers[index], component, shm, claims, _graph_env(graph))
    volumes = list(as_list(spec.get("volumes")))
    names = {_name(v) for v in volumes}
    for name, _ in claims:
        if name not in names:
            volumes.append({"name": name, "persistentVolumeClaim": {"claimName": name}})
            names.add(name)
    if shm is not None and SHARED_MEMORY_VOLUME not in names:
        volumes.append({"name": SHARED_MEMORY_VOLUME, "emptyDir": {"medium": "Memory", "sizeLimit": shm}})
    return dict(spec, containers=containers, volumes=volumes)
