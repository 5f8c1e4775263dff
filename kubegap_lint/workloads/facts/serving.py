"""Serving facts of a container: the engine it runs, the model it downloads and where, and how
it drains at stop.
"""

from __future__ import annotations

import re
from typing import Any

from kubegap_lint.core.coerce import as_count, as_dict, as_list
from kubegap_lint.workloads.commandline import UNRENDERED_RE as _UNRENDERED_RE
from kubegap_lint.workloads.commandline import words_of
from kubegap_lint.workloads.context import ViewContext
from kubegap_lint.workloads.facts.registry import fact
from kubegap_lint.workloads.facts.storage import covering_mount

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
SLEEP_RE = re.compile(r"(?:^|[\s;&|('\"])sleep\s+(\d+)(?:s\b|\b)")


def script_words(text: str) -> list[str]:
    """The words of a command line, with each `sh -c` script split into its own words."""
    words: list[str] = []
    for word in words_of(text):
        words.extend(words_of(word) if (" " in word or "\n" in word) else [word])
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
    match = SLEEP_RE.search(command)
    return int(match.group(1)) if match else None


def engine_drain(engine: str, words: list[str]) -> tuple[str | None, int | None]:
    """The engine's own drain timeout when the manifest sets it: vLLM `--shutdown-timeout`,
    Triton `--exit-timeout-secs`."""
    flag = {"vllm": "--shutdown-timeout", "triton": "--exit-timeout-secs"}.get(engine)
    if flag is None:
        return None, None
    value = flag_value(words, (flag, flag.replace("-", "_").replace("__", "--")))
    return (flag, as_count(value)) if value is not None else (None, None)


def worker_rank(words: list[str]) -> bool:
    """A worker rank of a multi-node engine, which takes no requests: `--node-rank` above 0, or
    vLLM's `--headless`. An unrendered rank ($(LWS_WORKER_INDEX)) is unknown: not a worker by that
    alone."""
    rank = as_count(flag_value(words, ("--node-rank", "--node_rank")))
    return (rank is not None and rank > 0) or "--headless" in words


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
    entry = not worker_rank(words)
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



def _leader_template(view: dict[str, Any]) -> bool:
    """A LeaderWorkerSet with a leader template: its worker pods take no requests."""
    return view.get("kind") == "LeaderWorkerSet" and any(p.get("role") == "leader" for p in view.get("pods") or [])


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


@fact("serving", "container", "Any", "null unless the container runs a serving engine: `engine` (`vllm`, `sglang`, `tgi`, `triton`, `lmdeploy`, `nim`; from the command, or from the image when the container keeps its entrypoint), `entry` (false for a worker rank of a multi-node engine: a `--node-rank` above 0, `--headless`, or the worker template of a LeaderWorkerSet that has a leader template; an unrendered rank says nothing), `model` (the hub model it names: the engine's positional model, `--model`, `--model-id`, `--model-path`, `MODEL_ID`, `HF_MODEL_ID`; null for a local path or an unknown value; not read for NIM), `download` (when a model is named: `path` of the download directory, from `--download-dir`, `HF_HUB_CACHE`, `HUGGINGFACE_HUB_CACHE`, `HF_HOME` + `/hub`, else the default, `/data` for TGI or `$HOME/.cache/huggingface`; null path when the deciding value is unknown; `from`, and the covering mount's `mount_path` and `volume_type`), `offline` (`HF_HUB_OFFLINE` is 1/true; null when unset), `prestop` (the `lifecycle.preStop` hook) and `prestop_seconds` (its `sleep` action or `sleep N`; null when it does not say), `drain_flag` and `drain_seconds` (vLLM `--shutdown-timeout`, Triton `--exit-timeout-secs`, when set), `grace_seconds` (the pod's, as written), `grace_effective` (30 when unset, Kubernetes' default; null when unrendered) and `drain_needs` (`prestop_seconds` + `drain_seconds`; null without a drain flag)")
def _serving_fact(container: dict[str, Any], pod: dict[str, Any], view: dict[str, Any],
                  context: ViewContext) -> dict[str, Any] | None:
    return _serving(container, pod, _leader_template(view))


def _port(raw: dict[str, Any]) -> Any:
    """The first containerPort the container declares; None when it declares none."""
    for entry in as_list(raw.get("ports")):
        port = as_dict(entry).get("containerPort")
        if port is not None:
            return port
    return None


def _readiness(raw: dict[str, Any]) -> bool:
    """A readiness probe over the network (httpGet, tcpSocket, grpc): the pod takes traffic."""
    probe = as_dict(raw.get("readinessProbe"))
    return any(key in probe for key in ("httpGet", "tcpSocket", "grpc"))


