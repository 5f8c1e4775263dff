"""The marked render (helm/marked.py) is made only when a finding needs it: the static matching
(template_lines.py) places most findings exactly, and where it does it gives the marked render's
place. The output is the same as with the marked render made first; only its cost goes.

The CLI tests render real charts of ../shared/charts with the real Helm engine; no stand-in.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from conftest import CHARTS, EXAMPLES, requires_shared, run_cli

from kubegap_lint.cli.entry import _wants_engine
from kubegap_lint.engine import parallel
from kubegap_lint.helm import marked
from kubegap_lint.helm.marked import Place, PlaceTable
from kubegap_lint.input.sources import discover

needs_engine = pytest.mark.skipif(importlib.util.find_spec("helm_python") is None,
                                  reason="needs the Helm engine (pip install -e '.[helm]')")
NIM = ("aws-samples__awsome-inference/2.projects/nims-inference/nim-deploy/helm/nim-llm",
       "-f", "renders-values/nim-llm.yaml")
NIM_GPU2 = ("aws-samples__awsome-inference/2.projects/nims-inference/nim-deploy/helm/nim-llm",
            "-f", "renders-values/nim-llm-gpu2.yaml")


def _helm(chart: tuple[str, ...], monkeypatch, eager: bool) -> tuple[int, bytes, int]:
    """(exit code, JSON report, marked renders made) of `kubegap-lint helm` on a shared chart;
    `eager`: the marked render made before the lint, as before the mapping asked for it."""
    made: list[str] = []
    exact_lines = marked.exact_lines

    def counted(*args, **kwargs):
        made.append(args[0])
        return exact_lines(*args, **kwargs)

    monkeypatch.setattr(marked, "exact_lines", counted)
    if eager:
        later = marked.later_exact_lines
        monkeypatch.setattr(marked, "later_exact_lines", lambda *args: later(*args).complete())
    proc = run_cli("helm", *chart, "--release", "demo", "-n", "ml", "--no-config", "--format", "json", cwd=CHARTS)
    monkeypatch.undo()
    return proc.returncode, proc.stdout, len(made)


@requires_shared
@needs_engine
def test_findings_placed_exactly_without_the_marked_render_are_where_it_puts_them(monkeypatch) -> None:
    code, lazy, made = _helm(NIM, monkeypatch, eager=False)
    assert code == 1 and made == 0  # nim-llm's findings: each on a literal template line
    assert _helm(NIM, monkeypatch, eager=True) == (code, lazy, 1)


@requires_shared
@needs_engine
def test_a_finding_the_static_matching_cannot_place_exactly_makes_the_marked_render(monkeypatch) -> None:
    code, lazy, made = _helm(NIM_GPU2, monkeypatch, eager=False)
    assert code == 1 and made == 1  # content `toYaml` wrote: the marked render tells its line
    assert b'"approximate": true' not in lazy  # every finding placed exactly, as eagerly
    assert _helm(NIM_GPU2, monkeypatch, eager=True) == (code, lazy, 1)


def test_a_pending_table_renders_once_and_gives_its_places_and_values_nodes() -> None:
    calls: list[int] = []

    def made() -> PlaceTable:
        calls.append(1)
        table = PlaceTable("text")
        table[3] = Place("t.yaml", 7, 1, False)
        table.values_nodes[0, ("spec",)] = ("values.yaml", ("resources",))
        return table

    table = PlaceTable("text", made)
    assert table.pending and not table and calls == []
    assert table.values_nodes == {(0, ("spec",)): ("values.yaml", ("resources",))}  # a fix asks: made
    assert not table.pending and table[3].line == 7
    assert table.complete() is table and table.values_nodes and calls == [1]


def test_pending_marked_renders_are_made_before_the_workers_fork(linter_factory, monkeypatch) -> None:
    """A forked worker must not speak to the Helm engine's process over the parent's pipes."""
    monkeypatch.setattr(parallel, "MIN_PARALLEL_BYTES", 0)
    linter = linter_factory()
    calls: list[int] = []
    linter.template_places = {"<helm template x>": PlaceTable("", lambda: calls.append(1) or PlaceTable(""))}
    sources, errors = discover([str(EXAMPLES)])
    parallel.lint_sources(linter, sources, errors, jobs=2)
    assert calls == [1]  # in this process, once


@pytest.mark.parametrize(("args", "wanted"), [
    (["helm", "chart"], True),
    (["helm", "--from-files", "a/values.yaml"], True),
    (["helm", "chart", "--helm", "/usr/bin/helm"], False),
    (["helm", "chart", "--helm=helm"], False),
    (["helm", "--help"], False),
    (["lint", "helm"], False),
    (["chart"], False),
    ([], False),
])
def test_the_engine_starts_first_only_for_an_in_process_helm_command(args: list[str], wanted: bool) -> None:
    assert _wants_engine(args) is wanted


def test_the_entry_point_is_the_one_that_starts_the_engine_first() -> None:
    pyproject = (Path(__file__).resolve().parents[1] / "pyproject.toml").read_text(encoding="utf-8")
    assert 'kubegap-lint = "kubegap_lint.cli.entry:main"' in pyproject
