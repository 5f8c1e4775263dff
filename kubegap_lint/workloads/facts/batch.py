"""Batch facts: how a container idles, and for GPU training workloads whether an MPI or
nccl-tests launch, a timeout or a deadline bounds them and whether the watchdog is weakened.
"""

from __future__ import annotations

import re
from typing import Any

from kubegap_lint.core.coerce import as_dict
from kubegap_lint.workloads.commandline import strings as _strings
from kubegap_lint.workloads.context import ViewContext
from kubegap_lint.workloads.diagnostic import container_is_diagnostic
from kubegap_lint.workloads.facts.lifecycle import follow as _follow
from kubegap_lint.workloads.facts.registry import fact
from kubegap_lint.workloads.facts.serving import SLEEP_RE as _SLEEP_RE

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


def _suite(gpu_pods: list[dict[str, Any]], commands: str) -> str:
    """Which collective tests run the `*_perf` binaries: AMD's rccl-tests (the same binary names)
    when a command or an image names rccl or the GPUs are AMD's, else NVIDIA's nccl-tests."""
    images = " ".join(str(c.get("image") or "") for p in gpu_pods for c in p.get("containers") or [])
    amd = any(str(name).startswith("amd.com/") for p in gpu_pods for name in p.get("accelerators") or {})
    return "rccl-tests" if amd or "rccl" in commands.lower() or "rccl" in images.lower() else "nccl-tests"


def _deadline_at(holder: Any, key: str = "activeDeadlineSeconds") -> Any:
    return as_dict(holder).get(key)


def batch_facts(view: dict[str, Any]) -> dict[str, Any] | None:
    """For GPU batch workloads: `mpi` (an MPIJob, or mpirun/mpiexec in a command), `nccl_tests`
    (an nccl-tests or rccl-tests binary runs), `tests_suite` (which of the two), `timeout` (a `-T`/`--timeout` value or a `timeout N` wrapper in a
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
    suite = _suite(gpu_pods, commands) if nccl_tests else None
    weakened = sorted({f"{name}={value}" for pod in gpu_pods for name, value in _WATCHDOG_ENV
                       if str((pod.get("env") or {}).get(name)) == value})
    gpu_count = view.get("gpu_pods")
    launched = mpi or nccl_tests or bool(view.get("launchers"))
    many = (gpu_count is None or gpu_count > 1
            or (launched and any(p.get("gpus") is None or p["gpus"] > 1 for p in gpu_pods)))
    return {
        "mpi": mpi,
        "nccl_tests": nccl_tests,
        "tests_suite": suite,
        "timeout": max(timeouts) if timeouts and max(timeouts) > 0 else None,
        "deadline": deadline,
        "weakened": weakened,
        "many_ranks": many,
    }


_SLEEP_ONLY = ("sleep",)  # the one program an idle container runs, besides shell glue and `tail -f /dev/null`


def only_idles(raw: dict[str, Any]) -> bool:
    """The container runs nothing but a sleep (shell glue and `tail -f /dev/null` aside): a
    benchmark that sleeps once it is done does work first."""
    words = " ".join(_strings(raw.get("command")) + _strings(raw.get("args")) + [str(raw.get("image") or "")])
    if "sleep" not in words and "tail" not in words:  # what every idle container names
        return False
    return container_is_diagnostic(_strings(raw.get("command")), _strings(raw.get("args")),
                                   raw.get("image"), _SLEEP_ONLY)


_SSH_RE = re.compile(r"(?:^|[\s/;&|('\"])(?:sshd\b|service\s+ssh)")


@fact("idle", "container", "Any", "`forever` (the command is `sleep infinity`, `tail -f /dev/null` or a `while true; do sleep` loop), `sleep_seconds` (the longest `sleep N`, 0 when none), `only` (the container runs nothing but that: no program besides `sleep`, shell glue, `tail -f /dev/null` and the start of an SSH daemon), `ssh` (it starts an SSH daemon, `sshd` or `service ssh`: an MPI host that runs what a launcher sends it) and `restarts` (the pod's restart policy is `Always` or unset, so a finished sleep starts again)")
def _idle(container: dict[str, Any], pod: dict[str, Any], view: dict[str, Any], context: ViewContext) -> dict[str, Any]:
    idle = idle_facts(container.get("command_line") or "")
    idle["only"] = only_idles(as_dict(container.get("raw")))
    line = container.get("command_line") or ""
    idle["ssh"] = "ssh" in line and bool(_SSH_RE.search(line))
    # A finite sleep idles for ever only when the kubelet restarts it (Always, the default).
    idle["restarts"] = pod["restart_policy"] in (None, "Always")
    return idle


@fact("batch", "workload", "Any", "for training workloads with an accelerator: `mpi` (an MPIJob, or `mpirun`/`mpiexec` in a command), `nccl_tests` (an nccl-tests or rccl-tests `*_perf` binary in a command), `tests_suite` (then `rccl-tests` when a command or a GPU pod's image names rccl or the GPUs are `amd.com/`, else `nccl-tests`; null otherwise), `timeout` (the largest `-T`/`--timeout N` or `timeout N` wrapper in a command, in seconds; null when none), `deadline` (`source` and `value` of an `activeDeadlineSeconds` that bounds every GPU pod: the Job's, `runPolicy`'s, a CronJob's job template's, or on each GPU pod or its JobSet Job, or on an MPIJob's Launcher; null when none), `weakened` (`NAME=0` for `TORCH_NCCL_ASYNC_ERROR_HANDLING`, `NCCL_ASYNC_ERROR_HANDLING`, `TORCH_NCCL_ENABLE_MONITORING` set to 0 in a GPU pod), `many_ranks` (more than one GPU pod, or a pod with more than one GPU that runs a launcher, mpirun or nccl-tests); null otherwise")
def _batch(view: dict[str, Any], context: ViewContext) -> dict[str, Any] | None:
    return batch_facts(view)
