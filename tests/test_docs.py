"""The committed rule reference is generated from the policies and must be current."""

from __future__ import annotations

import pytest
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


@pytest.mark.parametrize(("page", "name", "render"), [
    ("command-line.md", "lint options", "kubegap_lint.cli.reference:render_options_markdown"),
    ("writing-policies.md", "functions", "kubegap_lint.catalog.docs:render_functions_markdown"),
])
def test_generated_tables_are_current(page: str, name: str, render: str) -> None:
    import importlib

    module, function = render.split(":")
    expected = getattr(importlib.import_module(module), function)()
    from kubegap_lint.catalog.docs import generated_block

    actual = generated_block((REPO / "docs" / page).read_text(encoding="utf-8"), name)
    assert actual == expected, f"docs/{page}'s {name} table is stale: run `bash scripts/regenerate.sh`"


def test_the_options_table_lists_every_lint_option_once() -> None:
    # Every option `lint --help` shows has its row, so a new option cannot be left out of the page.
    from conftest import run_cli

    from kubegap_lint.catalog.docs import generated_block

    table = generated_block((REPO / "docs" / "command-line.md").read_text(encoding="utf-8"), "lint options") or ""
    shown = run_cli("lint", "--help").stdout.decode()
    for option in ("--format", "--fail-on", "--jobs", "--staged", "--render-timeout", "--stdin-filename"):
        assert option in shown and table.count(f"`{option}") + table.count(f", {option}") == 1, option


def test_the_function_table_names_every_custom_function() -> None:
    from kubegap_lint.catalog.docs import generated_block, render_functions_markdown
    from kubegap_lint.catalog.functions import PolicyFunctions

    table = generated_block((REPO / "docs" / "writing-policies.md").read_text(encoding="utf-8"), "functions") or ""
    custom = [name[len("_func_"):] for name in vars(PolicyFunctions) if name.startswith("_func_")]
    assert len(custom) >= 10 and table == render_functions_markdown()
    for name in custom:
        assert f"| `{name}(" in table


def test_a_generated_block_is_replaced_and_nothing_else() -> None:
    from kubegap_lint.catalog.docs import generated_block, with_generated_block

    page = ("intro\n<!-- generated: t (scripts/regenerate.py; do not edit) -->\nold\n"
            "<!-- end generated: t -->\nafter\n")
    new = with_generated_block(page, "t", "new\n")
    assert new == page.replace("old\n", "new\n") and generated_block(new, "t") == "new\n"
    assert generated_block(page, "other") is None
    with pytest.raises(ValueError):
        with_generated_block(page, "other", "x\n")
