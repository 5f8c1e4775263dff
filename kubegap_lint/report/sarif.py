"""SARIF 2.1.0 output for GitHub code scanning (docs/sarif.md says what each part is for).

One run, tool `kubegap-lint`, every enabled rule with its help, evidence and fix; the incident
catalog as a taxonomy that rules relate to; one result per finding with a repository-relative
location, a region, fingerprints that survive line moves, the evidence, and suppressions; input
errors as tool execution notifications. Built with sarif-om's classes and written by
`sarif_json`, which keeps every value set here, defaults included.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kubegap_lint import __version__
from kubegap_lint.catalog.docs import anchor
from kubegap_lint.catalog.policies import Catalog, Incident, Policy
from kubegap_lint.core.errors import UsageError
from kubegap_lint.core.model import Finding, InputError, Location, Severity
from kubegap_lint.engine.run import LintResult
from kubegap_lint.report import sarif_limits
from kubegap_lint.report.sanitize import sarif_text
from kubegap_lint.report.sarif_fixes import sarif_fixes
from kubegap_lint.report.sarif_json import dumps, sarif
from kubegap_lint.report.sarif_limits import (
    Limits,
    gzip_size,
    keep_most_severe,
    most_severe,
    results_note,
    size_note,
)
from kubegap_lint.report.sarif_paths import UriMapper
from kubegap_lint.report.sarif_sources import SourceFiles
from kubegap_lint.suppress.fingerprint import fingerprint

# Where the project lives; helpUri and informationUri point into it. Change it here only (and
# the owner in the docs' snippets: docs/github-action.md, "One owner name").
REPOSITORY_URL = "https://github.com/kubegap/kubegap-lint"
# The rules reference of another place or version (the Action sets it to the ref that ran).
DOCS_URL_ENV = "KUBEGAP_LINT_DOCS_URL"
# The branch GitHub shows by default: the docs of every build not made from a release tag.
DEFAULT_BRANCH = "main"


def docs_ref() -> str:
    """The git ref whose docs a help link names: the release tag in a released build (it exists:
    the release workflow built from it), else the default branch. Offline, so the build says."""
    import kubegap_lint

    return f"v{kubegap_lint.__version__}" if kubegap_lint.RELEASED else DEFAULT_BRANCH


def rules_doc_url() -> str:
    """docs/rules.md at docs_ref(), unless KUBEGAP_LINT_DOCS_URL names another: a fork, a
    mirror, the commit an Action ran at."""
    return os.environ.get(DOCS_URL_ENV, "").strip() or f"{REPOSITORY_URL}/blob/{docs_ref()}/docs/rules.md"


SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
SRCROOT = "%SRCROOT%"
TAXONOMY = "kubegap-incidents"
FINGERPRINT_KEY = "kubegapFingerprint/v1"
LINE_HASH_KEY = "primaryLocationLineHash"

# GitHub reads `security-severity` (a number as a string) to rank results: >= 7.0 high,
# 4.0-6.9 medium, 0.1-3.9 low, and lists every result of a rule that has it as a *security*
# alert. Only rules tagged `security` carry it (docs/sarif.md); the rest are resilience
# findings, ranked by `problem.severity`.
SECURITY_SEVERITY = {Severity.ERROR: "7.5", Severity.WARNING: "5.0", Severity.NOTE: "2.0"}
SECURITY_TAG = "security"
# `problem.severity`, GitHub's severity for rules it does not treat as security rules.
PROBLEM_SEVERITY = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.NOTE: "recommendation"}
# Annotations and inline comments sit in the manifest; configuration and baseline do not.
SUPPRESSION_KIND = {"annotation": "inSource", "inline": "inSource", "config": "external", "baseline": "external"}

MAX_DESCRIPTION = 1024  # GitHub's limit for shortDescription and fullDescription
MAX_TAGS = 20  # GitHub rejects a rule with more


@dataclass
class SarifReport:
    text: str
    warnings: list[str] = field(default_factory=list)  # for stderr: limits that cut results


def _om() -> Any:
    import sarif_om

    return sarif_om


def _clip(text: str, limit: int = MAX_DESCRIPTION) -> str:
    """At most `limit` characters, cut after a sentence when one ends in the second half."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    end = cut.rfind(". ")
    return cut[: end + 1] if end > limit // 2 else cut.rstrip() + "\u2026"