def server_facts(container: dict[str, Any], pod: dict[str, Any], leader_template: bool) -> dict[str, Any] | None:
    """How a container takes requests, when it does: it runs a serving engine, or it holds an
    accelerator and declares a containerPort or a network readiness probe (a GPU server of any
    image). None for a container that takes none, and for a worker rank of a multi-node engine."""
    raw = as_dict(container.get("raw"))
    serving = _serving(container, pod, leader_template)
    if serving is not None:
        if not serving["entry"]:
            return None
        by = serving["engine"]
    elif container.get("gpus") == 0:
        return None
    else:
        port = _port(raw)
        if (port is None and not _readiness(raw)) or (pod.get("role") == "worker" and leader_template):
            return None
        line = container.get("command_line") or ""
        if ("--node" in line or "--headless" in line) and worker_rank(script_words(line)):
            return None  # (the words only where a worker rank's flags may be)
        by = f"server on port {port}" if port is not None else "server with a readiness probe"
    prestop = as_dict(raw.get("lifecycle")).get("preStop")
    return {"by": by, "prestop": prestop if isinstance(prestop, dict) else None,
            "grace_seconds": pod["grace_seconds"]}


@fact("server", "container", "Any", "null unless the container takes requests: it runs a serving engine (`serving`, its `entry` ranks only), or it holds an accelerator and declares a `containerPort` or a readiness probe over the network (`httpGet`, `tcpSocket`, `grpc`), and is not a worker rank (`--node-rank` above 0, `--headless`, a LeaderWorkerSet's worker template beside a leader); `by` (the engine, or `server on port N` / `server with a readiness probe`), `prestop` (the `lifecycle.preStop` hook) and `grace_seconds` (the pod's, as written)")
def _server_fact(container: dict[str, Any], pod: dict[str, Any], view: dict[str, Any],
                 context: ViewContext) -> dict[str, Any] | None:
    return server_facts(container, pod, _leader_template(view))


_MULTINODE_FLAGS = ("--nnodes", "--dist-init-addr", "--headless", "--node-rank", "--node_rank")
_RAY_KINDS = frozenset(("RayService", "RayCluster"))


def _group_size(view: dict[str, Any]) -> int | None:
    spec = as_dict(as_dict(view.get("resource")).get("spec"))
    return as_count(as_dict(spec.get("leaderWorkerTemplate")).get("size"))


def _runs_engine(container: dict[str, Any]) -> bool:
    raw = as_dict(container.get("raw"))
    return serving_engine(container.get("image"), container.get("command_line") or "", bool(raw.get("command"))) is not None


def _spans_nodes(container: dict[str, Any]) -> bool:
    """A rank of a multi-node engine: `--nnodes` above 1, `--dist-init-addr`, `--headless` or
    `--node-rank` on the command line of a serving engine."""
    line = container.get("command_line") or ""
    if "--n" not in line and "--dist-init-addr" not in line and "--headless" not in line:
        return False  # what each of the flags holds: most command lines have none
    words = script_words(line)
    nodes = as_count(flag_value(words, ("--nnodes",)))
    flagged = (nodes is not None and nodes > 1) or any(w.partition("=")[0] in _MULTINODE_FLAGS[1:] for w in words)
    return flagged and _runs_engine(container)


def multinode_serving(view: dict[str, Any]) -> bool:
    """GPU serving whose one engine spans pods, so its pods talk NCCL to each other: a
    LeaderWorkerSet group of more than one pod; a Ray cluster (RayService, or a RayCluster that
    runs a serving engine) with more than one GPU pod; a serving workload with a GPU worker role
    (LLMInferenceService `worker`, kthena's worker pods); a serving engine started with
    multi-node flags."""
    kind = view.get("kind")
    if view.get("training") or not view.get("nccl_gpu") or not (view.get("serving") or kind in _RAY_KINDS):
        return False
    if kind == "LeaderWorkerSet":
        size = _group_size(view)
        return size is not None and size > 1
    pods = view.get("pods") or []
    gpu_pods = [p for p in pods if p.get("has_gpu")]
    if kind in _RAY_KINDS:
        if not view.get("serving") and not any(_runs_engine(c) for p in pods for c in p.get("containers") or []):
            return False
        counts = [p.get("replicas") for p in gpu_pods]
        return any(c is None for c in counts) or sum(c for c in counts if c is not None) > 1
    if any(str(p.get("role")).endswith("worker") and p.get("replicas") != 0 for p in gpu_pods):
        return True
    return any(_spans_nodes(c) for p in pods for c in p.get("containers") or [])


@fact("multinode_serving", "workload", "bool", "GPU serving (NVIDIA or AMD) whose one engine spans pods: a LeaderWorkerSet of `size` above 1; a RayService, or a RayCluster whose command runs a serving engine, with more than one GPU pod; a serving workload with a GPU `worker` role (LLMInferenceService, kthena ModelServing); or a serving engine started with `--nnodes` above 1, `--dist-init-addr`, `--headless` or `--node-rank`", costly=False)
def _multinode_serving(view: dict[str, Any], context: ViewContext) -> bool:
    # Cheap (made for every view): KG305's applies_to reads it, and a costly fact there would
    # make every fact KG305 reads at once (engine/guards.py). It reads the view's own keys only.
    return multinode_serving(view)
