"""Where findings on real charts land, judged by the oracle (tests/helm_oracle/oracle.py): with
the Helm engine, every render of ../shared/charts, built-in rules and test-only policies that put
a finding on every container, env entry, mount and resources block."""

from __future__ import annotations

import functools
import importlib.util
import sys
from collections import Counter

import pytest
from conftest import REPO, requires_shared

sys.path.insert(0, str(REPO / "tests" / "helm_oracle"))
import oracle  # noqa: E402

pytestmark = [pytest.mark.slow, requires_shared, pytest.mark.skipif(importlib.util.find_spec("helm_python") is None,
                                                  reason="needs the Helm engine (pip install -e '.[helm]')")]


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
    placed = total["built-in right"] + total["built-in values"] + total["built-in action"]
    assert placed > 30  # the renders do give findings
    assert total["built-in approximate"] == 0 and total["built-in wrong"] == 0
    # toYaml content is on its values line where the values prove it, not on the action (one
    # stays there: gke-ai-inference-tp2's GPU request, which --set gives: no file line holds it)
    assert total["built-in values"] >= 3 and total["built-in action"] <= 1


def test_rendered_in_process_every_node_findings_are_on_the_right_line(verdicts) -> None:
    """The issue's figure: at least 97% of the every-node findings on an exact line (the
    template line that writes the key, or for toYaml content the values line that gives it);
    the rest on the action line that wrote them, flagged. Findings inside an archived subchart
    (charts/*.tgz: no repository file holds their templates) are counted apart."""
    total: Counter[str] = Counter()
    for counts in verdicts.values():
        if counts:
            total.update(counts["rendered"])
    judged = sum(total[f"every-node {v}"] for v in ("right", "values", "action", "approximate", "wrong"))
    assert judged > 500
    exact = total["every-node right"] + total["every-node values"]
    assert exact / judged >= 0.97
    assert total["every-node values"] > 50  # the gpu-recipes envs, nim-llm env, kuberay mounts
    assert total["every-node approximate"] == 0 and total["every-node wrong"] == 0
    assert total["every-node archived"] == 28  # kaito's charts/*.tgz subcharts


def test_every_shared_render_is_judged(verdicts) -> None:
    """kubeflow-trainer, whose subcharts are not in charts/ (helm template refuses it), renders
    without them (its values disable both)."""
    assert [name for name, counts in verdicts.items() if counts is None] == []
    assert verdicts["kubeflow-trainer"] is not None


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
    assert total["every-node right"] > 450  # the static matching places most exactly (406 before if/else, range, names)


@functools.cache
def _piped(render_id: str) -> dict[tuple[str, str], list[tuple[str, int, bool]]]:
    """`helm template | kubegap-lint --chart-dir CHART` (no marked render: the static matching)
    on one render, with the every-node policies: (rule, rendered line) -> (template, line,
    approximate) of each finding."""
    import os

    from kubegap_lint.catalog.policies import load_catalog
    from kubegap_lint.config.settings import Settings
    from kubegap_lint.engine.run import Linter
    from kubegap_lint.helm.render import RenderOptions
    from kubegap_lint.helm.sdk import render as render_chart

    render = next(r for r in oracle.renders() if r["id"] == render_id)
    here = os.getcwd()
    os.chdir(oracle.CHARTS)
    try:
        options = RenderOptions(values=list(render["values_files"]), sets=list(render["set"]),
                                set_files=list(render["set_file"]), release=render["release"],
                                namespace=render["namespace"])
        text = render_chart(render["chart"], options)
        catalog = load_catalog([oracle.POLICIES])
        settings = Settings(policy_dirs=[str(oracle.POLICIES)], select=list(oracle.EVERY_NODE),
                            chart_dirs=[render["chart"]])
        findings = Linter(settings, catalog=catalog).lint_texts([("rendered.yaml", text)]).findings
    finally:
        os.chdir(here)
    lines = text.split("\n")
    out: dict[tuple[str, str], list[tuple[str, int, bool]]] = {}
    for f in findings:
        shown = lines[f.rendered_location.line - 1].strip()
        out.setdefault((f.rule_id, shown), []).append((f.location.path.rsplit("/", 1)[-1], f.location.line, f.approximate))
    return out


