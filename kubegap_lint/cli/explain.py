"""`kubegap-lint explain RULE`: a rule's text, its evidence and its fix, for a terminal."""

from __future__ import annotations

from kubegap_lint.catalog.policies import Catalog, Policy


def explain(policy: Policy, catalog: Catalog) -> str:
    from kubegap_lint.fix.summary import describe

    lines = [f"{policy.id} {policy.name} ({policy.severity.value})", policy.title, "", policy.help, ""]
    autofix = describe(policy.id)
    if autofix:
        lines += [autofix, ""]
    if policy.evidence:
        lines.append("Evidence:")
        for incident_id in policy.evidence:
            incident = catalog.incidents[incident_id]
            label = f"{incident.library_id}, " if incident.library_id else ""
            lines.append(f"- {incident.title} ({label}{incident.organisation}, {incident.date})")
            lines.append(f"  {incident.summary}")
            for url in incident.urls:
                lines.append(f"  {url}")
        lines.append("")
    lines.append(f"Policy file: {policy.path}")
    return "\n".join(lines)