def first_paragraph(markdown: str) -> str:
    return markdown.strip().split("\n\n", 1)[0]


def rule_help_uri(policy: Policy) -> str | None:
    """The rule's section in docs/rules.md; None for a user's own policy, which has none there."""
    from kubegap_lint.core.datapaths import policies_dir

    if Path(policy.path).resolve().parent != policies_dir().resolve():
        return None
    return f"{rules_doc_url()}#{anchor(policy)}"


def reported_policies(result: LintResult, rule_ids: Iterable[str]) -> list[Policy]:
    """The enabled policies, plus any other policy a finding names (so every ruleId resolves)."""
    policies = list(result.policies)
    known = {policy.id for policy in policies}
    for rule_id in sorted(set(rule_ids) - known):
        policy = result.catalog.find(rule_id)
        if policy is None:
            raise ValueError(f"finding of unknown rule {rule_id}")
        policies.append(policy)
    return policies


def _incident_facts(incident: Incident) -> str:
    parts = [incident.organisation, incident.date]
    if incident.library_id:
        parts.append(incident.library_id)
    if incident.secondary:
        parts.append("some facts read only in secondary sources")
    return ", ".join(parts)


def _help(policy: Policy, catalog: Catalog) -> tuple[str, str]:
    """The rule's help as text and as markdown: why, the fix, the evidence, the reference."""
    incidents = [catalog.incidents[i] for i in policy.evidence if i in catalog.incidents]
    text = [policy.help.strip()]
    markdown = [policy.help.strip()]
    if incidents:
        text += ["", "Evidence:"]
        markdown += ["", "**Evidence**", ""]
        for incident in incidents:
            urls = ", ".join(incident.urls) or "kubegap incident library"
            text.append(f"- {incident.title} ({_incident_facts(incident)}): {urls}")
            title = f"[{incident.title}]({incident.urls[0]})" if incident.urls else incident.title
            more = "".join(f" [[{n}]]({url})" for n, url in enumerate(incident.urls[1:], start=2))
            markdown.append(f"- {title}{more} ({_incident_facts(incident)})")
    uri = rule_help_uri(policy)
    if uri is not None:
        text += ["", f"Reference: {uri}"]
        markdown += ["", f"Reference: [{policy.id} {policy.name}]({uri})"]
    return "\n".join(text) + "\n", "\n".join(markdown) + "\n"


def _taxonomy(catalog: Catalog, policies: list[Policy]) -> tuple[Any, dict[str, int]]:
    """The incidents the run's rules cite, as taxa (sorted by id), and each one's index."""
    om = _om()
    cited = {incident for policy in policies for incident in policy.evidence}
    incidents = sorted((catalog.incidents[i] for i in cited if i in catalog.incidents), key=lambda i: i.id)
    taxa = []
    for incident in incidents:
        properties: dict[str, Any] = {"organisation": incident.organisation, "date": incident.date,
                                      "urls": list(incident.urls)}
        if incident.library_id:
            properties["libraryId"] = incident.library_id
        properties["secondary"] = incident.secondary
        taxa.append(sarif(
            om.ReportingDescriptor,
            id=incident.id,
            short_description=sarif(om.MultiformatMessageString, text=_clip(incident.title)),
            full_description=sarif(om.MultiformatMessageString, text=_clip(incident.summary)),
            help_uri=f"{rules_doc_url()}#{incident.id}",
            properties=properties,
        ))
    component = sarif(
        om.ToolComponent,
        name=TAXONOMY,
        organization="kubegap-lint",
        short_description=sarif(om.MultiformatMessageString,
                                text="Public incidents and papers that kubegap-lint's rules cite"),
        information_uri=f"{rules_doc_url()}#incidents",
        taxa=taxa,
    )
    return component, {incident.id: index for index, incident in enumerate(incidents)}


