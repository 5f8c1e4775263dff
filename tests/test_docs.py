"""The committed rule reference is generated from the policies and must be current."""

from __future__ import annotations

from conftest import EXAMPLES, REPO


def test_rules_reference_is_current() -> None:
    from kubegap_lint.catalog.docs import render_rules_markdown
    from kubegap_lint.catalog.policies import load_catalog

    expected = render_rules_markdown(load_catalog(), EXAMPLES)
    actual = (REPO / "docs" / "rules.md").read_text(encoding="utf-8")
    assert actual == expected, "docs/rules.md is stale: run `bash scripts/regenerate.sh`"


def test_every_rule_and_cited_incident_has_a_section() -> None:
    from kubegap_lint.catalog.docs import anchor
    from kubegap_lint.catalog.policies import load_catalog

    catalog = load_catalog()
    text = (REPO / "docs" / "rules.md").read_text(encoding="utf-8")
    for policy in catalog.policies:
        assert f"## {policy.id} {policy.name}" in text
        assert f"(#{anchor(policy)})" in text
        for incident in policy.evidence:
            assert f"### {incident}" in text
