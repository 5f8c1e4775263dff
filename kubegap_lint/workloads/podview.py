"""A pod record (records.py) as the view's pod and container dicts, the shape policies read
(docs/workload-view.md): accelerators and their counts, env from every source, mounts with
their volumes, command lines read, budgets; each dict with its key paths. Facts are added
later from the registry (facts/).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from kubegap_lint.core.coerce import as_count, as_dict, as_list, as_text
from kubegap_lint.core.keypaths import Pinned, Where, exact, sub
from kubegap_lint.workloads.commandline import command_text, env_text
from kubegap_lint.workloads.context import ViewContext
from kubegap_lint.workloads.diagnostic import diagnostic_verdict
from kubegap_lint.workloads.records import Container, Pod

if TYPE_CHECKING:
    from kubegap_lint.workloads.viewtypes import ContainerView, Mount, PodView

_VOLUME_META_KEYS = frozenset(("name",))


def accelerators(context: ViewContext, raw: dict[str, Any]) -> dict[str, int | None]:
    """Accelerator resource name to count (the limit, else the request), sorted by name."""
    resources = as_dict(raw.get("resources"))
    limits = as_dict(resources.get("limits"))
    requests = as_dict(resources.get("requests"))
    return {name: as_count(limits.get(name, requests.get(name)))
            for name in sorted(limits.keys() | requests.keys()) if context.is_gpu_resource(name)}


def claim_uses(raw: dict[str, Any]) -> dict[str, set[str] | None]:
    """The DRA claims a container uses, by name: the requests it names, or None for all."""
    uses: dict[str, set[str] | None] = {}
    for entry in as_list(as_dict(raw.get("resources")).get("claims")):
        # Names are strings only: a list or mapping there (no real manifest) is not hashable.
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            continue
        request = entry.get("request")
        known = uses.get(entry["name"], set())
        uses[entry["name"]] = None if known is None or not isinstance(request, str) else known | {request}
    return uses


def device_claims(context: ViewContext, spec: dict[str, Any], uses: dict[str, set[str] | None],
                  namespace: str | None) -> dict[str, int | None]:
    """GPUs that the DRA claims in `uses` (claim_uses) give, counted once a claim request
    however many containers share it, for claims whose claim object is in the input."""
    found: dict[str, int | None] = {}
    for claim in as_list(spec.get("resourceClaims")):
        if not isinstance(claim, dict) or not isinstance(claim.get("name"), str) or claim["name"] not in uses:
            continue
        chosen = uses[claim["name"]]
        source = as_dict(claim.get("source")) or claim
        template_name = source.get("resourceClaimTemplateName")
        claim_name = source.get("resourceClaimName")
        requests = None
        if isinstance(template_name, str):
            requests = context.index.device_claim("ResourceClaimTemplate", namespace, template_name)
        elif isinstance(claim_name, str):
            requests = context.index.device_claim("ResourceClaim", namespace, claim_name)
        for request, device_class, count in requests or []:
            if (chosen is None or request in chosen) and context.is_gpu_device_class(device_class):
                key = f"dra:{device_class}"
                previous = found.get(key, 0)
                number = as_count(count)
                found[key] = None if previous is None or number is None else previous + number
    return found


def _env(context: ViewContext, raw: dict[str, Any], where: Where,
         namespace: str | None) -> tuple[dict[str, str | None], dict[str, Any], dict[str, Where]]:
    """The env list's values (None: unknown), its entries and their key paths by name, then the
    `envFrom` ConfigMaps in the input."""
    env: dict[str, str | None] = {}
    entries: dict[str, Any] = {}
    entry_paths: dict[str, Where] = {}
    pinned = isinstance(where, Pinned)
    listed = raw.get("env")
    if isinstance(listed, list):
        for number, entry in enumerate(listed):
            name = entry.get("name") if isinstance(entry, dict) else None
            if isinstance(name, str):
                value = entry.get("value")
                if "valueFrom" in entry:
                    env[name] = None
                elif type(value) is str and "$" not in value:  # the common case: literal text
                    env[name] = value
                else:
                    env[name] = env_text(value)
                entries[name] = entry
                entry_paths[name] = where if pinned else (*where, "env", number)
    for source in as_list(raw.get("envFrom")):
        config_ref = as_dict(as_dict(source).get("configMapRef"))
        if isinstance(config_ref.get("name"), str):
            values = context.index.config_map(namespace, config_ref["name"]) or {}
            prefix = str(as_dict(source).get("prefix") or "")
            for key, value in values.items():
                env.setdefault(prefix + key, value)
    return env, entries, entry_paths


class _Volumes:
    """A pod spec's volumes by name, and their positions, for its containers' mounts."""

    __slots__ = ("by_name", "numbers", "spec_where", "claim_names")

    def __init__(self, spec: dict[str, Any], spec_where: Where | None, claim_names: set[str]) -> None:
        self.by_name = {str(v.get("name")): v for v in as_list(spec.get("volumes")) if isinstance(v, dict)}
        self.numbers = {str(v.get("name")): n for n, v in enumerate(as_list(spec.get("volumes"))) if isinstance(v, dict)}
        self.spec_where = spec_where
        self.claim_names = claim_names  # the workload's volumeClaimTemplates


def _mounts(raw: dict[str, Any], where: Where, volumes: _Volumes) -> list[Mount]:
    pinned = isinstance(where, Pinned)
    mounts: list[Mount] = []
    for number, mount in enumerate(as_list(raw.get("volumeMounts"))):
        if not isinstance(mount, dict):
            continue
        volume_name = str(mount.get("name"))
        volume = volumes.by_name.get(volume_name)
        volume_type = None
        if volume is not None:
            for key in volume:  # the first key that is not the volume's name: its type
                if key not in _VOLUME_META_KEYS:
                    volume_type = key
                    break
        elif volume_name in volumes.claim_names:
            volume_type = "volumeClaimTemplate"
        at = where if pinned else (*where, "volumeMounts", number)  # for "." and "mount" alike
        empty_dir = volume.get("emptyDir") if volume else None
        mounts.append({
            "name": mount.get("name"),
            "path": str(mount.get("mountPath", "")),
            "volume_type": volume_type,
            "volume": volume,
            "medium": empty_dir.get("medium") if isinstance(empty_dir, dict) else None,
            "mount": mount,
            "key_paths": {".": at, "mount": at,
                          "volume": sub(volumes.spec_where, "volumes", volumes.numbers[volume_name])
                          if volume is not None and volumes.spec_where is not None else None},
        })
    return mounts


def container_view(context: ViewContext, container: Container, pod: Pod, volumes: _Volumes,
                   namespace: str | None) -> tuple[ContainerView, str | None]:
    """One container's view, and the process-group backend its command line chooses."""
    raw, where = container.raw, container.where
    env, entries, entry_paths = _env(context, raw, where, namespace)
    text = command_text(raw)
    sets, launchers, words, backend = context.command(text)
    for name, known in sets:
        env.setdefault(name, known)
    found = accelerators(context, raw)
    if "resourceClaims" in pod.spec:  # else no claim gives it a GPU (nearly every pod)
        found.update(device_claims(context, pod.spec, claim_uses(raw), namespace))
    gpus: int | None = 0
    for count in found.values():
        gpus = None if gpus is None or count is None else gpus + count
    view = {
        "name": as_text(raw.get("name")),
        "index": container.index,
        "path": f"{pod.path}.spec.{'initContainers' if container.init else 'containers'}[{container.index}]",
        "init": container.init,
        "sidecar": container.init and raw.get("restartPolicy") == "Always",
        "role": pod.role,
        "image": as_text(raw.get("image")),
        "env": env,
        "env_entries": entries,
        "command_line": text,
        "words": list(words) if words is not None else [],  # each view has its own lists
        "launchers": list(launchers),
        "accelerators": found,
        "gpus": gpus if found else 0,
        "mounts": _mounts(raw, where, volumes),
        "raw": raw,
        "key_paths": {".": where, "raw": where, "env_entries": entry_paths},
    }
    return cast("ContainerView", view), backend


