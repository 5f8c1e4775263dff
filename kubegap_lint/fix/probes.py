"""KG205's fix: a startup window long enough for the model to load.

A container with only a liveness probe gets a `startupProbe` with the same handler, checked
every 10 s and allowed `model_load_seconds / 10` failures (KServe's fix after kserve#5062:
`periodSeconds: 10`, `failureThreshold: 60` for the parameter's 600 s; evidence
`kserve-liveness-kills-model-load`); a startup probe too short gets the failureThreshold that
makes its window reach the parameter. Unsafe: the window is a choice (a model that loads in
30 minutes needs more; a server that hangs while loading is found later).
"""

from __future__ import annotations

import math
from typing import Any

from ruamel.yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from kubegap_lint.fix.document import Unfixable, child, scalar_text
from kubegap_lint.fix.model import UNSAFE, Fix
from kubegap_lint.fix.site import Site, number
from kubegap_lint.fix.writer import Verbatim, add_entries, set_path

PERIOD_SECONDS = 10  # KServe's startup probe period, and Kubernetes' default
HANDLERS = ("httpGet", "tcpSocket", "exec", "grpc")
EVIDENCE = ("kserve-liveness-kills-model-load",)


def _copy(yfile_text: str, node: Node) -> Any:
    """A node as values to write again: a one-line node as its own text, a block one entry by
    entry (so that it takes the new place's indentation)."""
    text = yfile_text[node.start_mark.index:node.end_mark.index]
    if isinstance(node, ScalarNode) or (getattr(node, "flow_style", False) and "\n" not in text):
        if "\n" in text or (isinstance(node, ScalarNode) and node.style not in (None, '"', "'")):
            raise Unfixable("the probe's handler has a multi-line value")
        return Verbatim(text)
    if isinstance(node, MappingNode):
        out = {}
        for key, value in node.value:
            if not isinstance(key, ScalarNode):
                raise Unfixable("the probe's handler has a complex key")
            out[key.value] = _copy(yfile_text, value)
        return out
    if isinstance(node, SequenceNode):
        return [_copy(yfile_text, item) for item in node.value]
    raise Unfixable("the probe's handler is not plain YAML")


def _seconds(probe: Node, key: str, default: int) -> int:
    found = child(probe, key)
    value = number(scalar_text(found)) if found is not None else default
    if value is None or value != int(value):
        raise Unfixable(f"the probe's {key} is not a whole number")
    return int(value)


def fix_kg205(site: Site) -> Fix:
    finding = site.finding
    rule = finding.rule_id
    load = site.params.get("model_load_seconds")
    path = finding.key_path
    if not isinstance(load, int) or isinstance(load, bool) or load <= 0:
        raise Unfixable("no model_load_seconds parameter")
    if path[-1:] == ("startupProbe",):
        probe = site.node(path)
        delay, period = _seconds(probe, "initialDelaySeconds", 0), _seconds(probe, "periodSeconds", PERIOD_SECONDS)
        if period <= 0:
            raise Unfixable("the startup probe's periodSeconds is not positive")
        failures = max(1, math.ceil((load - delay) / period))
        edit = set_path(site.yfile, site.layout, probe, "failureThreshold", failures)
        return Fix(rule, UNSAFE, f"set the startup probe's failureThreshold to {failures}, a window of"
                   f" {delay + failures * period} s (model_load_seconds {load}, KServe's window): size it to your"
                   " largest model's load time", (edit,), EVIDENCE)
    if path[-1:] != ("livenessProbe",):
        raise Unfixable("the finding is not at a container's probe")
    container = site.node(path[:-1])
    liveness = site.node(path)
    if child(container, "startupProbe") is not None:
        raise Unfixable("the container has an empty startupProbe: fill it in")
    handler = next(((name, node) for name in HANDLERS if (node := child(liveness, name)) is not None), None)
    if handler is None:
        return Fix(rule, UNSAFE, "no edit: the liveness probe has no handler to copy; add a startupProbe that"
                   f" checks the server every {PERIOD_SECONDS} s for model_load_seconds ({load} s)")
    failures = math.ceil(load / PERIOD_SECONDS)
    startup = {handler[0]: _copy(site.yfile.text, handler[1]), "periodSeconds": PERIOD_SECONDS,
             "failureThreshold": failures}
    edit = add_entries(site.yfile, site.layout, container, {"startupProbe": startup})
    return Fix(rule, UNSAFE, f"add a startupProbe with the liveness probe's {handler[0]}, every {PERIOD_SECONDS} s,"
               f" failureThreshold {failures} ({failures * PERIOD_SECONDS} s to load: model_load_seconds, KServe's"
               " window): size it to your largest model's load time", (edit,), EVIDENCE)
