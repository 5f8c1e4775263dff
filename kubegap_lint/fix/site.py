"""What a fix builder is given: the finding, its document, and ways to reach the pod around it."""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from typing import Any

from ruamel.yaml.nodes import MappingNode, Node, SequenceNode

from kubegap_lint.core.model import Finding
from kubegap_lint.fix.document import KeyPath, Layout, Unfixable, YamlFile, child, entries, node_at, scalar_text

CONTAINER_LISTS = ("containers", "initContainers")


@dataclass
class Site:
    """One finding in its parsed document."""

    finding: Finding
    yfile: YamlFile
    root: Node
    layout: Layout
    params: dict[str, Any]

    def node(self, path: KeyPath) -> Node:
        return node_at(self.root, path)

    def pod_spec_path(self) -> KeyPath:
        """The pod spec that holds the finding's node: the path before its last container list
        (or its volumes). A finding with no such segment has no pod spec to edit."""
        path = self.finding.key_path
        for index in range(len(path) - 1, -1, -1):
            if path[index] in (*CONTAINER_LISTS, "volumes") and (index + 1 == len(path) or isinstance(path[index + 1], int)):
                return path[:index]
        raise Unfixable("the finding is not inside a pod spec's containers")

    def containers(self) -> list[tuple[KeyPath, Node]]:
        """The containers and init containers of the finding's pod spec, with their paths."""
        pod_path = self.pod_spec_path()
        pod = self.node(pod_path)
        found: list[tuple[KeyPath, Node]] = []
        for name in CONTAINER_LISTS:
            listed = child(pod, name)
            if isinstance(listed, SequenceNode):
                found += [((*pod_path, name, i), item) for i, item in enumerate(listed.value)
                          if isinstance(item, MappingNode)]
        return found


def env_values(container: Node) -> dict[str, tuple[Node, Node | None]]:
    """A container's env entries by name: the entry's `name` node and its `value` node (None
    for valueFrom). A name given twice keeps its first entry, as the rules read it."""
    out: dict[str, tuple[Node, Node | None]] = {}
    env = child(container, "env")
    if isinstance(env, SequenceNode):
        for entry in env.value:
            name_node = child(entry, "name")
            name = scalar_text(name_node)
            if name is not None and name_node is not None and name not in out:
                out[name] = (name_node, child(entry, "value"))
    return out


def accelerators(resources: Node | None, patterns: list[str]) -> dict[str, Node]:
    """The entries of a requests or limits mapping whose resource name matches `patterns`."""
    if resources is None:
        return {}
    return {name: value for name, value in entries(resources)
            if any(fnmatch.fnmatchcase(name, pattern) for pattern in patterns)}


def number(text: str | None) -> float | None:
    try:
        return float(text.strip()) if text is not None else None
    except ValueError:
        return None
