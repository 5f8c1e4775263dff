"""Stage 3: turn each resource with pod templates into a *workload view* that policies query.

One shape for every kind (docs/workload-view.md describes it), so one policy covers a
Deployment, a PyTorchJob and a JobSet alike. Views are plain dicts and lists; the raw pod
specs and containers inside them are the parsed objects themselves. Each view, and each record
derived from the manifest, carries `key_paths`: the key path in the document of the node it
stands for (".") and of each field taken from the manifest, so a policy's `at:` locates the
node it names (engine/locate.py; core/keypaths.py).
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, cast

from kubegap_lint.core.coerce import as_count, as_dict, as_list
from kubegap_lint.core.keypaths import Pinned, Where, exact, sub
from kubegap_lint.input.read import Resource
from kubegap_lint.workloads import shellwords
from kubegap_lint.workloads.diagnostic import diagnostic_verdict
from kubegap_lint.workloads.index import InputIndex
from kubegap_lint.workloads.kinds import KindRule, KindTable, TemplateRule, get_path
from kubegap_lint.workloads.placeholders import is_placeholder
from kubegap_lint.workloads.viewfacts import (
    add_resilience_facts,
    covering_mount,  # noqa: F401 - read from here by tests/test_checkpoint_locations.py
    covering_root,
    elastic_facts,
    mount_roots,
)
from kubegap_lint.workloads.walked import walked_pods

if TYPE_CHECKING:  # the view's types cost nothing at run time (workloads/viewtypes.py)
    from kubegap_lint.workloads.viewtypes import ContainerView, EnvRecord, Location, PodBudget, PodView, WorkloadView

# The scans over command lines below are searched in " " + text: the space stands for the
# text's start, so a pattern needs no `^|` alternative and begins with a character class or a
# literal, which the regex engine skips to without trying every position (2-10x faster).
# Launchers a command line runs: a name after the text's start, white space or one of
# `/;&|("'`, and before its end, white space or one of `;&|)"'`. All but `accelerate launch`
# are literal names, found with str.find (4x faster than one pattern for all of them).
_LAUNCHER_NAMES = ("torchrun", "torch.distributed.run", "torch.distributed.launch", "deepspeed")
_BEFORE_LAUNCHER = "/;&|(\"'"
_AFTER_LAUNCHER = ";&|)\"'"
_ACCELERATE_RE = re.compile(r"[\s/;&|(\"']accelerate\s+launch(?=$|[\s;&|)\"'])")  # in " " + text
_DISTRIBUTED_ENV = ("MASTER_ADDR", "WORLD_SIZE")
_DISTRIBUTED_KINDS = frozenset(("PyTorchJob", "TrainJob", "ElasticJob", "HyperPodPyTorchJob"))
# `(?:^|[\s;&|(])(?:export\s+)?NAME=value`, in " " + text; without the `export\s+`, as the white
# space before NAME is one of the characters before it anyway (the same matches, 1.7x faster)
_EXPORT_RE = re.compile(r"[\s;&|(]([A-Z][A-Z0-9_]*)=(\"[^\"]*\"|'[^']*'|[^\s;&|)]*)")
_MPI_X_RE = re.compile(r"(?:^|\s)-x\s+([A-Za-z_][A-Za-z0-9_]*)(?:=([^\s;&|)]*))?")
_VOLUME_META_KEYS = frozenset(("name",))


_UNRENDERED_RE = re.compile(r"\$\(?\{?[A-Za-z_]")


def _env_text(value: Any) -> str | None:
    """An env value as text; None when it is not known from the manifest alone."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    text = str(value)
    if _UNRENDERED_RE.search(text):  # $(VAR), ${VAR}, $VAR: set at run time
        return None
    return text


def _torch_env(env: dict[str, Any]) -> bool:
    """The pod sets a variable of torch.distributed (MASTER_ADDR, WORLD_SIZE, PET_*)."""
    if _DISTRIBUTED_ENV[0] in env or _DISTRIBUTED_ENV[1] in env:
        return True
    # Names are text (views: env entries' names, ConfigMap keys, command lines); one scan of
    # them joined finds a PET_ at a name's start, checked name by name only then.
    return "\0PET_" in "\0" + "\0".join(env) and any(name.startswith("PET_") for name in env)


def _strings(value: Any) -> list[str]:
    return [str(v) for v in as_list(value) if v is not None]


def command_text(container: dict[str, Any]) -> str:
    """command and args as one shell-like string, for launcher and script scans."""
    parts = _strings(container.get("command")) + _strings(container.get("args"))
    return " ".join(parts)


def launchers(text: str) -> tuple[str, ...]:
    """The launchers a command line runs (torchrun, deepspeed, `accelerate launch` ...), sorted."""
    found = []
    for name in _LAUNCHER_NAMES:
        start = text.find(name)
        while start != -1:
            end = start + len(name)
            before = text[start - 1] if start else " "
            if (before.isspace() or before in _BEFORE_LAUNCHER) and \
                    (end == len(text) or text[end].isspace() or text[end] in _AFTER_LAUNCHER):
                found.append(name)
                break
            start = text.find(name, start + 1)
    if "accelerate" in text and _ACCELERATE_RE.search(" " + text):
        found.append("accelerate launch")
    return tuple(sorted(found))


