"""Resilience facts added to a finished workload view, for what JMESPath cannot express cleanly:
label-selector matching against the view's own pods, PodDisruptionBudget arithmetic, torchrun
flags inside shell scripts, and request/limit comparison per accelerator. Each fact is
described in docs/workload-view.md; policies decide what a fact means.

Kept apart from views.py (which builds the view) so that the view's core stays small; the
builder calls `add_resilience_facts` once per workload.
"""

from __future__ import annotations

import fnmatch
import math
import re
from collections.abc import Callable
from typing import Any

from kubegap_lint.core.coerce import as_count, as_dict, as_list
from kubegap_lint.core.keypaths import sub
from kubegap_lint.core.quantity import parse_quantity
from kubegap_lint.workloads import shellwords
from kubegap_lint.workloads.facts.storage import covering_mount
from kubegap_lint.workloads.index import selector_matches

# torchrun flags accept both spellings (`--max-restarts`, `--max_restarts`) and `=` or a space.
# Each with a word every match holds, looked for before the pattern runs. `(?:^|\s)--flag`,
# searched in " " + text with the flag first: the engine finds the flag's text at once and
# looks behind it only there (views.py's scans do the same).
_FLAG_RE = {
    name: (word, re.compile(r"--" + pattern + r"(?<=\s--" + pattern + r")(?:=|\s+)(\"[^\"]*\"|'[^']*'|[^\s;&|)]+)"))
    for name, word, pattern in (
        ("nnodes", "nnodes", r"nnodes"),
        ("rdzv_backend", "rdzv", r"rdzv[-_]backend"),
        ("max_restarts", "restarts", r"max[-_]restarts"),
    )
}
_TORCHRUN_LAUNCHERS = frozenset(("torchrun", "torch.distributed.run", "torch.distributed.launch"))
_ELASTIC_BACKENDS = frozenset(("c10d", "etcd", "etcd-v2"))
_ELASTIC_KINDS = frozenset(("ElasticJob",))
_UNRENDERED_RE = re.compile(r"\$\(?\{?[A-Za-z_]")


def _unquote(text: str) -> str:
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
        return text[1:-1]
    return text


# -- spreading ------------------------------------------------------------------------------

def selector_may_select(selector: Any, labels: dict[str, Any]) -> bool:
    """Could this label selector select pods made from a template with these labels?

    Controllers add labels the template does not show (`pod-template-hash`,
    `leaderworkerset.sigs.k8s.io/name`, `ray.io/cluster`...), so a requirement on a key that the
    template lacks is given the benefit of the doubt; a requirement that contradicts a label the
    template does set is not. A missing selector selects nothing (Kubernetes' rule for spread
    constraints and affinity terms)."""
    if not isinstance(selector, dict):
        return False
    known = {k: v for k, v in as_dict(selector.get("matchLabels")).items() if k in labels}
    expressions = [e for e in as_list(selector.get("matchExpressions"))
                   if isinstance(e, dict) and isinstance(e.get("key"), str) and e["key"] in labels]
    return selector_matches({"matchLabels": known, "matchExpressions": expressions}, labels)


def spread_facts(spec: dict[str, Any], labels: dict[str, Any]) -> dict[str, list[str]]:
    """Topology keys over which the pods of this template are spread from one another:
    `hard` (topologySpreadConstraints with whenUnsatisfiable DoNotSchedule, its default, or
    required podAntiAffinity) and `soft` (ScheduleAnyway, preferred podAntiAffinity). Only
    constraints whose selector may select the template's own pods count."""
    hard: list[str] = []
    soft: list[str] = []
    for constraint in as_list(spec.get("topologySpreadConstraints")):
        if not isinstance(constraint, dict) or not isinstance(constraint.get("topologyKey"), str):
            continue
        selects = selector_may_select(constraint.get("labelSelector"), labels) or bool(
            as_list(constraint.get("matchLabelKeys")))
        if not selects:
            continue
        target = soft if constraint.get("whenUnsatisfiable") == "ScheduleAnyway" else hard
        target.append(constraint["topologyKey"])
    anti = as_dict(as_dict(spec.get("affinity")).get("podAntiAffinity"))
    for term in as_list(anti.get("requiredDuringSchedulingIgnoredDuringExecution")):
        if isinstance(term, dict) and isinstance(term.get("topologyKey"), str):
            if selector_may_select(term.get("labelSelector"), labels):
                hard.append(term["topologyKey"])
    for weighted in as_list(anti.get("preferredDuringSchedulingIgnoredDuringExecution")):
        term = as_dict(as_dict(weighted).get("podAffinityTerm"))
        if isinstance(term.get("topologyKey"), str) and selector_may_select(term.get("labelSelector"), labels):
            soft.append(term["topologyKey"])
    return {"hard": sorted(set(hard)), "soft": sorted(set(soft))}


