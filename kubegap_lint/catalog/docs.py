"""Generate docs/rules.md from the policy files, the incident catalog and the examples, and the
function table of docs/writing-policies.md from catalog/functions.py.

The committed file is checked by a test, so the reference can never drift from the policies:
regenerate it with `kubegap-lint rules --markdown > docs/rules.md`.
"""

from __future__ import annotations

from pathlib import Path

from kubegap_lint.catalog.policies import Catalog, Incident, Policy

_SCOPE_TEXT = {"input": "input fault, reported while reading", "workload": "workload policy"}


def anchor(policy: Policy) -> str:
    """The GitHub heading anchor of a rule's section (used by SARIF helpUri too)."""
    return f"{policy.id.lower()}-{policy.name}"


def _incident_line(incident: Incident) -> str:
    label = f"{incident.library_id}, " if incident.library_id else ""
    links = ", ".join(f"<{url}>" for url in incident.urls)
    where = f" {links}" if links else " (kubegap incident library)"
    return f"- **{incident.title}** ({label}{incident.organisation}, {incident.date}):{where}"


def _examples(policy: Policy, examples_dir: Path | None) -> list[str]:
    if examples_dir is None:
        return []
    folder = examples_dir / f"{policy.id}-{policy.name}"
    from kubegap_lint.catalog.expectations import example_paths

    files = example_paths(folder) if folder.is_dir() else []
    if not files:
        return []
    lines = ["", "Examples (each `# expect:` comment marks the line of a finding):", ""]
    for path in files:
        kind = "triggers the rule" if path.name.startswith("bad") else "does not trigger it"
        rel = path.relative_to(examples_dir.parent).as_posix()
        lines.append(f"- [`{rel}`](../{rel}): {kind}")
    first_bad = next((p for p in files if p.name.startswith("bad") and p.is_file()), None)
    if first_bad is not None:
        text = first_bad.read_text(encoding="utf-8", errors="replace").rstrip("\n")
        lines += ["", "<details><summary>" + first_bad.name + "</summary>", "", "```yaml", text, "```", "",
                  "</details>"]
    return lines


def render_rules_markdown(catalog: Catalog, examples_dir: Path | None) -> str:
    out = [
        "# Rules",
        "",
        "<!-- Generated from policies/ by `kubegap-lint rules --markdown`; do not edit. -->",
        "",
        "Every rule cites the public incidents that motivate it. Ids and names are stable and",
        "never reused: KG0xx input, KG1xx topology and power, KG2xx checkpoints and storage,",
        "KG3xx NCCL and collectives, KG4xx restart and scheduling, KG5xx resources and node health.",
        "",
        "| id | name | severity | title |",
        "|---|---|---|---|",
    ]
    for policy in catalog.policies:
        out.append(f"| [{policy.id}](#{anchor(policy)}) | `{policy.name}` | {policy.severity.value} | {policy.title} |")
    for policy in catalog.policies:
        out += ["", f"## {policy.id} {policy.name}", "", f"**{policy.title}**", ""]
        facts = [f"severity: `{policy.severity.value}`", f"scope: {_SCOPE_TEXT.get(policy.scope, policy.scope)}",
                 f"precision: {policy.precision}"]
        if not policy.enabled:
            facts.append("disabled by default")
        params = policy.raw.get("params") or []
        if params:
            facts.append("parameters: " + ", ".join(f"`{p}`" for p in params))
        if policy.tags:
            facts.append("tags: " + ", ".join(policy.tags))
        out.append("; ".join(facts) + ".")
        out += ["", policy.help.strip()]
        if policy.evidence:
            out += ["", "Evidence:", ""]
            out += [_incident_line(catalog.incidents[e]) for e in policy.evidence]
        out += _examples(policy, examples_dir)
        out += ["", f"Policy file: [`policies/{Path(policy.path).name}`](../policies/{Path(policy.path).name})"]
    out += ["", "## Incidents", "", "The catalog the rules cite (`policies/incidents.yaml`). Facts marked",
            "*secondary* were read only in third-party restatements.", ""]
    for incident in sorted(catalog.incidents.values(), key=lambda i: i.id):
        out += [f"### {incident.id}", "", _incident_line(incident)[2:], "", incident.summary, ""]
        for fact in incident.raw.get("facts", []):
            mark = " *(secondary)*" if fact.get("secondary") else ""
            source = f" ({fact['source']})" if fact.get("source") else ""
            out.append(f"- {' '.join(str(fact['text']).split())}{mark}{source}")
        out.append("")
    return "\n".join(out).rstrip("\n") + "\n"


# ---------------------------------------------------------------- tables inside hand-written pages

def _markers(name: str) -> tuple[str, str]:
    return (f"<!-- generated: {name} (scripts/regenerate.py; do not edit) -->\n",
            f"<!-- end generated: {name} -->\n")


def generated_block(text: str, name: str) -> str | None:
    """The generated part named `name` of a hand-written page, or None when it has none."""
    begin, end = _markers(name)
    start = text.find(begin)
    stop = text.find(end, start + len(begin)) if start != -1 else -1
    return None if stop == -1 else text[start + len(begin):stop]


def with_generated_block(text: str, name: str, block: str) -> str:
    """The page with its generated part `name` replaced by block (the markers must be there)."""
    begin, end = _markers(name)
    if generated_block(text, name) is None:
        raise ValueError(f"no {begin.strip()} ... {end.strip()} in the page")
    start = text.find(begin) + len(begin)
    return text[:start] + block + text[text.find(end, start):]


def render_functions_markdown() -> str:
    """The table of the custom JMESPath functions (docs/writing-policies.md): each function's
    arguments and its docstring, in the order catalog/functions.py defines them."""
    import inspect

    from kubegap_lint.catalog.functions import PolicyFunctions

    rows = ["| function | returns |", "|---|---|"]
    for attribute, method in vars(PolicyFunctions).items():
        if not attribute.startswith("_func_"):
            continue
        arguments = [p for p in inspect.signature(method).parameters if p != "self"]
        doc = " ".join((method.__doc__ or "").split())
        rows.append(f"| `{attribute[len('_func_'):]}({', '.join(arguments)})` | {doc.replace('|', chr(92) + '|')} |")
    return "\n".join(rows) + "\n"