def script_env(text: str) -> dict[str, str | None]:
    """Variables a command line sets: `export X=1`, `X=1 cmd`, and `mpirun -x X[=1]`."""
    found: dict[str, str | None] = {}
    if "=" in text:  # what every assignment holds
        for match in _EXPORT_RE.finditer(" " + text):
            value = match.group(2)
            if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
                value = value[1:-1]
            found[match.group(1)] = value
    if "-x" in text:
        for match in _MPI_X_RE.finditer(text):
            found.setdefault(match.group(1), match.group(2))
    return found


_BACKEND_FLAGS = ("--backend", "--dist-backend", "--dist_backend", "--distributed-backend",
                  "--distributed_backend")
_BACKEND_FLAG_RE = re.compile(r"--(?:dist(?:ributed)?[-_])?backend")  # any of _BACKEND_FLAGS, in one search


def torch_backend(words: list[str]) -> str | None:
    """The process-group backend a command line chooses explicitly (`--backend gloo`), if any."""
    for position, word in enumerate(words):
        flag, _, value = word.partition("=")
        if flag in _BACKEND_FLAGS:
            if not value and position + 1 < len(words):
                value = words[position + 1]
            return value.lower() or None
    return None


def _words(text: str) -> list[str]:
    try:
        return shellwords.split(text)  # shlex.split's words, faster
    except ValueError:  # unbalanced quotes in a script: fall back to white space
        return text.split()


def _may_name_backend(text: str) -> bool:
    """Could a word of the text start with one of _BACKEND_FLAGS? A word is the text's
    characters with quotes and backslashes taken out, so a text that holds none of the flags
    then has no word torch_backend reads (`--rdzv_backend=c10d` is none of them)."""
    if "'" in text or '"' in text or "\\" in text:
        text = text.replace("'", "").replace('"', "").replace("\\", "")  # str.translate is slower
    return "backend" in text and _BACKEND_FLAG_RE.search(text) is not None


# A path-like value: starts with one `/` after white space, a quote, `=`, `,`, `(` or `;`, so
# `--save=/ckpt` and `bash -c "... /ckpt"` count; the path part of `gs://b/ckpt` does not.
# `(?:^|(?<=[\s'"=,(;]))/(?!/)...`, in " " + text, the `/` first: the engine finds each `/` at
# once and looks behind it only there.
_PATH_RE = re.compile(r"""/(?<=[\s'"=,(;]/)(?!/)[^\s'"`;&|<>(),]*""")


_REMEMBERED = 256  # entries of each table of texts seen, before it starts again (memory stays flat)
_PATHS_OF: dict[str, tuple[str, ...]] = {}  # text -> its paths: env values and commands repeat


def path_values(text: str) -> list[str]:
    """The absolute paths a command line, a script or an env value names, in order, once each."""
    known = _PATHS_OF.get(text)
    if known is not None:
        return list(known)
    found: list[str] = []
    if "/" in text:
        for match in _PATH_RE.finditer(" " + text):
            path = match.group(0).rstrip(".:")
            if len(path) > 1 and path not in found:
                found.append(path)
    if len(text) <= 4096:  # bounded, whatever the input
        if len(_PATHS_OF) >= _REMEMBERED:
            _PATHS_OF.clear()
        _PATHS_OF[text] = tuple(found)
    return found


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
        for path in path_values(" ".join(_strings(raw.get(key)))):
            found.append(_location(path, key, raw.get(key), roots, _naming_item(raw.get(key), sub(where, key), path)))
    for number, entry in enumerate(as_list(raw.get("env"))):
        # Most values name no path: a value without `/` is passed over without a call.
        if isinstance(entry, dict) and isinstance(entry.get("value"), str) and "/" in entry["value"] \
                and "valueFrom" not in entry:
            for path in path_values(entry["value"]):
                found.append(_location(path, f"env {entry.get('name')}", entry, roots,
                                       sub(where, "env", number, "value")))
    return found


def name_text(value: Any) -> str | None:
    """A container's name as text for policies (`join` needs strings): the API server takes
    only strings, so a number is printed and a list or mapping is no name (found by the fuzz)."""
    if value is None or isinstance(value, str):
        return value
    return None if isinstance(value, (dict, list)) else str(value)


def env_records(raw: dict[str, Any], env: dict[str, str | None], entries: dict[str, Any],
                container_path: str, role: str, where: Where = (),
                entry_paths: dict[str, Where] | None = None) -> list[EnvRecord]:
    """One record per variable a container sets (env, envFrom, or its command line), so a
    policy can check names one by one and point at the env entry when there is one."""
    paths = entry_paths or {}
    container = name_text(raw.get("name"))  # once for all the container's variables
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


def _remember(table: dict[Any, Any], key: Any, value: Any) -> Any:
    if len(table) >= _REMEMBERED:
        table.clear()
    table[key] = value
    return value


