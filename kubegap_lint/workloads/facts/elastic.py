"""Elastic launch facts of a workload: how it restarts and resizes itself (PyTorchJob
elasticPolicy, ElasticJob, torchrun flags in commands and scripts, PET_* env).
"""

from __future__ import annotations

import re
from typing import Any

from kubegap_lint.core.coerce import as_count, as_dict
from kubegap_lint.workloads.commandline import UNRENDERED_RE as _UNRENDERED_RE
from kubegap_lint.workloads.context import ViewContext
from kubegap_lint.workloads.facts.registry import fact

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


def _unquote(text: str) -> str:
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
        return text[1:-1]
    return text



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


@fact("elastic", "workload", "Elastic | None", "null unless the launch is elastic")
def _elastic(view: dict[str, Any], context: ViewContext) -> dict[str, Any] | None:
    return elastic_facts(view)