# -- disruption budgets ---------------------------------------------------------------------

def _scaled(value: Any, total: int) -> int | None:
    """An int-or-percent of `total`, rounded up as the disruption controller does."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.endswith("%") and value[:-1].strip().isdigit():
        return math.ceil(int(value[:-1].strip()) * total / 100)
    return None


def disruptions_allowed(min_available: Any, max_unavailable: Any, pods: int | None) -> int | None:
    """How many of `pods` healthy pods the budget lets a drain evict; None when unknown."""
    if pods is None:
        return None
    if max_unavailable is not None:
        allowed = _scaled(max_unavailable, pods)
        return None if allowed is None else max(0, min(allowed, pods))
    if min_available is not None:
        desired = _scaled(min_available, pods)
        return None if desired is None else max(0, pods - desired)
    return None


def budget_facts(pods: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The PodDisruptionBudgets that select any pod of the workload (from each pod's `budgets`),
    with `pods`: how many of the workload's pods each selects (null when a count is unknown),
    `selects_gpu_pods`, and `disruptions_allowed` for that many healthy pods."""
    found: dict[tuple[Any, Any, Any], dict[str, Any]] = {}
    for pod in pods:
        for budget in pod.get("budgets") or []:
            key = (budget.get("name"), budget.get("path"), budget.get("line"))
            entry = found.setdefault(key, {**budget, "pods": 0, "selects_gpu_pods": False})
            if entry["pods"] is not None:
                entry["pods"] = None if pod.get("replicas") is None else entry["pods"] + pod["replicas"]
            entry["selects_gpu_pods"] = entry["selects_gpu_pods"] or bool(pod.get("has_gpu"))
    budgets = []
    for key in sorted(found, key=lambda k: (str(k[1]), k[2] or 0, str(k[0]))):
        entry = found[key]
        entry["disruptions_allowed"] = disruptions_allowed(
            entry.get("min_available"), entry.get("max_unavailable"), entry["pods"])
        budgets.append(entry)
    return budgets


# -- elastic launch -------------------------------------------------------------------------

def torchrun_flags(text: str) -> dict[str, str | None]:
    """The last value of each torchrun flag we read from a command line; None when a flag is
    given an unrendered value ($N)."""
    found: dict[str, str | None] = {}
    for name, (word, pattern) in _FLAG_RE.items():
        matches = pattern.findall(" " + text) if word in text else None
        if matches:
            value = _unquote(matches[-1])
            found[name] = None if _UNRENDERED_RE.search(value) else value
    return found


def _nodes_range(value: str | None) -> tuple[int | None, int | None]:
    if value is None:
        return None, None
    low, _, high = value.partition(":")
    return as_count(low), as_count(high or low)


def elastic_facts(view: dict[str, Any]) -> dict[str, Any] | None:
    """How the workload restarts and resizes itself when it is elastic: a PyTorchJob
    elasticPolicy, an ElasticJob, or a torchrun with `--nnodes MIN:MAX` or a c10d/etcd
    rendezvous. `max_restarts` is the effective worker-group restart budget (torchrun's flag
    wins over PET_MAX_RESTARTS, which wins over elasticPolicy.maxRestarts; 0 when none is set,
    torchrun's default; null when set to an unknown value). None when not elastic."""
    spec = as_dict(as_dict(view.get("resource")).get("spec"))
    policy = spec.get("elasticPolicy") if view.get("kind") == "PyTorchJob" else None
    source = "elasticPolicy" if isinstance(policy, dict) else None
    if view.get("kind") in _ELASTIC_KINDS:
        source = "kind"
    flags: dict[str, str | None] = {}
    env_restarts: Any = "unset"
    for pod in view.get("pods") or []:
        if not pod.get("has_gpu"):
            continue
        for container in pod.get("containers") or []:
            if _TORCHRUN_LAUNCHERS & set(container.get("launchers") or []):
                for name, value in torchrun_flags(container.get("command_line") or "").items():
                    flags.setdefault(name, value)
            env = container.get("env") or {}
            for flag, variable in (("nnodes", "PET_NNODES"), ("rdzv_backend", "PET_RDZV_BACKEND")):
                if variable in env:
                    flags.setdefault(flag, env[variable])
            if "PET_MAX_RESTARTS" in env and env_restarts == "unset":
                env_restarts = env["PET_MAX_RESTARTS"]
    min_nodes, max_nodes = _nodes_range(flags.get("nnodes"))
    ranged = isinstance(flags.get("nnodes"), str) and ":" in str(flags.get("nnodes"))
    if source is None and (ranged or flags.get("rdzv_backend") in _ELASTIC_BACKENDS):
        source = "torchrun"
    if source is None:
        return None
    policy = as_dict(policy)
    if source == "elasticPolicy" and not ranged:
        min_nodes = as_count(policy.get("minReplicas")) if "minReplicas" in policy else min_nodes
        max_nodes = as_count(policy.get("maxReplicas")) if "maxReplicas" in policy else max_nodes
    if "max_restarts" in flags:
        restarts: Any = flags["max_restarts"]
    elif env_restarts != "unset":
        restarts = env_restarts
    elif "maxRestarts" in policy:
        restarts = policy["maxRestarts"]
    else:
        restarts = 0
    return {
        "source": source,
        "min_nodes": min_nodes,
        "max_nodes": max_nodes,
        "max_restarts": as_count(restarts),
    }


