"""The GitHub Action's lint step (action.yml runs `python -m kubegap_lint.cli.action` in the
Action's own virtual environment): read the inputs GitHub passes as INPUT_* variables, lint once
for SARIF, print the findings to the log as annotations (or text), and write a job summary.

Inputs that are lists (paths, select, ignore) take one item a line, so a path may hold spaces;
quotes around an item are dropped; select and ignore also split at commas. `args` is split like
a shell line (quotes group, nothing is expanded or executed). Outputs go to $GITHUB_OUTPUT.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

# The levels as GitHub shows them, worst first.
_LEVELS = ("error", "warning", "note")
TOP_FINDINGS = 20
NOT_RENDERED = "KG009"  # an input that could not be rendered, so was not linted


class ActionError(Exception):
    """An input the step cannot use: one `::error` line, exit code 2."""


def lines_of(value: str) -> list[str]:
    """A list input: one item a line, blank lines skipped, surrounding quotes dropped."""
    items = []
    for line in value.splitlines():
        item = line.strip()
        if len(item) >= 2 and item[0] == item[-1] and item[0] in "'\"":
            item = item[1:-1]
        if item:
            items.append(item)
    return items


def names_of(value: str) -> list[str]:
    """A selection input: rule ids, names, prefixes, globs or tags, by line or comma."""
    return [part.strip() for item in lines_of(value) for part in item.split(",") if part.strip()]


def _flag(env: Mapping[str, str], name: str, default: bool = False) -> bool:
    value = env.get(name, "").strip().lower()
    if not value:
        return default
    if value in ("true", "yes", "1", "on"):
        return True
    if value in ("false", "no", "0", "off"):
        return False
    raise ActionError(f"input {name.removeprefix('INPUT_').lower().replace('_', '-')}: expected true or false,"
                      f" got {value!r}")


@dataclass
class Inputs:
    paths: list[str]
    options: list[str]  # shared by every run: selection, configuration, extra args
    sarif_file: str
    sarif_options: list[str]
    root_options: list[str]  # --sarif-root: also where the annotations' paths are from
    annotations_only: bool
    log_format: str
    summary: bool
    fail_on_findings: bool
    extra: list[str] = field(default_factory=list)


def read_inputs(env: Mapping[str, str]) -> Inputs:
    paths = lines_of(env.get("INPUT_PATHS", "")) or ["."]
    options: list[str] = []
    for name, option in (("INPUT_SELECT", "--select"), ("INPUT_IGNORE", "--ignore")):
        chosen = names_of(env.get(name, ""))
        if chosen:
            options += [option, ",".join(chosen)]
    try:
        extra = shlex.split(env.get("INPUT_ARGS", ""), comments=False, posix=True)
    except ValueError as exc:
        raise ActionError(f"input args: {exc} (quotes must be closed)") from None
    root = env.get("INPUT_SARIF_ROOT", "").strip()
    root_options = ["--sarif-root", root] if root else []
    sarif_options = list(root_options)
    if env.get("INPUT_CATEGORY", "").strip():
        sarif_options += ["--sarif-category", env["INPUT_CATEGORY"].strip()]
    log_format = env.get("INPUT_LOG_FORMAT", "").strip() or "github"
    if log_format not in ("github", "text", "none"):
        raise ActionError(f"input log-format: expected github, text or none, got {log_format!r}")
    return Inputs(paths, options + extra, env.get("INPUT_SARIF_FILE", "").strip() or "kubegap-lint.sarif",
                  sarif_options, root_options, _flag(env, "INPUT_ANNOTATIONS_ONLY"), log_format,
                  _flag(env, "INPUT_JOB_SUMMARY", True), _flag(env, "INPUT_FAIL_ON_FINDINGS"), extra)


def _lint(arguments: list[str], env: Mapping[str, str]) -> int:
    """Run kubegap-lint with this Python (the Action's environment); its output goes to the log."""
    sys.stdout.flush()
    return subprocess.run([sys.executable, "-m", "kubegap_lint", "lint", *arguments], env=dict(env),
                          check=False).returncode


def summary_markdown(log: dict[str, Any], env: Mapping[str, str], exit_code: int,
                     annotations_only: bool) -> str:
    """The job summary: counts per severity and rule, the top findings with links to the lines
    and the rules' documentation."""
    run = (log.get("runs") or [{}])[0]
    rules = {rule["id"]: rule for rule in run.get("tool", {}).get("driver", {}).get("rules", [])}
    counted = [r for r in run.get("results", []) if not r.get("suppressions")]
    suppressed = len(run.get("results", [])) - len(counted)
    by_level = Counter(r.get("level", "warning") for r in counted)
    by_rule = Counter((r["ruleId"], r.get("level", "warning")) for r in counted)
    blob = ""
    if env.get("GITHUB_SERVER_URL") and env.get("GITHUB_REPOSITORY") and env.get("GITHUB_SHA"):
        blob = f"{env['GITHUB_SERVER_URL']}/{env['GITHUB_REPOSITORY']}/blob/{env['GITHUB_SHA']}/"

    def rule_link(rule_id: str) -> str:
        rule = rules.get(rule_id, {})
        label = _text(f"{rule_id} {rule.get('name', '')}".strip())
        return f"[{label}]({_url(rule['helpUri'])})" if rule.get("helpUri") else label

    out = ["## kubegap-lint", ""]
    if exit_code >= 2:
        out += ["kubegap-lint stopped on an input or usage error (exit code 2): see the step's log.", ""]
    total = sum(by_level.values())
    counts = ", ".join(f"{by_level[level]} {level}{'s' if by_level[level] != 1 else ''}" for level in _LEVELS)
    out.append(f"**{total} finding{'s' if total != 1 else ''}**: {counts}"
               + (f" ({suppressed} suppressed)" if suppressed else "") + f"; exit code {exit_code}.")
    out.append("")
    unrendered = [r for r in counted if r.get("ruleId") == NOT_RENDERED]
    if unrendered:  # said apart: what was not linted at all is no clean result
        out += [f"**{len(unrendered)} input{'s' if len(unrendered) != 1 else ''} not linted** (could not be"
                " rendered; KG009):", ""]
        for result in unrendered:
            out.append(f"- {_where(result, blob)}: {_text(result.get('message', {}).get('text', ''))}")
        out.append("")
    if by_rule:
        out += ["| Rule | Severity | Findings |", "| --- | --- | ---: |"]
        ordered = sorted(by_rule.items(), key=lambda item: (_LEVELS.index(item[0][1]) if item[0][1] in _LEVELS
                                                            else 9, -item[1], item[0][0]))
        for (rule_id, level), count in ordered:
            out.append(f"| {rule_link(rule_id)} | {_text(level)} | {count} |")
        out.append("")
        out += ["### Top findings", "", "| Severity | Rule | Where | Finding |", "| --- | --- | --- | --- |"]
        ranked = sorted(counted, key=lambda r: _LEVELS.index(r.get("level", "warning"))
                        if r.get("level", "warning") in _LEVELS else 9)
        for result in ranked[:TOP_FINDINGS]:
            link = _where(result, blob)
            message = result.get("message", {}).get("text", "")
            out.append(f"| {_text(result.get('level', 'warning'))} | {_text(result['ruleId'])} | {link} |"
                       f" {_text(message)} |")
        if len(ranked) > TOP_FINDINGS:
            out.append("")
            out.append(f"{len(ranked) - TOP_FINDINGS} more in the annotations and the SARIF log.")
        out.append("")
    if annotations_only:
        out.append("Annotations only (`annotations-only: true`): the SARIF log is not offered for upload.")
    out.append("")
    return "\n".join(out)


def _where(result: dict[str, Any], blob: str) -> str:
    """A result's file and line, linked to the commit's blob when the run knows it."""
    place = (result.get("locations") or [{}])[0].get("physicalLocation", {})
    uri = place.get("artifactLocation", {}).get("uri", "")
    line = place.get("region", {}).get("startLine")
    where = _text(f"{uri}:{line}" if line else uri)
    return f"[{where}]({_url(f'{blob}{uri}#L{line}')})" if blob and uri and line else where


# The marks that start markup inside a line of GitHub's Markdown, escaped with a backslash (a
# backslash before ASCII punctuation is a literal): text from manifests (names, messages) never
# becomes a link, image, emphasis, strikethrough, code or a table's cell end; <, > and & never
# HTML or an entity. (Marks that count only at a line's start do not arise: the text follows
# "- " or "| ".)
_MARKDOWN = str.maketrans({**{c: "\\" + c for c in "\\`*_[]!|~"}, "<": "&lt;", ">": "&gt;", "&": "&amp;"})


def _text(text: str) -> str:
    """Text for a line or a table cell of the summary, shown as written: one line, no markup."""
    return " ".join(text.split()).translate(_MARKDOWN)


def _url(url: str) -> str:
    """A link's target: percent-encoded where a space, bracket or parenthesis would end it."""
    from urllib.parse import quote

    return quote(url, safe=":/#?&=%@+,;~!$'*")


def _append(path: str | None, text: str) -> None:
    if path:
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(text)


def main(env: Mapping[str, str] | None = None) -> int:
    env = dict(os.environ if env is None else env)
    docs = env.get("INPUT_DOCS_URL", "").strip()
    if not docs and env.get("ACTION_REPOSITORY") and env.get("ACTION_REF"):
        server = env.get("GITHUB_SERVER_URL") or "https://github.com"
        docs = f"{server}/{env['ACTION_REPOSITORY']}/blob/{env['ACTION_REF']}/docs/rules.md"
    if docs:  # the help links of the version that ran (report/sarif.py reads it)
        env["KUBEGAP_LINT_DOCS_URL"] = docs
    try:
        inputs = read_inputs(env)
    except ActionError as exc:
        print(f"::error title=kubegap-lint::{exc}")
        return 2
    sarif_dir = os.path.dirname(inputs.sarif_file)
    if sarif_dir:
        os.makedirs(sarif_dir, exist_ok=True)
    # One run writes the SARIF log (code scanning and the summary read it); the log's own run
    # prints the same findings as annotations or text.
    code = _lint(["--format", "sarif", "--output", inputs.sarif_file, "--quiet", *inputs.sarif_options,
                  *inputs.options, "--", *inputs.paths], env)
    written = os.path.isfile(inputs.sarif_file)
    if inputs.log_format != "none" and code < 2:
        fmt = ["--format", "github"] if inputs.log_format == "github" else ["--no-color"]
        _lint([*fmt, *inputs.root_options, *inputs.options, "--", *inputs.paths], env)
    log: dict[str, Any] = {}
    if written:
        try:
            with open(inputs.sarif_file, encoding="utf-8") as handle:
                log = json.load(handle)
        except (OSError, ValueError):
            log = {}
    counted = [r for r in (log.get("runs") or [{}])[0].get("results", []) if not r.get("suppressions")]
    if inputs.summary:
        _append(env.get("GITHUB_STEP_SUMMARY"), summary_markdown(log, env, code, inputs.annotations_only))
    _append(env.get("GITHUB_OUTPUT"),
            f"sarif-file={inputs.sarif_file if written and not inputs.annotations_only else ''}\n"
            f"exit-code={code}\nfindings={len(counted)}\n")
    if code == 0:  # clean at the fail threshold; findings below it are still said
        said = f"{len(counted)} finding{'s' if len(counted) != 1 else ''} below the fail threshold" if counted \
            else "no findings"
        print(f"kubegap-lint: {said}; SARIF written to {inputs.sarif_file}")
        return 0
    if code == 1:
        print(f"kubegap-lint: {len(counted)} finding{'s' if len(counted) != 1 else ''}"
              f" (annotations above; SARIF in {inputs.sarif_file})")
        return 1 if inputs.fail_on_findings else 0
    print(f"::error title=kubegap-lint::kubegap-lint stopped with exit code {code} (see the lines above)")
    return code


if __name__ == "__main__":
    sys.exit(main())