def gpus_text(context: ViewContext, accelerators: dict[str, int | None], gpus: int | None) -> str:
    """'8 GPUs', '1 GPU', '4 google.com/tpu', or 'an unknown number of GPUs', for messages."""
    gpu_like = all(context.is_nccl_resource(n) or n.startswith("dra:") for n in accelerators)
    if gpus is None:
        return "an unknown number of GPUs" if gpu_like else "an unknown number of accelerators"
    if gpu_like:
        return f"{gpus} GPU{'s' if gpus != 1 else ''}"
    return ", ".join(f"{count if count is not None else '?'} {name}" for name, count in accelerators.items())


def _budgets(context: ViewContext, namespace: str | None, labels: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"name": budget.name, "min_available": budget.min_available,
             "max_unavailable": budget.max_unavailable, "path": budget.path, "line": budget.line}
            for budget in context.index.budgets_for(namespace, labels)]


def _pod_paths(pod: Pod, volumes: _Volumes) -> dict[str, Any]:
    paths: dict[str, Any] = {".": pod.where, "spec": pod.spec_where if pod.spec_where is not None
                             else Pinned(exact(pod.where) or ())}
    if pod.metadata_where is not None:
        paths.update(metadata=pod.metadata_where, labels=sub(pod.metadata_where, "labels"),
                     annotations=sub(pod.metadata_where, "annotations"))
    if pod.spec_where is not None:
        paths["volumes"] = {name: sub(pod.spec_where, "volumes", n) for name, n in volumes.numbers.items()}
    return paths


