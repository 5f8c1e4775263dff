"""Validators for SARIF logs used by the tests: the OASIS JSON Schema, GitHub's ingestion rules as
listed in ../shared/research/sarif.md (what the multitool does not check), and Microsoft's SARIF
multitool (`validate --rule-kind "Sarif;Ghas"`), which scripts/test.sh installs with npm."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from conftest import REPO, SHARED

SCHEMA = SHARED / "sarif" / "sarif-schema-2.1.0.json"
MULTITOOL_DIR = REPO / "tools" / "sarif-multitool"
MULTITOOL_CONFIG = MULTITOOL_DIR / "multitool.config.xml"
_PLATFORM = {"linux": ("linux", "Sarif.Multitool"), "darwin": ("darwin", "Sarif.Multitool"),
             "win32": ("win32", "Sarif.Multitool.exe")}

# Advice the multitool gives at level "note" that kubegap-lint does not follow, and why
# (docs/sarif.md): GitHub does not support message ids and arguments (GH1007); the commit is
# known to the upload, not to the linter; GitHub reads the code from the repository, so no
# snippets or context regions; rule names are the tool's public kebab-case names.
ACCEPTED_NOTES = {"SARIF2002", "SARIF2003", "SARIF2010", "SARIF2011", "SARIF2012"}


def schema_problems(log: Any) -> list[str]:
    import jsonschema

    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    validator_class = jsonschema.validators.validator_for(schema)
    validator = validator_class(schema)
    return [f"{'/'.join(map(str, error.absolute_path))}: {error.message}"
            for error in validator.iter_errors(log)]


def _number(text: Any) -> float | None:
    try:
        value = float(text)
    except (TypeError, ValueError):
        return None
    return value if math.isfinite(value) else None


def github_problems(log: Any) -> list[str]:
    """What GitHub code scanning rejects or mishandles (research/sarif.md sections 1-5)."""
    problems: list[str] = []
    if log.get("version") != "2.1.0" or not log.get("$schema"):
        problems.append("version must be 2.1.0 and $schema set")
    runs = log.get("runs")
    if not isinstance(runs, list) or not 1 <= len(runs) <= 20:
        return problems + ["runs: 1 to 20 runs"]
    for r, run in enumerate(runs):
        driver = run.get("tool", {}).get("driver", {})
        if not driver.get("name"):
            problems.append(f"run {r}: driver name missing")
        rules = driver.get("rules")
        if not isinstance(rules, list):
            problems.append(f"run {r}: driver.rules missing")
            rules = []
        if len(rules) > 25_000:
            problems.append(f"run {r}: more than 25,000 rules")
        ids = [rule.get("id") for rule in rules]
        if len(set(ids)) != len(ids):
            problems.append(f"run {r}: rule ids repeat")
        for rule in rules:
            where = f"rule {rule.get('id')}"
            for key in ("shortDescription", "fullDescription", "help"):
                text = rule.get(key, {}).get("text")
                if not text:
                    problems.append(f"{where}: {key}.text missing")
                elif key != "help" and len(text) > 1024:
                    problems.append(f"{where}: {key}.text longer than 1024")
            if not rule.get("helpUri"):
                problems.append(f"{where}: helpUri missing")
            if len(rule.get("name", "")) > 255:
                problems.append(f"{where}: name longer than 255")
            level = rule.get("defaultConfiguration", {}).get("level")
            if level not in ("note", "warning", "error"):
                problems.append(f"{where}: defaultConfiguration.level is {level!r}")
            properties = rule.get("properties", {})
            if len(properties.get("tags", [])) > 20:
                problems.append(f"{where}: more than 20 tags")
            severity = properties.get("security-severity")
            if severity is not None:
                number = _number(severity)
                if not isinstance(severity, str) or number is None or not 0.0 < number <= 10.0:
                    problems.append(f"{where}: security-severity {severity!r} is not a number string in (0, 10]")
            if properties.get("precision") not in (None, "very-high", "high", "medium", "low"):
                problems.append(f"{where}: precision {properties.get('precision')!r}")
        results = run.get("results")
        if not isinstance(results, list):
            problems.append(f"run {r}: results array missing")
            continue
        if len(results) > 25_000:
            problems.append(f"run {r}: more than 25,000 results")
        for n, result in enumerate(results):
            where = f"result {n}"
            rule_id, index = result.get("ruleId"), result.get("ruleIndex")
            if rule_id not in ids:
                problems.append(f"{where}: ruleId {rule_id!r} names no rule")
            elif index is not None and (not isinstance(index, int) or index >= len(ids) or ids[index] != rule_id):
                problems.append(f"{where}: ruleIndex {index} does not point at {rule_id}")
            if not result.get("message", {}).get("text"):
                problems.append(f"{where}: message.text missing")
            if result.get("level") not in (None, "none", "note", "warning", "error"):
                problems.append(f"{where}: level {result.get('level')!r}")
            locations = result.get("locations") or []
            if not locations:
                problems.append(f"{where}: no location")
            if len(locations) > 1000:
                problems.append(f"{where}: more than 1,000 locations")
            for location in locations + (result.get("relatedLocations") or []):
                physical = location.get("physicalLocation")
                if physical is None:
                    problems.append(f"{where}: a location without physicalLocation")
                    continue
                uri = physical.get("artifactLocation", {}).get("uri", "")
                if (not uri or uri.startswith("/") or "://" in uri or uri.startswith("file:") or "\\" in uri
                        or ".." in uri.split("/") or uri.startswith("./") or " " in uri or ":" in uri.split("/")[0]):
                    problems.append(f"{where}: uri {uri!r} is not repository-relative")
                region = physical.get("region", {})
                if not isinstance(region.get("startLine"), int) or region["startLine"] < 1:
                    problems.append(f"{where}: region.startLine missing")
                for key in ("startColumn", "endLine", "endColumn"):
                    if not isinstance(region.get(key), int):
                        problems.append(f"{where}: region.{key} missing")
                if isinstance(region.get("endLine"), int) and region["endLine"] < region.get("startLine", 0):
                    problems.append(f"{where}: region ends before it starts")
            fingerprints = result.get("partialFingerprints") or {}
            if not fingerprints:
                problems.append(f"{where}: no partialFingerprints")
            line_hash = fingerprints.get("primaryLocationLineHash")
            if line_hash is not None:
                value, _, count = line_hash.partition(":")
                if not (value and all(c in "0123456789abcdef" for c in value) and count.isdigit()):
                    problems.append(f"{where}: primaryLocationLineHash {line_hash!r} is not <hex>:<n>")
    return problems


def multitool_binary() -> Path | None:
    platform = _PLATFORM.get(sys.platform)
    if platform is None:
        return None
    folder, name = platform
    binary = MULTITOOL_DIR / "node_modules" / "@microsoft" / f"sarif-multitool-{folder}" / name
    return binary if binary.is_file() else None


def install_multitool() -> Path | None:
    """`npm ci` into tools/sarif-multitool (git-ignored node_modules); None when npm is missing."""
    import shutil

    binary = multitool_binary()
    if binary is not None:
        return binary
    npm = shutil.which("npm")
    if npm is None:
        return None
    subprocess.run([npm, "ci", "--no-audit", "--no-fund", "--prefix", str(MULTITOOL_DIR)],
                   check=True, capture_output=True, timeout=900)
    return multitool_binary()


def multitool_results(binary: Path, sarif_file: Path, out_dir: Path) -> list[dict[str, Any]]:
    """Run `validate` and read its output log: the exit code is 0 even when it finds errors.
    Each entry: ruleId, level and the message formatted from the rule's message strings."""
    binary.chmod(binary.stat().st_mode | 0o100)  # npm may skip the package's chmod script
    output = out_dir / (sarif_file.stem + ".validation.sarif")
    if output.exists():
        output.unlink()
    # List options (--level, --rule-kind) swallow following positionals: the file goes last.
    command = [str(binary), "validate", "--level", "Error;Warning;Note", "--rule-kind", "Sarif;Ghas",
               "--config", str(MULTITOOL_CONFIG), "--output", str(output), "--quiet", "true", str(sarif_file)]
    env = dict(os.environ, DOTNET_CLI_TELEMETRY_OPTOUT="1", DOTNET_SYSTEM_GLOBALIZATION_INVARIANT="1")
    proc = subprocess.run(command, capture_output=True, text=True, timeout=600, env=env)
    if not output.is_file():
        raise AssertionError(f"the multitool wrote no output (exit {proc.returncode}): {proc.stdout[-2000:]}"
                             f" {proc.stderr[-2000:]}")
    log = json.loads(output.read_text(encoding="utf-8-sig"))
    run = log["runs"][0]
    for invocation in run.get("invocations", []):
        if not invocation.get("executionSuccessful", False):
            raise AssertionError(f"the multitool failed: {json.dumps(invocation)[:2000]}")
    rules = run["tool"]["driver"].get("rules", [])
    found = []
    for result in run.get("results", []):
        message = result["message"]
        text = message.get("text")
        if text is None:
            template = rules[result["ruleIndex"]]["messageStrings"][message["id"]]["text"]
            text = template.format(*message.get("arguments", []))
        found.append({"ruleId": result["ruleId"], "level": result.get("level", "warning"), "message": text})
    return found


def multitool_problems(binary: Path, sarif_file: Path, out_dir: Path) -> list[str]:
    return [f"{r['level']} {r['ruleId']}: {r['message']}" for r in multitool_results(binary, sarif_file, out_dir)
            if r["level"] != "note" or r["ruleId"] not in ACCEPTED_NOTES]
