"""Fixes of how a GPU server is rolled and restarted: KG107 (a rollout that stops every replica)
and KG406 (a LeaderWorkerSet group restarted one pod at a time).

KG406 is safe: `RecreateGroupOnPodRestart` is LeaderWorkerSet's default and the field's one
other value (`lws-restart-policy`), and the policy's fix; no number is chosen. KG107 is unsafe:
one replica at a time without a surge (`maxSurge: 0`, `maxUnavailable: 1`, the policy's fix and
LeaderWorkerSet's default, `k8s-rollout-strategies`) is a pace the user may want faster.
"""

from __future__ import annotations

from kubegap_lint.fix.document import Unfixable, child
from kubegap_lint.fix.model import SAFE, UNSAFE, Fix
from kubegap_lint.fix.site import Site
from kubegap_lint.fix.writer import add_entries, set_scalar

RECREATE_GROUP = "RecreateGroupOnPodRestart"


def fix_kg406(site: Site) -> Fix:
    path = site.finding.key_path
    if path[-1:] != ("restartPolicy",) or site.finding.missing is not None:
        raise Unfixable("the finding is not at leaderWorkerTemplate.restartPolicy")
    edit = set_scalar(site.yfile, site.node(path), RECREATE_GROUP)
    return Fix(site.finding.rule_id, SAFE, f"set restartPolicy to {RECREATE_GROUP}, LeaderWorkerSet's default: a"
               " restart recreates the whole group, which starts together (no value is chosen: it is the"
               " field's only other value)", (edit,), ("lws-restart-policy",))


def fix_kg107(site: Site) -> Fix:
    path = site.finding.key_path
    rule = site.finding.rule_id
    if site.finding.missing is not None:
        raise Unfixable("the finding is not at the rollout's field")
    if path[-2:] == ("strategy", "type"):
        strategy = site.node(path[:-1])
        if child(strategy, "rollingUpdate") is not None:
            raise Unfixable("a rollingUpdate is written beside Recreate: remove it, then choose the pace")
        edits = (set_scalar(site.yfile, site.node(path), "RollingUpdate"),
                 add_entries(site.yfile, site.layout, strategy, {"rollingUpdate": {"maxSurge": 0, "maxUnavailable": 1}}))
        return Fix(rule, UNSAFE, "roll one replica at a time without a spare GPU (type RollingUpdate, maxSurge 0,"
                   " maxUnavailable 1, the policy's fix): raise maxUnavailable if a faster rollout may drop more"
                   " replicas", edits, ("k8s-rollout-strategies",))
    if path[-1:] == ("maxUnavailable",):
        edit = set_scalar(site.yfile, site.node(path), 1)
        return Fix(rule, UNSAFE, "set maxUnavailable to 1 (one replica or group at a time, the policy's fix): choose"
                   " a larger number below the replica count for a faster rollout", (edit,), ("k8s-rollout-strategies",))
    raise Unfixable("the finding is not at a strategy's type or maxUnavailable")
