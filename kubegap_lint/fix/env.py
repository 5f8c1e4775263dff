"""Fixes of the NCCL and PyTorch environment rules (KG301, KG302, KG305, KG306, KG307).

Each sets, in place, the `value` of every env entry of the finding's pod that the rule reads
wrong, to the documented safe value (shared/research/env-vars.md, cited by the policy's help).
A value set elsewhere (a command line's `export`, `valueFrom`) gets no edit: the fix says where
to change it.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from kubegap_lint.fix.document import Unfixable
from kubegap_lint.fix.model import SAFE, UNSAFE, Edit, Fix
from kubegap_lint.fix.site import Site, env_values, number
from kubegap_lint.fix.writer import set_scalar

# (variable, is the value wrong, the safe value, applicability): checked in order per container.
Check = tuple[str, Callable[[str], bool], str, str]


def _in(*values: float) -> Callable[[str], bool]:
    return lambda text: number(text) in values


def _below(limit: float) -> Callable[[str], bool]:
    return lambda text: (number(text) is not None and number(text) < limit)  # type: ignore[operator]


def _matches(pattern: str) -> Callable[[str], bool]:
    return lambda text: re.match(pattern, text, re.IGNORECASE) is not None


def _set_values(site: Site, checks: list[list[Check]]) -> tuple[list[Edit], list[str], str]:
    """The edits that set each wrong value; `checks` holds groups of names of which the first
    present in a container is the one read (a new name before its old one)."""
    edits: list[Edit] = []
    changed: list[str] = []
    applicability = SAFE
    for _, container in site.containers():
        env = env_values(container)
        for group in checks:
            for name, wrong, value, kind in group:
                if name not in env:
                    continue
                node = env[name][1]
                text = node.value if node is not None else None
                if node is not None and isinstance(text, str) and wrong(text):
                    edits.append(set_scalar(site.yfile, node, value))
                    changed.append(f"{name}={value}")
                    applicability = UNSAFE if kind == UNSAFE else applicability
                break  # the first name of the group present is the one read
    return edits, sorted(set(changed)), applicability


def _env_fix(site: Site, checks: list[list[Check]], evidence: tuple[str, ...], why: str) -> Fix:
    rule = site.finding.rule_id
    edits, changed, applicability = _set_values(site, checks)
    if not edits:
        return Fix(rule, SAFE, f"no edit: the value is not set in an env entry of this pod; {why}")
    return Fix(rule, applicability, f"set {', '.join(changed)} ({why})", tuple(edits), evidence)


def fix_kg301(site: Site) -> Fix:
    wrong = _in(0, 1)
    return _env_fix(site, [[("TORCH_NCCL_ASYNC_ERROR_HANDLING", wrong, "3", SAFE),
                            ("NCCL_ASYNC_ERROR_HANDLING", wrong, "3", SAFE)]],
                    ("pytorch-fr-asynceh1",), "3 is SkipCleanUp, PyTorch's default since PR #110723")


def fix_kg302(site: Site) -> Fix:
    limit = float(site.params.get("max_heartbeat_timeout_seconds", 1800))
    on = _matches(r"^\s*(1|true)\s*$")
    return _env_fix(site, [
        [("TORCH_NCCL_ENABLE_MONITORING", _matches(r"^\s*(0|false)\s*$"), "1", SAFE)],
        [("TORCH_NCCL_BLOCKING_WAIT", on, "0", SAFE), ("NCCL_BLOCKING_WAIT", on, "0", SAFE)],
        [("TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC", lambda t: (number(t) or 0) > limit, "600", UNSAFE)],
    ], ("meta-llama3-405b-54d",), "PyTorch's defaults: the monitor on, blocking wait off; a heartbeat"
       " timeout of 600 s is the policy's example (PyTorch's default moved from 600 to 480 s): choose yours")


def fix_kg306(site: Site) -> Fix:
    def wrong(text: str) -> bool:
        return _matches(r"^\s*trace\s*$")(text) or _matches(r"^\s*info\s*$")(text)

    return _env_fix(site, [[("NCCL_DEBUG", wrong, "WARN", SAFE)]], ("meta-llama3-405b-54d",),
                    "the policy's fix: keep WARN in the manifest, raise it for one run when you debug")


def fix_kg307(site: Site) -> Fix:
    return _env_fix(site, [[("NCCL_IB_TIMEOUT", _below(18), "20", SAFE)],
                           [("NCCL_IB_RETRY_CNT", _below(7), "7", SAFE)]],
                    ("databricks-gpu-reliability",), "NCCL's current defaults: 20 since 2.23, 7 retries")


_DID_YOU_MEAN = re.compile(r"did you mean ([A-Z0-9_]+)\?")


def fix_kg305(site: Site) -> Fix:
    finding = site.finding
    suggestion = _DID_YOU_MEAN.search(finding.message)
    path = finding.key_path
    if suggestion is None or not path or path[-1] != "name":
        return Fix(finding.rule_id, UNSAFE, "no edit: no single name to rename it to; check the spelling"
                   " against the NCCL and PyTorch documentation")
    name = suggestion.group(1)
    container = site.node(path[:-3])  # .../containers/N/env/M/name
    if name in env_values(container):
        raise Unfixable(f"the container sets {name} already")
    edit = set_scalar(site.yfile, site.node(path), name)
    return Fix(finding.rule_id, UNSAFE, f"rename to {name}, the known name closest to it: check that it is"
               " the one meant", (edit,), finding.evidence)
