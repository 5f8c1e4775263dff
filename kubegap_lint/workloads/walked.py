"""Pod views for the templates the table does not read: what discover.py's walk finds.

Kept apart from views.py so the builder's table path stays as it was; a walked pod is built
by the same `_pod` and differs only in where its count comes from (a sibling `replicas`, else 1)
and in `found_by: walk`.
"""

from __future__ import annotations

from typing import Any

from kubegap_lint.input.read import Resource
from kubegap_lint.workloads.discover import STRUCTURAL, walk

# `builder` is a views.ViewBuilder (not imported: views imports this module).
from kubegap_lint.workloads.kinds import TemplateRule

_AS_TEMPLATE = TemplateRule("pod", None, None, None, (), None, None, (), 1, None, False)
_AS_SPEC = TemplateRule("pod", None, None, None, None, (), None, (), 1, None, False)


def walked_pods(builder: Any, resource: Resource, table_pods: list[tuple[dict[str, Any], TemplateRule]],
                summary: dict[str, Any]) -> list[tuple[dict[str, Any], TemplateRule]]:
    found: list[tuple[dict[str, Any], TemplateRule]] = []
    for place in walk(resource.data, frozenset(builder.read_nodes)):
        rule = _AS_TEMPLATE if place.is_template else _AS_SPEC
        role = place.role
        if any(p["role"] == role for p, _ in table_pods + found):
            # Two places with one role name: the keys of the path that are not structural.
            role = ".".join(k for k in place.path.replace("[", ".[").split(".")
                            if k and k not in STRUCTURAL) or place.path
        pod = builder._pod(resource, rule, role, place.path, place.node, place.node, summary,
                           replicas=place.replicas, where=(*resource.base, *place.steps))
        if pod is not None:
            pod["found_by"] = "walk"
            found.append((pod, rule))
    return found
