"""The rules as data for clients: the list, one rule explained, and the link to its docs (the
same URL SARIF's helpUri gives, so every tool sends a user to one place)."""

from __future__ import annotations

from typing import Any

from kubegap_lint.catalog.policies import Catalog, Policy


def docs_url(policy: Policy) -> str | None:
    from kubegap_lint.report.sarif import rule_help_uri

    return rule_help_uri(policy)


def rule_summary(policy: Policy) -> dict[str, Any]:
    return {"id": policy.id, "name": policy.name, "severity": policy.severity.value, "title": policy.title,
            "enabled_by_default": policy.enabled, "docs_url": docs_url(policy)}


def rule_details(policy: Policy, catalog: Catalog) -> dict[str, Any]:
    evidence = []
    for incident_id in policy.evidence:
        incident = catalog.incidents.get(incident_id)
        if incident is not None:
            evidence.append({"id": incident.id, "title": incident.title, "organisation": incident.organisation,
                             "date": str(incident.date), "summary": incident.summary, "urls": list(incident.urls)})
    return {**rule_summary(policy), "help": policy.help, "evidence": evidence}


def catalog_at(root: str) -> Catalog:
    """The built-in rules and the policy folders of the configuration found at `root`, as
    `kubegap-lint rules` run there lists them."""
    from kubegap_lint.catalog.policies import load_catalog
    from kubegap_lint.config.load import resolve

    return load_catalog(resolve((root,), None, False).settings.policy_dirs)
