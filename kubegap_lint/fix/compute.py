"""The fix of each finding of one file, computed on that file's text as it was linted.

A file with an input fault (a syntax error, a duplicate key, a template not rendered, an
expanding alias, an oversized document) gets no edit at all; nor does a finding in a Helm
template (the template is never edited) or one suppressed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from kubegap_lint.core.model import Finding
from kubegap_lint.fix import budget, env, flight, jobs, pod, probes, rollout, serving, workload
from kubegap_lint.fix.document import Layout, Unfixable, YamlFile
from kubegap_lint.fix.model import Fix
from kubegap_lint.fix.site import Site

NONE = "none"  # the applicability of a fix without edits: what to do, said in words

BUILDERS: dict[str, Callable[[Site], Fix]] = {
    "KG101": serving.fix_kg101,
    "KG102": serving.fix_kg102,
    "KG103": budget.fix_kg103,
    "KG104": serving.fix_kg104,
    "KG107": rollout.fix_kg107,
    "KG205": probes.fix_kg205,
    "KG301": env.fix_kg301,
    "KG302": env.fix_kg302,
    "KG303": flight.fix_flight_recorder,
    "KG304": flight.fix_flight_recorder,
    "KG305": env.fix_kg305,
    "KG306": env.fix_kg306,
    "KG307": env.fix_kg307,
    "KG401": workload.fix_kg401,
    "KG404": workload.fix_kg404,
    "KG405": jobs.fix_kg405,
    "KG406": rollout.fix_kg406,
    "KG407": jobs.fix_kg407,
    "KG501": pod.fix_kg501,
    "KG503": pod.fix_kg503,
}

# Rules whose fix only the user can choose: never an edit, the policy's snippet says what.
USER_DECIDES = {
    "KG106": "back the RayService's GCS with a highly available Redis you run, and name it in"
             " rayClusterConfig.gcsFaultToleranceOptions.redisAddress (KubeRay 1.3 or later)",
    "KG108": "choose the topology level your cluster packs into (a rack, block or NVLink-domain node label) and"
             " ask your scheduler for it (Kueue's podset-preferred-topology annotation, JobSet's or"
             " LeaderWorkerSet's exclusive-topology)",
    "KG201": "choose the storage for checkpoints (a PersistentVolumeClaim or an object store)",
    "KG402": "choose the gang scheduler (Kueue, Volcano, KAI) your cluster runs",
    "KG502": "choose the GPU model or instance type to pin",
}

# Input faults: their file is never edited.
UNTOUCHABLE = frozenset({"KG001", "KG002", "KG003", "KG004", "KG007"})

FindingKey = tuple[str, str, int, int, tuple[str | int, ...], str]


def finding_key(finding: Finding) -> FindingKey:
    """What identifies a finding across the stages (a spilled finding is a new object)."""
    loc = finding.location
    return (finding.rule_id, loc.path, loc.line, loc.column, tuple(finding.key_path), finding.message)


def _no_edit(finding: Finding, why: str) -> Fix:
    return Fix(finding.rule_id, NONE, f"no edit: {why}")


def file_fixes(text: str, findings: Iterable[Finding], params: dict[str, Any]) -> dict[FindingKey, Fix]:
    """The fix (or the reason for none) of each finding of one file's `text`."""
    findings = [f for f in findings if f.suppression is None]
    out: dict[FindingKey, Fix] = {}
    if any(f.rule_id in UNTOUCHABLE for f in findings):
        return {finding_key(f): _no_edit(f, "the file has an input fault, so it is not edited")
                for f in findings if f.rule_id in BUILDERS}
    yfile: YamlFile | None = None
    layouts: dict[int, Layout] = {}
    for finding in findings:
        rule = finding.rule_id
        if rule in USER_DECIDES:
            out[finding_key(finding)] = _no_edit(finding, USER_DECIDES[rule])
        if rule not in BUILDERS:
            continue
        if finding.template is not None:
            out[finding_key(finding)] = _no_edit(finding, f"the node comes from the Helm template {finding.template},"
                                                 " which is never edited; change the template or its values")
            continue
        try:
            if yfile is None:
                yfile = YamlFile(text)
            root = yfile.document_at(finding.location.line)
            layout = layouts.setdefault(id(root), Layout(root))
            fix = BUILDERS[rule](Site(finding, yfile, root, layout, params))
        except Unfixable as exc:
            fix = _no_edit(finding, str(exc))
        out[finding_key(finding)] = fix
    return out