# -- accelerator requests and limits --------------------------------------------------------

def _same_quantity(a: Any, b: Any) -> bool | None:
    """Equal as Kubernetes quantities; None when either is unrendered or unreadable."""
    left, right = parse_quantity(a), parse_quantity(b)
    if left is None or right is None:
        return None
    return left == right


_ACCELERATOR_NAMES: dict[tuple[str, tuple[str, ...]], bool] = {}  # bounded: names repeat


def _accelerator(name: str, patterns: list[str]) -> bool:
    key = (name, tuple(patterns))
    found = _ACCELERATOR_NAMES.get(key)
    if found is None:
        found = any(fnmatch.fnmatchcase(name, p) for p in patterns)
        if len(_ACCELERATOR_NAMES) >= 4096:
            _ACCELERATOR_NAMES.clear()
        _ACCELERATOR_NAMES[key] = found
    return found


def accelerator_mismatches(raw: dict[str, Any], patterns: list[str]) -> list[dict[str, Any]]:
    """Accelerator resources a container requests without the same limit: `name`, `request`,
    `limit` (null when missing). Extended resources cannot be overcommitted, so the API server
    rejects both; an unrendered value on either side is not compared."""
    resources = as_dict(raw.get("resources"))
    requests = as_dict(resources.get("requests"))
    limits = as_dict(resources.get("limits"))
    found = []
    for name in sorted(requests):
        if not _accelerator(str(name), patterns):
            continue
        if name not in limits:
            found.append({"name": name, "request": requests[name], "limit": None})
        elif type(requests[name]) is type(limits[name]) and requests[name] == limits[name]:
            continue  # the same value written twice (nearly always): the same quantity, or unreadable
        elif _same_quantity(requests[name], limits[name]) is False:
            found.append({"name": name, "request": requests[name], "limit": limits[name]})
    return found


# -- restart policy -------------------------------------------------------------------------

_STEP_RE = re.compile(r"^([^\[\]]+)((?:\[\d+\])*)$")


_STEPS: dict[str, tuple[tuple[str, tuple[int, ...]] | None, ...]] = {}  # bounded: view paths repeat


def _steps(dotted: str) -> tuple[tuple[str, tuple[int, ...]] | None, ...]:
    """A view path's steps: (key, list indexes), or None for a step that is not one."""
    found = _STEPS.get(dotted)
    if found is None:
        steps = []
        for step in dotted.split("."):
            match = _STEP_RE.match(step)
            steps.append(None if match is None else
                         (match.group(1), tuple(int(i) for i in re.findall(r"\[(\d+)\]", match.group(2)))))
        found = tuple(steps)
        if len(dotted) <= 1024:
            if len(_STEPS) >= 1024:
                _STEPS.clear()
            _STEPS[dotted] = found
    return found


def _follow(data: Any, dotted: str) -> Any:
    """Follow a view path such as `spec.replicatedJobs[0].template` into the resource."""
    node = data
    for step in _steps(dotted):
        if step is None or not isinstance(node, dict):
            return None
        node = node.get(step[0])
        for index in step[1]:
            items = as_list(node)
            node = items[index] if index < len(items) else None
    return node


def restart_policy(resource: dict[str, Any], pod: dict[str, Any]) -> Any:
    """The pod's effective restartPolicy as written: a replica spec's own `restartPolicy`
    (Kubeflow kinds set it beside the template, and it wins), else the pod spec's; null when
    neither is set."""
    path = str(pod.get("path") or "")
    if path.endswith(".template"):
        entry = _follow(resource, path[: -len(".template")])
        if isinstance(entry, dict) and entry.get("restartPolicy") is not None:
            return entry["restartPolicy"]
    return as_dict(pod.get("spec")).get("restartPolicy")