def _rule(policy: Policy, catalog: Catalog, taxon_index: dict[str, int]) -> Any:
    om = _om()
    help_text, help_markdown = _help(policy, catalog)
    relationships = [
        sarif(om.ReportingDescriptorRelationship,
              target=sarif(om.ReportingDescriptorReference, id=incident, index=taxon_index[incident],
                           tool_component=sarif(om.ToolComponentReference, name=TAXONOMY, index=0)),
              kinds=["relevant"])
        for incident in policy.evidence if incident in taxon_index
    ]
    return sarif(
        om.ReportingDescriptor,
        id=policy.id,
        name=policy.name,
        short_description=sarif(om.MultiformatMessageString, text=_clip(policy.title)),
        full_description=sarif(om.MultiformatMessageString, text=_clip(first_paragraph(policy.help))),
        default_configuration=sarif(om.ReportingConfiguration, level=policy.severity.value),
        help=sarif(om.MultiformatMessageString, text=help_text, markdown=help_markdown),
        help_uri=rule_help_uri(policy),
        relationships=relationships or None,
        properties={
            "tags": list(policy.tags[:MAX_TAGS]),
            "precision": policy.precision,
            "problem.severity": PROBLEM_SEVERITY[policy.severity],
            **({"security-severity": SECURITY_SEVERITY[policy.severity]} if SECURITY_TAG in policy.tags else {}),
        },
    )


# A chart's rendered stream as findings name it (helm/render.py's shown_name).
_RENDERED_NAME = re.compile(r"<helm template (.+?)(?: \([^()]*:\d+\))?>")