def pod_view(context: ViewContext, pod: Pod, namespace: str | None, summary: dict[str, Any],
             claim_names: set[str]) -> tuple[PodView, list[str | None]]:
    """One pod's view (its `class` is set by the workload), and the backend of each container."""
    volumes = _Volumes(pod.spec, pod.spec_where, claim_names)
    containers, backends = [], []
    for record in pod.containers:
        container, backend = container_view(context, record, pod, volumes, namespace)
        containers.append(container)
        backends.append(backend)
    init_containers = [container_view(context, record, pod, volumes, namespace)[0] for record in pod.init_containers]
    found: dict[str, int | None] = {}
    for container in containers:
        for name, count in container["accelerators"].items():
            if not name.startswith("dra:"):  # a claim's devices are the pod's once (below)
                previous = found.get(name, 0)
                found[name] = None if previous is None or count is None else previous + count
    if "resourceClaims" in pod.spec:
        uses: dict[str, set[str] | None] = {}
        for container in containers:
            for claim, requests in claim_uses(container["raw"]).items():
                known = uses.get(claim, set())
                uses[claim] = None if known is None or requests is None else known | requests
        found.update(device_claims(context, pod.spec, uses, namespace))
    gpus: int | None = 0
    for count in found.values():
        gpus = None if gpus is None or count is None else gpus + count
    replicas = pod.replicas
    if pod.gpu_share and not found:
        # The operator gives each pod a share of spec.gpus (its own gpusPerNode flag, not
        # in the manifest): GPU pods, how many GPUs each and how many pods unknown.
        found, gpus, replicas = {"nvidia.com/gpu": None}, None, None
    has_gpu = bool(found)
    if len(containers) == 1:  # most pods: the first container's, as the loop below makes it
        env = dict(containers[0]["env"])
    else:
        env = {}
        for container in containers:
            for name, value in container["env"].items():
                env.setdefault(name, value)
    labels = as_dict(pod.metadata.get("labels"))
    view: dict[str, Any] = {
        "role": pod.role,
        "found_by": pod.found_by,
        "embedded": pod.embedded,
        "label": pod.label if pod.label is not None else "pods" if pod.role in ("pod", "pods") else f"{pod.role} pods",
        "gpus_text": gpus_text(context, found, gpus if has_gpu else 0),
        "path": pod.path,
        "replicas": replicas,
        "gpus": gpus if has_gpu else 0,
        "has_gpu": has_gpu,
        "nccl_gpu": any(context.is_nccl_resource(n) or n.startswith("dra:") for n in found),
        "accelerators": found,
        "partial": pod.partial,
        "metadata": pod.metadata,
        "labels": labels,
        "annotations": as_dict(pod.metadata.get("annotations")),
        "spec": pod.spec,
        "containers": containers,
        "init_containers": init_containers,
        "volumes": dict(volumes.by_name),
        "env": env,
        "commands": [c["command_line"] for c in containers if c["command_line"]],
        # Every command line and known env value, for scans such as object-store URLs.
        "text": "\n".join([c["command_line"] for c in containers] + [v for c in containers for v in c["env"].values() if v]),
        "launchers": sorted({name for c in containers for name in c["launchers"]}),
        "budgets": _budgets(context, namespace, labels),
        "workload": summary,
    }
    # Every container (sidecars too) only runs a diagnostic or idles: class diagnostic.
    view["diagnostic"], view["follows"] = diagnostic_verdict([c["raw"] for c in containers], context.diagnostic_programs)
    view["key_paths"] = _pod_paths(pod, volumes)
    if pod.runtime is not None:
        view["runtime"] = pod.runtime
    return cast("PodView", view), backends
