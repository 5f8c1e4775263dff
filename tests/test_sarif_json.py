"""The SARIF serialiser: it writes exactly what was set, defaults included, under 2.1.0 names."""

from __future__ import annotations

import json
from typing import Any

import attr
import pytest
import sarif_om
from conftest import requires_shared
from hypothesis import given, settings
from hypothesis import strategies as st
from sarif_checks import SCHEMA

from kubegap_lint.report.sarif_json import dumps, sarif, to_data


def test_values_equal_to_schema_defaults_are_kept() -> None:
    # jschema-to-python's to_json drops these three: each equals its schema default.
    rule = sarif(sarif_om.ReportingDescriptor, id="KG501",
                 default_configuration=sarif(sarif_om.ReportingConfiguration, level="warning"))
    result = sarif(sarif_om.Result, rule_id="KG501", rule_index=0, level="warning", kind="fail",
                   message=sarif(sarif_om.Message, text="m"))
    assert to_data(rule) == {"id": "KG501", "defaultConfiguration": {"level": "warning"}}
    assert to_data(result) == {"ruleId": "KG501", "ruleIndex": 0, "level": "warning", "kind": "fail",
                               "message": {"text": "m"}}


def test_unset_fields_are_left_out_whatever_sarif_om_defaults_them_to() -> None:
    # sarif-om defaults ruleIndex and rank to -1, kind to "fail", Run.language to "en-US", ...
    result = sarif(sarif_om.Result, message=sarif(sarif_om.Message, text="m"))
    run = sarif(sarif_om.Run, tool=sarif(sarif_om.Tool, driver=sarif(sarif_om.ToolComponent, name="t")))
    region = sarif(sarif_om.Region, start_line=3)
    assert to_data(result) == {"message": {"text": "m"}}
    assert to_data(run) == {"tool": {"driver": {"name": "t"}}}
    assert to_data(region) == {"startLine": 3}


def test_fields_keep_the_order_they_were_given_in_and_none_means_absent() -> None:
    loc = sarif(sarif_om.ArtifactLocation, uri_base_id="%SRCROOT%", uri="a.yaml", description=None)
    assert list(to_data(loc)) == ["uriBaseId", "uri"]


def test_property_bags_are_plain_dicts_and_keep_their_keys() -> None:
    rule = sarif(sarif_om.ReportingDescriptor, id="KG1",
                 properties={"tags": ["gpu"], "security-severity": "7.5", "problem.severity": "error",
                             "unset": None})
    assert to_data(rule)["properties"] == {"tags": ["gpu"], "security-severity": "7.5", "problem.severity": "error"}


def test_suppression_status_uses_the_final_2_1_0_name() -> None:
    # sarif-om 1.0.4 comes from the rtm.4 pre-release, which called suppression.status "state".
    suppression = sarif(sarif_om.Suppression, kind="inSource", state="accepted", justification="why")
    assert to_data(suppression) == {"kind": "inSource", "status": "accepted", "justification": "why"}


def test_objects_not_built_with_sarif_are_refused() -> None:
    with pytest.raises(TypeError, match="sarif\\(\\)"):
        to_data(sarif_om.Message(text="m"))
    with pytest.raises(TypeError):
        to_data({"x": object()})


def test_output_is_ascii_json_without_lone_surrogates() -> None:
    message = sarif(sarif_om.Message, text="caf\u00e9 \ud800 \u2603")
    text = dumps(message)
    assert text.isascii() and text.endswith("\n")
    assert json.loads(text) == {"text": "caf\u00e9 \ufffd \u2603"}


@requires_shared
def test_every_sarif_om_property_name_exists_in_the_final_schema() -> None:
    """The serialiser writes sarif-om's JSON names; they must be the 2.1.0 names (after renames)."""
    from kubegap_lint.report.sarif_json import _json_name

    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    definitions = schema["definitions"]
    checked = 0
    for name in dir(sarif_om):
        cls = getattr(sarif_om, name)
        if not (isinstance(cls, type) and attr.has(cls)):
            continue
        key = name[0].lower() + name[1:]
        properties = schema["properties"] if name == "SarifLog" else definitions[key]["properties"]
        written = {_json_name(cls, field) for field in attr.fields(cls)}
        assert written == set(properties), name
        checked += 1
    assert checked > 50


_keys = st.one_of(st.text(max_size=4), st.integers(), st.booleans(), st.none(), st.sampled_from(["\udc80", "k\ud800"]))
_scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=6),
                     st.sampled_from(["\ud800", "a\udfffb", "\U0001f600", "\u00e9"]))
_leaves = st.one_of(_scalars, st.builds(lambda text: sarif(sarif_om.Message, text=text), _scalars),
                    st.builds(lambda line, column: sarif(sarif_om.Region, start_line=line, start_column=column),
                              st.one_of(st.none(), st.integers()), st.one_of(st.none(), st.integers())))
_values = st.recursive(_leaves, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.tuples(inner, inner), st.dictionaries(_keys, inner, max_size=3),
    st.builds(lambda props: sarif(sarif_om.Result, message=sarif(sarif_om.Message, text="m"), properties=props),
              st.one_of(st.none(), st.dictionaries(st.text(max_size=3), inner, max_size=2))),
), max_leaves=12)


@settings(max_examples=300, deadline=None)
@given(_values)
def test_any_value_is_written_as_ascii_json_with_valid_unicode(value: Any) -> None:
    # What GitHub reads must parse, and its text must be Unicode: a lone surrogate (from an
    # undecodable byte in a manifest) in a value or in a key is written as U+FFFD.
    text = dumps(value)
    assert text.isascii() and text.endswith("\n")
    parsed = json.loads(text)
    json.dumps(parsed, ensure_ascii=False).encode("utf-8")  # raises on a lone surrogate