# -- serving engines: model download, drain -------------------------------------------------

# What starts a serving engine, from the command line first, then the image name.
# Each with a word every match contains: most command lines name no engine, and `in` passes
# over them at a fraction of the regular expression's cost.
_ENGINE_COMMANDS = (
    ("vllm", "vllm", re.compile(r"(?:^|[\s/'\"])vllm\s+serve\b|\bvllm\.entrypoints\.")),
    ("sglang", "sglang", re.compile(r"\bsglang\.launch_server\b|(?:^|[\s/'\"])sglang\s+serve\b")),
    ("tgi", "text-generation-launcher", re.compile(r"(?:^|[\s/'\"])text-generation-launcher\b")),
    ("triton", "tritonserver", re.compile(r"(?:^|[\s/'\"])tritonserver\b")),
    ("lmdeploy", "lmdeploy", re.compile(r"(?:^|[\s/'\"])lmdeploy\s+serve\b")),
)
_ENGINE_IMAGES = (  # (engine, the word that names it in an image; nim: the image's start)
    ("nim", "nvcr.io/nim/"),
    ("triton", "tritonserver"),
    ("tgi", "text-generation-inference"),
    ("sglang", "sglang"),
    ("vllm", "vllm"),
    ("lmdeploy", "lmdeploy"),
)
# A hub model id (`org/name`, optionally `hf://org/name`): not a path, not a URL, not unrendered.
_HUB_ID_RE = re.compile(r"^(?:hf://)?[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*$")
_MODEL_FLAGS = ("--model", "--model-id", "--model_id", "--model-path", "--model_path")
_MODEL_ENV = ("MODEL_ID", "HF_MODEL_ID")
_POSITIONAL_MODEL = {"vllm": ("vllm", "serve"), "sglang": ("sglang", "serve"), "lmdeploy": ("serve", "api_server")}
_HOME_CACHE_RE = re.compile(r"/\.cache(?:/huggingface)?/?$")
_SLEEP_RE = re.compile(r"(?:^|[\s;&|('\"])sleep\s+(\d+)(?:s\b|\b)")


def script_words(text: str) -> list[str]:
    """The words of a command line, with each `sh -c` script split into its own words."""
    def split(part: str) -> list[str]:
        try:
            return shellwords.split(part)
        except ValueError:  # unbalanced quotes: white space will do
            return part.split()

    words: list[str] = []
    for word in split(text):
        words.extend(split(word) if (" " in word or "\n" in word) else [word])
    return words


def flag_value(words: list[str], flags: tuple[str, ...]) -> str | None:
    """The last value given to any of these flags (`--f v` or `--f=v`); None when absent."""
    found = None
    for position, word in enumerate(words):
        flag, equals, value = word.partition("=")
        if flag in flags:
            if equals:
                found = value
            elif position + 1 < len(words) and not words[position + 1].startswith("-"):
                found = words[position + 1]
    return found


def serving_engine(image: Any, command_line: str, has_command: bool) -> str | None:
    """The serving engine a container runs: vllm, sglang, tgi, triton, lmdeploy or nim. The
    image names it only when the container keeps the image's entrypoint (no `command`): an
    engine image that runs a script of its own (a Ray worker join) is not the engine."""
    for engine, word, pattern in _ENGINE_COMMANDS:
        if word in command_line and pattern.search(command_line):
            return engine
    if has_command:
        return None
    name = str(image or "").lower().split("@")[0]
    for engine, word in _ENGINE_IMAGES:
        if (name.startswith(word) if engine == "nim" else word in name):
            return engine
    return None


def _hub_id(value: Any) -> str | None:
    if not isinstance(value, str) or _UNRENDERED_RE.search(value) or not _HUB_ID_RE.match(value):
        return None
    return value


def hub_model(engine: str, words: list[str], env: dict[str, Any]) -> str | None:
    """The hub model a serving container names: the engine's positional model (`vllm serve
    org/name`), a model flag, or MODEL_ID / HF_MODEL_ID; None for a local path or nothing."""
    model = _hub_id(flag_value(words, _MODEL_FLAGS))
    if model is None and engine in _POSITIONAL_MODEL:
        first, second = _POSITIONAL_MODEL[engine]
        for position in range(len(words) - 2):
            if words[position].endswith(first) and words[position + 1] == second:
                model = _hub_id(words[position + 2])
                break
    for name in _MODEL_ENV:
        if model is None:
            model = _hub_id(env.get(name))
    return model


