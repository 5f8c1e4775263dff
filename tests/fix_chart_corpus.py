"""The chart check of the autofix (issue 32, docs/autofix.md "Helm charts"): every fix, safe and
unsafe, applied with `kubegap-lint helm --fix --unsafe-fixes` to a copy of ../shared/charts for
each render of ../shared/charts/renders.yaml (the shared folder is never written).

For each render: no template changes (bytes); no finding whose fix had edits is left; no finding
of a new (rule, resource, container) appears. `python tests/fix_chart_corpus.py` prints the
counts (docs/autofix.md).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML

SHARED_CHARTS = Path(__file__).resolve().parents[1].parent / "shared" / "charts"


def _run(root: Path, entry: dict[str, Any], *extra: str) -> subprocess.CompletedProcess[bytes]:
    args = [sys.executable, "-m", "kubegap_lint", "helm", entry["chart"], "--no-config", "--no-repo-facts"]
    for flag, field in (("-f", "values_files"), ("--set", "set"), ("--set-string", "set_string"),
                        ("--set-file", "set_file")):
        for value in entry.get(field) or []:
            args += [flag, value]
    args += ["--release", entry["release"]] if entry.get("release") else []
    args += ["-n", entry["namespace"]] if entry.get("namespace") else []
    args += ["--include-crds"] if entry.get("include_crds") else []
    return subprocess.run([*args, *extra], cwd=root, capture_output=True, timeout=600, check=False)


def _identity(finding: dict[str, Any]) -> tuple[Any, ...]:
    """A finding across two runs: no line (a values fix shifts the lines below it), no resource
    name (charts draw random names: randAlphaNum)."""
    kind = (finding["resource"] or {}).get("kind")
    return finding["rule"], finding["location"]["path"], kind, finding["container"]


def _templates(chart: Path) -> dict[Path, bytes]:
    return {path: path.read_bytes() for path in sorted((chart / "templates").rglob("*")) if path.is_file()}


def check(entry: dict[str, Any], scratch: Path) -> dict[str, int]:
    root = scratch / entry["id"]
    shutil.copytree(SHARED_CHARTS, root, symlinks=True)
    try:
        before = _run(root, entry, "--show-fixes", "--unsafe-fixes", "--format", "json")
        if before.returncode not in (0, 1):
            return {"failed": 1}
        findings = json.loads(before.stdout)["findings"]
        fixed = {_identity(f) for f in findings if f["fix"] and f["fix"]["edits"]}
        templates = _templates(root / entry["chart"])
        _run(root, entry, "--fix", "--unsafe-fixes")
        after = json.loads(_run(root, entry, "--format", "json").stdout)["findings"]
        for finding in after:
            if _identity(finding) not in {_identity(f) for f in findings}:
                print(f"{entry['id']}: new {finding['rule']} {finding['location']['path']}:{finding['location']['line']}"
                      f" {finding['message'][:100]}", file=sys.stderr)
        return {"renders": 1, "values fixes": sum(1 for f in findings if f["fix"] and f["fix"]["edits"]),
                "fixes as text": sum(1 for f in findings if f["fix"] and not f["fix"]["edits"]),
                "templates changed": sum(1 for p, data in templates.items() if p.read_bytes() != data),
                "fixed left": len(fixed & {_identity(f) for f in after}),
                "new findings": len({_identity(f) for f in after} - {_identity(f) for f in findings})}
    finally:
        shutil.rmtree(root, ignore_errors=True)


def main() -> int:
    renders = YAML(typ="safe").load((SHARED_CHARTS / "renders.yaml").read_text(encoding="utf-8"))
    totals: dict[str, int] = {}
    with tempfile.TemporaryDirectory() as scratch:
        for entry in renders:
            for name, count in check(entry, Path(scratch)).items():
                totals[name] = totals.get(name, 0) + count
    print(", ".join(f"{name}: {count}" for name, count in totals.items()))
    bad = totals.get("failed", 0) + totals.get("templates changed", 0) + totals.get("fixed left", 0) \
        + totals.get("new findings", 0)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