class _Builder:
    """Builds results and notifications for one run; knows the root and the source files."""

    def __init__(self, result: LintResult, mapper: UriMapper, policies: list[Policy], fixes: Any = None) -> None:
        self.result = result
        self.fixes = fixes  # fix.files.FixLookup: each result's `fixes`
        self.mapper = mapper
        self.sources = SourceFiles(mapper)
        self.rule_index = {policy.id: index for index, policy in enumerate(policies)}
        self.unplaced = 0  # results written without a location

    def region(self, loc: Location) -> Any:
        om = _om()
        end_line, end_column = loc.end_line or loc.line, loc.end_column
        if end_column is None:  # to the end of the line
            end_column = self.sources.line_end(loc.path, end_line, loc.column if end_line == loc.line else 1)
        return sarif(om.Region, start_line=loc.line, start_column=loc.column,
                     end_line=end_line, end_column=end_column)

    def physical(self, loc: Location, uri: str) -> Any:
        om = _om()
        return sarif(om.PhysicalLocation,
                     artifact_location=sarif(om.ArtifactLocation, uri=uri, uri_base_id=SRCROOT),
                     region=self.region(loc))

    def finding(self, finding: Finding) -> Any:
        om = _om()
        # Never refused: a finding with no place in the repository (stdin, a render nobody kept)
        # is written without a location, its place kept in the properties.
        uri = self.mapper.uri(finding.location.path)
        real = self.mapper.file_path(finding.location.path) if uri is None else None
        if real is not None and os.path.isfile(real):
            self.mapper.require(finding.location.path)  # a real file outside the root: the user's mistake
        message = sarif_text(f"{finding.resource.display()}: {finding.message}" if finding.resource
                             else finding.message)
        related = None
        properties: dict[str, Any] = {}
        rendered = finding.rendered_location
        if rendered is not None:
            rendered_uri = self.mapper.uri(rendered.path)
            if rendered_uri is not None:
                message += f" (rendered output: [{rendered_uri}:{rendered.line}](1))"
                related = [sarif(om.Location, id=1, physical_location=self.physical(rendered, rendered_uri),
                                 message=sarif(om.Message, text="Where the finding is in the rendered output"))]
            else:  # stdin or a file outside the root: keep the place, without a location
                properties["renderedLocation"] = {"path": rendered.path, "line": rendered.line,
                                                  "column": rendered.column}
        fingerprints = {FINGERPRINT_KEY: fingerprint(finding)}
        line_hash = self.sources.line_hash(finding.location.path, finding.location.line)
        if line_hash is not None:
            fingerprints[LINE_HASH_KEY] = line_hash
        place = finding.location
        if uri is None:
            loc = finding.location
            properties["unplacedLocation"] = {"path": loc.path, "line": loc.line, "column": loc.column}
            fallback = self.fallback(finding)
            if fallback is None:
                self.unplaced += 1
            else:  # GitHub needs a location: the nearest file that stands for the place
                place, uri = fallback
                message += f" (at {sarif_text(loc.path)}:{loc.line}:{loc.column})"
        properties.update(self._finding_properties(finding))
        suppressions = None
        if finding.suppression is not None:
            suppression = finding.suppression
            suppressions = [sarif(
                om.Suppression,
                kind=SUPPRESSION_KIND.get(suppression.kind, "external"),
                state="accepted",
                justification=suppression.reason,
                properties={"kubegapKind": suppression.kind, "source": suppression.source},
            )]
        return sarif(
            om.Result,
            rule_id=finding.rule_id,
            rule_index=self.rule_index[finding.rule_id],
            level=finding.severity.value,
            message=sarif(om.Message, text=message),
            locations=[sarif(om.Location, physical_location=self.physical(place, uri))] if uri else None,
            related_locations=related,
            partial_fingerprints=fingerprints,
            suppressions=suppressions,
            fixes=sarif_fixes(self.fixes.get(finding), uri, SRCROOT) if self.fixes is not None and uri else None,
            properties=properties,
        )

    def fallback(self, finding: Finding) -> tuple[Location, str] | None:
        """Where a result with no file of its own is shown: the rendered stream's line when the
        stream was kept in a file under the root, else the chart's Chart.yaml, line 1; None for
        unnamed stdin (--stdin-filename names it)."""
        rendered = finding.rendered_location
        if rendered is not None:
            rendered_uri = self.mapper.uri(rendered.path)
            if rendered_uri is not None:
                return rendered, rendered_uri
        for path in (finding.location.path, rendered.path if rendered is not None else ""):
            match = _RENDERED_NAME.fullmatch(path)
            if match is not None:
                entry = os.path.join(match.group(1), "Chart.yaml")
                entry_uri = self.mapper.uri(entry)
                if entry_uri is not None:
                    return Location(entry, 1, 1), entry_uri
        return None

    def _finding_properties(self, finding: Finding) -> dict[str, Any]:
        incidents = self.result.catalog.incidents
        out: dict[str, Any] = {}
        if finding.resource is not None:
            ref = finding.resource
            out["resource"] = {"apiVersion": ref.api_version, "kind": ref.kind,
                               "namespace": ref.namespace, "name": ref.name}
        out["role"] = finding.role
        out["container"] = finding.container
        out["document"] = finding.document_index
        out["helmTemplate"] = finding.template
        if finding.approximate:
            out["lineApproximate"] = True
        if finding.key_path:
            out["pathInDocument"] = list(finding.key_path)
        if finding.missing:
            out["missingField"] = finding.missing
        out["evidence"] = [{"id": i, "title": incidents[i].title, "urls": list(incidents[i].urls)}
                           for i in finding.evidence if i in incidents] or None
        return out

    def notification(self, error: InputError) -> Any:
        om = _om()
        locations = None
        uri = self.mapper.uri(error.path)
        if uri is not None:
            region = sarif(om.Region, start_line=error.line, start_column=error.column) if error.line else None
            locations = [sarif(om.Location, physical_location=sarif(
                om.PhysicalLocation,
                artifact_location=sarif(om.ArtifactLocation, uri=uri, uri_base_id=SRCROOT),
                region=region))]
        return sarif(om.Notification, level="error", message=sarif(om.Message, text=sarif_text(error.display())),
                     locations=locations)


def automation_id(category: str) -> str:
    """GitHub takes everything before the last `/` as the category; end with one, as upload-sarif
    does with its `category` input, so that the whole value is the category."""
    return category if category.endswith("/") else category + "/"