def test_piped_the_rendered_value_picks_the_if_else_branch() -> None:
    """gpu-recipes jobset writes NCCL_PLUGIN_PATH in both branches of an `if`/`else`; the
    noplugin render takes the `else`, whose value (/usr/local/nvidia/lib64) is in the render."""
    assert _piped("gr-a3mega-jobset-noplugin")[("KG992", "- name: NCCL_PLUGIN_PATH")] == [
        ("workload-jobset.yaml", 383, False)]
    assert _piped("gr-a3mega-jobset-llama70b")[("KG992", "- name: NCCL_PLUGIN_PATH")] == [
        ("workload-jobset.yaml", 376, False)]
    sglang = _piped("gr-a3mega-sglang")  # useHostPlugin false: the else branch, in leader and worker
    assert sglang[("KG992", "- name: LD_LIBRARY_PATH")] == [  # 163 and 491: a sidecar's, literal
        ("lws-deployment.yaml", 163, False), ("lws-deployment.yaml", 219, False),
        ("lws-deployment.yaml", 491, False), ("lws-deployment.yaml", 547, False)]


def test_piped_items_with_templated_names_and_a_range_of_documents() -> None:
    sglang = _piped("gr-a3mega-sglang")
    # `- name: {{ $environment_variable.name }}` in a range over ncclSettings
    assert sglang[("KG992", "- name: NCCL_DEBUG")] == [
        ("lws-deployment.yaml", 290, False), ("lws-deployment.yaml", 618, False)]
    # triton: one template, a range that emits a leader and seven workers from two sections
    triton = _piped("triton-trtllm-multinode")
    assert triton[("KG991", "- name: triton")] == [("deployment.yaml", 137, False)]
    for worker in range(1, 8):
        assert triton[("KG991", f"- name: worker-{worker}")] == [("deployment.yaml", 297, False)]
    resources = [place for place in triton[("KG994", "resources:")] if place[0] == "deployment.yaml"]
    assert resources == [("deployment.yaml", 199, False)] + [("deployment.yaml", 317, False)] * 7


def test_piped_toyaml_content_is_on_the_charts_values_line() -> None:
    """A piped stream names no values files; where the chart's values.yaml holds what toYaml
    wrote (nim-llm's env), the finding is on that line."""
    assert _piped("nim-llm")[("KG992", "- name: LD_LIBRARY_PATH")] == [("values.yaml", 29, False)]
    # the gpu2 render's env comes from its -f file, which the stream does not name: the action line
    assert _piped("nim-llm-gpu2")[("KG992", "- name: NCCL_DEBUG")] == [("deployment.yaml", 174, True)]



def _placed(chart: str, text: str, table: object) -> list[tuple[object, ...]]:
    """Every finding of a render (built-in rules and the every-node policies) with its place,
    mapped with the given table of marked places."""
    from kubegap_lint.catalog.policies import load_catalog
    from kubegap_lint.config.settings import Settings
    from kubegap_lint.engine.run import Linter

    catalog = load_catalog([oracle.POLICIES])
    builtin = [p.id for p in catalog.policies if p.id not in oracle.EVERY_NODE and p.scope == "workload"]
    settings = Settings(policy_dirs=[str(oracle.POLICIES)], select=[*builtin, *oracle.EVERY_NODE], chart_dirs=[chart])
    linter = Linter(settings, catalog=catalog)
    shown = f"<helm template {chart}>"
    linter.template_places = {shown: table}  # type: ignore[dict-item]
    findings = linter.lint_texts([(shown, text)]).findings
    return sorted(((f.rule_id, f.rendered_location, f.node_path, f.role or "", f.container or "", f.location,
                    f.approximate, f.message) for f in findings), key=repr)


def test_the_marked_render_made_only_when_needed_places_every_finding_as_made_first() -> None:
    """On every shared render: the same findings at the same places (path, line, column,
    approximate, message) whether the marked render is made first or only when the static
    matching cannot place a finding exactly (helm/marked.py later_exact_lines); and most
    renders need none."""
    import os

    from kubegap_lint.helm.marked import later_exact_lines
    from kubegap_lint.helm.sdk import render as render_chart

    here = os.getcwd()
    os.chdir(oracle.CHARTS)
    try:
        needed = []
        for render in oracle.renders():
            options, chart = oracle.options_of(render), render["chart"]
            text = render_chart(chart, options)  # once: some charts draw random names
            eager = _placed(chart, text, later_exact_lines(chart, options, text).complete())
            lazy = later_exact_lines(chart, options, text)
            assert _placed(chart, text, lazy) == eager, render["id"]
            assert len(eager) > 0, render["id"]
            needed += [] if lazy.pending else [render["id"]]
    finally:
        os.chdir(here)
    assert len(needed) <= 12, needed  # with the every-node policies; with the built-in rules alone, 4 of 24
