"""Fixes of a serving pod's placement and drain: KG101 and KG102 (a zone spread), KG104 (a
preStop sleep and a grace period that covers the drain).

All unsafe. KG104's values are KServe's (incident `kserve-vllm-drain-2026`: a 15 s preStop
sleep and a 60 s grace period), or, when the manifest sets the engine's drain, the seconds the
finding computed from it (preStop + drain). The spread is the policy's: maxSkew 1 over
`topology.kubernetes.io/zone`, DoNotSchedule, selecting the pod template's own labels.
"""

from __future__ import annotations

import re
from typing import Any

from ruamel.yaml.nodes import MappingNode, SequenceNode

from kubegap_lint.fix.document import Unfixable, child, entries, scalar_text
from kubegap_lint.fix.model import UNSAFE, Edit, Fix
from kubegap_lint.fix.site import Site, number
from kubegap_lint.fix.writer import Verbatim, add_entries, append_item, set_path, set_scalar

PRESTOP_SECONDS = 15
GRACE_SECONDS = 60
ZONE_KEY = "topology.kubernetes.io/zone"
_NEEDS = re.compile(r"needs (\d+) s to stop")


def _grace(site: Site, pod: Any, seconds: int) -> list[Edit]:
    """terminationGracePeriodSeconds raised to `seconds` (left alone when it is that or more)."""
    grace = child(pod, "terminationGracePeriodSeconds")
    if grace is None:
        return [add_entries(site.yfile, site.layout, pod, {"terminationGracePeriodSeconds": seconds})]
    now = number(scalar_text(grace))
    if now is None:
        raise Unfixable("terminationGracePeriodSeconds is not a number")
    return [set_scalar(site.yfile, grace, seconds)] if now < seconds else []


def fix_kg104(site: Site) -> Fix:
    finding = site.finding
    rule = finding.rule_id
    pod = site.node(site.pod_spec_path())
    needs = _NEEDS.search(finding.message)
    if needs is not None:  # the engine's own drain does not fit: the grace period the finding computed
        seconds = max(int(needs.group(1)), GRACE_SECONDS)
        return Fix(rule, UNSAFE, f"set terminationGracePeriodSeconds to {seconds} (the preStop and the engine's"
                   " drain as the manifest sets them): check it covers your p99 generation time",
                   tuple(_grace(site, pod, seconds)), ("kserve-vllm-drain-2026",))
    path = finding.key_path
    if finding.missing != "lifecycle.preStop" or path[-2:-1] not in (("containers",), ("initContainers",)):
        raise Unfixable("the finding is not at a container without a preStop")
    container = site.node(path)
    edits = [set_path(site.yfile, site.layout, container, "lifecycle.preStop", {"sleep": {"seconds": PRESTOP_SECONDS}})]
    edits += _grace(site, pod, GRACE_SECONDS)
    return Fix(rule, UNSAFE, f"add a preStop sleep of {PRESTOP_SECONDS} s and a terminationGracePeriodSeconds of"
               f" {GRACE_SECONDS} (KServe's values; the sleep action needs Kubernetes 1.30 or later): size the"
               " grace period to your p99 generation time", tuple(edits), ("kserve-vllm-drain-2026",))


def _pod_labels(site: Site, pod_path: tuple[str | int, ...]) -> dict[str, Any]:
    if not pod_path or pod_path[-1] != "spec":
        raise Unfixable("no pod template around the pod spec")
    labels = child(site.node(pod_path[:-1]), "metadata")
    labels = child(labels, "labels") if labels is not None else None
    found = {name: Verbatim(site.yfile.text[v.start_mark.index:v.end_mark.index])
             for name, v in entries(labels) if scalar_text(v) is not None} if labels is not None else {}
    if not found:
        raise Unfixable("the pod template has no labels for the spread to select")
    return found


def _zone_spread(site: Site, pod_path: tuple[str | int, ...]) -> Edit:
    pod = site.node(pod_path)
    spread = {"maxSkew": 1, "topologyKey": ZONE_KEY, "whenUnsatisfiable": "DoNotSchedule",
              "labelSelector": {"matchLabels": _pod_labels(site, pod_path)}}
    listed = child(pod, "topologySpreadConstraints")
    if listed is None:
        return add_entries(site.yfile, site.layout, pod, {"topologySpreadConstraints": [spread]})
    if not isinstance(listed, SequenceNode):
        raise Unfixable("topologySpreadConstraints is not a list")
    if _has_hard(listed, ZONE_KEY):  # the API refuses two with one key and one whenUnsatisfiable
        raise Unfixable("a hard zone spread is there already: make its labelSelector select these pods")
    return append_item(site.yfile, site.layout, listed, spread)


def _has_hard(listed: Any, key: str) -> bool:
    return any(scalar_text(child(item, "topologyKey")) == key
               and scalar_text(child(item, "whenUnsatisfiable")) == "DoNotSchedule" for item in listed.value)


def _spread_fix(site: Site, pod_path: tuple[str | int, ...]) -> Fix:
    return Fix(site.finding.rule_id, UNSAFE, "add a hard zone spread (maxSkew 1, DoNotSchedule) selecting the pod's"
               " labels: add your rack or power-domain key if the cluster has one", (_zone_spread(site, pod_path),),
               site.finding.evidence)


def _pod_path(site: Site) -> tuple[str | int, ...]:
    path = site.finding.key_path
    for name in ("topologySpreadConstraints", "affinity"):
        if name in path:
            return path[:path.index(name)]
    if site.finding.missing == "topologySpreadConstraints":
        return path
    raise Unfixable("the finding is not at a pod spec")


def fix_kg101(site: Site) -> Fix:
    return _spread_fix(site, _pod_path(site))


def fix_kg102(site: Site) -> Fix:
    """Harden the soft spreads over failure domains; a soft anti-affinity gets a hard zone spread."""
    pod_path = _pod_path(site)
    listed = child(site.node(pod_path), "topologySpreadConstraints")
    keys = {*site.params.get("zone_keys", []), *site.params.get("rack_keys", []),
            *site.params.get("power_domain_keys", [])}
    edits = []
    for item in listed.value if isinstance(listed, SequenceNode) else []:
        when = child(item, "whenUnsatisfiable")
        key = scalar_text(child(item, "topologyKey"))
        if isinstance(item, MappingNode) and key in keys and scalar_text(when) == "ScheduleAnyway" \
                and when is not None and not _has_hard(listed, str(key)):
            edits.append(set_scalar(site.yfile, when, "DoNotSchedule"))
    if not edits:
        return _spread_fix(site, pod_path)
    return Fix(site.finding.rule_id, UNSAFE, "make the spread over the failure domain hard (DoNotSchedule): pods"
               " stay pending when a domain is full", tuple(edits), site.finding.evidence)