def build_log(result: LintResult, mapper: UriMapper, category: str | None, limits: Limits,
              fixes: Any = None) -> tuple[str, list[str]]:
    """The SARIF text, and what was cut to fit GitHub's limits (for stderr; also in the log)."""
    om = _om()
    # One pass over the stored findings keeps only the most severe that GitHub would accept.
    rule_ids: set[str] = set()
    total = 0

    def noted(findings: Iterator[Finding]) -> Iterator[Finding]:
        nonlocal total
        for finding in findings:
            total += 1
            rule_ids.add(finding.rule_id)
            yield finding

    findings = most_severe(noted(result.iter_findings()), limits.max_results)
    policies = reported_policies(result, rule_ids)
    builder = _Builder(result, mapper, policies, fixes)
    taxonomy, taxon_index = _taxonomy(result.catalog, policies)
    rules = [_rule(policy, result.catalog, taxon_index) for policy in policies]
    builder.sources.announce((finding.location.path, finding.location.line) for finding in findings)
    results = [builder.finding(finding) for finding in findings]
    errors = [builder.notification(error) for error in result.errors]
    driver = sarif(
        om.ToolComponent,
        name="kubegap-lint",
        version=__version__,
        semantic_version=__version__,
        information_uri=REPOSITORY_URL,
        rules=rules,
        supported_taxonomies=[sarif(om.ToolComponentReference, name=TAXONOMY, index=0)] if taxon_index else None,
    )

    def assemble(kept: list[int], notes: list[str]) -> str:
        notifications = errors + [sarif(om.Notification, level="warning", message=sarif(om.Message, text=note))
                                  for note in notes]
        invocation = sarif(om.Invocation, execution_successful=not result.errors,
                           tool_execution_notifications=notifications or None)
        run_fields: dict[str, Any] = {
            "tool": sarif(om.Tool, driver=driver),
            "invocations": [invocation],
            "original_uri_base_ids": {SRCROOT: sarif(om.ArtifactLocation, description=sarif(
                om.Message, text="The repository root: result URIs are relative to it (--sarif-root)"))},
            "column_kind": "unicodeCodePoints",
            "taxonomies": [taxonomy] if taxon_index else None,
        }
        if category is not None:
            run_fields["automation_details"] = sarif(om.RunAutomationDetails, id=automation_id(category))
        run_fields["results"] = [results[i] for i in kept]  # present even when empty: GitHub needs it
        run = sarif(om.Run, **run_fields)
        return dumps(sarif(om.SarifLog, schema_uri=SCHEMA_URI, version="2.1.0", runs=[run]))

    kept = list(range(len(results)))
    unplaced = [f"{builder.unplaced} result(s) have no file in the repository (piped input): written"
                " without a location; name the input with --stdin-filename NAME, or lint a file"] if builder.unplaced else []
    notes = list(unplaced)
    if total > len(results):
        notes.append(results_note(len(kept), total, limits))
    text = assemble(kept, notes)
    size = gzip_size(text)
    while size > limits.max_gzip_bytes and kept:
        # Results make up nearly all of the size: cut in proportion, with a margin, and measure again.
        count = min(len(kept) - 1, int(len(kept) * limits.max_gzip_bytes / size * 0.95))
        kept = keep_most_severe(findings, count)
        notes = [*unplaced, size_note(len(kept), total, limits)]
        text = assemble(kept, notes)
        size = gzip_size(text)
    return text, notes


def render_sarif(result: LintResult, root: Path, category: str | None = None, cwd: str | None = None,
                 limits: Limits | None = None, fixes: Any = None) -> SarifReport:
    """The SARIF text for a run; URIs relative to `root`; cut to GitHub's limits (or `limits`)."""
    if category is not None and not category.strip():
        raise UsageError("--sarif-category must not be empty")
    text, notes = build_log(result, UriMapper(root, cwd), category, limits or sarif_limits.GITHUB_LIMITS, fixes)
    return SarifReport(text, notes)
