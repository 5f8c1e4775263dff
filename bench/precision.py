"""Precision and recall of a JSON report against blind hand labels of corpus manifests (issue 29).

    python -m kubegap_lint --no-config --format json ../shared/corpus > corpus.json
    python bench/precision.py corpus.json bench/labels/sample-a bench/labels/sample-b

Each sample is `NAME-files.txt` (the files drawn, paths relative to the corpus) and `NAME.tsv`
(the labels: file, document_kind/name, rule, present yes/no/unsure/none, line, reason), written
by reviewers who neither ran the tool nor read its output. A unit is (file, workload, rule) for
the rules KG101-KG599; `unsure` labels are left out of both sides. Prints the counts, the
figures and every disagreement, to be read in the files (docs/corpus-report.md says how they
were settled).
"""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path

Unit = tuple[str, str, str]


def _name(name: object) -> str:
    """A resource's name as labels write it: a generateName's `-*` (the tool's) or `-` dropped."""
    return str(name).rstrip("*").rstrip("-")


def tool_units(report: dict, files: set[str]) -> set[Unit]:
    found = set()
    for finding in report["findings"]:
        rule = finding["rule"]
        path = finding["location"]["path"].split("corpus/", 1)[-1]
        if "KG101" <= rule <= "KG599" and path in files:
            resource = finding.get("resource") or {}
            found.add((path, f"{resource.get('kind')}/{_name(resource.get('name'))}", rule))
    return found


def _label_name(kind_name: str) -> str:
    kind, _, name = kind_name.partition("/")
    return f"{kind}/{_name(name)}"


def main() -> None:
    report = json.loads(Path(sys.argv[1]).read_text(encoding="utf-8"))
    totals = [0, 0, 0]
    for sample in sys.argv[2:]:
        files = {line.strip() for line in Path(f"{sample}-files.txt").read_text(encoding="utf-8").splitlines() if line.strip()}
        with open(f"{sample}.tsv", encoding="utf-8", newline="") as handle:
            rows = list(csv.DictReader(handle, delimiter="\t"))
        units = {p: {(r["file"], _label_name(r["document_kind/name"]), r["rule"]) for r in rows if r["present"] == p}
                 for p in ("yes", "unsure")}
        found = tool_units(report, files) - units["unsure"]
        true_pos, false_pos, false_neg = found & units["yes"], found - units["yes"], units["yes"] - found
        print(f"{sample}: {len(files)} files, TP {len(true_pos)} FP {len(false_pos)} FN {len(false_neg)}")
        for unit in sorted(false_pos):
            print("  FP", *unit)
        for unit in sorted(false_neg):
            print("  FN", *unit)
        totals = [totals[0] + len(true_pos), totals[1] + len(false_pos), totals[2] + len(false_neg)]
    tp, fp, fn = totals
    print(f"all: TP {tp} FP {fp} FN {fn}, precision {tp / max(1, tp + fp):.3f}, recall {tp / max(1, tp + fn):.3f}")


if __name__ == "__main__":
    main()