def download_dir(engine: str, words: list[str], env: dict[str, Any]) -> tuple[str | None, str]:
    """Where the engine puts what it downloads from the hub, and what says so: `--download-dir`,
    then HF_HUB_CACHE, HUGGINGFACE_HUB_CACHE, HF_HOME (its `hub` folder), then the default
    (`/data` for TGI, as its examples mount; `$HOME/.cache/huggingface` otherwise, HOME /root).
    The path is None when the deciding value is unknown (valueFrom, unrendered)."""
    flag = flag_value(words, ("--download-dir", "--download_dir"))
    if flag is not None:
        return (None if _UNRENDERED_RE.search(flag) else flag), "--download-dir"
    for name, suffix in (("HF_HUB_CACHE", ""), ("HUGGINGFACE_HUB_CACHE", ""), ("HF_HOME", "/hub")):
        if name in env:
            value = env[name]
            return (str(value).rstrip("/") + suffix if value else None), name
    if engine == "tgi":
        return "/data", "the default of TGI's examples"
    if "HOME" in env:
        home = env["HOME"]
        return (str(home).rstrip("/") + "/.cache/huggingface" if home else None), "HOME"
    return "/root/.cache/huggingface", "the default"  # root's; the caller also accepts another home


def prestop_seconds(prestop: Any) -> int | None:
    """How long a preStop hook waits, when it says: a `sleep` action, or `sleep N` in an exec
    command; None when it does not say (an httpGet, a script without a sleep)."""
    hook = as_dict(prestop)
    if "sleep" in hook:
        return as_count(as_dict(hook["sleep"]).get("seconds"))
    command = " ".join(str(w) for w in as_list(as_dict(hook.get("exec")).get("command")) if w is not None)
    match = _SLEEP_RE.search(command)
    return int(match.group(1)) if match else None


def engine_drain(engine: str, words: list[str]) -> tuple[str | None, int | None]:
    """The engine's own drain timeout when the manifest sets it: vLLM `--shutdown-timeout`,
    Triton `--exit-timeout-secs`."""
    flag = {"vllm": "--shutdown-timeout", "triton": "--exit-timeout-secs"}.get(engine)
    if flag is None:
        return None, None
    value = flag_value(words, (flag, flag.replace("-", "_").replace("__", "--")))
    return (flag, as_count(value)) if value is not None else (None, None)


def serving_facts(container: dict[str, Any]) -> dict[str, Any] | None:
    """What a serving engine's container does at start and at stop (docs/workload-view.md);
    None when the container runs no serving engine."""
    raw = as_dict(container.get("raw"))
    engine = serving_engine(container.get("image"), container.get("command_line") or "", bool(raw.get("command")))
    if engine is None:
        return None
    words = script_words(container.get("command_line") or "")
    env = container.get("env") or {}
    model = hub_model(engine, words, env) if engine != "nim" else None
    download = None
    if model is not None:
        path, source = download_dir(engine, words, env)
        mounts = container.get("mounts") or []
        mount = covering_mount(mounts, path) if path else None
        if source == "the default" and mount is None:
            # HOME is the image's: a mount of any home's .cache (or its huggingface folder) counts.
            mount = next((m for m in mounts if _HOME_CACHE_RE.search(str(m.get("path") or ""))), None)
            path = "$HOME/.cache/huggingface"
        download = {
            "path": path,
            "from": source,
            "mount_path": mount["path"] if mount else None,
            "volume_type": mount["volume_type"] if mount else None,
        }
    offline = env.get("HF_HUB_OFFLINE")
    prestop = as_dict(raw.get("lifecycle")).get("preStop")
    flag, seconds = engine_drain(engine, words)
    # A worker rank of a multi-node engine (`--node-rank 1`, vLLM `--headless`) takes no requests.
    # An unrendered rank ($(LWS_WORKER_INDEX)) is unknown: not a worker by that alone.
    rank = as_count(flag_value(words, ("--node-rank", "--node_rank")))
    entry = not ((rank is not None and rank > 0) or "--headless" in words)
    return {
        "engine": engine,
        "entry": entry,
        "model": model,
        "download": download,
        "offline": None if "HF_HUB_OFFLINE" not in env else str(offline).lower() in ("1", "true", "yes", "on"),
        "prestop": prestop if isinstance(prestop, dict) else None,
        "prestop_seconds": prestop_seconds(prestop) if isinstance(prestop, dict) else None,
        "drain_flag": flag,
        "drain_seconds": seconds,
    }


# -- autoscaling ----------------------------------------------------------------------------

def _bound(value: Any, default: int | None) -> int | None:
    return default if value is None else as_count(value)


