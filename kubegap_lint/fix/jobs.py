"""Fixes of a Job spec's failure handling: KG405 (disruptions ignored) and KG407 (a pod
replaced only once it has failed).

KG407 writes `podReplacementPolicy: Failed`, the one other value of the field (k8s
`k8s-pod-replacement-policy`), so it is safe. KG405 adds the Kubernetes documentation's rule,
`action: Ignore` on the pod condition `DisruptionTarget` (`k8s-job-pod-failure-policy`): safe
as a new `podFailurePolicy`; unsafe when it joins rules the user wrote (the first matching rule
wins, so where it goes is the user's call) or when it has to turn a written
`podReplacementPolicy` to `Failed` (the only value the API allows beside a podFailurePolicy).
"""

from __future__ import annotations

from ruamel.yaml.nodes import MappingNode, SequenceNode

from kubegap_lint.fix.document import KeyPath, Unfixable, child, scalar_text
from kubegap_lint.fix.model import SAFE, UNSAFE, Edit, Fix
from kubegap_lint.fix.site import Site
from kubegap_lint.fix.writer import add_entries, append_item, set_path

REPLACE_WHEN = "Failed"
# "True" is the condition status the API defaults to; the 1.33 OpenAPI schema still lists the
# field as required, so it is written out.
IGNORE_DISRUPTIONS = {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}]}


def _job_spec_path(site: Site, field: str) -> KeyPath:
    """The Job spec that the finding names: the finding's place when `field` is missing under
    it, else the place before `field`."""
    finding = site.finding
    path = finding.key_path
    if finding.missing == field:
        return path
    if path[-1:] == (field,) and finding.missing is None:
        return path[:-1]
    raise Unfixable(f"the finding is not at a Job spec's {field}")


def fix_kg407(site: Site) -> Fix:
    spec = site.node(_job_spec_path(site, "podReplacementPolicy"))
    edit = set_path(site.yfile, site.layout, spec, "podReplacementPolicy", REPLACE_WHEN)
    return Fix(site.finding.rule_id, SAFE, "set podReplacementPolicy to Failed: a pod is replaced once it has"
               " stopped (the field is GA in Kubernetes 1.34, beta and on by default since 1.29)", (edit,),
               ("k8s-pod-replacement-policy",))


def fix_kg405(site: Site) -> Fix:
    spec = site.node(_job_spec_path(site, "podFailurePolicy"))
    if not isinstance(spec, MappingNode):
        raise Unfixable("the Job spec is not a mapping")
    policy = child(spec, "podFailurePolicy")
    applicability = SAFE
    what = "add a podFailurePolicy whose rule ignores pods failed by a disruption (DisruptionTarget)"
    if policy is None:
        edits = [add_entries(site.yfile, site.layout, spec, {"podFailurePolicy": {"rules": [IGNORE_DISRUPTIONS]}})]
    else:
        edits = [_append_rule(site, policy)]
        applicability = UNSAFE
        what = ("append a rule ignoring DisruptionTarget to the podFailurePolicy: the first matching rule wins, so"
                " move it before any rule that a disrupted pod's exit code would match")
    replacement = child(spec, "podReplacementPolicy")
    if replacement is not None and scalar_text(replacement) != REPLACE_WHEN:
        edits.append(set_path(site.yfile, site.layout, spec, "podReplacementPolicy", REPLACE_WHEN))
        applicability = UNSAFE
        what += "; podReplacementPolicy set to Failed, the only value the API allows with a podFailurePolicy"
    return Fix(site.finding.rule_id, applicability, what, tuple(edits), ("k8s-job-pod-failure-policy",))


def _append_rule(site: Site, policy: object) -> Edit:
    rules = child(policy, "rules") if isinstance(policy, MappingNode) else None
    if isinstance(rules, SequenceNode):
        return append_item(site.yfile, site.layout, rules, IGNORE_DISRUPTIONS)
    if rules is None and isinstance(policy, MappingNode):
        return add_entries(site.yfile, site.layout, policy, {"rules": [IGNORE_DISRUPTIONS]})
    raise Unfixable("podFailurePolicy.rules is not a list")
