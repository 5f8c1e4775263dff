"""Where findings on real charts land, judged by the oracle (tests/helm_oracle/oracle.py): with
the Helm engine, every render of ../shared/charts, built-in rules and test-only policies that put
a finding on every container, env entry, mount and resources block."""

from __future__ import annotations

import importlib.util
import sys
from collections import Counter

import pytest
from conftest import REPO

sys.path.insert(0, str(REPO / "tests" / "helm_oracle"))
import oracle  # noqa: E402

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("helm_python") is None or not (oracle.CHARTS / "renders.yaml").is_file(),
    reason="needs the Helm engine (pip install -e '.[helm]') and ../shared/charts")


@pytest.fixture(scope="module")
def verdicts() -> dict[str, dict[str, Counter[str]] | None]:
    import os

    here = os.getcwd()
    os.chdir(oracle.CHARTS)
    try:
        return {render["id"]: oracle.judge(render) for render in oracle.renders()}
    finally:
        os.chdir(here)


def test_rendered_in_process_no_finding_is_wrong_while_exact(verdicts) -> None:
    wrong = {name: counts["rendered"] for name, counts in verdicts.items()
             if counts and (counts["rendered"]["built-in wrong"] or counts["rendered"]["every-node wrong"])}
    assert wrong == {}


def test_rendered_in_process_every_built_in_finding_is_on_the_line_that_wrote_it(verdicts) -> None:
    total: Counter[str] = Counter()
    for counts in verdicts.values():
        if counts:
            total.update(counts["rendered"])
    placed = total["built-in right"] + total["built-in action"]
    assert placed > 30  # the renders do give findings
    assert total["built-in approximate"] == 0 and total["built-in wrong"] == 0


def test_rendered_in_process_every_node_findings_are_on_the_right_line(verdicts) -> None:
    total: Counter[str] = Counter()
    for counts in verdicts.values():
        if counts:
            total.update(counts["rendered"])
    judged = sum(total[f"every-node {v}"] for v in ("right", "action", "approximate", "wrong"))
    assert judged > 400
    assert (total["every-node right"] + total["every-node action"]) / judged >= 0.97
    # Exact lines, not only action lines, for most: literal keys are the common case.
    assert total["every-node right"] / judged >= 0.85


def test_only_a_chart_helm_refuses_is_not_judged(verdicts) -> None:
    assert [name for name, counts in verdicts.items() if counts is None] == ["kubeflow-trainer"]


def test_piped_static_matching_never_presents_a_wrong_line_as_exact(verdicts) -> None:
    """`helm template | kubegap-lint --chart-dir`: where the marked render knows the line, a
    finding the static matching marks exact is on it (an if/else pair of items with one literal
    name, or a positional match whose literal name is another, is flagged approximate instead)."""
    wrong = {name: counts["piped"]["built-in wrong"] + counts["piped"]["every-node wrong"]
             for name, counts in verdicts.items() if counts}
    assert {name: n for name, n in wrong.items() if n} == {}
    total: Counter[str] = Counter()
    for counts in verdicts.values():
        if counts:
            total.update(counts["piped"])
    assert total["every-node right"] > 300  # the static matching still places most exactly