def scaling_facts(view: dict[str, Any]) -> dict[str, Any]:
    """How far the workload scales and where its floor is set: `max` (the highest of the
    replica count and every autoscaler's maximum; null when none is known) and `floors`, one per
    autoscaler: `source`, `min`, `max`, `node` (where a finding points). HPA minReplicas defaults
    to 1; a KEDA ScaledObject's unset bounds and a KServe predictor's unset maxReplicas are
    unknown; a KServe predictor's unset minReplicas is 1 (its documented default)."""
    floors: list[dict[str, Any]] = []
    resource = as_dict(view.get("resource"))
    spec = as_dict(resource.get("spec"))
    for scaler in view.get("autoscalers") or []:
        default_min = 1 if scaler["kind"] == "HorizontalPodAutoscaler" else None
        floors.append({
            "source": f"{scaler['kind']} {scaler['name']} ({scaler['path']}:{scaler['line']})",
            "min": _bound(scaler["min_replicas"], default_min),
            "min_set": scaler["min_replicas"] is not None,
            "max": _bound(scaler["max_replicas"], None),
            "node": resource.get("metadata") if isinstance(resource.get("metadata"), dict) else resource,
        })
    if view.get("kind") == "InferenceService":
        predictor = as_dict(spec.get("predictor"))
        if predictor:
            floors.append({"source": "the KServe predictor", "min": _bound(predictor.get("minReplicas"), 1),
                           "min_set": predictor.get("minReplicas") is not None,
                           "max": _bound(predictor.get("maxReplicas"), None), "node": predictor})
    if view.get("kind") == "RayService":
        cluster = as_dict(spec.get("rayClusterConfig"))
        if cluster.get("enableInTreeAutoscaling") is True:
            for position, group in enumerate(as_list(cluster.get("workerGroupSpecs"))):
                group = as_dict(group)
                pod = next((p for p in view.get("pods") or []
                            if p.get("path") == f"spec.rayClusterConfig.workerGroupSpecs[{position}].template"), None)
                if pod is None or not pod.get("has_gpu"):
                    continue
                floors.append({"source": f"Ray worker group {group.get('groupName')}",
                               "min": _bound(group.get("minReplicas"), None),
                               "min_set": group.get("minReplicas") is not None,
                               "max": _bound(group.get("maxReplicas"), None), "node": group})
    highest = view.get("replicas") if isinstance(view.get("replicas"), int) else None
    for floor in floors:
        if floor["max"] is not None:
            highest = floor["max"] if highest is None else max(highest, floor["max"])
    return {"max": highest, "floors": floors}


def kserve_predictor(view: dict[str, Any], gpu_patterns: list[str],
                     model_cached: Callable[[str], bool] | None = None) -> dict[str, Any] | None:
    """A KServe InferenceService predictor: `uri` (its storageUri, on the predictor or its
    model), `downloads` (the storage initializer copies the model into the pod at every start:
    any known URI but `pvc://` and `oci://`, which mount instead, and one a LocalModelCache in
    the input keeps on the nodes), `gpu` (the predictor or its model asks for an accelerator)
    and `node`. None for other kinds."""
    if view.get("kind") != "InferenceService":
        return None
    predictor = as_dict(as_dict(as_dict(view.get("resource")).get("spec")).get("predictor"))
    if not predictor:
        return None
    model = as_dict(predictor.get("model"))
    holder = next((h for h in (model, predictor) if isinstance(h.get("storageUri"), str)), None)
    uri = holder["storageUri"] if holder is not None else None
    downloads = isinstance(uri, str) and not uri.startswith(("pvc://", "oci://")) \
        and not _UNRENDERED_RE.search(uri) and not (model_cached is not None and model_cached(uri))
    containers = [model] + [as_dict(c) for c in as_list(predictor.get("containers"))]
    gpu = any(fnmatch.fnmatchcase(str(name), pattern)
              for c in containers
              for part in ("limits", "requests")
              for name in as_dict(as_dict(c.get("resources")).get(part))
              for pattern in gpu_patterns)
    return {"uri": uri, "downloads": downloads, "gpu": gpu, "node": holder if holder is not None else predictor}


# -- bare pods and batch deadlines ----------------------------------------------------------

_IDLE_RE = re.compile(
    r"(?:^|[\s;&|('\"])sleep\s+(?:infinity|inf)\b|(?:^|[\s;&|('\"])tail\s+-f\s+/dev/null\b"
    r"|while\s+(?:true|:)\s*;\s*do\s+sleep\b")


