"""The JSON report's finding writer (report/jsonfmt.finding_json) writes byte for byte what the
general writer writes of finding_dict: for generated findings and for every finding of the
examples."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kubegap_lint.core.jsonpieces import indented
from kubegap_lint.core.model import Finding, Location, ResourceRef, Severity, Suppression
from kubegap_lint.report.jsonfmt import FindingWriter, finding_dict, finding_json

REPO = Path(__file__).resolve().parent.parent


class _Incident:
    """A stand-in for a catalog incident: only the two fields the report reads."""

    def __init__(self, title: str, urls: tuple[str, ...]) -> None:
        self.title = title
        self.urls = urls


INCIDENTS = {"inc-a": _Incident("A \"quoted\" title \u00e9", ("https://a.example/1", "https://a.example/2")),
             "inc-b": _Incident("B", ())}
texts = st.text(max_size=8)
maybe = st.one_of(st.none(), texts)
numbers = st.integers(min_value=0, max_value=10**6)
locations = st.builds(Location, texts, numbers, numbers, st.one_of(st.none(), numbers),
                      st.one_of(st.none(), numbers))
extras = st.dictionaries(texts, st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False),
                                          texts, st.lists(texts, max_size=3),
                                          st.dictionaries(texts, st.integers(), max_size=2)), max_size=3)
findings = st.builds(
    Finding, rule_id=texts, rule_name=texts, severity=st.sampled_from(list(Severity)), message=texts, location=locations,
    resource=st.one_of(st.none(), st.builds(ResourceRef, texts, maybe, maybe, maybe)),
    role=maybe, container=maybe, document_index=st.one_of(st.none(), numbers), template=maybe,
    node_path=texts, evidence=st.lists(st.sampled_from(["inc-a", "inc-b", "unknown"]), max_size=3).map(tuple),
    approximate=st.booleans(), rendered_location=st.one_of(st.none(), locations),
    key_path=st.lists(st.one_of(texts, numbers), max_size=4).map(tuple), missing=maybe,
    suppression=st.one_of(st.none(), st.builds(Suppression, texts, texts)),
    extra=extras, found_by=maybe, class_from=st.one_of(st.none(), st.tuples(texts, texts)),
)


def _same(finding: Finding, incidents: dict[str, Any]) -> None:
    for newline in ("\n", "\n    "):
        assert finding_json(finding, incidents, newline) == indented(finding_dict(finding, incidents), newline)


@settings(max_examples=400, deadline=None)
@given(findings)
def test_generated_findings_are_written_as_their_dicts(finding: Finding) -> None:
    _same(finding, INCIDENTS)


def test_every_finding_of_the_examples_is_written_as_its_dict(linter_factory) -> None:
    linter = linter_factory()
    result = linter.lint_paths([str(REPO / "examples")])
    found = list(result.iter_findings())
    assert len(found) > 100 and any(f.evidence for f in found) and any(f.resource is None for f in found)
    for finding in found:
        _same(finding, result.catalog.incidents)


@settings(max_examples=100, deadline=None)
@given(st.lists(findings, max_size=6))
def test_one_writer_remembers_only_what_is_the_same(found: list[Finding]) -> None:
    # A report's writer keeps what findings of one rule and one resource share: each finding,
    # after others, is still written as its own dict.
    writer = FindingWriter(INCIDENTS)
    for finding in found + found[::-1]:
        for newline in ("\n    ", "\n"):
            assert writer.write(finding, newline) == indented(finding_dict(finding, INCIDENTS), newline)


def test_findings_that_share_one_resource_object_are_written_as_their_dicts() -> None:
    # Findings read back from one pickled batch share their resource object: the writer knows it
    # by identity, and still writes another resource (equal or not) and another indent anew.
    shared = ResourceRef("Job", "train", "ml", "batch/v1")
    refs = [shared, shared, ResourceRef("Job", "train", "ml", "batch/v1"), ResourceRef("Job", "eval", "ml", "batch/v1"),
            shared, ResourceRef("Job", "train", None, "batch/v1"), shared]
    writer = FindingWriter(INCIDENTS)
    for number, ref in enumerate(refs):
        finding = Finding(rule_id="KG201", rule_name="training-checkpoint-volume", severity=Severity.ERROR,
                          message=f"m{number}", location=Location("a.yaml", number + 1, 3), resource=ref,
                          approximate=number % 2 == 0)
        for newline in ("\n    ", "\n", "\n    "):
            assert writer.write(finding, newline) == indented(finding_dict(finding, INCIDENTS), newline)


def test_one_writer_writes_the_examples_report(linter_factory) -> None:
    linter = linter_factory()
    result = linter.lint_paths([str(REPO / "examples")])
    writer = FindingWriter(result.catalog.incidents)
    found = list(result.iter_findings())
    assert len({f.rule_id for f in found}) > 10
    for finding in found:
        assert writer.write(finding, "\n    ") == indented(finding_dict(finding, result.catalog.incidents), "\n    ")