class ViewBuilder:
    """Builds workload views for one run; holds the parameters and the input index."""

    # Facts that can wait until the rest of the view is built, and then be made only when a
    # rule that reads them applies to the workload (`applies`, engine/guards.py).
    DEFERRED = frozenset({"locations", "env_list", "elastic"})

    def __init__(self, index: InputIndex, gpu_resources: list[str], nccl_resources: list[str],
                 kind_table: KindTable | None = None, diagnostic_commands: list[str] | None = None,
                 needs: frozenset[str] | None = None,
                 applies: Callable[[dict[str, Any], str], bool] | None = None) -> None:
        self.index = index
        # The keys the active rules name (engine/evaluate.view_needs): the costlier facts no
        # rule reads are not made (viewfacts.FACTS, and containers' locations and env_list);
        # None makes every one (a user's policy, or views kept for the caller).
        self.needs = needs
        # With `applies` (only with `needs`), the DEFERRED facts are made last, each only when
        # applies(view, fact); else [] (the containers') or null (`elastic`), as if unread.
        self.applies = applies if needs is not None else None
        self._later = self.DEFERRED & needs if applies is not None and needs is not None else frozenset()
        self._pending: list[tuple[str, Callable[[], Any], dict[str, Any]]] = []  # (fact, make, holder)
        self.gpu_patterns = list(gpu_resources)
        self.nccl_patterns = list(nccl_resources)
        self.kind_table = kind_table  # reads resources embedded in others (Katib trialSpec)
        self.diagnostic_commands = list(diagnostic_commands or [])
        self._diagnostic_programs = tuple(self.diagnostic_commands)  # one tuple a run: diagnostic._matches keeps it
        self.claim_names: set[str] = set()  # volumeClaimTemplates of the workload being built
        self.read_nodes: set[int] = set()  # ids of the templates the table read (not walked again)
        self.placeholders: list[dict[str, Any]] = []  # unrendered counts of the workload being built
        self._count_base = ""  # view path of the entry counts are read from (for KG008's field)
        self._count_root: Any = None  # the resource root: paths from it are not prefixed
        # Per run, bounded: resource names against the patterns, and a command line's words
        # (a stream repeats its names and, pod after pod, its command lines).
        self._gpu_names: dict[str, bool] = {}
        self._nccl_names: dict[str, bool] = {}
        self._commands: dict[str, tuple[tuple[tuple[str, str | None], ...], tuple[str, ...], tuple[str, ...] | None,
                                        str | None]] = {}
        # A container's `words` only when a rule reads them (or every fact is made); else only
        # torch_backend reads them, and only where a word can be a backend flag.
        self._all_words = needs is None or "words" in needs
        self._backend_of: dict[int, str | None] = {}  # id(container view) -> its backend, this workload's
        self._volumes: tuple[Any, dict[str, Any], dict[str, int]] | None = None  # the last spec's

    # -- accelerators -------------------------------------------------------------------
    def is_gpu_resource(self, name: str) -> bool:
        found = self._gpu_names.get(name)
        if found is None:
            found = _remember(self._gpu_names, name, any(fnmatch.fnmatchcase(name, p) for p in self.gpu_patterns))
        return found

    def is_nccl_resource(self, name: str) -> bool:
        found = self._nccl_names.get(name)
        if found is None:
            found = _remember(self._nccl_names, name, any(fnmatch.fnmatchcase(name, p) for p in self.nccl_patterns))
        return found

    def accelerators(self, container: dict[str, Any]) -> dict[str, int | None]:
        resources = as_dict(container.get("resources"))
        limits = as_dict(resources.get("limits"))
        requests = as_dict(resources.get("requests"))
        found: dict[str, int | None] = {}
        for name in sorted(limits.keys() | requests.keys()):
            if self.is_gpu_resource(name):
                found[name] = as_count(limits.get(name, requests.get(name)))
        return found

    def device_claims(self, spec: dict[str, Any], container: dict[str, Any], namespace: str | None) -> dict[str, int | None]:
        """GPUs a container gets through DRA claims whose claim object is in the input."""
        if "resourceClaims" not in spec:  # nearly every pod: no claims, none of the loop below
            return {}
        # Names are strings only: a list or mapping there (no real manifest) is not hashable.
        used = {c.get("name") for c in as_list(as_dict(container.get("resources")).get("claims"))
                if isinstance(c, dict) and isinstance(c.get("name"), str)}
        found: dict[str, int | None] = {}
        for claim in as_list(spec.get("resourceClaims")):
            if not isinstance(claim, dict) or not isinstance(claim.get("name"), str) or claim["name"] not in used:
                continue
            source = as_dict(claim.get("source")) or claim
            template_name = source.get("resourceClaimTemplateName")
            claim_name = source.get("resourceClaimName")
            requests = None
            if isinstance(template_name, str):
                requests = self.index.device_claim("ResourceClaimTemplate", namespace, template_name)
            elif isinstance(claim_name, str):
                requests = self.index.device_claim("ResourceClaim", namespace, claim_name)
            for device_class, count in requests or []:
                if "gpu" in device_class.lower():
                    key = f"dra:{device_class}"
                    previous = found.get(key, 0)
                    number = as_count(count)
                    found[key] = None if previous is None or number is None else previous + number
        return found

    # -- pods -----------------------------------------------------------------------------
    def _templates(self, data: dict[str, Any], rule: TemplateRule,
                   where: Where) -> Iterator[tuple[str, str, Any, dict[str, Any], Any, Where]]:
        """(role, path, entry, pod template-like object, the entry the replicas are read from,
        the object's key path in the document; `where` is the key path of `data`)."""
        if rule.each_key is not None:
            mapping = get_path(data, rule.each_key)
            for key, entry in as_dict(mapping).items():
                if isinstance(entry, dict):
                    yield (str(key), ".".join(rule.each_key + (str(key),)), entry, entry, entry,
                           sub(where, *rule.each_key, key))
        elif rule.each_item is not None:
            items = get_path(data, rule.each_item)
            assert rule.role_key is not None
            for position, entry in enumerate(as_list(items)):
                if isinstance(entry, dict):
                    role = get_path(entry, rule.role_key)
                    role_text = str(role) if role is not None else str(position)
                    if rule.role:  # two templates per entry (kthena entry and worker)
                        role_text = f"{role_text} {rule.role}"
                    yield (role_text, f"{'.'.join(rule.each_item)}[{position}]", entry, entry, entry,
                           sub(where, *rule.each_item, position))
        else:
            yield str(rule.role), "", data, data, data, where

    def pod_views(self, resource: Resource, kind_rule: KindRule,
                  summary: dict[str, Any]) -> list[tuple[dict[str, Any], TemplateRule]]:
        """The pods the table's entry reads, then any other pod template the walk finds."""
        pods = None
        if kind_rule.merge == "trainer-runtime":
            pods = self._runtime_pods(resource, summary)
        if pods is None:
            pods = self._table_pods(resource, resource.data, kind_rule, summary, "", 0, resource.base)
        pods.extend(walked_pods(self, resource, pods, summary))
        return pods

    def _runtime_pods(self, resource: Resource, summary: dict[str, Any]) -> list[tuple[dict[str, Any], TemplateRule]] | None:
        """A TrainJob's pods merged with its runtime when the input holds it; else None, and
        `runtime_missing` says which runtime the rules that need it did not see."""
        from kubegap_lint.workloads.trainjob import merged_pods, override_nodes, runtime_ref

        self.read_nodes.update(id(node) for node in override_nodes(resource.data))
        ref = runtime_ref(resource.data)
        if ref is None:
            return None
        runtime = self.index.training_runtime(ref[0], resource.namespace, ref[1])
        if runtime is None:
            summary["runtime_missing"] = {"kind": ref[0], "name": ref[1]}
            return None
        summary["runtime"] = {"kind": ref[0], "name": ref[1]}
        return merged_pods(self, resource, runtime, ref[0], ref[1], summary)

    def _table_pods(self, resource: Resource, data: dict[str, Any], kind_rule: KindRule,
                    summary: dict[str, Any], prefix: str, depth: int,
                    where: Where) -> list[tuple[dict[str, Any], TemplateRule]]:
        """The pods `kind_rule` reads in `data`, whose key path is `where`."""
        pods: list[tuple[dict[str, Any], TemplateRule]] = []
        for rule in kind_rule.templates:
            if rule.resource is not None:
                pods.extend(self._embedded_pods(resource, data, rule, summary, prefix, depth, where))
                continue
            for role, base, _entry, holder, replica_source, holder_at in self._templates(data, rule, where):
                base = ".".join(p for p in (prefix, base) if p)
                pod = self._pod(resource, rule, role, base, holder, replica_source, summary, data,
                                prefix=prefix, where=holder_at)
                if pod is not None:
                    pod["found_by"] = kind_rule.found_by
                    pods.append((cast("dict[str, Any]", pod), rule))
        return pods

    def _embedded_pods(self, resource: Resource, data: dict[str, Any], rule: TemplateRule,
                       summary: dict[str, Any], prefix: str, depth: int,
                       where: Where) -> list[tuple[dict[str, Any], TemplateRule]]:
        """Pods of a whole resource held inside this one (a Katib trial's PyTorchJob or Job),
        read by that resource's own entry; paths keep the holder's prefix."""
        assert rule.resource is not None
        inner = get_path(data, rule.resource)
        if self.kind_table is None or not isinstance(inner, dict) or depth > 3:
            return []
        inner_rule = self.kind_table.lookup(inner.get("apiVersion"), inner.get("kind"))
        if inner_rule is None:
            return []
        path = ".".join(p for p in (prefix, ".".join(rule.resource)) if p)
        pods = self._table_pods(resource, inner, inner_rule, summary, path, depth + 1, sub(where, *rule.resource))
        for pod, _ in pods:
            pod["embedded"] = {"path": path, "kind": inner.get("kind"), "class": inner_rule.workload_class}
        return pods

    def _pod(
        self, resource: Resource, rule: TemplateRule, role: str, base: str,
        holder: dict[str, Any], replica_source: dict[str, Any], summary: dict[str, Any],
        data: dict[str, Any] | None = None, replicas: int | None | str = "table", prefix: str = "",
        where: Where = (),
    ) -> PodView | None:
        """One pod view. `data` is the resource (or the embedded resource) the rule's paths
        start from; `replicas` overrides the table's count (the walk reads its own); `where` is
        the key path of `holder` in the document."""
        root = resource.data if data is None else data
        partial = False
        metadata: dict[str, Any] = {}
        metadata_at: Where | None = None
        spec_at: Where | None = None  # None: the spec is made up (a lone container's)
        model_at: Where | None = None  # KServe's predictor.model, standing for the first container
        container_at: Where | None = None  # a lone container standing for the pod
        if rule.template is not None:
            template = get_path(holder, rule.template)
            if not isinstance(template, dict):
                return None
            spec = template.get("spec")
            if not isinstance(spec, dict):
                return None
            metadata = as_dict(template.get("metadata"))
            anchor: Any = template
            anchor_at = sub(where, *rule.template)
            spec_at, metadata_at = sub(anchor_at, "spec"), sub(anchor_at, "metadata")
            rel = ".".join(rule.template)
        elif rule.spec is not None:
            spec = get_path(holder, rule.spec)
            if not isinstance(spec, dict):
                return None
            metadata = as_dict(holder.get("metadata")) if rule.spec == ("spec",) else {}
            anchor = spec
            anchor_at = spec_at = sub(where, *rule.spec)
            metadata_at = sub(where, "metadata") if rule.spec == ("spec",) else None
            rel = ".".join(rule.spec)
            model = get_path(spec, rule.model) if rule.model is not None else None
            if isinstance(model, dict):
                # KServe's predictor.model: one container-like mapping beside the pod spec fields;
                # it is the predictor's main container, before any others written there.
                synthetic_model = dict(model)
                synthetic_model.setdefault("name", "kserve-container")
                assert rule.model is not None
                model_at = sub(spec_at, *rule.model)
                completed = dict(spec)
                completed["containers"] = [synthetic_model] + [c for c in as_list(spec.get("containers"))]
                spec = completed
        else:
            assert rule.container is not None
            container = get_path(holder, rule.container)
            if not isinstance(container, dict):
                return None
            synthetic = dict(container)
            synthetic.setdefault("name", role)
            if "resources" not in synthetic and isinstance(container.get("resourcesPerNode"), dict):
                synthetic["resources"] = container["resourcesPerNode"]
            spec = {"containers": [synthetic]}
            anchor = container
            anchor_at = container_at = sub(where, *rule.container)
            rel = ".".join(rule.container)
            partial = True
        path = ".".join(p for p in (base, rel) if p)

        if replicas == "table":
            self._count_base = base if rule.each_key is not None or rule.each_item is not None else prefix
            pod_count = self._replicas(root if rule.each_key is None and rule.each_item is None else replica_source,
                                       root, rule)
        else:
            pod_count = replicas if isinstance(replicas, int) else None

        def container_where(key: str, number: int) -> Where:
            if container_at is not None:
                return container_at
            assert spec_at is not None
            if key == "containers" and model_at is not None:  # the model stands first
                return model_at if number == 0 else sub(spec_at, key, number - 1)
            return sub(spec_at, key, number)

        containers = [self._container(resource, spec, c, i, role, path, where=container_where("containers", i),
                                      spec_where=spec_at)
                      for i, c in enumerate(as_list(spec.get("containers"))) if isinstance(c, dict)]
        init_containers: list[ContainerView] = []
        for i, c in enumerate(as_list(spec.get("initContainers"))):
            if isinstance(c, dict):
                view = self._container(resource, spec, c, i, role, path, init=True,
                                       where=container_where("initContainers", i), spec_where=spec_at)
                # A native sidecar (restartPolicy Always) runs for the pod's whole life: its
                # requests and env count with the main containers'.
                (containers if view["sidecar"] else init_containers).append(view)
        accelerators: dict[str, int | None] = {}
        gpus: int | None = 0
        for container in containers:
            for name, count in container["accelerators"].items():
                previous = accelerators.get(name, 0)
                accelerators[name] = None if previous is None or count is None else previous + count
            if container["gpus"] is None or gpus is None:
                gpus = None
            else:
                gpus += container["gpus"]
        if rule.gpus is not None and not accelerators and get_path(root, rule.gpus) is not None:
            # The operator gives each pod a share of spec.gpus (its own gpusPerNode flag, not
            # in the manifest): GPU pods, how many GPUs each and how many pods unknown.
            accelerators, gpus, pod_count = {"nvidia.com/gpu": None}, None, None
        has_gpu = bool(accelerators)
        env: dict[str, str | None]
        if len(containers) == 1:  # most pods: the first container's, as the loop below makes it
            env = dict(containers[0]["env"])
        else:
            env = {}
            for container in containers:
                for name, value in container["env"].items():
                    env.setdefault(name, value)
        labels = as_dict(metadata.get("labels"))
        known = self._volumes  # the spec's volumes by name, when a container read them (_container)
        if known is not None and known[0] is spec:
            volumes, volume_numbers = dict(known[1]), known[2]
        else:
            volumes = {str(v.get("name")): v for v in as_list(spec.get("volumes")) if isinstance(v, dict)}
            volume_numbers = None
        pod = {
            "role": role,
            "found_by": None,  # set by the caller: the table entry, or the walk
            "embedded": None,
            "label": "pods" if role in ("pod", "pods") else f"{role} pods",
            "gpus_text": self._gpus_text(accelerators, gpus if has_gpu else 0),
            "path": path,
            "replicas": pod_count,
            "gpus": gpus if has_gpu else 0,
            "has_gpu": has_gpu,
            "nccl_gpu": any(self.is_nccl_resource(n) or n.startswith("dra:") for n in accelerators),
            "accelerators": accelerators,
            "partial": partial,
            "metadata": metadata,
            "labels": labels,
            "annotations": as_dict(metadata.get("annotations")),
            "spec": spec,
            "containers": containers,
            "init_containers": init_containers,
            "volumes": volumes,
            "env": env,
            "commands": [c["command_line"] for c in containers if c["command_line"]],
            # Every command line and known env value, for scans such as object-store URLs.
            "text": "\n".join([c["command_line"] for c in containers]
                              + [v for c in containers for v in c["env"].values() if v]),
            "launchers": sorted({name for c in containers for name in c["launchers"]}),
            "budgets": self._budgets(resource.namespace, labels),
            "workload": summary,
        }
        # Every container (sidecars too) only runs a diagnostic or idles: class diagnostic.
        pod["diagnostic"], pod["follows"] = diagnostic_verdict(
            [c["raw"] for c in containers], self._diagnostic_programs)
        self.read_nodes.update((id(anchor), id(spec)))
        paths: dict[str, Any] = {".": anchor_at, "spec": spec_at if spec_at is not None else Pinned(exact(anchor_at) or ())}
        if metadata_at is not None:
            paths.update(metadata=metadata_at, labels=sub(metadata_at, "labels"),
                         annotations=sub(metadata_at, "annotations"))
        if spec_at is not None:
            if volume_numbers is not None:
                paths["volumes"] = {name: sub(spec_at, "volumes", n) for name, n in volume_numbers.items()}
            else:
                paths["volumes"] = {str(v.get("name")): sub(spec_at, "volumes", n)
                                    for n, v in enumerate(as_list(spec.get("volumes"))) if isinstance(v, dict)}
        pod["key_paths"] = paths
        return cast("PodView", pod)  # the facts' keys are added by add_resilience_facts

    def _gpus_text(self, accelerators: dict[str, int | None], gpus: int | None) -> str:
        """'8 GPUs', '1 GPU', '4 google.com/tpu', or 'an unknown number of GPUs', for messages."""
        gpu_like = all(self.is_nccl_resource(n) or n.startswith("dra:") for n in accelerators)
        if gpus is None:
            return "an unknown number of GPUs" if gpu_like else "an unknown number of accelerators"
        if gpu_like:
            return f"{gpus} GPU{'s' if gpus != 1 else ''}"
        return ", ".join(f"{count if count is not None else '?'} {name}" for name, count in accelerators.items())

    def _replicas(self, source: dict[str, Any], root: dict[str, Any], rule: TemplateRule) -> int | None:
        total: int | None = 1
        self._count_root = root
        for path in rule.replicas:
            raw = get_path(source, path)
            value = rule.default_replicas if raw is None else as_count(raw)
            self._note_placeholder(source, path, raw, value)
            total = None if value is None or total is None else total * value
        for path in rule.root_replicas:
            raw = get_path(root, path)
            value = 1 if raw is None else as_count(raw)
            self._note_placeholder(root, path, raw, value)
            total = None if value is None or total is None else total * value
        if rule.less_one_when is not None and total is not None and get_path(root, rule.less_one_when) is not None:
            groups = None
            if rule.replicas:
                first = get_path(source, rule.replicas[0])
                groups = rule.default_replicas if first is None else as_count(first)
            total = None if groups is None else total - groups
        return total

    def _note_placeholder(self, holder: dict[str, Any], path: tuple[str, ...], raw: Any, value: int | None) -> None:
        """Remember a count that is an unrendered placeholder, once per field (KG008)."""
        if value is None and is_placeholder(raw):
            parent = get_path(holder, path[:-1]) if len(path) > 1 else holder
            base = "" if holder is self._count_root else self._count_base
            entry = {"field": ".".join(p for p in (base, ".".join(path)) if p), "value": str(raw), "node": parent}
            if not any(e["field"] == entry["field"] and e["node"] is parent for e in self.placeholders):
                self.placeholders.append(entry)

    def _container(self, resource: Resource, spec: dict[str, Any], raw: dict[str, Any], position: int,
                   role: str, pod_path: str, init: bool = False, where: Where = (),
                   spec_where: Where | None = None) -> ContainerView:
        """One container view; `where` is the container's key path, `spec_where` the pod spec's
        (None when the spec is made up around a lone container)."""
        env: dict[str, str | None] = {}
        entries: dict[str, Any] = {}
        entry_paths: dict[str, Where] = {}
        pinned = isinstance(where, Pinned)  # sub(where, ...), once for all the entries and mounts
        listed = raw.get("env")
        if isinstance(listed, list):
            for number, entry in enumerate(listed):
                if not isinstance(entry, dict):
                    continue
                name = entry.get("name")
                if isinstance(name, str):
                    value = entry.get("value")
                    if "valueFrom" in entry:
                        env[name] = None
                    elif type(value) is str and "$" not in value:  # the common case: literal text
                        env[name] = value
                    else:
                        env[name] = _env_text(value)
                    entries[name] = entry
                    entry_paths[name] = where if pinned else (*where, "env", number)
        for source in as_list(raw.get("envFrom")):
            config_ref = as_dict(as_dict(source).get("configMapRef"))
            if isinstance(config_ref.get("name"), str):
                values = self.index.config_map(resource.namespace, config_ref["name"]) or {}
                prefix = str(as_dict(source).get("prefix") or "")
                for key, value in values.items():
                    env.setdefault(prefix + key, value)
        text = command_text(raw)
        sets, launchers, words, backend = self._command(text)
        for name, known in sets:
            env.setdefault(name, known)
        accelerators = self.accelerators(raw)
        if "resourceClaims" in spec:  # else device_claims finds none (nearly every pod)
            accelerators.update(self.device_claims(spec, raw, resource.namespace))
        gpus: int | None = 0
        for count in accelerators.values():
            gpus = None if gpus is None or count is None else gpus + count
        mounts = []
        if self._volumes is None or self._volumes[0] is not spec:  # once per pod spec, not per container
            self._volumes = (spec, {str(v.get("name")): v for v in as_list(spec.get("volumes")) if isinstance(v, dict)},
                             {str(v.get("name")): n for n, v in enumerate(as_list(spec.get("volumes")))
                              if isinstance(v, dict)})
        volumes, volume_paths = self._volumes[1], self._volumes[2]
        for number, mount in enumerate(as_list(raw.get("volumeMounts"))):
            if not isinstance(mount, dict):
                continue
            mount_name = mount.get("name")
            volume_name = str(mount_name)
            volume = volumes.get(volume_name)
            volume_type = None
            if volume is not None:
                for key in volume:  # the first key that is not the volume's name: its type
                    if key not in _VOLUME_META_KEYS:
                        volume_type = key
                        break
            elif volume_name in self.claim_names:
                volume_type = "volumeClaimTemplate"
            at = where if pinned else (*where, "volumeMounts", number)  # for "." and "mount" alike
            medium = None
            if volume:
                empty_dir = volume.get("emptyDir")
                medium = empty_dir.get("medium") if isinstance(empty_dir, dict) else None
            mounts.append({
                "name": mount_name,
                "path": str(mount.get("mountPath", "")),
                "volume_type": volume_type,
                "volume": volume,
                "medium": medium,
                "mount": mount,
                "key_paths": {".": at, "mount": at,
                              "volume": sub(spec_where, "volumes", volume_paths[volume_name])
                              if volume is not None and spec_where is not None else None},
            })
        container_path = f"{pod_path}.spec.{'initContainers' if init else 'containers'}[{position}]"
        needs = self.needs
        later = self._later
        locations: list[Location] = []
        if "locations" not in later and (needs is None or "locations" in needs):
            locations = container_locations(raw, mounts, where)
        env_list: list[EnvRecord] = []
        if "env_list" not in later and (needs is None or "env_list" in needs):
            env_list = env_records(raw, env, entries, container_path, role, where, entry_paths)
        view = {
            "name": name_text(raw.get("name")),
            "index": position,
            "path": f"{pod_path}.spec.{'initContainers' if init else 'containers'}[{position}]",
            "init": init,
            "sidecar": init and raw.get("restartPolicy") == "Always",
            "role": role,
            "image": raw.get("image"),
            "env": env,
            "env_entries": entries,
            "command_line": text,
            "words": list(words) if words is not None else [],  # each view has its own lists
            "launchers": list(launchers),
            "accelerators": accelerators,
            "gpus": gpus if accelerators else 0,
            "mounts": mounts,
            "locations": locations,
            "env_list": env_list,
            "raw": raw,
            "key_paths": {".": where, "raw": where, "env_entries": entry_paths},
        }
        self._backend_of[id(view)] = backend
        if later:  # made at the end of workload_view when a rule that reads them applies
            if "locations" in later:
                self._pending.append(("locations", lambda: container_locations(raw, mounts, where), view))
            if "env_list" in later:
                self._pending.append(("env_list", lambda: env_records(raw, env, entries, container_path, role,
                                                                      where, entry_paths), view))
        return cast("ContainerView", view)  # accelerator_mismatches: add_resilience_facts

    def _command(self, text: str) -> tuple[tuple[tuple[str, str | None], ...], tuple[str, ...], tuple[str, ...] | None,
                                           str | None]:
        """What a command line tells, read once per distinct line: the variables it sets (their
        values as env text), its launchers, its words (None when no rule reads them and no word
        can name a backend) and the backend it chooses (torch_backend)."""
        known = self._commands.get(text)
        if known is None:
            sets = tuple((name, _env_text(value)) for name, value in script_env(text).items())
            names = launchers(text)
            backend_words = bool(text) and _may_name_backend(text)
            words = (tuple(_words(text)) if text else ()) if self._all_words or backend_words else None
            known = (sets, names, words, torch_backend(list(words)) if backend_words and words else None)
            if len(text) <= 4096:
                _remember(self._commands, text, known)
        return known

    def _budgets(self, namespace: str | None, labels: dict[str, Any]) -> list[PodBudget]:
        return [{"name": budget.name, "min_available": budget.min_available,
                 "max_unavailable": budget.max_unavailable, "path": budget.path, "line": budget.line}
                for budget in self.index.budgets_for(namespace, labels)]

    # -- workloads ------------------------------------------------------------------------
    def workload_view(self, resource: Resource, rule: KindRule) -> WorkloadView | None:
        data = resource.data
        summary: dict[str, Any] = {
            "kind": resource.kind,
            "apiVersion": resource.api_version,
            "name": resource.name,
            "namespace": resource.namespace,
            "class": rule.workload_class,
            "training": rule.workload_class == "training",
            "serving": rule.workload_class == "serving",
            "found_by": rule.found_by,
            "runtime": None,
            "runtime_missing": None,
        }
        claim_templates = as_list(get_path(data, rule.claim_templates)) if rule.claim_templates else []
        if rule.claim_policies:
            for policy in as_list(get_path(data, rule.claim_policies)):
                claim_templates = claim_templates + as_list(as_dict(policy).get("templates"))
        self.claim_names = {str(as_dict(as_dict(c).get("metadata")).get("name")) for c in claim_templates}
        self.read_nodes = set()
        self.placeholders = []
        self._pending = []
        self._backend_of = {}
        pod_rules = self.pod_views(resource, rule, summary)
        pods = [pod for pod, _ in pod_rules]
        if not pods:
            return None
        pods_total: int | None = 0
        gpus_total: int | None = 0
        for pod in pods:
            if str(pod["role"]).endswith("initializer"):
                pass  # Trainer's dataset and model initializers finish before training starts
            elif pod["replicas"] is None or pods_total is None:
                pods_total = None
            else:
                pods_total += pod["replicas"]
            if pod["has_gpu"]:
                if pod["replicas"] is None or pod["gpus"] is None or gpus_total is None:
                    gpus_total = None
                else:
                    gpus_total += pod["replicas"] * pod["gpus"]
        replicas: int | None
        if rule.replicas:
            replicas = 1
            for path in rule.replicas:
                raw = get_path(data, path)
                value = 1 if raw is None else as_count(raw)
                replicas = None if value is None or replicas is None else replicas * value
        elif any(t.counts_as_replicas for t in rule.templates):
            counted = [pod["replicas"] for pod, t in pod_rules if t.counts_as_replicas]
            replicas = None if any(c is None for c in counted) else sum(cast(list[int], counted))
        else:
            replicas = pods_total
        has_gpu = any(p["has_gpu"] for p in pods)
        gpu_pod_views = [p for p in pods if p["has_gpu"]]
        # Every GPU pod only runs a diagnostic or idles: class diagnostic (the checkpoint and
        # restart rules skip it); `training` and `serving` still say what the kind is.
        leading = [p for p in pods if not p["follows"]]
        if leading and all(p["diagnostic"] for p in leading):
            for pod in pods:  # MPI workers that only run sshd do what the launcher runs
                pod["diagnostic"] = True
        diagnostic = bool(gpu_pod_views) and all(p["diagnostic"] for p in gpu_pod_views)
        if diagnostic:
            summary["class"] = "diagnostic"
        for pod in pods:
            pod["class"] = "diagnostic" if pod["diagnostic"] else rule.workload_class
        max_pod_gpus = max((p["gpus"] for p in pods if p["has_gpu"] and p["gpus"] is not None), default=0)
        unknown_gpus = any(p["has_gpu"] and p["gpus"] is None for p in pods)
        launchers = sorted({name for p in pods for name in p["launchers"]})
        torch_env = any(_torch_env(p["env"]) for p in pods)
        pytorch = resource.kind in _DISTRIBUTED_KINDS or bool(launchers) or torch_env
        many = pods_total is None or pods_total > 1 or max_pod_gpus > 1 or unknown_gpus
        summary.update({
            "replicas": replicas,
            "pods_total": pods_total,
            "gpus_total": gpus_total if has_gpu else 0,
            "has_gpu": has_gpu,
            "nccl_gpu": any(p["nccl_gpu"] for p in pods),
            "multi_pod": None if pods_total is None else pods_total > 1,
            "distributed_pytorch": pytorch and many,
            "launchers": launchers,
            "diagnostic": diagnostic,
            "unrendered_counts": list(self.placeholders),
        })
        # An explicit `--backend gloo` on every GPU pod means PyTorch's NCCL watchdog and flight
        # recorder are not in play; any other choice (or none) leaves them in scope.
        backend_of = self._backend_of  # torch_backend of each container's words (_command)
        backends = {backend_of[id(c)] for p in pods if p["has_gpu"] for c in p["containers"]}
        summary["torch_backend"] = backends.pop() if len(backends) == 1 else None
        view = dict(summary)
        view.update({
            "labels": as_dict(resource.metadata.get("labels")),
            "annotations": as_dict(resource.metadata.get("annotations")),
            "pods": pods,
            "claim_templates": claim_templates,
            "resource": data,
        })
        view["autoscalers"] = [
            {"kind": a.kind, "name": a.name, "min_replicas": a.min_replicas, "max_replicas": a.max_replicas,
             "path": a.path, "line": a.line}
            for a in self.index.autoscalers_for(resource.namespace, resource.kind, resource.name)]
        base = resource.base
        view["key_paths"] = {".": base, "resource": base, "labels": (*base, "metadata", "labels"),
                             "annotations": (*base, "metadata", "annotations")}
        add_resilience_facts(view, self.gpu_patterns, self.index.model_cached, self.needs, self._later)
        if self._later:
            self._add_deferred(view)
        return cast("WorkloadView", view)

    def _add_deferred(self, view: dict[str, Any]) -> None:
        """The DEFERRED facts, now that the rest of the view is built: each made when a rule
        that reads it applies to the workload, else left empty (no rule that applies reads it)."""
        assert self.applies is not None
        wanted = {fact: self.applies(view, fact) for fact in sorted(self._later)}
        if wanted.get("elastic"):
            view["elastic"] = elastic_facts(view)
        for fact, make, holder in self._pending:
            if wanted[fact]:
                holder[fact] = make()
        self._pending = []