def idle_facts(command_line: str) -> dict[str, Any]:
    """How a command keeps the container alive doing nothing: `forever` (`sleep infinity`,
    `tail -f /dev/null`, a `while true; do sleep` loop) and `sleep_seconds`, the longest
    `sleep N` (0 when none); a policy compares it with its own threshold."""
    if "sleep" not in command_line and "tail" not in command_line:  # what every match holds
        return {"forever": False, "sleep_seconds": 0}
    sleeps = [int(m.group(1)) for m in _SLEEP_RE.finditer(command_line)]
    return {"forever": bool(_IDLE_RE.search(command_line)), "sleep_seconds": max(sleeps, default=0)}


_MPI_RE = re.compile(r"(?:^|[\s/;&|('\"])(?:mpirun|mpiexec)\b")
_NCCL_TESTS_RE = re.compile(
    r"(?:^|[\s/;&|('\"])(?:all_reduce|all_gather|alltoall|broadcast|reduce_scatter|reduce|sendrecv|"
    r"scatter|gather|hypercube)_perf(?:_mpi)?\b")
_TIMEOUT_FLAG_RE = re.compile(r"(?:^|\s)(?:-T\s*|--timeout[=\s]+)['\"]?(\d+)")
_TIMEOUT_CMD_RE = re.compile(r"(?:^|[\s;&|('\"])timeout\s+(?:-\S+\s+)*(\d+)[smhd]?\s")
_WATCHDOG_ENV = (("TORCH_NCCL_ASYNC_ERROR_HANDLING", "0"), ("NCCL_ASYNC_ERROR_HANDLING", "0"),
                 ("TORCH_NCCL_ENABLE_MONITORING", "0"))


def _deadline_at(holder: Any, key: str = "activeDeadlineSeconds") -> Any:
    return as_dict(holder).get(key)


def batch_facts(view: dict[str, Any]) -> dict[str, Any] | None:
    """For GPU batch workloads: `mpi` (an MPIJob, or mpirun/mpiexec in a command), `nccl_tests`
    (an nccl-tests binary runs), `timeout` (a `-T`/`--timeout` value or a `timeout N` wrapper in a
    command, in seconds), `deadline` (where an activeDeadlineSeconds bounds every GPU pod: the
    Job, the runPolicy, the Job of each replicated job, or each GPU pod; null when none),
    `weakened` (PyTorch watchdog settings turned off in the env of a GPU pod), and `many_ranks`
    (more than one GPU pod, or one pod with more than one GPU that runs a launcher)."""
    if not view.get("training") or not view.get("has_gpu"):
        return None
    resource = as_dict(view.get("resource"))
    spec = as_dict(resource.get("spec"))
    gpu_pods = [p for p in view.get("pods") or [] if p.get("has_gpu")]
    commands = "\n".join(c for p in view.get("pods") or [] for c in p.get("commands") or [])
    # Each scan only where the words its matches hold are (most commands have none of them).
    mpi = view.get("kind") == "MPIJob" or (("mpirun" in commands or "mpiexec" in commands)
                                           and bool(_MPI_RE.search(commands)))
    nccl_tests = "_perf" in commands and bool(_NCCL_TESTS_RE.search(commands))
    timeouts = [int(m.group(1)) for regex in (_TIMEOUT_FLAG_RE, _TIMEOUT_CMD_RE) for m in regex.finditer(commands)] \
        if "-T" in commands or "timeout" in commands else []
    deadline = None
    for source, value in (("spec.activeDeadlineSeconds", _deadline_at(spec)),
                          ("spec.runPolicy.activeDeadlineSeconds", _deadline_at(spec.get("runPolicy"))),
                          ("spec.jobTemplate.spec.activeDeadlineSeconds",
                           _deadline_at(as_dict(spec.get("jobTemplate")).get("spec")))):
        if value is not None and deadline is None:
            deadline = {"source": source, "value": value}
    if deadline is None and gpu_pods:
        bounded = []
        for pod in gpu_pods:
            path = str(pod.get("path") or "")
            job = _follow(resource, path[: -len(".spec.template")]) if path.endswith(".spec.template") else None
            bounded.append(_deadline_at(as_dict(job).get("spec")) if job is not None else None)
            if bounded[-1] is None:
                bounded[-1] = _deadline_at(pod.get("spec"))
        if all(b is not None for b in bounded):
            deadline = {"source": "every GPU pod or its Job", "value": bounded[0]}
    if deadline is None and view.get("kind") == "MPIJob":
        launcher = next((p for p in view.get("pods") or [] if p.get("role") == "Launcher"), None)
        if launcher is not None and _deadline_at(launcher.get("spec")) is not None:
            deadline = {"source": "the Launcher pod", "value": _deadline_at(launcher.get("spec"))}
    weakened = sorted({f"{name}={value}" for pod in gpu_pods for name, value in _WATCHDOG_ENV
                       if str((pod.get("env") or {}).get(name)) == value})
    gpu_count = view.get("gpu_pods")
    launched = mpi or nccl_tests or bool(view.get("launchers"))
    many = (gpu_count is None or gpu_count > 1
            or (launched and any(p.get("gpus") is None or p["gpus"] > 1 for p in gpu_pods)))
    return {
        "mpi": mpi,
        "nccl_tests": nccl_tests,
        "timeout": max(timeouts) if timeouts and max(timeouts) > 0 else None,
        "deadline": deadline,
        "weakened": weakened,
        "many_ranks": many,
    }


