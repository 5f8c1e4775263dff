"""The generic walk as a pod source: the pod templates the other sources did not read, as
discover.py's walk finds them. A walked pod counts a sibling `replicas` (else 1) and says
`found_by: walk`.
"""

from __future__ import annotations

from typing import Any

from kubegap_lint.input.read import Resource
from kubegap_lint.workloads.discover import STRUCTURAL, walk
from kubegap_lint.workloads.kinds import TemplateRule
from kubegap_lint.workloads.records import Pod, pod_record

_AS_TEMPLATE = TemplateRule("pod", None, None, None, (), None, None, (), 1, None, False)
_AS_SPEC = TemplateRule("pod", None, None, None, None, (), None, (), 1, None, False)


def walked_pods(resource: Resource, read: list[Pod], skip: list[Any]) -> list[Pod]:
    """The pods of `resource` that neither `read` (the pods other sources found) nor the nodes
    of `skip` hold."""
    seen = {id(node) for node in skip}
    seen.update(id(node) for pod in read for node in (pod.node, pod.spec))
    found: list[Pod] = []
    for place in walk(resource.data, frozenset(seen)):
        role = place.role
        if any(p.role == role for p in read + found):
            # Two places with one role name: the keys of the path that are not structural.
            role = ".".join(k for k in place.path.replace("[", ".[").split(".")
                            if k and k not in STRUCTURAL) or place.path
        pod = pod_record(_AS_TEMPLATE if place.is_template else _AS_SPEC, role, place.path, place.node,
                         (*resource.base, *place.steps), replicas=place.replicas, found_by="walk")
        if pod is not None:
            found.append(pod)
    return found
