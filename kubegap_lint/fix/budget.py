"""KG103's fix: a PodDisruptionBudget document appended to the file, selecting the workload's
pods with the policy's `maxUnavailable: 1` (a drain proceeds one replica at a time).

Unsafe: it is a new object in the cluster. Only for a workload no budget selects; a budget that
blocks every drain is changed where it is written (the fix says so).
"""

from __future__ import annotations

from ruamel.yaml.nodes import MappingNode, Node

from kubegap_lint.fix.document import Unfixable, child, entries, scalar_text
from kubegap_lint.fix.model import UNSAFE, Edit, Fix
from kubegap_lint.fix.site import Site
from kubegap_lint.fix.writer import Verbatim, block_lines


def fix_kg103(site: Site) -> Fix:
    finding = site.finding
    if not finding.message.startswith("no PodDisruptionBudget"):
        return Fix(finding.rule_id, UNSAFE, "no edit: let the budget that selects these pods allow one disruption"
                   " (maxUnavailable: 1), where it is written")
    labels = site.node(finding.key_path)
    if finding.key_path[-2:] != ("metadata", "labels") or not isinstance(labels, MappingNode):
        raise Unfixable("the finding is not at the pod template's labels")
    text = site.yfile.text
    selected = {name: Verbatim(text[v.start_mark.index:v.end_mark.index])
                for name, v in entries(labels) if scalar_text(v) is not None}
    metadata = child(site.root, "metadata")
    name = scalar_text(child(metadata, "name")) if metadata is not None else None
    if not selected or not name or "{{" in name:
        raise Unfixable("the workload has no name or its pods no labels")
    namespace = scalar_text(child(metadata, "namespace")) if metadata is not None else None
    if any(_is_budget(document, name, namespace) for document in site.yfile.documents):
        raise Unfixable(f"a PodDisruptionBudget named {name} is in the file: make it select these pods")
    meta = {"name": name, **({"namespace": namespace} if namespace else {})}
    lines = ["---", "apiVersion: policy/v1", "kind: PodDisruptionBudget"]
    lines += block_lines("metadata", meta, 0, site.layout)
    lines += block_lines("spec", {"maxUnavailable": 1, "selector": {"matchLabels": selected}}, 0, site.layout)
    newline = site.yfile.newline
    lead = "" if not text or text.endswith("\n") else newline
    edit = Edit(len(text), len(text), lead + newline.join(lines) + newline)
    return Fix(finding.rule_id, UNSAFE, f"append a PodDisruptionBudget {name} (maxUnavailable 1) selecting the pods:"
               " check that no other budget selects them", (edit,), finding.evidence)


def _is_budget(document: Node, name: str, namespace: str | None) -> bool:
    metadata = child(document, "metadata")
    return (scalar_text(child(document, "kind")) == "PodDisruptionBudget" and metadata is not None
            and scalar_text(child(metadata, "name")) == name
            and scalar_text(child(metadata, "namespace")) == namespace)