# -- the hook -------------------------------------------------------------------------------

def _serving(container: dict[str, Any], pod: dict[str, Any], leader_template: bool) -> dict[str, Any] | None:
    serving = serving_facts(container)
    if serving is not None and pod.get("role") == "worker" and leader_template:
        serving["entry"] = False  # LeaderWorkerSet: the leader takes the requests
    if serving is not None:
        # The drain arithmetic needs the pod's grace period beside the container's hook.
        grace = pod["grace_seconds"]
        serving["grace_seconds"] = grace
        serving["grace_effective"] = 30 if grace is None else as_count(grace)  # Kubernetes' default
        if serving["drain_seconds"] is not None:
            serving["drain_needs"] = (serving["prestop_seconds"] or 0) + serving["drain_seconds"]
        else:
            serving["drain_needs"] = None
    return serving


# The facts a view holds only when a rule reads them (`needs`, engine/evaluate.view_needs): the
# costlier ones, none of which another fact or the view's core reads. views.py has two more,
# `locations` and `env_list` of each container.
FACTS = frozenset({"spread", "accelerator_mismatches", "serving", "idle", "budgets", "elastic", "scaling",
                   "kserve", "batch"})


def add_resilience_facts(view: dict[str, Any], gpu_patterns: list[str],
                         model_cached: Callable[[str], bool] | None = None,
                         needs: frozenset[str] | None = None, later: frozenset[str] = frozenset()) -> None:
    """Add the facts above to a workload view in place (docs/workload-view.md); of FACTS only
    those in `needs` (None: all). Those in `later` are null here, in their place; the builder
    makes them once the view is built (views.ViewBuilder.DEFERRED)."""
    wanted = FACTS if needs is None else FACTS & needs
    gpu_pods: int | None = 0
    for pod in view.get("pods") or []:
        if "spread" in wanted:
            pod["spread"] = spread_facts(as_dict(pod.get("spec")), as_dict(pod.get("labels")))
        pod["restart_policy"] = restart_policy(as_dict(view.get("resource")), pod)
        for container in (pod.get("containers") or []) + (pod.get("init_containers") or []):
            if "accelerator_mismatches" not in wanted:
                continue
            mismatches = accelerator_mismatches(as_dict(container.get("raw")), gpu_patterns)
            where = as_dict(container.get("key_paths")).get(".")
            for mismatch in mismatches:  # located at the request that has no equal limit
                mismatch["key_paths"] = {".": sub(where, "resources", "requests", mismatch["name"])
                                         if where is not None else None}
            container["accelerator_mismatches"] = mismatches
        if pod.get("has_gpu"):
            gpu_pods = None if gpu_pods is None or pod.get("replicas") is None else gpu_pods + pod["replicas"]
    view["gpu_pods"] = gpu_pods
    if "budgets" in wanted:
        view["budgets"] = budget_facts(view.get("pods") or [])
    if "elastic" in wanted:
        view["elastic"] = None if "elastic" in later else elastic_facts(view)
    leader_template = view.get("kind") == "LeaderWorkerSet" and any(
        p.get("role") == "leader" for p in view.get("pods") or [])
    for pod in view.get("pods") or []:
        spec = as_dict(pod.get("spec"))
        pod["grace_seconds"] = spec.get("terminationGracePeriodSeconds")
        pod["active_deadline"] = spec.get("activeDeadlineSeconds")
        for container in pod.get("containers") or []:
            if "serving" in wanted:
                container["serving"] = _serving(container, pod, leader_template)
            if "idle" in wanted:
                container["idle"] = idle_facts(container.get("command_line") or "")
                # A finite sleep idles for ever only when the kubelet restarts it (Always, the default).
                container["idle"]["restarts"] = pod["restart_policy"] in (None, "Always")
    view["owner_references"] = as_list(as_dict(as_dict(view.get("resource")).get("metadata")).get("ownerReferences"))
    if "scaling" in wanted:
        view["scaling"] = scaling_facts(view)
    if "kserve" in wanted:
        view["kserve"] = kserve_predictor(view, gpu_patterns, model_cached)
    if "batch" in wanted:
        view["batch"] = batch_facts(view)
