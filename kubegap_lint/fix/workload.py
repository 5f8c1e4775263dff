"""Fixes of a workload's own budget fields: KG401 (the restart budget) and KG404 (the deadline).

Both are unsafe: the values are the policies' examples (KG401's help: a JobSet's
`failurePolicy.maxRestarts: 10`, a RayJob's `backoffLimit: 3`; KG404's: a nccl-tests run's
`activeDeadlineSeconds: 1800`), never a measured bound for the user's job. Where the policy
gives no value (a Job's or a Kubeflow job's backoffLimit, an elastic launch, a training run's
deadline), the fix is words only.
"""

from __future__ import annotations

from kubegap_lint.fix.document import Unfixable
from kubegap_lint.fix.model import UNSAFE, Fix
from kubegap_lint.fix.site import Site
from kubegap_lint.fix.writer import set_path

# kind: (the field from the finding's place, the policy's example value)
RESTART_BUDGETS = {"JobSet": ("failurePolicy.maxRestarts", 10), "RayJob": ("backoffLimit", 3),
                   "RayCronJob": ("jobTemplate.backoffLimit", 3)}  # its jobTemplate is a RayJob spec


def _kind(site: Site) -> str:
    resource = site.finding.resource
    return resource.kind if resource is not None else ""


def _field_at(site: Site, field: str) -> tuple[tuple[str | int, ...], str] | None:
    """The base path and the dotted field to set, when the finding names `field`: missing under
    its place, or its place itself."""
    finding = site.finding
    path = finding.key_path
    if finding.missing is not None:
        known = ".".join(str(p) for p in path[1:]) if path[:1] == ("spec",) else None
        full = f"{known}.{finding.missing}" if known else finding.missing
        if path[:1] == ("spec",) and full == field:
            return ("spec",), field
        return None
    dotted = ".".join(str(p) for p in path)
    if dotted == f"spec.{field}":
        return ("spec",), field
    return None


def fix_kg401(site: Site) -> Fix:
    rule = site.finding.rule_id
    budget = RESTART_BUDGETS.get(_kind(site))
    place = _field_at(site, budget[0]) if budget else None
    if budget is None or place is None:
        return Fix(rule, UNSAFE, "no edit: choose the restart budget of this kind (its policy's help says where);"
                   " bound it rather than making it unlimited")
    field, value = budget
    edit = set_path(site.yfile, site.layout, site.node(place[0]), place[1], value)
    return Fix(rule, UNSAFE, f"set spec.{field} to {value}, the policy's example: choose the bound for this job",
               (edit,), ("meta-llama3-405b-54d",))


def fix_kg404(site: Site) -> Fix:
    rule = site.finding.rule_id
    if not site.finding.message.startswith("nccl-tests run"):
        return Fix(rule, UNSAFE, "no edit: set activeDeadlineSeconds above the job's expected wall time")
    finding = site.finding
    if finding.missing is None:
        raise Unfixable("the deadline is not missing here")
    edit = set_path(site.yfile, site.layout, site.node(finding.key_path), finding.missing, 1800)
    return Fix(rule, UNSAFE, f"set {finding.missing} to 1800 s, the policy's example for nccl-tests: keep it above"
               " the run's expected time", (edit,), ("nccl-tests-hangs",))
