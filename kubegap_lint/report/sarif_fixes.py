"""SARIF 2.1.0 `fixes` of a result (section 3.55): the fix's edits as replacements in its file."""

from __future__ import annotations

from typing import Any

from kubegap_lint.report.sarif_json import sarif


def sarif_fixes(found: Any, uri: str, base_id: str) -> list[Any] | None:
    """`found` is a (fix.model.Fix, LineMap) pair or None; a fix without edits gives none."""
    if found is None or not found[0].edits:
        return None
    import sarif_om as om

    from kubegap_lint.fix.model import edit_dict

    fix, lines = found
    replacements = []
    for edit in fix.edits:
        place = edit_dict(edit, lines)
        region = sarif(om.Region, start_line=place["start"]["line"], start_column=place["start"]["column"],
                       end_line=place["end"]["line"], end_column=place["end"]["column"])
        replacements.append(sarif(om.Replacement, deleted_region=region,
                                  inserted_content=sarif(om.ArtifactContent, text=edit.text)))
    change = sarif(om.ArtifactChange, artifact_location=sarif(om.ArtifactLocation, uri=uri, uri_base_id=base_id),
                   replacements=replacements)
    description = f"{fix.description} ({fix.applicability})"
    return [sarif(om.Fix, description=sarif(om.Message, text=description), artifact_changes=[change])]
