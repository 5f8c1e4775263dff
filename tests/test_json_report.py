"""The JSON report's findings: each written as its finding_dict, fields in a fixed order."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kubegap_lint.core.jsonpieces import json_with_lists
from kubegap_lint.core.model import Finding, Location, ResourceRef, Severity, Suppression
from kubegap_lint.report.jsonfmt import _finding_writer, finding_dict

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


def _report(found: list[Finding], incidents: dict[str, Any]) -> dict[str, Any]:
    """The JSON report's findings list as the report writes it, parsed back."""
    pieces = json_with_lists({}, {"findings": iter(found)}, {"findings": _finding_writer(incidents, None)})
    text = "".join(pieces)
    assert text.isascii()
    return json.loads(text)["findings"]  # type: ignore[no-any-return]


@settings(max_examples=200, deadline=None)
@given(st.lists(findings, max_size=4))
def test_generated_findings_read_back_as_their_dicts(found: list[Finding]) -> None:
    # Every field survives the writer (escapes, non-ASCII text, nulls, nested extras).
    assert _report(found, INCIDENTS) == [finding_dict(f, INCIDENTS) for f in found]


def test_a_finding_is_written_with_its_fields_in_the_documented_order(linter_factory) -> None:
    result = linter_factory().lint_paths([str(REPO / "examples" / "KG201-training-checkpoint-volume")])
    written = _report(list(result.iter_findings()), result.catalog.incidents)
    assert written, "the example has findings"
    assert list(written[0]) == ["rule", "name", "severity", "message", "location", "resource", "role",
                                "container", "document", "template", "rendered_location", "approximate",
                                "fingerprint", "evidence", "suppressed", "found_by"]
    assert list(written[0]["location"]) == ["path", "line", "column", "end_line", "end_column",
                                            "path_in_document", "missing"]
    assert list(written[0]["evidence"][0]) == ["id", "title", "urls"]
